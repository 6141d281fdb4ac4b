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
         "interval": ("ci", {"effect_size_ci", "ci_low", "ci_high", "ci_max_skew", "ci_ndkl"}),
         "exactness of a p-value": ("p_value_exact", {"exact", "p_exact"})}
OLD = set().union(*(old for _, old in NAMES.values()))
#: the ends of an interval: results.csv's columns of a record's ``ci`` (and ``<name>_ci``), never a record field
CSV_ONLY = {"ci_low", "ci_high"}

#: the flags that are not the flag-name rule's (eatkit.flags.option_flag) of their option, and why
FLAG_OVERRIDES = {
    "classes": ("--class", "repeatable: one class per flag"),
    "columns": ("--column", "repeatable: one GROUP=COLUMN per flag"),
    "overrides": ("--override", "repeatable: one REGION=PROMPT per flag"),
    "questions": ("--question", "repeatable: one question per flag"),
    "tables": ("--table", "repeatable: one table per flag"),
    "context_templates": ("--context-template", "repeatable: one template per flag"),
    "categories": ("--bbq-categories", "eatkit run holds every kind's flags: BBQ's categories"),
    "max_items": ("--bbq-max-items", "eatkit run holds every kind's flags: BBQ's items"),
    "c": ("--direct-bias-c", "a one-letter parameter, named for its metric"),
    "compare": ("--compare-model", "names what is compared: another model"),
    "pairs_file": ("--crows-pairs", "named for its dataset, as 'eatkit data get crows-pairs'"),
    "stereoset_file": ("--stereoset", "named for its dataset, as 'eatkit data get stereoset'"),
}
#: old flags still taken (each use prints one deprecation line; hidden from --help) -> the option they set
DEPRECATED_FLAGS = {"--bootstrap": "n_bootstrap"}

#: statistics result fields named ``exact`` that are not a p-value's exactness: the anisotropy baseline's
#: "every pair of vectors was used" (in every EAT record's ``anisotropy`` panel, whose results.json bytes
#: tests/test_suite_results.py pins)
NOT_A_P_VALUE = {"isotropy.AnisotropyResult.exact"}


def _record_types():
    from eatkit.analyses import get_analysis

    return {kind: get_analysis(kind).record_type for kind in KINDS}


def test_no_record_field_uses_an_old_name():
    found = {f"{kind}.{f.name}" for kind, record in _record_types().items() for f in dataclasses.fields(record)
             if f.name in OLD or f.name.endswith(("_p_exact", "_effect_size_ci", "_ci_low", "_ci_high"))
             or f.name.startswith("ci_")}  # an interval of a named quantity is <name>_ci
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
                          if p in OLD - CSV_ONLY}
    assert found == set()


def test_no_statistics_result_calls_exactness_exact():
    """The statistics layer's results say ``p_value_exact`` (``loo_p_value_exact``), as records and CSV do."""
    found = {f"{where}.{name}" for where, name in _statistics_result_fields()
             if name == "exact" or (name.endswith("_exact") and not name.endswith("p_value_exact"))}
    assert found == NOT_A_P_VALUE


def test_no_statistics_result_holds_an_interval_as_two_ends():
    """An interval is one field, ``ci`` (``accuracy_ci``), ``(low, high)``, from the statistics to the record."""
    assert {f"{where}.{name}" for where, name in _statistics_result_fields()
            if name.endswith(("ci_low", "ci_high"))} == set()


def _statistics_result_fields():
    """(module.Class, field) of every dataclass of eatkit.stats."""
    import importlib
    import pkgutil

    import eatkit.stats

    for info in pkgutil.iter_modules(eatkit.stats.__path__):
        module = importlib.import_module(f"eatkit.stats.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and dataclasses.is_dataclass(cls):
                yield from ((f"{info.name}.{name}", f.name) for f in dataclasses.fields(cls))


def _parsers(parser=None, path=()):
    """(sub-command path, parser) of every parser of the command line."""
    import argparse

    from eatkit.cli import build_parser

    parser = parser or build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))
    yield path, parser


def test_every_flag_is_the_flag_name_rule_of_its_option():
    """Every flag of every command is ``option_flag`` of the option it sets, except the listed overrides and
    the deprecated old flags (hidden from --help)."""
    import argparse

    from eatkit.cli import OldFlag
    from eatkit.flags import option_flag

    wrong, old = set(), set()
    for path, parser in _parsers():
        for action in parser._actions:
            flags = [o for o in action.option_strings if o.startswith("--")]
            if isinstance(action, OldFlag):
                assert action.help == argparse.SUPPRESS and action.new == option_flag(action.dest), flags
                old |= {(f, action.dest) for f in flags}
            elif flags and option_flag(action.dest) not in flags:
                wrong |= {(action.dest, f) for f in flags}
    assert wrong == {(name, flag) for name, (flag, _) in FLAG_OVERRIDES.items()}
    assert old == set(DEPRECATED_FLAGS.items())


def test_every_declared_flag_is_the_rule_or_a_listed_override():
    """The declarations (run options, commands' options, kinds' parameters) give each flag: the rule's,
    unless listed, and name their old flags."""
    from eatkit.command_options import COMMAND_OPTIONS
    from eatkit.flags import option_flag
    from eatkit.kinds import get_kind
    from eatkit.stats.options import OPTIONS

    params = [*OPTIONS.values(), *(p for options in COMMAND_OPTIONS.values() for p in options.values()),
              *(p for kind in KINDS for p in get_kind(kind).params if p.cli)]
    assert {p.name: p.option for p in params if p.option != option_flag(p.name)} == \
        {name: flag for name, (flag, _) in FLAG_OVERRIDES.items()}
    assert {old: p.name for p in params for old in p.old_flags} == DEPRECATED_FLAGS


def test_the_flags_reach_the_one_name():
    """``--n-bootstrap`` (eatkit run, eatkit probe retrieval) sets ``n_bootstrap``."""
    from eatkit.kinds import get_kind
    from eatkit.stats.options import OPTIONS

    assert "n_bootstrap" in OPTIONS and get_kind("retrieval").param("n_bootstrap").option == "--n-bootstrap"
    parsers = dict(_parsers())
    for path in (("run",), ("probe", "retrieval")):
        actions = parsers[path]._actions
        assert {a.dest for a in actions if {"--n-bootstrap", "--bootstrap"} & set(a.option_strings)} == {"n_bootstrap"}
        assert "--bootstrap" not in parsers[path].format_help() and "--n-bootstrap N" in parsers[path].format_help()


def _run(tmp_path, *flags, out="r"):
    from eatkit.cli import main

    words = {"X": ["x1", "x2", "x3"], "Y": ["y1", "y2", "y3"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    suite = {"schema": "eatkit.suite/1", "id": "n", "title": "n", "tests": [
        {"id": "t", "title": "t", **{r: {"name": r, "modality": "word", "items": w} for r, w in words.items()}}]}
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    vectors = {"x1": (1, 0.1), "x2": (0.9, 0.3), "x3": (1, -0.2), "y1": (0.1, 1), "y2": (0.3, 0.8), "y3": (-0.1, 1),
               "a1": (1, 0.5), "a2": (0.7, 0.2), "b1": (0.2, 1), "b2": (0.4, 0.9)}
    (tmp_path / "v.txt").write_text("".join(f"{w} {x} {y}\n" for w, (x, y) in vectors.items()), encoding="utf-8")
    return main(["run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"), *flags, "--seed", "0", "-q",
                 "-o", str(tmp_path / out)])


def test_the_old_bootstrap_flag_still_works_with_one_deprecation_line(tmp_path, capsys):
    assert _run(tmp_path, "--bootstrap", "50", out="old") == 0
    assert capsys.readouterr().err.splitlines() == ["eatkit: --bootstrap is deprecated; use --n-bootstrap"]
    assert _run(tmp_path, "--n-bootstrap", "50", out="new") == 0 and capsys.readouterr().err == ""
    old, new = ((tmp_path / out / "results.json").read_bytes() for out in ("old", "new"))
    (record,) = json.loads(new)
    assert old == new and record["ci"][0] < record["effect_size"] < record["ci"][1]
    assert _run(tmp_path, "--n-bootstrap", "0", out="none") == 0
    assert json.loads((tmp_path / "none" / "results.json").read_bytes())[0]["ci"] is None


def test_results_csv_and_json_use_the_one_names(tmp_path, capsys):
    assert _run(tmp_path, "--metrics", "all", "--n-bootstrap", "40") == 0
    assert capsys.readouterr().err == ""
    with open(tmp_path / "r" / "results.csv", encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    assert {"ci_low", "ci_high", "n_bootstrap", "p_value_exact", "level2_x_p_value_exact"} <= set(header)
    assert [h for h in header if h in OLD - CSV_ONLY or re.search(r"effect_size_ci$|_p_exact$|n_resamples", h)] == []
    records = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert all(set(r) & OLD == set() for r in records)
    assert {r["kind"] for r in records if r.get("n_bootstrap") == 40} >= {"rnd", "clustering"}


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


#: the intervals of each record type that an earlier eatkit wrote as two fields, ``<name>_low``, ``<name>_high``
OLD_INTERVALS = {"crows-pairs": ("ci",), "stereoset": ("ss_ci",), "llm-iat": ("ci",), "t2iat": ("ci",),
                 "bbq": ("accuracy_ci", "ci"), "answers": ("ci",)}


def _as_before(row: dict, names: tuple[str, ...]) -> dict:
    """A record's JSON as eatkit wrote it before issue 44: each interval ``name`` as ``name_low``, ``name_high``."""
    out = {}
    for key, value in row.items():
        if key in names:
            out[f"{key}_low"], out[f"{key}_high"] = value if value is not None else (None, None)
        else:
            out[key] = value
    return out


def test_every_record_type_that_renamed_an_interval_is_read_back_below():
    assert {kind for kind, record in _record_types().items()
            if any(isinstance(new, tuple) for new in record.renamed.values())} == set(OLD_INTERVALS)


@pytest.mark.parametrize("kind, names", OLD_INTERVALS.items())
def test_an_old_results_json_row_with_interval_ends_reads_back(kind, names):
    from eatkit.analyses import record_from_json
    from test_report_figures import example_record

    record = example_record(kind, **{name: [0.25, 0.75] for name in names})
    old = _as_before(record.to_json(), names)
    assert {f"{n}_{end}" for n in names for end in ("low", "high")} <= set(old) and not set(old) & set(names)
    assert record_from_json(old).to_json() == record.to_json()  # (JSON: a NaN field and None both null)
    never = _as_before(example_record(kind, **{name: None for name in names}).to_json(), names)  # null ends
    assert [getattr(record_from_json(never), name) for name in names] == [None] * len(names)


def test_an_old_retrieval_record_reads_with_its_ci_first_names():
    from eatkit.analyses import record_from_json
    from test_report_figures import example_record

    record = example_record("retrieval", max_skew_ci={"doctor": [0.1, 0.5]}, ndkl_ci={"doctor": [0.0, 0.2]})
    old = {{"max_skew_ci": "ci_max_skew", "ndkl_ci": "ci_ndkl"}.get(k, k): v for k, v in record.to_json().items()}
    assert {"ci_max_skew", "ci_ndkl"} <= set(old) and record_from_json(old).to_json() == record.to_json()


def test_an_old_name_beside_its_new_one_or_half_an_interval_is_refused_by_name():
    from eatkit.analyses import record_from_json
    from eatkit.errors import EatkitError
    from test_report_figures import example_record

    row = example_record("crows-pairs", ci=[0.1, 0.2]).to_json()
    with pytest.raises(EatkitError, match="has both 'ci_low' .* and 'ci'"):
        record_from_json({**row, "ci_low": 0.1})
    with pytest.raises(EatkitError, match="one end of the interval 'ci' without 'ci_high'"):
        record_from_json({**{k: v for k, v in row.items() if k != "ci"}, "ci_low": 0.1})
