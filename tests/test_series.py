"""Series of runs: HistWords decades (--series), prompts (--compare-prompts), and their reports."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import eatkit
from eatkit.cli import main
from eatkit.report.series import SIGN_CHANGE, load_series, series_table
from test_histwords import YEARS, _roles, write_series


def run_cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_series_over_histwords_decades_recovers_each_decades_eat(capsys, tmp_path):
    decades = write_series(tmp_path / "hw")
    out = tmp_path / "out"
    code, stdout, err = run_cli(capsys, "run", "mleat-histwords", "--series", tmp_path / "hw", "--seed", "0",
                                "--permutations", "200", "--n-bootstrap", "0", "-o", out, "--report")
    assert code == 0, err
    series = load_series(out)
    assert series.labels == [str(y) for y in YEARS] and series.kind == "series"
    roles = _roles()
    effects = []
    for year, run in zip(YEARS, series.runs):
        words, m = decades[year]
        direct = eatkit.eat(*(m[[words.index(w) for w in roles[r]]] for r in "XYAB"), permutations=1, rng=0)
        record = run.records[0]
        assert record.effect_size == pytest.approx(direct.effect_size, abs=0.01)
        assert run.manifest["source"]["id"] == f"histwords-{year}" and run.manifest["statistics"]["seed"] == 0
        effects.append(record.effect_size)
    assert int(np.argmax(effects)) == 2 and effects[0] < effects[2] > effects[4]
    assert "math-arts" in stdout and "1810" in stdout and "1850" in stdout
    html = (out / "report.html").read_text()
    assert "<svg" in html and "over the series" in html and all(str(y) in html for y in YEARS)
    # the side-by-side table marks a sign change against the first decade, and only that
    table = series_table(series)
    assert table in stdout
    first = series.runs[0].records[0]
    fields = ("effect_size", "level2_x_effect_size", "level2_y_effect_size")
    marks = 0
    for label, run in zip(series.labels[1:], series.runs[1:]):
        record = run.records[0]
        cells = next(x for x in table.splitlines() if x.startswith(label)).split()
        for k, name in enumerate(fields, start=1):
            changed = getattr(record, name) * getattr(first, name) < 0
            assert cells[k].endswith(SIGN_CHANGE) == changed, (label, name)
            marks += changed
    assert marks > 0 and not any(c.endswith(SIGN_CHANGE) for c in table.splitlines()[3].split())


@pytest.mark.parametrize("damage, message", [
    ("vocab", "decade 1830 has 1830-w.npy but no vocabulary file 1830-vocab.pkl"),
    ("dims", "decades have different dimensions"),
])
def test_bad_series_folders_are_one_line_errors(capsys, tmp_path, damage, message):
    write_series(tmp_path)
    if damage == "vocab":
        (tmp_path / "1830-vocab.pkl").unlink()
    else:
        np.save(tmp_path / "1840-w.npy", np.ones((3, 7), dtype=np.float32))
        (tmp_path / "1840-vocab.pkl").write_bytes(pickle.dumps(["a", "b", "c"]))
    code, out, err = run_cli(capsys, "run", "mleat-histwords", "--series", tmp_path, "-o", tmp_path / "o")
    assert code == 2 and err.count("\n") == 1 and err.startswith("eatkit: error: ") and message in err


def test_series_of_word_vector_files(capsys, tmp_path):
    """--series with several vector files (checkpoints): one point per file, in the order given."""
    decades = write_series(tmp_path / "hw")
    files = []
    for year in (1830, 1810):  # deliberately not sorted: the order given is the series order
        words, matrix = decades[year]
        path = tmp_path / f"step{year}.txt"
        path.write_text("".join(" ".join([w, *(f"{v:.9g}" for v in row)]) + "\n" for w, row in zip(words, matrix)))
        files.append(path)
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "run", "mleat-histwords", "--series", *files, "--seed", "0", "--permutations",
                           "50", "--n-bootstrap", "0", "-o", out, "-q")
    assert code == 0, err
    series = load_series(out)
    assert series.labels == ["step1830", "step1810"]
    roles = _roles()
    for year, run in zip((1830, 1810), series.runs):
        words, m = decades[year]
        direct = eatkit.eat(*(m[[words.index(w) for w in roles[r]]] for r in "XYAB"), permutations=1, rng=0)
        assert run.records[0].effect_size == pytest.approx(direct.effect_size, abs=1e-5)


def test_decades_choose_which_histwords_decades_run(capsys, tmp_path):
    """--decades FIRST-LAST (the ML-EAT seed excludes 1800): only those decades run, in order."""
    write_series(tmp_path / "hw")
    out = tmp_path / "some"
    code, _, err = run_cli(capsys, "run", "mleat-histwords", "--series", tmp_path / "hw", "--decades", "1820-1840",
                           "--seed", "0", "--n-bootstrap", "0", "-o", out)
    assert code == 0, err
    series = load_series(out)
    assert series.labels == ["1820", "1830", "1840"]
    assert "--decades 1820-1840" in series.runs[0].manifest["command"]
    for argv, message in (
        (["--series", tmp_path / "hw", "--decades", "1900-1990"], "has no decade from 1900 to 1990 (it has 1810, "),
        (["--series", tmp_path / "hw", "--decades", "1840-1820"], "the first year is after the last"),
        (["--series", tmp_path / "hw", "--decades", "1810s"], "--decades must be FIRST-LAST years"),
        (["--vectors", tmp_path / "v.txt", "--decades", "1810-1990"], "--decades applies to --series only"),
    ):
        code, _, err = run_cli(capsys, "run", "mleat-histwords", *argv, "-o", tmp_path / "bad")
        assert code == 2 and err.count("\n") == 1 and err.startswith("eatkit: error: ") and message in err, err
