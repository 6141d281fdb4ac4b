"""Synthetic run folders for the eatkit.report tests (helpers only; no tests are collected here).

``tests/data/report/<name>/`` holds a run folder's ``results.json`` and ``manifest.json`` as
``eatkit run`` writes them; :func:`make_run` copies one to a temporary folder and adds the
``similarities.npz`` drawn from each record's level-3 mean and sd (seeded, so byte-stable).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.eat import EATRecord
from eatkit.stats.multilevel import PATTERNS

DATA = Path(__file__).resolve().parent / "data" / "report"
PAIRS = ("xa", "xb", "ya", "yb")

#: the (level2_x_association, level2_y_association) of each of the nine ML-EAT patterns
PATTERN_ASSOCIATIONS: dict[str, tuple[str | None, str | None]] = {name: pair for pair, name in PATTERNS.items()}


def make_run(tmp_path: Path, name: str = "glove-like", similarities: bool = True) -> Path:
    """Copy the fixture run ``name`` into ``tmp_path / name`` and, if asked, write its similarities.npz."""
    run_dir = tmp_path / name
    shutil.copytree(DATA / name, run_dir)
    if similarities:
        records = json.loads((run_dir / "results.json").read_text())
        rng = np.random.default_rng(0)
        arrays = {}
        for r in records:
            sizes = {"xa": r["n_x"] * r["n_a"], "xb": r["n_x"] * r["n_b"],
                     "ya": r["n_y"] * r["n_a"], "yb": r["n_y"] * r["n_b"]}
            for pair in PAIRS:
                level3 = r["level3"][pair]
                arrays[f"{r['test']}/{pair}"] = rng.normal(level3["mean"], level3["sd"], sizes[pair])
        np.savez(run_dir / "similarities.npz", **arrays)
    return run_dir


def record(pattern: str = "AB-Divergent", **overrides: Any) -> dict[str, Any]:
    """One results.json record with the level-2 associations of ``pattern`` and signs to match.

    Level 1 is sampled with 99999 partitions and sits at the Monte Carlo floor (p = 1/100000); the level-2
    p-values are exact, each one-sided towards the sign of its d unless ``overrides`` say otherwise.
    """
    x, y = PATTERN_ASSOCIATIONS[pattern]
    sign = {"A": 1.0, "B": -1.0, None: 0.1}
    base = {
        "suite": "demo", "test": "t1", "title": "Flowers vs. insects, pleasant vs. unpleasant",
        "x_name": "Flowers", "y_name": "Insects", "a_name": "Pleasant", "b_name": "Unpleasant",
        "n_x": 25, "n_y": 25, "n_a": 25, "n_b": 25, "dropped": {},
        "effect_size": 1.5, "ci": [1.2, 1.7], "statistic": 2.2, "p_value": 1e-5, "p_value_exact": False,
        "p_value_mc_se": 1e-5, "p_method": "permutation", "n_permutations": 99999, "n_partitions": 126410606437752,
        "alternative": "greater", "q_value": 2e-5,
        "level2_x_effect_size": 0.85 * sign[x], "level2_x_p_value": 0.001 if x else 0.3, "level2_x_p_value_exact": True,
        "level2_y_effect_size": 0.62 * sign[y], "level2_y_p_value": 0.002 if y else 0.4, "level2_y_p_value_exact": True,
        "level2_x_association": x, "level2_y_association": y,
        "level3": {p: {"mean": 0.1, "sd": 0.05} for p in PAIRS},
        "pattern": pattern, "pattern_thresholds": {"effect_size": 0.2, "alpha": 0.05},
    }
    base.update(overrides)
    for target in "xy":
        d = base[f"level2_{target}_effect_size"]
        base.setdefault(f"level2_{target}_alternative", "greater" if d is None or d >= 0 else "less")
    return base


def eat_record(pattern: str = "AB-Divergent", **overrides: Any) -> EATRecord:
    """:func:`record` as the typed record the report draws."""
    return EATRecord.from_json(record(pattern, **overrides))


def write_run(tmp_path: Path, records: list[dict[str, Any]], manifest: dict[str, Any] | None = None,
              name: str = "run") -> Path:
    """A minimal run folder holding ``records`` (no similarities.npz)."""
    run_dir = tmp_path / name
    run_dir.mkdir()
    (run_dir / "results.json").write_text(json.dumps(records))
    (run_dir / "manifest.json").write_text(json.dumps(manifest or {"source": {"model": "demo-model"}}))
    return run_dir
