"""Digests of every bundled suite's results.json on a stand-in embedding source (deterministic vectors from
each stimulus's text), with the metrics on its smallest EAT tests: the refactors must leave them unchanged.
``python tests/suite_digests.py`` prints them (run it on a commit to record that commit's digests).

A digest is taken over the results *to a stated precision*, not over the file's bytes: every float rounded to
``DIGITS`` significant digits, keys sorted. The last bits of a float depend on the machine: which BLAS kernel
OpenBLAS picks for the CPU (``OPENBLAS_CORETYPE=Haswell`` on an AVX-512 machine changes all nine byte digests),
its thread count (``OPENBLAS_NUM_THREADS=1`` changes one) and the library versions, since a matrix product's sum
order follows the kernel. Ten significant digits are far above those differences (about 1e-16 relative) and far
below any change a refactor could make to a statistic; results.json records no environment (that is in
manifest.json, which is not digested)."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eatkit.sources.base import Embedded, EmbeddingSource

#: the options of every run (small, so that the whole corpus runs in seconds)
OPTIONS = {"seed": 0, "permutations": 99, "n_bootstrap": 5}
#: significant digits kept of every float before digesting (see the module docstring)
DIGITS = 10
#: the metrics run on the smallest EAT tests of each suite (all of them: SEAT's sentence sets take minutes)
METRIC_TESTS = 3
#: the members of the metrics family the digests were recorded with (a later member, e.g. clustering, adds
#: records, and with them q-values of a run-wide family: the recorded bytes stay those of these members)
RECORDED_METRICS = "rnd,ect,ripa,mac,rnsb,direct-bias"
#: stimuli standing in for an image category (the stand-in embeds no files)
PER_CATEGORY = 6


class StandIn(EmbeddingSource):
    """Every stimulus (word, sentence, image category member) to a unit vector seeded by its text."""

    id = "stand-in"
    modalities = frozenset({"word", "sentence", "image"})

    def embed(self, stimuli):
        ids = stimuli.items or tuple(f"{stimuli.category}/{i}" for i in range(PER_CATEGORY))
        rows = [np.random.default_rng(int.from_bytes(hashlib.sha256(i.encode()).digest()[:8], "little"))
                .normal(size=16) for i in ids]
        return Embedded(np.asarray(rows), tuple(ids))

    def manifest(self):
        return {"model": self.id}


def _rounded(value):
    """``value`` with every float rounded to ``DIGITS`` significant digits (-0.0 as 0.0)."""
    if isinstance(value, float):
        return float(f"{value:.{DIGITS - 1}e}") + 0.0
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def results_digest(results_json: bytes) -> str:
    """SHA-256 of a results.json's records to ``DIGITS`` significant digits, in canonical JSON (sorted keys).

    >>> results_digest(b'[{"d": 0.30000000000000004}]') == results_digest(b'[{"d": 0.3}]')
    True
    >>> results_digest(b'[{"d": 0.3}]') == results_digest(b'[{"d": 0.3000001}]')
    False
    """
    canonical = json.dumps(_rounded(json.loads(results_json)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def recorded_names(text: str) -> bytes:
    """results.json with the field names of the recorded digests: issue 44 gave each quantity one name
    (records' ``renamed``: EAT ``effect_size_ci`` -> ``ci``, ``level2_x_p_exact`` -> ``level2_x_p_value_exact``,
    metrics ``n_resamples`` -> ``n_bootstrap``); the values are unchanged, and :func:`results_digest` hashes
    them under the names they were recorded with."""
    from eatkit.analyses import get_analysis

    def back(record: dict) -> dict:
        old = {new: old for old, new in get_analysis(record.get("kind", "eat")).record_type.renamed.items()}
        return {old.get(k, k): v for k, v in record.items()}

    ending = text[len(text.rstrip("\n")):]  # the file's own line end
    return (json.dumps([back(r) for r in json.loads(text)], indent=2, allow_nan=False) + ending).encode()


def digests() -> dict[str, str]:
    """suite id -> :func:`results_digest` of its results.json."""
    from eatkit.analyses.metrics import parse_metrics, with_metrics
    from eatkit.run.runner import run_suite
    from eatkit.stimuli.loader import list_suites, load_suite

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for info in list_suites():
            suite = load_suite(info.id)
            if any(t.kind != "eat" and t.kind != "sc-eat" for t in suite.tests):
                continue  # grounded suites need a joint model
            size = lambda t: (sum(len(s.items) for s in t.sets().values()), t.id)  # noqa: E731
            eats = sorted((t for t in suite.tests if t.kind == "eat"), key=size)[:METRIC_TESTS]
            paired = {t.id: len({len(t.sets()[r].items) for r in "XY"}) == 1 for t in eats}
            for metrics, equal in ((RECORDED_METRICS, True), ("rnd,ect,mac,rnsb", False)):  # ripa, direct bias: |X| = |Y|
                if any(v == equal for v in paired.values()):
                    suite, _ = with_metrics(suite, parse_metrics(metrics), [t for t, v in paired.items() if v == equal])
            started = time.perf_counter()
            run = run_suite(suite, StandIn(), **OPTIONS)
            print(info.id, f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
            folder = run.save(Path(tmp) / info.id)
            out[info.id] = results_digest(recorded_names((folder / "results.json").read_text()))
    return out


if __name__ == "__main__":
    for suite, digest in digests().items():
        print(f'    "{suite}": "{digest}",')
    sys.exit(0)
