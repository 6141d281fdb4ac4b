"""How geometry records (seed 004) are shown: score tables (console, CSV, LaTeX), per-class scores with
min-max bars, trend plots of one model's scores against another's, and the model x model Spearman grid.

Presentation only: every number comes from the records (:class:`eatkit.analyses.geometry.GeometryRecord`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from html import escape
from typing import Any

from eatkit.report.formatting import fmt_number, fmt_p, is_missing
from eatkit.report.tables import escape_latex

SCORE_LEGEND = ("score: mean over the iterations of the similarity between random folds of a class (a class "
                "name: intra-class) or of two classes (\"a vs b\": inter-class); [min, max] over the iterations")
COMPARISON_LEGEND = ("diff: intra-class score of the class minus the reference class's (all pairs of distinct "
                     "images); d: Cohen's d of the per-image scores (pooled SD); p: permutation test re-labelling "
                     "the pooled images († sampled); p_W: Welch's t-test of the per-image scores (approximate: "
                     "they share images); q: Benjamini-Hochberg within the record; p_t (t_test one-sample): the "
                     "thesis's one-sample t-test of the class's iteration scores against the reference's mean score "
                     "(approximate: the iterations share images)")


def score_rows(record: Any) -> list[list[str]]:
    """One row per score key: the key, then ``mean [min, max]`` per model."""
    by_key: dict[str, dict[str, dict[str, Any]]] = {}
    for s in record.scores:
        by_key.setdefault(s["key"], {})[s["model"]] = s
    return [[key] + [f"{fmt_number(m[mod]['mean'], 4)} [{fmt_number(m[mod]['min'], 4)}, {fmt_number(m[mod]['max'], 4)}]"
                     if mod in m else "n/a" for mod in record.models] for key, m in by_key.items()]


def scores_csv(records: Sequence[Any]) -> str:
    """Every score of the records as CSV: test, model, key, kind, mean, sd, min, max, exact mean, iterations."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["test", "model", "key", "kind", "mean", "sd", "min", "max", "exact_mean", "iterations",
                     "fold", "similarity"])
    for r in records:
        for s in r.scores:
            writer.writerow([r.test, s["model"], s["key"], s["kind"], s["mean"], s["sd"], s["min"], s["max"],
                             s["exact_mean"], s["iterations"], s["fold"], s["similarity"]])
    return out.getvalue()


def scores_latex(record: Any) -> str:
    """The record's scores as a LaTeX (booktabs) table: one row per key, ``mean [min, max]`` per model."""
    cols = "l" + "c" * len(record.models)
    head = " & ".join(["Class"] + [escape_latex(m) for m in record.models])
    body = "\n".join(" & ".join(escape_latex(c) for c in row) + r" \\" for row in score_rows(record))
    return (f"\\begin{{tabular}}{{{cols}}}\n\\toprule\n{head} \\\\\n\\midrule\n{body}\n\\bottomrule\n"
            f"\\end{{tabular}}\n")


def spearman_grid(record: Any) -> dict[str, tuple[list[str], list[list[float]]]]:
    """Per group: the models and the symmetric matrix of rho (1 on the diagonal)."""
    models = record.models
    grids: dict[str, tuple[list[str], list[list[float]]]] = {}
    for s in record.spearman:
        _, grid = grids.setdefault(s["group"], (models, [[1.0 if i == j else float("nan") for j in models]
                                                         for i in models]))
        i, j = models.index(s["first"]), models.index(s["second"])
        rho = float("nan") if is_missing(s["rho"]) else s["rho"]
        grid[i][j] = grid[j][i] = rho
    return grids


class GeometryRenderer:
    """Geometry records: tables and figures."""

    def console_table(self, records: Sequence[Any]) -> str:
        from eatkit.report.eat_html import aligned

        parts = []
        for r in records:
            parts.append(f"{r.test}: {r.title} ({r.iterations} iterations, {r.fold} folds, {r.similarity})")
            parts.append(aligned([["score", *r.models], *score_rows(r)], numeric=range(1, len(r.models) + 1)))
            if r.comparisons:
                t_test = ["p_t"] if "p_t" in r.comparisons[0] else []
                rows = [["model", "class", f"vs {r.reference}", "diff", "d", "p", "p_W", "q", *t_test]]
                rows += [[c["model"], c["classes"][0], c["classes"][1], fmt_number(c["difference"], 4),
                          fmt_number(c["effect_size"], 2),
                          fmt_p(c["p_permutation"]) + ("" if c["p_value_exact"] else "†"),
                          fmt_p(c["p_welch"]), fmt_p(c.get("q_value")), *[fmt_p(c["p_t"]) for _ in t_test]]
                         for c in r.comparisons]
                parts.append(aligned(rows, numeric=range(3, 8 + len(t_test))))
            if r.spearman:
                rows = [["first", "second", "group", "n", "rho", "p"]]
                rows += [[s["first"], s["second"], s["group"], str(s["n"]), fmt_number(s["rho"], 3),
                          fmt_p(s["p_value"]) + ("" if s["method"] == "exact" else "*")] for s in r.spearman]
                parts.append(aligned(rows, numeric=range(3, 6)))
        parts.append(SCORE_LEGEND + ". " + COMPARISON_LEGEND + ". Spearman p: exact over all orderings (* "
                     "t-approximation for more than 8 classes, but for rho = +-1 without ties: 2/n!).")
        return "\n".join(parts)

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        from eatkit.report.style import figure_html

        html = ["<h3>Feature-space geometry</h3>"]
        for r in records:
            rows = score_rows(r)
            head = "".join(f"<th>{escape(h)}</th>" for h in ["score", *r.models])
            body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
            html.append(f"<h4>{escape(r.title)}</h4><div class=\"scroll\"><table><thead><tr>{head}</tr></thead>"
                        f"<tbody>{body}</tbody></table></div><p class=\"note\">{escape(SCORE_LEGEND)}</p>")
            html.append(figure_html(score_bars(r), f"{r.test}: scores with min-max bars",
                                    "Mean score per class and model; bars: min and max over the iterations."))
            if len(r.models) > 1:
                html.append(figure_html(trend_plots(r), f"{r.test}: model against model",
                                        "Each model's scores against the first model's, per group; rho: Spearman."))
                html.append(figure_html(spearman_heatmap(r), f"{r.test}: Spearman grid",
                                        "Spearman's rho between the models' scores, per group of scores."))
            html.append("".join(f"<details><summary>{name}</summary><pre>{escape(text)}</pre></details>"
                                for name, text in (("LaTeX (booktabs)", scores_latex(r)), ("CSV", scores_csv([r])))))
        return "".join(html)


def score_bars(record: Any) -> Any:
    """Mean score per key and model with min-max bars (the thesis's error-bar plots)."""
    from eatkit.report.style import new_figure

    keys = list(dict.fromkeys(s["key"] for s in record.scores))
    fig = new_figure(max(6.0, 0.45 * len(keys) * max(1, len(record.models)) ** 0.5), 3.6)
    ax = fig.subplots()
    width = 0.8 / len(record.models)
    for m, model in enumerate(record.models):
        mine = {s["key"]: s for s in record.scores if s["model"] == model}
        xs = [k + (m - (len(record.models) - 1) / 2) * width for k in range(len(keys))]
        means = [mine[k]["mean"] for k in keys]
        # a mean of equal values can differ from them in the last bit: bar lengths are never negative
        low = [max(0.0, mine[k]["mean"] - mine[k]["min"]) for k in keys]
        high = [max(0.0, mine[k]["max"] - mine[k]["mean"]) for k in keys]
        ax.errorbar(xs, means, yerr=[low, high], fmt="o", capsize=2, label=model, markersize=3)
    ax.set_xticks(range(len(keys)), keys, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel(f"{record.similarity} ({record.fold} folds)")
    ax.legend(fontsize=7)
    return fig


def _groups(record: Any) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for s in record.spearman:
        groups.setdefault(s["group"], list(s["classes"]))
    return groups


def trend_plots(record: Any) -> Any:
    """Per group, each compared model's scores (y) against the first model's (x), with Spearman's rho."""
    from eatkit.report.style import new_figure

    groups = _groups(record)
    fig = new_figure(3.0 * max(1, len(groups)), 3.0)
    axes = fig.subplots(1, max(1, len(groups)), squeeze=False)[0]
    means = {(s["model"], s["key"]): s["mean"] for s in record.scores}
    first = record.models[0]
    for ax, (group, keys) in zip(axes, groups.items()):
        for model in record.models[1:]:
            rho = next((s["rho"] for s in record.spearman if s["group"] == group and s["first"] == first
                        and s["second"] == model), None)
            ax.plot([means[(first, k)] for k in keys], [means[(model, k)] for k in keys], "o",
                    markersize=3, label=f"{model} (rho {fmt_number(rho, 2)})")
        ax.set_title(group, fontsize=8)
        ax.set_xlabel(first, fontsize=7)
        ax.legend(fontsize=6)
    return fig


def spearman_heatmap(record: Any) -> Any:
    """The model x model grid of Spearman's rho, one panel per group."""
    from eatkit.report.style import new_figure

    grids = spearman_grid(record)
    n = len(record.models)
    fig = new_figure(max(3.0, 0.9 * n + 1.5) * len(grids), max(2.5, 0.7 * n + 1.2))
    axes = fig.subplots(1, len(grids), squeeze=False)[0]
    for ax, (group, (models, grid)) in zip(axes, grids.items()):
        ax.imshow(grid, vmin=-1, vmax=1, cmap="RdBu_r")
        for i in range(n):
            for j in range(n):
                ax.text(j, i, fmt_number(grid[i][j], 2), ha="center", va="center", fontsize=7)
        ax.set_xticks(range(n), models, rotation=45, ha="right", fontsize=6)
        ax.set_yticks(range(n), models, fontsize=6)
        ax.set_title(group, fontsize=8)
    return fig
