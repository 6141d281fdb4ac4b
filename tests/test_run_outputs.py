"""Output folders: a run's files appear whole, replace what an older run left there, and nothing is
created when the run fails (issue 10, finding 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eatkit.cli import main

WORDS = {"X": "rose tulip", "Y": "ant bee", "A": "good nice", "B": "bad ugly"}


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "S", "tests": [{
        "id": "t", "title": "T", **{r: {"name": r, "modality": "word", "items": w.split()} for r, w in WORDS.items()}}]}))
    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} {i % 3} {i % 5} 1\n" for i, w in enumerate(" ".join(WORDS.values()).split())))
    return suite, vectors


def run(suite: Path, vectors: Path, out: Path, *extra: str) -> int:
    return main(["run", str(suite), "--vectors", str(vectors), "-q", "--n-bootstrap", "0", "-o", str(out), *extra])


def test_a_new_run_replaces_an_older_ones_files_and_removes_its_stale_report(inputs, tmp_path: Path) -> None:
    suite, vectors = inputs
    out = tmp_path / "out"
    assert run(suite, vectors, out, "--report", "--seed", "1") == 0
    assert (out / "report.html").is_file()
    (out / "table.tex").write_text("old table")
    (out / "notes.txt").write_text("the user's own file")
    first = json.loads((out / "manifest.json").read_text())
    assert run(suite, vectors, out, "--seed", "2", "--alternative", "less") == 0
    assert sorted(p.name for p in out.iterdir()) == [".eatkit-output.json", "manifest.json", "notes.txt",
                                                   "results.csv", "results.json", "similarities.npz", "tables"]
    second = json.loads((out / "manifest.json").read_text())
    assert (first["statistics"]["seed"], second["statistics"]["seed"]) == (1, 2)
    assert json.loads((out / "results.json").read_text())[0]["alternative"] == "less"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_failed_run_creates_nothing_and_keeps_the_older_run(inputs, tmp_path: Path, capsys) -> None:
    suite, vectors = inputs
    out = tmp_path / "deep" / "out"
    bad = tmp_path / "bad.txt"
    bad.write_text("rose 1 2 3\n")  # every other word is out of vocabulary
    assert run(suite, bad, out) == 2
    assert not (tmp_path / "deep").exists()
    assert run(suite, vectors, out) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert run(suite, bad, out) == 2
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert "out-of-vocabulary" in capsys.readouterr().err


def test_an_output_path_that_cannot_be_a_folder_is_refused_before_any_work(inputs, tmp_path: Path, capsys) -> None:
    suite, vectors = inputs
    (tmp_path / "file").write_text("x")
    assert run(suite, vectors, tmp_path / "file" / "out") == 2
    assert "cannot create output folder" in capsys.readouterr().err
    (tmp_path / "out" / "results.json").mkdir(parents=True)
    assert run(suite, vectors, tmp_path / "out") == 2
    assert "results.json: it is a folder" in capsys.readouterr().err
