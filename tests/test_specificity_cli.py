"""iEAT §6 (specificity) from the command line: --specificity N on eat tests (issue 25)."""

from __future__ import annotations

import json

import numpy as np
from test_cli import assert_one_line_error, run_cli

from eatkit.stats import specificity


def test_specificity_option_records_the_false_positive_rates(capsys, tmp_path):
    rng = np.random.default_rng(3)
    words = [f"{r}{i}" for r in "xyab" for i in range(4)]
    vectors = rng.normal(size=(len(words), 5))
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in zip(words, vectors)))
    sets = {r: {"name": r, "modality": "word", "items": [f"{r.lower()}{i}" for i in range(4)]} for r in "XYAB"}
    (tmp_path / "s.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "S",
                                                 "tests": [{"id": "t", "title": "T", **sets}]}))
    code, _, err = run_cli(capsys, "run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"),
                           "--specificity", "40", "--permutations", "exact", "--n-bootstrap", "0", "--seed", "1",
                           "-o", str(tmp_path / "out"))
    assert code == 0, err
    (record,) = json.loads((tmp_path / "out" / "results.json").read_text())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["statistics"]["params"] == {"specificity": 40}
    expected = specificity(*(vectors[4 * k: 4 * k + 4] for k in range(4)), n_splits=40, permutations="exact",
                           rng=record["seed"])
    assert record["specificity"] == {"n_splits": 40, "permutations": "exact", "alternative": "greater",
                                     "false_positive_rates": {f"{a:g}": r for a, r in
                                                              expected.false_positive_rates.items()}}
    code, _, err = run_cli(capsys, "run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"),
                           "--specificity", "-1", "-o", str(tmp_path / "bad"))
    assert_one_line_error(code, err, "specificity must be an integer in [0, 1000000000], got")
