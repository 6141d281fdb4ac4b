"""Which alternative a run tests (issue 25): a suite's default (american-white: two-sided, its study reports
effects of both signs), an explicit --alternative that replaces it in every record, the ML-EAT convention
'observed', and the p of all three alternatives kept in every record."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from test_cli import assert_one_line_error, run_cli

from eatkit.stimuli.loader import load_suite

WORDS = {"x1": [1, 0.1, 0], "x2": [0.9, 0.2, 0.1], "x3": [1, 0, 0.2], "y1": [0.1, 1, 0], "y2": [0.2, 0.9, 0.1],
         "y3": [0, 1, 0.3], "a1": [0.1, 1, 0.1], "a2": [0.2, 0.8, 0], "a3": [0, 0.9, 0.2], "b1": [1, 0, 0.1],
         "b2": [0.8, 0.1, 0], "b3": [0.9, 0.2, 0.2]}


@pytest.fixture()
def toy(tmp_path):
    """X (Y) closer to B (A): a negative d in both tests, which a fixed 'greater' turns into p near 1."""
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in WORDS.items()))
    sets = {r: {"name": r, "modality": "word", "items": [f"{r.lower()}{i}" for i in (1, 2, 3)]} for r in "XYAB"}
    suite = {"schema": "eatkit.suite/1", "id": "toy", "title": "Toy", "alternative": "two-sided",
             "tests": [{"id": "eat", "title": "EAT", **sets},
                       {"id": "sc", "title": "SC-EAT", "kind": "sc-eat", "T": sets["X"], "A": sets["A"], "B": sets["B"]}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    return tmp_path


def _records(capsys, root, *extra):
    code, out, err = run_cli(capsys, "run", str(root / "suite.json"), "--vectors", str(root / "v.txt"),
                             "--permutations", "exact", "--n-bootstrap", "0", "--seed", "0", *extra,
                             "-o", str(root / "out"))
    assert code == 0, err
    manifest = json.loads((root / "out" / "manifest.json").read_text())
    return json.loads((root / "out" / "results.json").read_text()), manifest, out


def test_suite_default_and_explicit_alternative(capsys, toy):
    records, manifest, _ = _records(capsys, toy)
    assert [r["alternative"] for r in records] == ["two-sided", "two-sided"]
    assert manifest["statistics"]["alternative"] == "two-sided"
    for r in records:
        p = r["p_values"]
        assert r["effect_size"] < 0 and set(p) == {"greater", "less", "two-sided"}
        assert r["p_value"] == p["two-sided"] and p["less"] < 0.1 < 0.9 < p["greater"]
    for alternative in ("greater", "less", "two-sided"):
        again, manifest, _ = _records(capsys, toy, "--alternative", alternative)
        assert [r["alternative"] for r in again] == [alternative] * 2
        assert manifest["statistics"]["alternative"] == alternative
        assert [r["p_value"] for r in again] == [r["p_values"][alternative] for r in records]


def test_observed_alternative_is_the_tail_of_the_sign_of_d(capsys, toy):
    records, manifest, out = _records(capsys, toy, "--alternative", "observed")
    assert manifest["statistics"]["alternative"] == "observed"
    with open(toy / "out" / "results.csv", newline="") as handle:  # every alternative's p, a column each
        rows = list(csv.DictReader(handle))
    for row, r in zip(rows, records):
        assert [float(row[f"p_value_{a}"]) for a in ("greater", "less", "two_sided")] == pytest.approx(
            [r["p_values"][a] for a in ("greater", "less", "two-sided")], rel=1e-12)
    for r in records:
        assert r["alternative"] == "less" and r["alternative_observed"] and r["p_value"] == r["p_values"]["less"]
    assert "one-sided on the side of the observed effect size" in out


def test_american_white_tests_both_directions_by_default():
    suite = load_suite("american-white")
    assert suite.alternative == "two-sided"
    assert all(not dict(t.params) for t in suite.tests)  # no test fixes its tail any more
    assert "eatkit data cfd" not in suite.description and "cfd_layout" in suite.description


@pytest.mark.parametrize("name", ["mleat-gpt2", "mleat-clip", "mleat-histwords"])
def test_mleat_suites_test_both_directions_by_default(name):
    """ML-EAT's tables star effects of both signs (GPT-2 Mental/Physical -1.20*): its suites are two-sided, and
    their files say why."""
    suite = load_suite(name)
    assert suite.alternative == "two-sided" and "stars effects of both signs" in suite.description
    assert load_suite("weat").alternative is None or load_suite("weat").alternative == "greater"


def test_bad_alternatives(capsys, toy):
    suite = json.loads((toy / "suite.json").read_text())
    (toy / "bad.json").write_text(json.dumps({**suite, "alternative": "sideways"}))
    code, _, err = run_cli(capsys, "run", str(toy / "bad.json"), "--vectors", str(toy / "v.txt"), "-o", str(toy / "o"))
    assert_one_line_error(code, err, "'alternative' must be one of greater, less, two-sided, got 'sideways'")
    fixed = {**suite, "tests": [{**suite["tests"][1], "params": {"alternative": "less"}}]}
    (toy / "fixed.json").write_text(json.dumps(fixed))
    code, _, err = run_cli(capsys, "run", str(toy / "fixed.json"), "--vectors", str(toy / "v.txt"), "-o", str(toy / "o"))
    assert_one_line_error(code, err, "sc-eat tests take no parameter 'alternative' (known: none)",
                          "top-level 'alternative'")


def test_observed_refused_where_it_cannot_apply():
    from eatkit import RunOptions, run_suite
    from eatkit.errors import EatkitError
    from eatkit.sources.vectors import WordVectors

    suite = load_suite("grounded-coco")
    with pytest.raises(EatkitError, match=r"\(grounded\): the alternative 'observed' applies to tests of kinds 'eat', 'sc-eat' only"):
        run_suite(suite, WordVectors(["a"], np.ones((1, 2))), options=RunOptions(alternative="observed"))
