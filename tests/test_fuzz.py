"""Property-based fuzz of the command line (issue 26): suite files, vectors files and options, generated.

Every case ends in exit status 0 with a valid result (results.json holds one record per test), or exit
status 2 with exactly one line ``eatkit: error: ...``; never a traceback, never a hang (each case is
time-boxed), never a changed input file. ``eatkit.cli.main`` runs in this process (fast: 300 cases well
within a minute).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from eatkit.cli import main

#: seconds one case may take (a hang fails the case instead of the suite)
CASE_SECONDS = 20
VOCAB = ["rose", "tulip", "ant", "bee", "good", "nice", "bad", "ugly", "Rose", "café", "x y", ""]

words = st.sampled_from(VOCAB) | st.text(min_size=0, max_size=6)
word_set = st.fixed_dictionaries({"name": st.sampled_from(["X", "Y", "A", "B", "", "x"]),
                                  "modality": st.sampled_from(["word", "word", "sentence", "image", "smell"]),
                                  "items": st.lists(words, min_size=0, max_size=4)})
roles = st.dictionaries(st.sampled_from(["X", "Y", "A", "B", "C"]), word_set | st.none() | st.integers(),
                        min_size=2, max_size=5)
test_entry = st.builds(lambda id_, rs, kind: {"id": id_, "title": "T", **rs, **({"kind": kind} if kind else {})},
                       st.sampled_from(["t1", "t2", "", "a b"]), roles, st.sampled_from([None, "eat", "weat", "nope"]))
suite = st.fixed_dictionaries({
    "schema": st.sampled_from(["eatkit.suite/1", "eatkit.suite/1", "eatkit.suite/2", "other"]),
    "id": st.sampled_from(["tiny", "", "a/b"]), "title": st.text(max_size=5),
    "tests": st.lists(test_entry, min_size=0, max_size=3),
})
number = st.sampled_from(["0.5", "-1", "1e3", "nan", "inf", "x", "0", "1e-300", "  2", "3,"]) | st.floats(
    allow_nan=True, allow_infinity=True).map(repr)
vector_line = st.builds(lambda w, vs, sep: sep.join([w, *vs]), st.sampled_from(VOCAB[:9]) | words,
                        st.lists(number, min_size=0, max_size=4), st.sampled_from([" ", " ", "\t", "  "]))
vectors = st.builds(lambda bom, header, lines, end: (("\ufeff" if bom else "") + header + "\n".join(lines) + end),
                    st.booleans(), st.sampled_from(["", "", "8 3\n", "x\n"]), st.lists(vector_line, max_size=10),
                    st.sampled_from(["\n", "", "\n\n"]))
#: a well-formed file for the valid suite's words, with what a user's file may add: a byte-order mark, tabs,
#: a header line, blank lines, an extra or a missing word
good_vectors = st.builds(
    lambda bom, sep, header, extra, drop, values: (("\ufeff" if bom else "") + header + "".join(
        f"{w}{sep}{sep.join(f'{v:.3f}' for v in values[i % len(values)])}\n"
        for i, w in enumerate(VOCAB[:8] + extra) if w != drop)),
    st.booleans(), st.sampled_from([" ", "\t"]), st.sampled_from(["", "8 3\n", "9 3\n"]),
    st.sampled_from([[], ["lily"], ["rose"]]), st.sampled_from([None, None, "bee"]),
    st.lists(st.tuples(*[st.floats(-2, 2, allow_subnormal=False)] * 3), min_size=1, max_size=8))
options = st.lists(st.sampled_from([
    ["--permutations", "auto"], ["--permutations", "exact"], ["--permutations", "0"], ["--permutations", "7"],
    ["--permutations", "100000000000000"], ["--permutations", "-3"], ["--permutations", "many"],
    ["--n-bootstrap", "0"], ["--n-bootstrap", "3"], ["--n-bootstrap", "-1"], ["--n-bootstrap", "1000000000000"], ["--seed", "1"], ["--seed", "x"],
    ["--alternative", "less"], ["--alternative", "up"], ["--sd", "pooled"], ["--ddof", "0"], ["--ddof", "2"],
    ["--p-method", "welch"], ["--oov", "drop"], ["--oov", "maybe"], ["--lowercase"], ["--tests", "t1"],
    ["--tests", "t1,t1"], ["--tests", "nosuch"], ["--report"], ["--postprocess", "center"],
    ["--postprocess", "abtt:9"], ["--layer", "2"], ["--workers", "3"],
]), max_size=4)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang(f"a case ran over {CASE_SECONDS} s")


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.mark.filterwarnings("error")  # a warning the CLI would print is a second line: it fails the case
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(suite=suite, text=good_vectors | vectors, flags=st.just([]) | options, raw_suite=st.booleans())
def test_the_command_line_answers_generated_input_with_a_result_or_one_line(suite, text, flags, raw_suite) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "suite.json").write_text(json.dumps(suite) if raw_suite else json.dumps(_valid(suite)),
                                         encoding="utf-8")
        (root / "v.txt").write_text(text, encoding="utf-8")
        inputs = _digest(root)
        out = root / "out"
        argv = ["run", str(root / "suite.json"), "--vectors", str(root / "v.txt"), "-q", "-o", str(out),
                *[a for flag in flags for a in flag]]
        stderr, stdout = io.StringIO(), io.StringIO()
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(CASE_SECONDS)
        try:
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
                try:
                    code = main(argv)
                except SystemExit as exit_:  # argparse
                    code = exit_.code
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        err = stderr.getvalue()
        event(f"exit {code}")
        assert "Traceback" not in err + stdout.getvalue()
        assert _digest(root) == inputs  # (out/ is a folder: not among the digests)
        if code == 0:
            records = json.loads((out / "results.json").read_text())
            assert isinstance(records, list) and records and all("test" in r for r in records)
            assert all(line.startswith(("eatkit: warning: ", "t")) for line in err.splitlines()), err
        else:
            lines = err.strip().splitlines()
            assert code == 2 and len(lines) == 1 and lines[0].startswith("eatkit: error: "), (code, err)
            assert not out.exists()


def _valid(suite: dict[str, Any]) -> dict[str, Any]:
    """Half of the cases: a well-formed suite (one test of four word sets), so that the vectors file and
    the options, not the suite, decide the outcome."""
    sets = {r: {"name": r, "modality": "word", "items": items}
            for r, items in zip("XYAB", (["rose", "tulip"], ["ant", "bee"], ["good", "nice"], ["bad", "ugly"]))}
    return {"schema": "eatkit.suite/1", "id": "tiny", "title": "Tiny", "tests": [{"id": "t1", "title": "T", **sets}]}
