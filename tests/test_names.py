"""One name per quantity from the flag to the statistics function, the record, results.json/csv and the
report (issue 44; the table in docs/architecture.md, "One name per quantity"); old names still read."""

from __future__ import annotations

import csv
import dataclasses
import inspect
import json
import re
from pathlib import Path

import pytest

from eatkit.kinds import KINDS

#: each quantity's one name, and the names it had before (read back from existing run folders)
NAMES = {"bootstrap resamples": ("n_bootstrap", {"n_resamples", "bootstrap"}),
         "interval": ("ci", {"effect_size_ci"}),
         "exactness of a p-value": ("p_value_exact", {"exact", "p_exact"})}
OLD = set().union(*(old for _, old in NAMES.values()))


def _record_types():
    from eatkit.analyses import get_analysis

    return {kind: get_analysis(kind).record_type for kind in KINDS}


def test_no_record_field_uses_an_old_name():
    found = {f"{kind}.{f.name}" for kind, record in _record_types().items() for f in dataclasses.fields(record)
             if f.name in OLD or f.name.endswith(("_p_exact", "_effect_size_ci"))}
    assert found == set()


def test_no_statistics_function_takes_an_old_name():
    import importlib
    import pkgutil

    import eatkit.stats

    found = set()
    for info in pkgutil.iter_modules(eatkit.stats.__path__):
        module = importlib.import_module(f"eatkit.stats.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and not name.startswith("_"):
                found |= {f"{info.name}.{name}({p})" for p in inspect.signature(function).parameters
                          if p in {"n_resamples", "bootstrap"}}
    assert found == set()


def test_the_flags_reach_the_one_name():
    """``--bootstrap`` (eatkit run, eatkit probe retrieval) sets ``n_bootstrap``."""
    from eatkit.kinds import get_kind
    from eatkit.stats.options import OPTIONS

    assert "n_bootstrap" in OPTIONS and get_kind("retrieval").param("n_bootstrap").option == "--bootstrap"
    from eatkit.cli import build_parser

    parser = build_parser()
    run = next(a for a in parser._actions if hasattr(a, "choices") and a.choices and "run" in a.choices).choices["run"]
    assert {a.dest for a in run._actions if "--bootstrap" in a.option_strings} == {"n_bootstrap"}


def test_results_csv_and_json_use_the_one_names(tmp_path):
    from eatkit.cli import main

    words = {"X": ["x1", "x2", "x3"], "Y": ["y1", "y2", "y3"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    suite = {"schema": "eatkit.suite/1", "id": "n", "title": "n", "tests": [
        {"id": "t", "title": "t", **{r: {"name": r, "modality": "word", "items": w} for r, w in words.items()}}]}
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    vectors = {"x1": (1, 0.1), "x2": (0.9, 0.3), "x3": (1, -0.2), "y1": (0.1, 1), "y2": (0.3, 0.8), "y3": (-0.1, 1),
               "a1": (1, 0.5), "a2": (0.7, 0.2), "b1": (0.2, 1), "b2": (0.4, 0.9)}
    (tmp_path / "v.txt").write_text("".join(f"{w} {x} {y}\n" for w, (x, y) in vectors.items()), encoding="utf-8")
    assert main(["run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"), "--metrics", "all",
                 "--bootstrap", "20", "--seed", "0", "-q", "-o", str(tmp_path / "r")]) == 0
    with open(tmp_path / "r" / "results.csv", encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    assert {"ci_low", "ci_high", "n_bootstrap", "p_value_exact", "level2_x_p_value_exact"} <= set(header)
    assert [h for h in header if h in OLD or re.search(r"effect_size_ci|_p_exact$|n_resamples", h)] == []
    records = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert all(set(r) & OLD == set() for r in records)
    assert {r["kind"] for r in records if r.get("n_bootstrap") == 20} >= {"rnd", "clustering"}


@pytest.mark.parametrize("old, new, value", [("effect_size_ci", "ci", [0.1, 0.9]),
                                              ("level2_x_p_exact", "level2_x_p_value_exact", True)])
def test_an_existing_run_folder_reads_with_its_old_names(old, new, value):
    """results.json written before the renames (tests/data/report: eatkit 0.2) loads, the old names mapped."""
    from eatkit.analyses import record_from_json

    data = Path(__file__).parent / "data" / "report" / "glove-like" / "results.json"
    raw = json.loads(data.read_text(encoding="utf-8"))[0]
    assert old in raw and new not in raw
    record = record_from_json({**raw, old: value})
    assert getattr(record, new) == value


def test_an_old_metric_record_reads_with_n_resamples():
    from eatkit.analyses import record_from_json

    old = {"kind": "rnd", "suite": "s", "test": "t:rnd", "title": "t", "metric": "rnd", "value": 0.5, "x_name": "X",
           "y_name": "Y", "a_name": "A", "b_name": "B", "n_x": 2, "n_y": 2, "n_a": 2, "n_b": 2, "n_resamples": 200}
    assert record_from_json(old).n_bootstrap == 200


def test_the_table_in_the_architecture_doc_names_each_quantity():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc[doc.index("## One name per quantity"):]
    table = table[:table.index("\n## ")] if "\n## " in table else table
    for quantity, (name, old) in NAMES.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| {quantity} |"))
        assert f"`{name}`" in row and all(f"`{o}`" in row for o in old), row
