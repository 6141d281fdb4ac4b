"""The multi-group kinds ("same", "generalized-weat") from a suite file through `eatkit run`: the records
equal eatkit.stats.multigroup on the same vectors and seed; roles are told apart by role_groups."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eatkit.analyses.multigroup import role_groups
from eatkit.cli import main
from eatkit.stats.multigroup import generalized_weat, same

WORDS = {"T": ["doctor", "nurse", "pilot", "chef"], "A1": ["he", "him", "his"], "A2": ["she", "her", "hers"],
         "A3": ["they", "them", "theirs"], "X1": ["rose", "lily", "tulip"], "X2": ["ant", "fly", "wasp"]}


def _set(role):
    return {"name": role, "modality": "word", "items": WORDS[role]}


def write_suite(tmp_path, tests):
    rng = np.random.default_rng(0)
    vectors = {w: rng.normal(size=8) for ws in WORDS.values() for w in ws}
    (tmp_path / "vectors.txt").write_text(
        "".join(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n" for w, v in vectors.items()))
    suite = {"schema": "eatkit.suite/1", "id": "multi", "title": "Multi-group", "tests": tests}
    (tmp_path / "multi.json").write_text(json.dumps(suite))
    # as eatkit reads them: the printed digits, stored as float32
    return {w: np.array([f"{x:.6f}" for x in v], dtype=np.float32).astype(np.float64) for w, v in vectors.items()}


def test_records_equal_the_statistics(tmp_path, capsys):
    vectors = write_suite(tmp_path, [
        {"id": "same3", "title": "SAME", "kind": "same", **{r: _set(r) for r in ("T", "A1", "A2", "A3")}},
        {"id": "same2", "title": "SAME 2", "kind": "same", **{r: _set(r) for r in ("T", "A1", "A2")}},
        {"id": "gweat", "title": "GWEAT", "kind": "generalized-weat", **{r: _set(r) for r in ("X1", "X2", "A1", "A2")}}])
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "multi.json"), "--vectors", str(tmp_path / "vectors.txt"), "--seed", "3",
                 "--bootstrap", "50", "-o", str(out)]) == 0, capsys.readouterr().err
    records = {r["test"]: r for r in json.loads((out / "results.json").read_text())}

    def of(role):
        return np.array([vectors[w] for w in WORDS[role]])

    expected = {
        "same3": same(of("T"), [of("A1"), of("A2"), of("A3")], bootstrap=50, rng=records["same3"]["seed"]),
        "same2": same(of("T"), [of("A1"), of("A2")], bootstrap=50, rng=records["same2"]["seed"]),
        "gweat": generalized_weat([of("X1"), of("X2")], [of("A1"), of("A2")], bootstrap=50,
                                  rng=records["gweat"]["seed"]),
    }
    for test, result in expected.items():
        record = records[test]
        assert record["value"] == pytest.approx(result.value, abs=1e-12)
        assert record["p_value"] == result.p_value and record["p_value_exact"] is True
        assert record["ci"] == list(result.ci) and record["n_permutations"] == result.permutations
    assert records["same3"]["attribute_roles"] == ["A1", "A2", "A3"] and records["same3"]["skew"] is None
    assert records["same2"]["skew"] == pytest.approx(expected["same2"].skew)
    assert records["gweat"]["kind"] == "generalized-weat" and records["gweat"]["target_roles"] == ["X1", "X2"]
    assert "generalized-weat" in capsys.readouterr().out


def test_role_groups():
    assert role_groups(["X", "Y", "A", "B"]) == (["X", "Y"], ["A", "B"])
    assert role_groups(["T", "A1", "A2", "A3"]) == (["T"], ["A1", "A2", "A3"])


@pytest.mark.parametrize(("kind", "roles", "message"), [
    ("generalized-weat", ("X1", "X2", "A1", "A2", "A3"), "pairs target and attribute sets"),
    ("same", ("T", "A1"), "at least two attribute roles"),
])
def test_bad_roles_are_one_line(tmp_path, capsys, kind, roles, message):
    write_suite(tmp_path, [{"id": "t", "title": "T", "kind": kind, **{r: _set(r) for r in roles}}])
    assert main(["run", str(tmp_path / "multi.json"), "--vectors", str(tmp_path / "vectors.txt"),
                 "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
