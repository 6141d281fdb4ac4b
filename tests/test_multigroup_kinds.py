"""The multi-group kinds ("same", "generalized-weat") from a suite file through `eatkit run`: the records
equal eatkit.stats.multigroup on the same vectors and seed; roles are told apart by role_groups."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eatkit.analyses.multigroup import role_groups
from eatkit.cli import main
from eatkit.stats.multigroup import generalized_weat, same

WORDS = {"jobs": ["doctor", "nurse", "pilot", "chef"], "male": ["he", "him", "his"], "female": ["she", "her", "hers"],
         "plural": ["they", "them", "theirs"], "flowers": ["rose", "lily", "tulip"], "insects": ["ant", "fly", "wasp"]}


def _set(name):
    return {"name": name, "modality": "word", "items": WORDS[name]}


def _roles(**roles):
    return {role: _set(name) for role, name in roles.items()}


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
        {"id": "same3", "title": "SAME", "kind": "same", **_roles(T1="jobs", A1="male", A2="female", A3="plural")},
        {"id": "same2", "title": "SAME 2", "kind": "same", **_roles(T1="jobs", A1="male", A2="female")},
        {"id": "gweat", "title": "GWEAT", "kind": "generalized-weat",
         **_roles(T1="flowers", T2="insects", A1="male", A2="female")}])
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "multi.json"), "--vectors", str(tmp_path / "vectors.txt"), "--seed", "3",
                 "--n-bootstrap", "50", "-o", str(out)]) == 0, capsys.readouterr().err
    records = {r["test"]: r for r in json.loads((out / "results.json").read_text())}

    def of(role):
        return np.array([vectors[w] for w in WORDS[role]])

    expected = {
        "same3": same(of("jobs"), [of("male"), of("female"), of("plural")], n_bootstrap=50,
                      rng=records["same3"]["seed"]),
        "same2": same(of("jobs"), [of("male"), of("female")], n_bootstrap=50, rng=records["same2"]["seed"]),
        "gweat": generalized_weat([of("flowers"), of("insects")], [of("male"), of("female")], n_bootstrap=50,
                                  rng=records["gweat"]["seed"]),
    }
    for test, result in expected.items():
        record = records[test]
        assert record["value"] == pytest.approx(result.value, abs=1e-12)
        assert record["p_value"] == result.p_value and record["p_value_exact"] is True
        assert record["ci"] == list(result.ci) and record["n_permutations"] == result.permutations
    assert records["same3"]["attribute_roles"] == ["A1", "A2", "A3"] and records["same3"]["skew"] is None
    assert records["same2"]["skew"] == pytest.approx(expected["same2"].skew)
    assert records["gweat"]["kind"] == "generalized-weat" and records["gweat"]["target_roles"] == ["T1", "T2"]
    assert "generalized-weat" in capsys.readouterr().out


def test_role_groups():
    assert role_groups("same", ["A2", "T1", "A1", "A3"]) == (["T1"], ["A1", "A2", "A3"])
    assert role_groups("generalized-weat", ["T1", "T2", "A1", "A2"]) == (["T1", "T2"], ["A1", "A2"])


@pytest.mark.parametrize(("kind", "roles", "message"), [
    ("generalized-weat", {"T1": "flowers", "T2": "insects", "A1": "male", "A2": "female", "A3": "plural"},
     "pairs target and attribute sets"),
    ("same", {"T1": "jobs", "A1": "male"}, "needs at least 2 sets A1, A2, ..."),
    ("same", {"T1": "jobs", "A1": "male", "A3": "female"}, "must be numbered from 1 without gaps"),
])
def test_bad_roles_are_one_line(tmp_path, capsys, kind, roles, message):
    write_suite(tmp_path, [{"id": "t", "title": "T", "kind": kind, **_roles(**roles)}])
    assert main(["run", str(tmp_path / "multi.json"), "--vectors", str(tmp_path / "vectors.txt"),
                 "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_permutations_exact_counts_every_assignment_in_a_run(tmp_path, capsys):
    # SAME over 3 + 3 + 3 attribute words: 1,680 assignments, all counted (never sampled) with --permutations exact
    write_suite(tmp_path, [{"id": "same3", "title": "SAME", "kind": "same",
                            **_roles(T1="jobs", A1="male", A2="female", A3="plural")}])
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "multi.json"), "--vectors", str(tmp_path / "vectors.txt"), "--permutations",
                 "exact", "--n-bootstrap", "0", "-q", "-o", str(out)]) == 0, capsys.readouterr().err
    record, = json.loads((out / "results.json").read_text())
    assert record["p_value_exact"] is True and record["n_permutations"] == 1680
