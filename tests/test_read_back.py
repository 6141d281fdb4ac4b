"""Read-backs check what they read (issue 45): a hand-edited results.json (a p-value of 7.5, a negative n, a
missing field) is refused by read_run, report, verify and a sweep resume with one line naming file and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.records import FIELD_RANGES
from eatkit.run.folder import read_run

WORDS = {"X": ["rose", "tulip", "daisy"], "Y": ["ant", "bee", "wasp"], "A": ["good", "nice", "kind"],
         "B": ["bad", "evil", "mean"]}


def _p(record: dict[str, Any]) -> str:
    record["p_value"] = 7.5
    return ": 'p_value' is 7.5, outside its declared range [0, 1]"


def _n(record: dict[str, Any]) -> str:
    record["n_x"] = -3
    return ": 'n_x' is -3, outside its declared range [0, inf]"


def _missing(record: dict[str, Any]) -> str:
    del record["effect_size"]
    return " lacks 'effect_size'"


EDITS: dict[str, Callable[[dict[str, Any]], str]] = {"p-value 7.5": _p, "negative n": _n, "missing field": _missing}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("read-back")
    g = np.random.default_rng(0)
    (root / "v.txt").write_text("".join(f"{w} {' '.join(map(str, g.normal(size=5)))}\n"
                                        for ws in WORDS.values() for w in ws))
    test = {"id": "t1", "title": "t1", "kind": "eat", **{r: {"name": r, "modality": "word", "items": items}
                                                         for r, items in WORDS.items()}}
    (root / "suite.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "s",
                                                 "tests": [test]}))
    (root / "sweep.toml").write_text(f'models = [{{ vectors = "{root}/v.txt" }}]\n'
                                     f'suites = [{{ suite = "{root}/suite.json" }}]\n')
    assert main(["run", str(root / "suite.json"), "--vectors", str(root / "v.txt"), "--n-bootstrap", "0", "-q",
                 "-o", str(root / "run")]) == 0
    assert main(["sweep", str(root / "sweep.toml"), "-q", "-o", str(root / "sweep")]) == 0
    return root


def _edited(folder: Path, edit: Callable[[dict[str, Any]], str]) -> str:
    path = folder / "results.json"
    records = json.loads(path.read_text())
    message = edit(records[0])
    path.write_text(json.dumps(records))
    return f"{path}: test 't1'{message}"


def _one_line_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("eatkit: error: ") and message in err, err


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_read_run_report_and_verify_refuse_a_hand_edited_results_json(made: Path, tmp_path: Path, capsys,
                                                                      edit: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(made / "run", run)
    message = _edited(run, EDITS[edit])
    with pytest.raises(EatkitError) as caught:
        read_run(run)
    assert str(caught.value) == message
    _one_line_exit_2(["report", str(run), "--html", str(tmp_path / "r.html")], message, capsys)
    _one_line_exit_2(["verify", str(run)], message, capsys)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_a_sweep_resume_refuses_a_hand_edited_cell(made: Path, tmp_path: Path, capsys, edit: str) -> None:
    sweep = tmp_path / "sweep"
    shutil.copytree(made / "sweep", sweep)
    cell = next((sweep / "cells").iterdir())
    message = _edited(cell, EDITS[edit])
    _one_line_exit_2(["sweep", str(made / "sweep.toml"), "-q", "-o", str(sweep)], message, capsys)


def test_fresh_folders_read_back_within_the_declared_ranges(made: Path) -> None:
    records, _, _ = read_run(made / "run")
    assert 0 <= records[0].p_value <= 1 and records[0].n_x == 3
    assert any(pattern.fullmatch("p_value") for pattern, _, _ in FIELD_RANGES)


def test_an_edited_nested_p_value_is_refused_too(made: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(made / "run", run)
    path = run / "results.json"
    records = json.loads(path.read_text())
    records[0]["p_values"]["two-sided"] = -0.5
    path.write_text(json.dumps(records))
    with pytest.raises(EatkitError, match=r"'p_values' is -0.5, outside its declared range \[0, 1\]"):
        read_run(run)
