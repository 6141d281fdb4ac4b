"""The figure a kind declares (:class:`eatkit.kinds.Plot`): a point per record (or per key of a field holding
``{key: value}``) with its interval as a vertical line, categories along the x axis as Bai et al. (2025) draw
the LLM-IAT's stereotypes, a dashed line where there is no effect. Every number comes from the records.

>>> from types import SimpleNamespace as R
>>> from eatkit.kinds import Plot
>>> plot_rows(Plot("share", ("ci",), label=("test", "bias_type")),
...           [R(test="crows", bias_type="age", share=0.6, ci=[0.5, 0.7])])
[Row(panel='', label='crows / age', value=0.6, low=0.5, high=0.7)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, NamedTuple

from eatkit.kinds import Plot
from eatkit.report.style import INK, NEGATIVE, figure_html, new_figure


class Row(NamedTuple):
    """One point of a plot: its panel, its label, its value and interval (``None``: none recorded)."""

    panel: str
    label: str
    value: float
    low: float | None
    high: float | None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def _bounds(value: Any) -> tuple[float | None, float | None]:
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return _number(value[0]), _number(value[1])
    return None, None


def _interval(record: Any, fields: tuple[str, ...], key: str | None = None) -> tuple[float | None, float | None]:
    """The record's interval by the plot's ``interval`` field (of ``key`` in a field of dicts)."""
    value = getattr(record, fields[0], None) if fields else None
    if key is not None:
        value = value.get(key) if isinstance(value, Mapping) else None
    return _bounds(value)


def _label(record: Any, fields: tuple[str, ...]) -> str:
    return " / ".join(str(v) for v in (getattr(record, f, None) for f in fields) if v not in (None, ""))


def plot_rows(plot: Plot, records: Sequence[Any]) -> list[Row]:
    """The points of ``plot`` over ``records``, in order (values that are not finite numbers left out)."""
    rows = []
    for record in records:
        panel = str(getattr(record, plot.panels, "")) if plot.panels else ""
        label, value = _label(record, plot.label), getattr(record, plot.value, None)
        points = value.items() if isinstance(value, Mapping) else [(None, value)]
        for key, point in points:
            number = _number(point)
            if number is not None:
                rows.append(Row(panel, label if key is None else f"{label} / {key}" if label else str(key), number,
                                *_interval(record, plot.interval, key)))
    return rows


def interval_figure(rows: Sequence[Row], plot: Plot) -> Any:
    """The matplotlib figure of ``rows``: one panel per distinct ``panel``, stacked."""
    panels = list(dict.fromkeys(r.panel for r in rows))
    width = min(16.0, 2.0 + 0.32 * max(sum(r.panel == p for r in rows) for p in panels))
    fig = new_figure(max(4.0, width), 2.6 * len(panels) + 0.4 * max(len(r.label) for r in rows) / 6)
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        _draw(ax, [r for r in rows if r.panel == panel], plot, panel)
    return fig


def _draw(ax: Any, rows: Sequence[Row], plot: Plot, panel: str) -> None:
    x = range(len(rows))
    for i, r in zip(x, rows):
        if r.low is not None and r.high is not None:
            ax.plot([i, i], [r.low, r.high], color=NEGATIVE, linewidth=1.5)
    ax.plot(list(x), [r.value for r in rows], "o", color=INK, markersize=4)
    if plot.reference is not None:
        ax.axhline(plot.reference, color=INK, linestyle="--", linewidth=0.8)
    ax.set_xticks(list(x), [r.label for r in rows], rotation=60, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_ylabel(plot.axis or plot.value, fontsize=9)
    ax.grid(axis="y", color="#cccccc", linewidth=0.5)
    if panel:
        ax.set_title(panel, fontsize=9)


def plots_html(plots: Sequence[Plot], records: Sequence[Any], heading: str) -> str:
    """The declared figures of ``records`` as HTML ``<figure>``s (none for a plot without a finite point)."""
    out = []
    for plot in plots:
        rows = plot_rows(plot, records)
        if rows:
            shown = plot.axis or plot.value
            text = (f"{escape(heading)}: {escape(shown)} of each row" + (", with its interval" if plot.interval else "")
                    + (f"; dashed line: {plot.reference:g}" if plot.reference is not None else ""))
            out.append(figure_html(interval_figure(rows, plot), f"{heading}: {shown}", text))
    return "".join(out)
