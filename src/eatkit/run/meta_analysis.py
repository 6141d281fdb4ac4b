"""Random effects across the models of a sweep: for every EAT test run on two or more models, the
combined effect size, its CI, the heterogeneity (tau², I², Cochran's Q and its p: do the models disagree
more than chance?) and the prediction interval, written as ``meta-analysis.csv`` beside ``results.csv``
(:func:`write_meta_analysis`; shown in ``audit.html`` by :func:`eatkit.report.meta_analysis.meta_analysis_html`),
and ``meta-analysis.json``: each test's whole result (every model's d, variance and weight: its forest plot).

Each model's d has the within-model variance of a standardised mean difference
(:func:`eatkit.stats.meta_analysis.smd_variance`, closed form, from its n_X and n_Y), and the models'
d are combined by DerSimonian-Laird (:func:`eatkit.stats.meta_analysis.random_effects`). The models of one
sweep share their stimuli, so their d are not independent samples: read tau² and Q as "how much the models
differ", not as a sampling experiment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: the columns of meta-analysis.csv
COLUMNS = ("suite", "test", "setting", "k", "method", "variance", "estimate", "se", "ci_low", "ci_high", "p_value",
           "tau2", "i2", "q", "q_df", "q_p_value", "prediction_low", "prediction_high", "models")


def model_meta_analysis(results: Any, method: str = "dl") -> list[dict[str, Any]]:
    """One row per (suite, test, setting) with EAT records of at least two models in a sweep's combined
    ``results`` table (a DataFrame with ``model``, ``suite``, ``setting``, ``kind``, ``test``, ``effect_size``,
    ``n_x``, ``n_y``); records without a finite d are left out.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"model": ["a", "b", "c"], "suite": "weat", "setting": "s", "kind": "eat",
    ...                       "test": "weat1", "effect_size": [1.2, 0.4, 0.9], "n_x": 8, "n_y": 8})
    >>> row, = model_meta_analysis(table)  # the CSV's columns and the whole result ("result")
    >>> row["k"], round(row["estimate"], 3), row["models"]
    (3, 0.814, 'a;b;c')
    """
    import numpy as np

    from eatkit.stats.meta_analysis import random_effects, smd_variance

    needed = {"model", "suite", "setting", "kind", "test", "effect_size", "n_x", "n_y"}
    if not needed <= set(results.columns):
        return []
    eat = results[(results["kind"] == "eat") & np.isfinite(results["effect_size"].astype(float))]
    rows = []
    for (suite, test, setting), part in eat.groupby(["suite", "test", "setting"], sort=False):
        if part["model"].nunique() < 2:
            continue
        d = part["effect_size"].astype(float).to_numpy()
        v = np.array([smd_variance(x, int(n), int(m)) for x, n, m in zip(d, part["n_x"], part["n_y"])])
        r = random_effects(d, v, method=method)
        rows.append({"result": r.to_dict(), "labels": [str(m) for m in part["model"]], "suite": suite, "test": test, "setting": setting, "k": r.k,
                     "method": r.method,
                     "variance": "hedges-olkin", "estimate": r.estimate, "se": r.se, "ci_low": r.ci[0],
                     "ci_high": r.ci[1], "p_value": r.p_value, "tau2": r.tau2, "i2": r.i2, "q": r.q,
                     "q_df": r.q_df, "q_p_value": r.q_p_value, "prediction_low": r.prediction_interval[0],
                     "prediction_high": r.prediction_interval[1], "models": ";".join(map(str, part["model"]))})
    return rows


def write_meta_analysis(out: Path, results: Any) -> Path | None:
    """``meta-analysis.csv`` in ``out`` from a sweep's combined results (:func:`model_meta_analysis`);
    ``None`` (nothing written) when no EAT test ran on two or more models; ``meta-analysis.json`` beside it."""
    import pandas as pd

    from eatkit.io import atomic_write
    from eatkit.records import plain_json

    rows = model_meta_analysis(results)
    if not rows:
        return None
    path = Path(out) / "meta-analysis.csv"
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(path, index=False)
    details = [{"suite": row["suite"], "test": row["test"], "setting": row["setting"], "models": row["labels"],
                "result": row["result"]} for row in rows]
    text = json.dumps(plain_json(details), indent=1, allow_nan=False)
    atomic_write(path.with_suffix(".json"), lambda handle: handle.write(text.encode("utf-8")))
    return path


def read_effects(path: str | Path) -> tuple[list[str], list[float], list[float]]:
    """Labels, effect sizes and variances of a CSV file with columns ``effect`` and ``variance`` (or ``se``, its
    standard error, squared here) and optionally ``label`` (default: the row number), for ``eatkit meta``.

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "e.csv"; _ = p.write_text("label,effect,se\\na,0.5,0.1\\n")
    >>> read_effects(p)
    (['a'], [0.5], [0.010000000000000002])
    """
    from eatkit.errors import EatkitError
    from eatkit.io import read_csv

    rows = read_csv(path, "effects file", [])  # the one reader: regular file, bounded, UTF-8, CSV shape checked
    columns = set(rows[0]) if rows else set()
    if "effect" not in columns or not columns & {"variance", "se"}:
        raise EatkitError(f"effects file {path} needs a header with the columns effect and variance (or se), "
                          f"got {', '.join(sorted(columns)) or 'no rows'}")
    spread = "variance" if "variance" in columns else "se"
    labels, effects, variances = [], [], []
    for number, row in enumerate(rows, start=2):
        try:
            effect, value = float(row["effect"]), float(row[spread])
        except (TypeError, ValueError):
            raise EatkitError(f"effects file {path}, line {number}: effect and {spread} must be numbers, got "
                              f"{row['effect']!r} and {row[spread]!r}") from None
        if spread == "se" and not value > 0:
            raise EatkitError(f"effects file {path}, line {number}: a standard error must be positive, got {value!r}")
        labels.append(row.get("label") or str(number - 1))
        effects.append(effect)
        variances.append(value if spread == "variance" else value * value)
    return labels, effects, variances
