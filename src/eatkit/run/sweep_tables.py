"""A sweep's tables, from its cell folders: what ``eatkit sweep`` writes after its cells and what the audit
page (:mod:`eatkit.report.audit`) reads, so that the page computes nothing.

Written into the sweep's output folder by :func:`write_tables` (``run_sweep`` calls it; it reads only
``sweep.json`` and the cell folders, so it can be run again on a finished sweep):

- ``cells.csv``: one row per cell (model x suite x setting): its status (``done``, ``finished before``,
  ``failed``, ``inapplicable``: no test of the suite applies to the model, never run), its error, how many
  of its tests ran, failed alone, or did not apply;
- ``tests.csv``: one row per (model, suite, setting, test): ``done``, ``failed`` (with the test's own
  error: a test fails alone, the cell's other tests stand) or ``inapplicable`` (with the reason);
- ``results.csv``: every finished cell's records, ``model``, ``suite``, ``setting`` first (each setting's
  rows apart: two settings are two rows);
- ``rankings.csv`` and ``ranking-correlations.csv`` (:func:`rank_groups`): per setting, the models ranked
  within each group of comparable models on the measures the group shares, and the rank correlation
  between those measures;
- ``audit.json`` (:func:`audit_data`): per setting, models x tests of every measure's headline value and
  p-value, and the rows' order (models clustered by their profiles of d, :func:`eatkit.stats.cluster_profiles`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import read_json
from eatkit.run.folder import read_records, records_frame
from eatkit.run.meta_analysis import write_meta_analysis

#: the index of a sweep's output folder that :func:`write_tables` reads
SWEEP_FILE = "sweep.json"


def measure_kinds() -> tuple[tuple[str, str, str, float, str], ...]:
    """The measures a sweep reports and ranks models by, as ``(kind, headline column, measure, value of no
    bias (chance), aggregation over a test's records and a model's tests)``: each registered kind that declares how it ranks models
    (:func:`eatkit.kinds.ranked_kinds`, its :class:`eatkit.kinds.Ranking`: the EAT's d, each metric's
    value, ...), the one place that says which exist.

    >>> measure_kinds()[0][:3], len(measure_kinds()) > 1
    (('eat', 'effect_size', 'd'), True)
    """
    from eatkit.kinds import ranked_kinds

    return tuple((spec.name, spec.ranking.headline, spec.ranking.measure, spec.ranking.chance,
                  spec.ranking.aggregation) for spec in ranked_kinds())


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_index(out: str | Path) -> dict[str, Any]:
    """The ``sweep.json`` of a sweep's output folder; a folder without one is a one-line error."""
    return read_sweep_json(out, SWEEP_FILE, "a sweep's output folder")


def read_sweep_json(out: str | Path, name: str, what: str) -> dict[str, Any]:
    """The JSON file ``name`` of a sweep's output folder ``out``; a one-line error saying ``out`` is not
    ``what`` when it cannot be read (``sweep.json``: the cells; ``audit.json``: the audit page's data)."""
    path = Path(out) / name
    if not path.exists():
        raise EatkitError(f"{out} is not {what} (it has no {name})")
    data = read_json(path, "file")  # (eatkit's one reader: a regular file, bounded, nesting checked)
    if not isinstance(data, dict):
        raise EatkitError(f"file {path} must hold a JSON object")
    return data


def write_tables(out: str | Path) -> None:
    """Write ``cells.csv``, ``tests.csv``, ``results.csv``, ``rankings.csv``, ``ranking-correlations.csv``,
    ``measure-agreement.csv``, ``meta-analysis.csv`` / ``.json`` (each test's random-effects combination across
    the models: :func:`eatkit.run.meta_analysis.write_meta_analysis`) and ``audit.json`` (module docstring)
    from ``sweep.json`` and the cell folders of ``out``."""
    import pandas as pd

    out = Path(out)
    index = read_index(out)
    frames, cell_rows, test_rows = [], [], []
    owners: list[tuple[str, str, str]] = []  # (model, suite, setting) of each row of the frames
    for cell in index["cells"]:
        labels = {"model": cell["model"], "suite": cell["suite"], "setting": cell["setting"]}
        state: dict[str, Any] = {}
        if cell["status"] not in ("failed", "inapplicable"):
            folder = out / "cells" / cell["id"]
            state = read_json(folder / "cell.json", "cell state")
            # the one reader of records (a cell finished before, a resume, is checked as any run folder is);
            # its results.csv's rows made from them, not parsed a second time
            table = records_frame(read_records(folder))
            frames.append(table)
            owners += [tuple(labels.values())] * len(table)
            test_rows += [{**labels, "test": t, "status": "done", "reason": None}
                          for t in dict.fromkeys(table["test"].astype(str))]
        failed = state.get("failed_tests", {})
        if cell["status"] == "failed":  # each planned test of a failed cell, with the cell's error
            failed = {t: cell["error"] for t in cell.get("tests", [])}
        inapplicable = cell["inapplicable_tests"]
        test_rows += [{**labels, "test": t, "status": "failed", "reason": e} for t, e in failed.items()]
        test_rows += [{**labels, "test": t, "status": "inapplicable", "reason": r} for t, r in inapplicable.items()]
        cell_rows.append({"cell": cell["id"], **labels, "status": cell["status"], "error": cell["error"],
                          "tests_failed": len(state.get("failed_tests", {})), "tests_inapplicable": len(inapplicable)})
    pd.DataFrame(cell_rows).to_csv(out / "cells.csv", index=False)
    pd.DataFrame(test_rows, columns=["model", "suite", "setting", "test", "status", "reason"]).to_csv(
        out / "tests.csv", index=False)
    for name in ("results.csv", "rankings.csv", "ranking-correlations.csv", "measure-agreement.csv",
                 "meta-analysis.csv", "meta-analysis.json"):
        (out / name).unlink(missing_ok=True)  # nothing left from an earlier state of the sweep
    combined = _write_combined(out, frames, owners) if frames else None
    write_json(out / "audit.json", audit_data(index, combined))


def _write_combined(out: Path, frames: list[Any], owners: list[tuple[str, str, str]]) -> Any:
    """The cells' results in one table, each row led by its cell's model, suite and setting; written as
    ``results.csv`` with the rankings and the meta-analysis made from it."""
    import pandas as pd

    combined = pd.concat(frames, ignore_index=True)
    first = ["model", "suite", "setting"]
    combined = pd.concat([pd.DataFrame(owners, columns=first),
                          combined.drop(columns=[c for c in first if c in combined])], axis=1)
    combined.to_csv(out / "results.csv", index=False)
    write_rankings(out, combined)
    write_meta_analysis(out, combined)
    return combined


def _test_names(kind: str, part: Any) -> Any:
    """The tests of a kind's records: the test id, with the values of the ranking's ``per`` fields when it
    declares them (:class:`eatkit.kinds.Ranking`: each BBQ category and context ranks as one test)."""
    from eatkit.kinds import KINDS, get_kind

    names = part["test"].astype(str)
    ranking = get_kind(kind).ranking if kind in KINDS else None
    per = [f for f in (ranking.per if ranking is not None else ()) if f in part]
    for i, name in enumerate(per):
        names = names + ("[" if i == 0 else ", ") + part[name].astype(str) + ("]" if i == len(per) - 1 else "")
    return names


def measures_table(results: Any) -> Any:
    """The long table of every measure's value in a combined results table: one row per (setting, model,
    suite, test, measure) with the headline ``value``, ``p_value`` and the bias ``magnitude``
    (:func:`eatkit.stats.metrics.bias_magnitude`) of the kinds that rank models (:func:`measure_kinds`);
    the other kinds' records with their presentation's headline, as a measure named by the kind, unranked
    (magnitude NaN). The language-model kinds give their overall record, not each bias type's; the answers
    kind its tested rows, of a paired test the pooled one."""
    import pandas as pd

    columns = ["setting", "model", "suite", "test", "kind", "measure", "value", "p_value", "magnitude"]
    if "kind" not in results:
        return pd.DataFrame(columns=columns)
    ranked = {kind: (headline, measure, chance) for kind, headline, measure, chance, _ in measure_kinds()}
    parts = []
    for kind in dict.fromkeys(results["kind"].astype(str)):
        headline, measure, chance = ranked[kind] if kind in ranked else _unranked_measure(kind)
        if headline is None or headline not in results:
            continue
        part = _measured_rows(results[results["kind"] == kind], kind)
        values = pd.to_numeric(part[headline], errors="coerce")
        if part.empty:
            continue
        parts.append(_measure_frame(part, kind, measure, values, chance))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return frame[columns]


def _measure_frame(part: Any, kind: str, measure: str, values: Any, chance: Any) -> Any:
    """A kind's rows of the long table, with the bias magnitude of ``values`` (NaN when unranked)."""
    import numpy as np
    import pandas as pd

    from eatkit.stats.metrics import bias_magnitude

    p = part["p_value"] if "p_value" in part else float("nan")
    magnitude = bias_magnitude(values, chance) if chance is not None else np.full(len(part), np.nan)
    return pd.DataFrame({"setting": part["setting"].astype(str), "model": part["model"].astype(str),
                         "suite": part["suite"].astype(str), "test": _test_names(kind, part),
                         "kind": kind, "measure": measure, "value": values.astype(float),
                         "p_value": p, "magnitude": magnitude})


def _unranked_measure(kind: str) -> tuple[str | None, str, None]:
    """A kind that ranks no models: its presentation's headline, as a measure named by the kind, no chance level."""
    from eatkit.kinds import KINDS, get_kind

    spec = get_kind(kind) if kind in KINDS else None
    headline = spec.presentation.headline if spec is not None and spec.presentation else None
    return headline, kind.replace("-", "_"), None


def _measured_rows(part: Any, kind: str) -> Any:
    """A kind's rows that carry its measure: the language-model kinds' overall record, not each bias type's;
    the answers kind's tested rows (not the rates), of a paired test the pooled pairs."""
    if "bias_type" in part:
        part = part[part["bias_type"].isna() | (part["bias_type"] == "all")]
    if kind == "answers":
        part = part[part["row"].isin(("difference", "paired", "effect"))
                    & ((part["row"] != "paired") | (part["group"] == "all"))]
    return part


#: the columns of ``measure-agreement.csv`` after setting and group (:func:`eatkit.stats.agreement.icc`)
AGREEMENT_COLUMNS = ("form", "icc", "ci_low", "ci_high", "f", "df1", "df2", "p_value", "models", "measures")


def rank_groups(results: Any) -> tuple[Any, Any, Any]:
    """Rankings of a combined results table (:func:`measures_table`), per setting and per group of comparable
    models: models are ranked only against models that share the measured tests. A test's magnitude for a
    model aggregates **all** its records (each kind's declared aggregation, e.g. the mean over a depiction
    test's prompt groups and attributes); each model's set of measured tests defines a group, holding every
    model that has all of those tests (a model that shares its tests with none is a group of one), and a
    measure's column is the aggregation of the group's tests of that measure. ``tests`` names the group's
    tests and ``basis`` how many of each measure. Returns the rankings, the Spearman correlations between the
    measures (:func:`eatkit.stats.metrics.rank_models`) with their Fisher-z CIs
    (:func:`eatkit.stats.agreement.spearman_ci`), and, for groups of three or more models and two or more
    measures, the ICC(3,1) of the models x measures ranks (Du et al. 2021), as three DataFrames."""
    import pandas as pd

    long = measures_table(results).dropna(subset=["magnitude"])
    rankings, correlations, agreements = [], [], []
    for setting in dict.fromkeys(long["setting"]):
        found = _test_magnitudes(long[long["setting"] == setting])
        for name, members, keys in _comparable_groups(found):
            frame, corr, agreement = _group_ranking(setting, name, members, keys, found)
            rankings.append(frame)
            correlations += corr
            agreements += agreement
    return (pd.concat(rankings, ignore_index=True) if rankings else pd.DataFrame(),
            pd.DataFrame(correlations, columns=["setting", "group", "measure_1", "measure_2", "spearman", "p_value",
                                                "ci_low", "ci_high"]),
            pd.DataFrame(agreements, columns=["setting", "group", *AGREEMENT_COLUMNS]))


#: a measured test: (measure, suite, test)
TestKey = tuple[str, str, str]


def _aggregations() -> dict[str, Any]:
    """Each measure's declared aggregation (a numpy reduction: mean, median, ...)."""
    import numpy as np

    return {m: getattr(np, agg) for _, _, m, _, agg in measure_kinds()}


def _test_magnitudes(part: Any) -> dict[str, dict[TestKey, float]]:
    """model -> (measure, suite, test) -> the magnitude of the test: every record of it aggregated as its
    kind declares (a depiction test: its prompt groups and attributes; not the last record only)."""
    aggregate = _aggregations()
    values: dict[str, dict[TestKey, list[float]]] = {}
    for model, measure, suite, test, magnitude in zip(part["model"], part["measure"], part["suite"], part["test"],
                                                      part["magnitude"]):
        values.setdefault(str(model), {}).setdefault((measure, str(suite), str(test)), []).append(float(magnitude))
    return {model: {key: float(aggregate[key[0]](v)) for key, v in tests.items()} for model, tests in values.items()}


def _comparable_groups(found: dict[str, dict[TestKey, float]]) -> list[tuple[str, list[str], tuple[TestKey, ...]]]:
    """The groups of comparable models: for each model's set of measured tests, the models that have all of
    them (two or more); a model in no such group alone. Each as (name, models, tests).

    >>> t = lambda *names: {("d", "s", n): 0.0 for n in names}
    >>> [(g[1], len(g[2])) for g in _comparable_groups({"a": t("w1"), "b": t("w1"), "c": t("i1")})]
    [(['a', 'b'], 1), (['c'], 1)]
    """
    models = list(found)
    groups: dict[tuple[tuple[str, ...], tuple[TestKey, ...]], None] = {}
    for model in models:
        keys = tuple(found[model])
        members = tuple(m for m in models if set(keys) <= set(found[m]))
        if len(members) >= 2:
            groups[(members, keys)] = None
    grouped = {m for members, _ in groups for m in members}
    groups |= {((m,), tuple(found[m])): None for m in models if m not in grouped}
    names: list[str] = []
    return [(_group_name(members, keys, len(models), names), list(members), keys) for members, keys in groups]


def _group_name(members: tuple[str, ...], keys: tuple[TestKey, ...], everyone: int, taken: list[str]) -> str:
    """A group's name (added to ``taken``): ``all models``, or the suites of its tests (numbered when two
    groups share it)."""
    suites = ", ".join(dict.fromkeys(s for _, s, _ in keys))
    name = "all models" if len(members) == everyone else f"models on {suites} ({len(keys)} tests)"
    taken.append(name if name not in taken else f"{name} #{len(taken) + 1}")
    return taken[-1]


def _group_ranking(setting: str, name: str, members: list[str], keys: tuple[TestKey, ...],
                   found: dict[str, dict[TestKey, float]]) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """One group's ranking rows, correlations between its measures and agreement (:func:`rank_groups`)."""
    from eatkit.stats.metrics import rank_models

    measures, table = _group_table(members, keys, found)
    if len(members) < 2:  # one model: nothing to rank it against
        return _ranking_frame(setting, name, table, keys, None), [], []
    ranking = rank_models(table.to_numpy())
    agreement = _agreement(setting, name, measures, ranking, len(members)) \
        if len(measures) >= 2 and len(members) >= 3 else []
    return (_ranking_frame(setting, name, table, keys, ranking),
            _correlations(setting, name, measures, ranking, len(members)), agreement)


def _group_table(members: list[str], keys: tuple[TestKey, ...],
                 found: dict[str, dict[TestKey, float]]) -> tuple[list[str], Any]:
    """A group's measures (in the declared order) and its models x measures table of magnitudes, each the
    measure's aggregation over the group's tests."""
    import pandas as pd

    aggregate = _aggregations()
    measures = [m for _, _, m, _, _ in measure_kinds() if any(k[0] == m for k in keys)]
    columns = {m: [float(aggregate[m]([found[model][k] for k in keys if k[0] == m])) for model in members]
               for m in measures}
    return measures, pd.DataFrame(columns, index=pd.Index(members, name="model"))


def _ranking_frame(setting: str, name: str, table: Any, keys: tuple[TestKey, ...], ranking: Any) -> Any:
    """The rows of ``rankings.csv`` of one group (``ranking`` None: a group of one model, rank 1)."""
    frame = table.reset_index()
    frame.insert(0, "group", name)
    frame.insert(0, "setting", setting)
    measures = list(table.columns)
    ones = [1.0] * len(frame)
    for j, measure in enumerate(measures):
        frame[f"rank_{measure}"] = ranking.ranks[:, j] if ranking is not None else ones
    frame["mean_rank"] = ranking.mean_rank if ranking is not None else ones
    frame["overall_rank"] = ranking.overall if ranking is not None else ones
    basis = "; ".join(f"{m}: {sum(k[0] == m for k in keys)} test(s)" for m in measures)
    frame["basis"] = basis + ("" if ranking is not None else " (one model: nothing to rank it against)")
    frame["tests"] = " ".join(dict.fromkeys(f"{s}/{t}" for _, s, t in keys))
    return frame


def _correlations(setting: str, group: str, measures: list[str], ranking: Any, n: int) -> list[dict[str, Any]]:
    """The Spearman correlation of every two measures' rankings of a group, with its Fisher-z CI."""
    from eatkit.stats.agreement import spearman_ci

    return [{"setting": setting, "group": group, "measure_1": a, "measure_2": b,
             "spearman": ranking.spearman[i, j], "p_value": ranking.spearman_p[i, j],
             **dict(zip(("ci_low", "ci_high"), spearman_ci(float(ranking.spearman[i, j]), n)))}
            for i, a in enumerate(measures) for j, b in enumerate(measures) if i < j]


def _agreement(setting: str, group: str, measures: list[str], ranking: Any, n: int) -> list[dict[str, Any]]:
    """Do the measures rank the group's models alike? ICC(3,1) of the models x measures ranks."""
    from eatkit.stats.agreement import icc

    a = icc(ranking.ranks, "3,1")
    return [{"setting": setting, "group": group, "form": a.form, "icc": a.icc, "ci_low": a.ci[0],
             "ci_high": a.ci[1], "f": a.f, "df1": a.df1, "df2": a.df2, "p_value": a.p_value, "models": a.n,
             "measures": a.k}]


def write_rankings(out: Path, results: Any) -> Path | None:
    """``rankings.csv``, ``ranking-correlations.csv`` and ``measure-agreement.csv`` of :func:`rank_groups`
    (1: least biased; columns ``setting``, ``group``, ``model``, each measure's magnitude, ``rank_<measure>``,
    ``mean_rank``, ``overall_rank``, ``basis``, ``tests``); ``None`` (nothing written) when no setting has a
    ranked model."""
    rankings, correlations, agreement = rank_groups(results)
    if rankings.empty:
        return None
    rankings.to_csv(out / "rankings.csv", index=False)
    correlations.to_csv(out / "ranking-correlations.csv", index=False)
    if not agreement.empty:
        agreement.to_csv(out / "measure-agreement.csv", index=False)
    return out / "rankings.csv"


def profile_order(d: Any) -> tuple[list[int], str]:
    """Rows (models) in the order of the clustering of their profiles of d (models x tests, NaN: no result;
    :func:`eatkit.stats.cluster_profiles`), models without any d last, and how they were ordered.

    >>> profile_order([[0.1, 0.2], [2.0, 2.1], [0.2, 0.1]])[0]
    [1, 0, 2]
    """
    import numpy as np

    from eatkit.stats.clustering import cluster_profiles

    d = np.asarray(d, dtype=float).reshape(len(d), -1)
    usable = [i for i in range(len(d)) if np.isfinite(d[i]).any()]
    rest = [i for i in range(len(d)) if i not in usable]
    if len(usable) < 2:
        return usable + rest, "sweep order (fewer than two models to cluster)"
    try:
        clustering = cluster_profiles(d[usable])
    except EatkitError as err:
        return usable + rest, f"sweep order (not clustered: {err})"
    return [usable[i] for i in clustering.order] + rest, (
        f"clustered by profile of d ({clustering.method} linkage, {clustering.metric}, {clustering.missing})")


def audit_data(index: dict[str, Any], results: Any) -> dict[str, Any]:
    """What the audit page shows (``audit.json``): the settings, the models (sweep order) and their
    metadata, the columns (suite, test, measure: d of EAT tests, each metric's value), and per setting the
    models x columns values and p-values (``None``: no result) and the rows' order (:func:`profile_order`
    of the d columns); the cells with their statuses."""
    cells = index["cells"]
    settings = list(dict.fromkeys(c["setting"] for c in cells))
    models = list(dict.fromkeys(c["model"] for c in cells))
    data: dict[str, Any] = {"settings": settings, "models": models, "metadata": index["metadata"],
                            "columns": [], "values": {}, "p": {}, "order": {},
                            "cells": _cell_summaries(cells)}
    long = measures_table(results) if results is not None else None
    if long is None or long.empty:
        return _without_results(data, settings, models)
    keys = _column_keys(long, cells)
    data["columns"] = [{"suite": s, "test": t, "measure": m} for s, t, m in keys]
    for setting in settings:
        values, p = _setting_grid(long[long["setting"] == setting], models, keys)
        rows, how = profile_order(values[:, [j for j, k in enumerate(keys) if k[2] == "d"]])
        data["values"][setting], data["p"][setting] = _plain(values), _plain(p)
        data["order"][setting] = {"rows": rows, "how": how}
    return data


def _cell_summaries(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: c[k] for k in ("id", "model", "suite", "setting", "status", "error")} for c in cells]


def _without_results(data: dict[str, Any], settings: list[str], models: list[str]) -> dict[str, Any]:
    """The audit data of a sweep without results: no values, rows in sweep order."""
    for setting in settings:
        data["values"][setting], data["p"][setting] = [], []
        data["order"][setting] = {"rows": list(range(len(models))), "how": "sweep order (no results)"}
    return data


def _column_keys(long: Any, cells: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The (suite, test, measure) columns in first-seen order, grouped by suite (sweep order, stable)."""
    suites = list(dict.fromkeys(c["suite"] for c in cells))
    keys = list(dict.fromkeys(zip(long["suite"], long["test"], long["measure"])))
    keys.sort(key=lambda k: suites.index(k[0]))
    return keys


def _setting_grid(part: Any, models: list[str], keys: list[tuple[str, str, str]]) -> tuple[Any, Any]:
    """One setting's models x columns values and p-values (NaN: no result)."""
    import numpy as np

    where = {k: j for j, k in enumerate(keys)}
    row = {m: i for i, m in enumerate(models)}
    values = np.full((len(models), len(keys)), np.nan)
    p = np.full((len(models), len(keys)), np.nan)
    for m, s, t, measure, v, pv in zip(part["model"], part["suite"], part["test"], part["measure"],
                                       part["value"], part["p_value"]):
        values[row[m], where[(s, t, measure)]] = v
        p[row[m], where[(s, t, measure)]] = pv
    return values, p


def _plain(array: Any) -> list[list[float | None]]:
    return [[float(v) if math.isfinite(v) else None for v in row] for row in array]
