"""Statistics defaults of a run (issue 34): the Benjamini-Hochberg family is each kind's tests unless pooled,
the seed is fixed unless ``--seed random``, and every recorded seed is read exactly as a 64-bit float."""

from __future__ import annotations

import json

import pytest

from eatkit.cli import main
from eatkit.stats import adjust_p_values

RUN = ["run", "weat", "--model", "glove-6b-50d", "--tests", "weat6,weat7,weat9", "--n-bootstrap", "0",
       "--permutations", "2000", "-q"]


def _records(folder) -> list[dict]:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _manifest(folder) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("defaults")
    folders = {}
    for name, extra in {"alone": [], "again": [], "metrics": ["--metrics", "rnd,ect"],
                        "pooled": ["--metrics", "rnd,ect", "--correction-family", "run"],
                        "random": ["--seed", "random"]}.items():
        folders[name] = root / name
        assert main([*RUN, *extra, "-o", str(folders[name])]) == 0
    return folders


def test_metrics_leave_every_eat_q_value_as_it_was(runs):
    alone = {r["test"]: r for r in _records(runs["alone"])}
    with_metrics = _records(runs["metrics"])
    eats = [r for r in with_metrics if r["kind"] == "eat"]
    assert len(eats) == 3 and any(r["kind"] == "rnd" for r in with_metrics)
    for record in eats:
        assert record["q_value"] == alone[record["test"]]["q_value"]
    # each metric is its own family: its q-values are BH over its own p-values
    for kind in ("rnd", "ect"):
        own = [r for r in with_metrics if r["kind"] == kind]
        expected = adjust_p_values([r["p_value"] for r in own], method="bh")
        assert [r["q_value"] for r in own] == pytest.approx(expected, rel=0, abs=0)
    assert _manifest(runs["metrics"])["statistics"]["correction_family"] == "kind"


def test_correction_family_run_is_stated_under_the_table(tmp_path, capsys):
    assert main([*RUN[:-1], "--tests", "weat6", "--correction-family", "run", "-o", str(tmp_path / "r")]) == 0
    assert "q: Benjamini-Hochberg over all of the run's tested records" in capsys.readouterr().out


def test_correction_family_run_pools_every_tested_record(runs):
    pooled = [r for r in _records(runs["pooled"]) if r["p_value"] is not None]
    expected = adjust_p_values([r["p_value"] for r in pooled], method="bh")
    assert [r["q_value"] for r in pooled] == pytest.approx(expected, rel=0, abs=0)
    by_kind = {r["test"]: r["q_value"] for r in _records(runs["metrics"])}
    assert any(r["q_value"] != by_kind[r["test"]] for r in pooled)  # the family changes q here
    assert _manifest(runs["pooled"])["statistics"]["correction_family"] == "run"


def test_same_command_without_seed_gives_the_same_results(runs):
    first, again = _records(runs["alone"]), _records(runs["again"])
    assert first == again
    assert any(not r["p_value_exact"] for r in first)  # a sampled p-value among them: the seed mattered
    assert _manifest(runs["alone"])["statistics"]["seed"] == 0


def test_seed_random_is_drawn_recorded_and_exact_as_a_float(runs):
    seed = _manifest(runs["random"])["statistics"]["seed"]
    assert isinstance(seed, int) and seed != 0 and 0 <= seed < 2**53
    for folder in runs.values():
        for record in _records(folder):
            if record.get("seed") is not None:
                assert 0 <= record["seed"] < 2**53 and float(record["seed"]) == record["seed"]
    # the drawn seed repeats the run
    again = runs["random"].parent / "repeat"
    assert main([*RUN, "--seed", str(seed), "-o", str(again)]) == 0
    assert _records(again) == _records(runs["random"])


def test_bad_correction_family_and_seed_are_one_line_errors(capsys):
    with pytest.raises(SystemExit) as stop:
        main([*RUN, "--correction-family", "test"])
    assert stop.value.code == 2
    with pytest.raises(SystemExit) as stop:
        main([*RUN, "--seed", "-1"])
    assert stop.value.code == 2
    assert "--seed" in capsys.readouterr().err
