"""Plots of a run folder: a forest plot of level-1 effect sizes, the level-3 similarity distributions,
and a models x tests heatmap comparing runs. Everything drawn comes from the run folder; nothing is
recomputed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.report.formatting import STARS_NOTE, fmt_d, is_missing, stars
from eatkit.report.run import PAIRS, Run, check_record, run_labels
from eatkit.report.style import (
    DIVERGING_CMAP,
    INK,
    NEUTRAL,
    PAIR_STYLES,
    new_figure,
    wrap,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _checked(records: Sequence[Mapping[str, Any]], what: str) -> Sequence[Mapping[str, Any]]:
    if not records:
        raise EatkitError(f"{what} needs at least one result record")
    for record in records:
        check_record(record)
    return records


def _ci(record: Mapping[str, Any]) -> tuple[float, float] | None:
    ci = record.ci
    if isinstance(ci, Sequence) and len(ci) == 2 and not any(is_missing(v) for v in ci):
        return float(ci[0]), float(ci[1])
    return None


def forest_plot(records: Sequence[Mapping[str, Any]], ax: Axes | None = None, title: str | None = None,
                ci_level: float | None = None) -> Figure:
    """Level-1 effect sizes with their percentile bootstrap CIs (target stimuli resampled within X and
    within Y, attribute sets fixed), one row per test (suite order, top to bottom).

    Filled markers are significant after correction (q < 0.05), hollow ones are not; the column on the
    right repeats d with ``*``/``**``/``***`` for q < 0.05/0.01/0.001 (Benjamini-Hochberg).
    ``ci_level`` (the manifest's ``statistics.confidence_level``) only labels the intervals.

    >>> fig = forest_plot(load_run("out/weat").records)          # doctest: +SKIP
    """
    from matplotlib.lines import Line2D
    from matplotlib.transforms import blended_transform_factory

    records = _checked(records, "forest_plot")
    labels = [wrap(r.title, 44) for r in records]
    if ax is None:
        lines = sum(label.count("\n") + 1 for label in labels)
        ax = new_figure(8.0, 1.6 + 0.17 * lines + 0.22 * len(records)).add_subplot()
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for y, record in enumerate(records):
        d, q, ci = record.effect_size, record.q_value, _ci(record)
        if ci is not None:
            ax.plot(ci, [y, y], color=INK, linewidth=1.5, solid_capstyle="butt")
        if not is_missing(d):
            significant = not is_missing(q) and q < 0.05
            ax.plot([d], [y], marker="o", markersize=7, color=INK, markeredgewidth=1.5,
                    markerfacecolor=INK if significant else "white", linestyle="none")
        ax.text(1.02, y, f"{fmt_d(d)} {stars(q)}".rstrip(), transform=right, va="center", fontsize=9,
                family="monospace", color=INK)
    ax.axvline(0, color="#777777", linewidth=1, linestyle="--", zorder=0)
    ax.set_yticks(range(len(records)), labels, fontsize=8.5)
    ax.set_ylim(len(records) - 0.5, -0.5)
    ax.set_xlabel("effect size d (level 1)", fontsize=9)
    ax.grid(axis="x", color="#EEEEEE", zorder=0)
    ax.text(1.02, 1.0, "d, q", transform=ax.transAxes, va="bottom", fontsize=9, family="monospace")
    if title:
        ax.set_title(wrap(title, 80), fontsize=10)
    handles = [
        Line2D([], [], marker="o", color=INK, markerfacecolor=INK, linestyle="none", label="q < 0.05"),
        Line2D([], [], marker="o", color=INK, markerfacecolor="white", linestyle="none", label="q \u2265 0.05"),
    ]
    if any(_ci(r) is not None for r in records):
        level = "" if ci_level is None else f"{ci_level:.0%} "
        handles.append(Line2D([], [], color=INK, linewidth=1.5, label=f"{level}bootstrap CI (targets resampled)"))
    ax.figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8.5,
                     frameon=False, title=wrap(STARS_NOTE, 90), title_fontsize=8)
    return ax.figure


def level3_plot(records: Sequence[Mapping[str, Any]], similarities: Mapping[str, Mapping[str, np.ndarray]],
                ncols: int = 2) -> Figure:
    """The four cosine-similarity distributions (X-A, X-B, Y-A, Y-B) of every test on one shared axis.

    ML-EAT level 3: distributions crowded near 1 reveal an anisotropic embedding space, where cosine
    similarity says little (the seed's GPT-2 analysis). The diamond marks the mean recorded in
    ``results.json``.

    >>> run = load_run("out/weat")                                      # doctest: +SKIP
    >>> fig = level3_plot(run.records, run.similarities)               # doctest: +SKIP
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    records = _checked(records, "level3_plot")
    if ncols < 1:
        raise EatkitError(f"level3_plot: ncols must be a positive integer, got {ncols}")
    for record in records:
        if record.test not in similarities:
            raise EatkitError(f"level3_plot: no similarities for test {record.test!r}")
    ncols = min(ncols, len(records))
    nrows = math.ceil(len(records) / ncols)
    fig = new_figure(5.6 * ncols, 2.6 * nrows + 0.9)
    fig.get_layout_engine().set(h_pad=0.12)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True).ravel()
    for ax, record in zip(axes, records):
        data = [np.asarray(similarities[record.test][pair], dtype=float) for pair in PAIRS]
        names = {"x": record.x_name, "y": record.y_name, "a": record.a_name, "b": record.b_name}
        boxes = ax.boxplot(data, orientation="horizontal", patch_artist=True, widths=0.6,
                           medianprops={"color": INK}, flierprops={"markersize": 2, "alpha": 0.5})
        for box, pair in zip(boxes["boxes"], PAIRS):
            color, hatch, _ = PAIR_STYLES[pair]
            box.set(facecolor=color, hatch=hatch, edgecolor=INK)
        if record.level3:
            means = [record.level3.get(pair, {}).get("mean") for pair in PAIRS]
            ax.plot([m for m in means if not is_missing(m)],
                    [i + 1 for i, m in enumerate(means) if not is_missing(m)],
                    marker="D", color="white", markeredgecolor=INK, markersize=5, linestyle="none")
        ax.set_yticks(range(1, 5), [wrap(f"{names[p[0]]} \u00b7 {names[p[1]]}", 26) for p in PAIRS],
                      fontsize=7.5)
        ax.set_ylim(4.6, 0.4)
        ax.axvline(0, color="#777777", linewidth=1, linestyle="--", zorder=0)
        ax.set_title(wrap(record.title, 60), fontsize=8.5)
        ax.tick_params(axis="x", labelbottom=True, labelsize=8)
    for ax in axes[len(records):]:
        ax.set_visible(False)
    for ax in axes[max(0, len(records) - ncols):len(records)]:
        ax.set_xlabel("cosine similarity", fontsize=8.5)
    handles = [Patch(facecolor=c, hatch=h, edgecolor=INK, label=label) for c, h, label in PAIR_STYLES.values()]
    handles.append(Line2D([], [], marker="D", color="white", markeredgecolor=INK, linestyle="none",
                          label="mean (results.json)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8.5, frameon=False,
               title="Level 3 (ML-EAT): target \u00b7 attribute cosine similarities", title_fontsize=9)
    return fig


def effect_size_heatmap(runs: Sequence[Run]) -> Figure:
    """A models x tests heatmap of each record's headline value (the field its kind's
    :class:`~eatkit.kinds.Presentation` names: an EAT's level-1 effect size d), annotated with the value and
    the significance marks of its q-value.

    Rows are the runs (labelled with the manifest's model id), columns the tests in first-seen order;
    a test a run lacks is a hatched "n/a" cell.

    >>> fig = effect_size_heatmap([load_run("out/igpt"), load_run("out/simclr")])   # doctest: +SKIP
    """
    from matplotlib.patches import Rectangle

    if not runs:
        raise EatkitError("effect_size_heatmap needs at least one run")
    titles: dict[str, str] = {}
    for run in runs:
        for record, _ in run.headlined:
            titles.setdefault(record.test, record.title)
    tests = list(titles)
    by_test = [{r.test: _number(getattr(r, name)) for r, name in run.headlined} for run in runs]
    q_values = [{r.test: r.q_value for r, _ in run.headlined} for run in runs]
    names = list(dict.fromkeys(name for run in runs for _, name in run.headlined))
    what = "effect size d" if names == ["effect_size"] else ", ".join(n.replace("_", " ") for n in names)
    values = np.array([[found.get(t, math.nan) for t in tests] for found in by_test])
    limit = max(2.0, float(np.nanmax(np.abs(values), initial=0.0)))
    many = len(tests) > 10  # then slanted one-line labels in narrower columns keep the figure page-wide
    fig = new_figure(2.4 + (0.75 if many else 1.05) * len(tests), (3.6 if many else 2.6) + 0.45 * len(runs))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(values), cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto")
    for i, found in enumerate(by_test):
        for j, test in enumerate(tests):
            if test not in found:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=NEUTRAL, hatch="xx", edgecolor="white"))
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color=INK)
                continue
            d = values[i, j]
            dark = not math.isnan(d) and abs(d) / limit > 0.55
            ax.text(j, i, f"{fmt_d(found[test])}\n{stars(q_values[i][test])}",
                    ha="center", va="center", fontsize=8, color="white" if dark else INK)
    if many:
        ax.set_xticks(range(len(tests)), [wrap(titles[t], 34) for t in tests], fontsize=7, rotation=40,
                      ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(range(len(tests)), [wrap(titles[t], 16) for t in tests], fontsize=7)
    ax.set_yticks(range(len(runs)), run_labels(runs), fontsize=8.5)
    ax.tick_params(length=0)
    ax.set_title("Effect size d (level 1) by model and test" if what == "effect size d" else
                 f"{what[0].upper()}{what[1:]} by model and test", fontsize=10)
    colorbar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.01)
    colorbar.set_label(what, fontsize=8.5)
    fig.supxlabel(wrap(STARS_NOTE, 120), fontsize=8)
    return fig


def _number(value: Any) -> float:
    return math.nan if is_missing(value) else float(value)
