"""Issue 26: never hang, never lose a file, never answer a meaningless question with a number.

Each test names the finding of the issue it covers (#1 ... #11) or the general mechanism.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats import permutation as perm
from eatkit.stats import exact_counts, monte_carlo


# -- #2: more draws than partitions, long Monte Carlo, Ctrl-C between chunks ---------------------------


def test_more_draws_than_partitions_counts_them_exactly() -> None:
    first, second = [3.0, 4.0, 5.0], [0.0, 1.0, 2.5]
    asked = perm.group_permutation_test(first, second, permutations=10**10, rng=0)
    exact = perm.group_permutation_test(first, second, permutations="exact")
    assert asked.p_value_exact and asked.n_permutations == asked.n_partitions == math.comb(6, 3) == 20
    assert asked.p_values == exact.p_values and asked.p_values["greater"] == 1 / 20
    # one draw fewer than the partitions is still Monte Carlo
    assert not perm.group_permutation_test(first, second, permutations=19, rng=0).p_value_exact


def test_a_monte_carlo_test_too_long_is_refused_before_any_draw_with_its_estimate() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(EatkitError, match=r"1e\+12 Monte Carlo permutations of 25 \+ 25 values would take about"):
        perm.group_permutation_test(rng.normal(size=25), rng.normal(size=25), permutations=10**12)
    assert perm.check_monte_carlo_feasible(25, 25, 10**6) < monte_carlo.MC_MAX_SECONDS


@pytest.mark.skipif("not perm.compiled()", reason="the compiled kernels (numba) are not installed")
def test_the_compiled_monte_carlo_runs_in_chunks_with_the_same_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    ints = rng.integers(-1000, 1000, size=(30, 2)).astype(np.int64)
    thresholds = [exact_counts.IntThresholds.of(ints[:, i].copy(), 15, 0) for i in range(2)]
    for key in (5, 2**63 - 3):  # the second wraps the uint64 hash input within the run
        whole = monte_carlo.monte_carlo_counts(ints, 15, 50_000, key, thresholds)
        monkeypatch.setattr(monte_carlo, "MC_CHUNK_STEPS", 1 << 14)
        assert monte_carlo.monte_carlo_counts(ints, 15, 50_000, key, thresholds) == whole
        monkeypatch.undo()
    # Ctrl-C arrives between two chunks: the test stops there instead of running all the draws
    calls = []
    kernel = exact_counts.compiled_kernels().monte_carlo

    def interrupted(*args):
        calls.append(args[4])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return kernel(*args)

    monkeypatch.setattr(monte_carlo, "MC_CHUNK_STEPS", 1 << 14)
    monkeypatch.setattr(exact_counts.compiled_kernels(), "monte_carlo", interrupted)
    with pytest.raises(KeyboardInterrupt):
        monte_carlo.monte_carlo_counts(ints, 15, 10**7, 5, thresholds)
    assert len(calls) == 2 and max(calls) < 10**5


# -- #3, #4, #5, #11: outputs -------------------------------------------------------------------------

import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

from eatkit.cli import main  # noqa: E402

WORDS = {"X": ["rose", "tulip"], "Y": ["ant", "bee"], "A": ["good", "nice"], "B": ["bad", "ugly"]}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A word suite and a vectors file for it."""
    test = {"id": "t1", "title": "T1", **{r: {"name": r, "modality": "word", "items": w} for r, w in WORDS.items()}}
    (tmp_path / "suite.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "tiny", "title": "Tiny",
                                                     "tests": [test]}))
    rng = np.random.default_rng(0)
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(f'{v:.3f}' for v in rng.normal(size=3))}\n"
                                            for ws in WORDS.values() for w in ws))
    return tmp_path


def _run(tiny: Path, *extra: str) -> int:
    return main(["run", str(tiny / "suite.json"), "--vectors", str(tiny / "v.txt"), "--permutations", "10",
                 "--n-bootstrap", "0", "--seed", "1", "-q", *extra])


def test_a_report_never_replaces_a_run_folders_own_files(tiny: Path, capsys) -> None:
    assert _run(tiny, "-o", str(tiny / "run")) == 0
    before = _contents(tiny / "run")
    for target in ("results.json", "similarities.npz", "manifest.json"):
        assert main(["report", str(tiny / "run"), "--html", str(tiny / "run" / target)]) == 2
        assert "is not an eatkit html file: eatkit does not write over it" in capsys.readouterr().err
    assert _contents(tiny / "run") == before
    assert main(["verify", str(tiny / "run")]) == 0
    # an eatkit report may be written again
    assert main(["report", str(tiny / "run"), "--html", str(tiny / "r.html"), "-q"]) == 0
    assert main(["report", str(tiny / "run"), "--html", str(tiny / "r.html"), "-q"]) == 0


def test_an_output_folder_with_the_users_own_files_is_refused_and_left_alone(tiny: Path, capsys) -> None:
    mine = tiny / "mine"
    mine.mkdir()
    (mine / "report.html").write_text("<p>my report</p>")
    (mine / "table.md").write_text("| my table |")
    assert _run(tiny, "-o", str(mine)) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"eatkit: error: output folder {mine} holds files eatkit did not write (report.html, table.md): " \
                  "give a new or empty folder"
    assert sorted(p.name for p in mine.iterdir()) == ["report.html", "table.md"]
    assert (mine / "table.md").read_text() == "| my table |"
    # into an earlier run's folder: its own files are replaced, a file of the user's there is left alone
    assert _run(tiny, "-o", str(tiny / "run"), "--report") == 0
    (tiny / "run" / "notes.txt").write_text("mine")
    assert _run(tiny, "-o", str(tiny / "run")) == 0
    assert (tiny / "run" / "notes.txt").read_text() == "mine" and not (tiny / "run" / "report.html").exists()


def test_runs_without_an_output_folder_never_replace_each_other(tiny: Path, monkeypatch) -> None:
    monkeypatch.chdir(tiny)
    assert _run(tiny) == 0
    assert _run(tiny) == 0
    runs = sorted((tiny / "eatkit-results").iterdir())
    assert len(runs) == 2 and all((r / "results.json").exists() for r in runs)


def test_report_html_has_the_mode_of_the_other_outputs(tiny: Path) -> None:
    assert _run(tiny, "-o", str(tiny / "run"), "--report") == 0
    modes = {str(p.relative_to(tiny / "run")): p.stat().st_mode & 0o777 for p in _files(tiny / "run")}
    assert len(set(modes.values())) == 1 and modes["report.html"] == 0o666 & ~_umask(), modes


def _files(folder: Path) -> list[Path]:
    """Every file of a run folder, its subfolders' (``tables/``) included."""
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in _files(folder)}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# -- #6: an unreadable category folder ------------------------------------------------------------------


def test_an_unreadable_image_folder_is_one_line(tmp_path: Path, monkeypatch) -> None:
    from eatkit.stimuli.images import resolve_image_set
    from eatkit.stimuli.types import StimulusSet

    (tmp_path / "t" / "c").mkdir(parents=True)
    original = Path.iterdir

    def refused(self):  # mode 000 (as root, chmod does not stop reading, so the error is simulated)
        if self.name == "c":
            raise PermissionError(13, "Permission denied", str(self))
        return original(self)

    monkeypatch.setattr(Path, "iterdir", refused)
    with pytest.raises(EatkitError, match=r"^cannot read the image folder of set 'C', .*/t/c: Permission denied$"):
        resolve_image_set(StimulusSet("C", "image", category="t/c"), tmp_path)


# -- #10: vectors files with a byte-order mark or tabs ----------------------------------------------------


@pytest.mark.parametrize("text", ["\ufeffrose 1 0 0\nant 0 1 0\n", "rose\t1\t0\t0\nant\t0\t1\t0\n",
                                  "\ufeff2 3\nrose 1 0 0\nant\t0 1 0\n"])
def test_a_byte_order_mark_and_tabs_are_read_as_a_user_means_them(tmp_path: Path, text: str) -> None:
    from eatkit.sources.vectors import load_word_vectors

    (tmp_path / "v.txt").write_text(text, encoding="utf-8")
    vectors = load_word_vectors(tmp_path / "v.txt")
    assert vectors.words == ["rose", "ant"]
    np.testing.assert_array_equal(vectors.vectors, [[1, 0, 0], [0, 1, 0]])


# -- #9: the sweep report names failed cells; a resumed sweep says "finished before" ----------------------


def test_the_sweep_report_lists_failed_cells_and_a_resume_says_finished_before(tiny: Path, capsys) -> None:
    """A word model x a sentence suite is planned out (inapplicable, not a failure); a model that cannot be
    read is a failed cell, listed with its error in audit.html; a resume says "finished before"."""
    sentences = json.loads((tiny / "suite.json").read_text())
    for role in "XYAB":
        sentences["tests"][0][role]["modality"] = "sentence"
    sentences["id"] = "sentences"
    (tiny / "sentences.json").write_text(json.dumps(sentences))
    (tiny / "sweep.toml").write_text('models = [{ vectors = "v.txt" }, { vectors = "gone.txt" }]\n'
                                     'suites = ["suite.json", "sentences.json"]\n'
                                     'settings = [{ seed = 0, n_bootstrap = 0, permutations = 10 }]\n')
    argv = ["sweep", str(tiny / "sweep.toml"), "-o", str(tiny / "out"), "--jobs", "0", "-q"]
    assert main(argv) == 1
    html = (tiny / "out" / "audit.html").read_text()
    assert "1 done, 2 inapplicable, 1 failed" in html and "gone__suite__default" in html and "gone.txt" in html
    capsys.readouterr()
    assert main(argv[:-1]) == 1
    assert "4 cells: 0 computed, 1 finished before, 1 failed, 2 inapplicable" in capsys.readouterr().out
    cells = (tiny / "out" / "cells.csv").read_text()
    assert "finished before" in cells and "skipped" not in cells
    tests = (tiny / "out" / "tests.csv").read_text()
    assert "v,sentences,default,t1,inapplicable,needs sentence stimuli; v embeds word" in tests
    assert "gone,suite,default,t1,failed,vectors file " in tests  # a failed cell's tests, with its error


# -- #11: small things that misled ------------------------------------------------------------------------


def test_help_list_and_cache_info_say_what_they_mean(capsys, monkeypatch, tmp_path: Path) -> None:
    from eatkit.cli.cache import human_size

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "info about, or clear, the embedding cache" in capsys.readouterr().out
    assert main(["list", "suites"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not any(" 1 tests " in line for line in lines) and all(" 0 test" not in line for line in lines)
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path))
    assert main(["cache", "info"]) == 0
    # (issue 46: cache info counts what cache clear removes, embeddings and permutation counts apart)
    assert capsys.readouterr().out.splitlines()[1:] == ["embeddings: 0", "permutation counts: 0", "size: 0 bytes"]
    assert (human_size(1023), human_size(1536), human_size(5 * 2**20)) == ("1023 bytes", "1.5 KiB", "5.0 MiB")


def test_more_workers_than_cores_are_capped_with_a_warning(capsys) -> None:
    from eatkit.encoders.device import usable_cores
    from eatkit.registry import build_model

    model = build_model("efficientnet_lite0", workers=1000, device="cpu")
    assert model.workers == max(usable_cores(), 2)
    assert f"eatkit: warning: workers=1000 is more than the {usable_cores()} usable cores" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "reason"), [
    (b"this is no zip archive", "it does not start as an .npz (zip) file does"),
    ("objects", "it holds pickled Python objects, which eatkit never loads"),
])
def test_a_garbage_npz_is_named_without_numpys_pickle_advice(tmp_path: Path, content, reason) -> None:
    from eatkit.sources.precomputed import PrecomputedEmbeddings

    path = tmp_path / "e.npz"
    if content == "objects":
        np.savez(path, ids=np.array(["a", None], dtype=object), vectors=np.ones((2, 2)))
    else:
        path.write_bytes(content)
    with pytest.raises(EatkitError) as info:
        PrecomputedEmbeddings(path)
    assert reason in str(info.value) and "allow_pickle" not in str(info.value)


# -- degenerate input: one shared check per kind (stats._validation), the same in the API and the CLI -----


def test_a_set_compared_with_itself_and_complex_numbers_are_errors(tiny: Path, capsys) -> None:
    from eatkit import eat

    rng = np.random.default_rng(0)
    X, A, B = rng.normal(size=(3, 4, 5))
    with pytest.raises(EatkitError, match="sets 'X' and 'Y' hold the same vectors"):
        eat(X, X[::-1].copy(), A, B)  # (in another order: still the same set)
    with pytest.raises(EatkitError, match="sets 'A' and 'B' hold the same vectors"):
        eat(X, A, B, B.copy())
    with pytest.raises(EatkitError, match="set 'X' has complex values"):
        eat(X + 1j, A, A + 1, B)
    # from the command line: a suite whose two attribute sets are the same words
    suite = json.loads((tiny / "suite.json").read_text())
    suite["tests"][0]["B"]["items"] = suite["tests"][0]["A"]["items"]
    (tiny / "same.json").write_text(json.dumps(suite))
    assert main(["run", str(tiny / "same.json"), "--vectors", str(tiny / "v.txt"), "-q", "-o", str(tiny / "o")]) == 2
    assert "sets 'A' and 'B' hold the same vectors" in capsys.readouterr().err


# -- file-system faults: a full disk while writing leaves one line and no partial output --------------------


@pytest.mark.parametrize("where", ["new", "existing"])
def test_a_full_disk_while_saving_is_one_line_and_leaves_nothing_partial(tiny: Path, capsys, monkeypatch,
                                                                         where: str) -> None:
    import eatkit.run.folder as folder

    out = tiny / "run"
    if where == "existing":
        assert _run(tiny, "-o", str(out)) == 0
        capsys.readouterr()
    before = _contents(out) if out.exists() else None

    def full(handle, **arrays):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(folder.np, "savez_compressed", full)
    assert _run(tiny, "-o", str(out)) == 2
    assert capsys.readouterr().err == f"eatkit: error: cannot write results to {out}: No space left on device\n"
    assert (_contents(out) if out.exists() else None) == before
    assert not [p for p in tiny.iterdir() if p.name.endswith(".partial")]


def test_the_command_line_counts_exactly_when_asked_for_more_draws_than_partitions(tiny: Path) -> None:
    out = tiny / "many"
    assert main(["run", str(tiny / "suite.json"), "--vectors", str(tiny / "v.txt"), "--permutations", "10000000000",
                 "--n-bootstrap", "0", "-q", "-o", str(out)]) == 0
    (record,) = json.loads((out / "results.json").read_text())
    assert record["p_value_exact"] is True and record["n_permutations"] == math.comb(4, 2) == 6
    assert json.loads((out / "manifest.json").read_text())["statistics"]["permutations"] == 10000000000


def test_a_run_folder_given_twice_is_reported_once_with_a_word(tiny: Path, capsys) -> None:
    assert _run(tiny, "-o", str(tiny / "run")) == 0
    capsys.readouterr()
    assert main(["report", str(tiny / "run"), f"{tiny}/./run/", "--html", str(tiny / "r.html"), "-q"]) == 0
    assert capsys.readouterr().err == (f"eatkit: warning: run folder {tiny / 'run'} is given twice (also as "
                                       f"{tiny / 'run'}): it is reported once\n")
    assert (tiny / "r.html").read_text().count('id="run-') == 1
