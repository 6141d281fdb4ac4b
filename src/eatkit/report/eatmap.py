"""EAT-Maps: the ML-EAT seed's four-quadrant picture of a test's level-2 result.

Columns are the targets X and Y, rows the attributes A and B (Wolfe, Hiniker & Howe, ML-EAT, section
"EAT-Maps"). The cell (attribute, target) is shaded when the run recorded that target as associated with
that attribute (``level2_x_association`` / ``level2_y_association``), coloured by the sign of the target's
level-2 effect size; every other cell is grey. Each of the nine EAT patterns thus has its own map.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from eatkit.errors import EatkitError
from eatkit.report.formatting import fmt_d, fmt_p
from eatkit.report.run import check_record
from eatkit.report.style import (
    INK,
    NEGATIVE,
    NEGATIVE_HATCH,
    NEUTRAL,
    POSITIVE,
    POSITIVE_HATCH,
    new_figure,
    wrap,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_TARGETS = (("X", "x"), ("Y", "y"))
_ATTRIBUTES = ("A", "B")
_COLUMN_CHARS, _ROW_CHARS = 12, 15  # characters of 8-pt text that fit above a column / left of a row


def cell_style(association: str | None, attribute: str, effect_size: float | None) -> tuple[str, str]:
    """(facecolor, hatch) of the cell ``attribute`` in a target's column.

    >>> cell_style("A", "A", 0.9), cell_style("A", "B", 0.9), cell_style("B", "B", -0.5)
    (('#D55E00', '//'), ('#DDDDDD', ''), ('#0072B2', '\\\\\\\\'))
    """
    if association != attribute:
        return NEUTRAL, ""
    negative = effect_size is not None and effect_size < 0
    return (NEGATIVE, NEGATIVE_HATCH) if negative else (POSITIVE, POSITIVE_HATCH)


def _title(record: Mapping[str, Any]) -> str:
    return wrap(record["title"], 27, split_words=True)


def _column_labels(record: Mapping[str, Any]) -> list[str]:
    return [wrap(f"{t}: {record[f'{k}_name']}", _COLUMN_CHARS, split_words=True) for t, k in _TARGETS]


def _row_labels(record: Mapping[str, Any]) -> list[str]:
    return [wrap(f"{a}: {record[f'{a.lower()}_name']}", _ROW_CHARS, split_words=True) for a in _ATTRIBUTES]


def _draw(ax: Axes, record: Mapping[str, Any]) -> None:
    from matplotlib.patches import Rectangle

    for col, (target, key) in enumerate(_TARGETS):
        association = record[f"level2_{key}_association"]
        effect = record[f"level2_{key}_effect_size"]
        for row, attribute in enumerate(_ATTRIBUTES):
            face, hatch = cell_style(association, attribute, effect)
            cell = Rectangle((col, row), 1, 1, facecolor=face, hatch=hatch, edgecolor="white", linewidth=3)
            cell.set_gid(f"eatmap-{record['test']}-{attribute}{target}")
            ax.add_patch(cell)
        label = f"d={fmt_d(effect)}"
        if association is None:  # the column's d, between its two grey cells: no association
            ax.text(col + 0.5, 1.0, label, ha="center", va="center", fontsize=8, color="#555555",
                    style="italic", bbox={"facecolor": NEUTRAL, "edgecolor": "none", "pad": 1})
        else:
            ax.text(col + 0.5, _ATTRIBUTES.index(association) + 0.5, label, ha="center", va="center",
                    fontsize=9, fontweight="bold", color=INK,
                    bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "none"})
    ax.set_xlim(0, 2)
    ax.set_ylim(2, 0)  # row A on top
    ax.set_aspect("equal")
    ax.xaxis.tick_top()
    ax.set_xticks([0.5, 1.5], _column_labels(record), fontsize=8)
    ax.set_yticks([0.5, 1.5], _row_labels(record), fontsize=8)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(_title(record), fontsize=8.5, color=INK)
    ax.set_xlabel(
        f"{record['pattern']}\nd = {fmt_d(record['effect_size'])}, p = {fmt_p(record['p_value'])}",
        fontsize=9, color=INK,
    )


class _Layout:
    """Where the maps go, in inches: a fixed square per test with room for its title, labels and caption.

    (Constrained layout cannot place equal-aspect axes under multi-line titles without overlaps.)
    """

    width, left, square, bottom, legend = 2.9, 1.05, 1.55, 0.55, 0.75

    def __init__(self, records: Sequence[Mapping[str, Any]], ncols: int, legend: bool) -> None:
        title_lines = max(_title(r).count("\n") + 1 for r in records)
        label_lines = max(label.count("\n") + 1 for r in records for label in _column_labels(r))
        self.top = 0.25 + 0.15 * title_lines + 0.135 * label_lines
        self.height = self.top + self.square + self.bottom
        self.ncols, self.nrows = ncols, math.ceil(len(records) / ncols)
        self.legend_height = self.legend if legend else 0.0

    def figure(self) -> Figure:
        return new_figure(self.ncols * self.width, self.nrows * self.height + self.legend_height, constrained=False)

    def axes(self, fig: Figure, index: int) -> Axes:
        row, col = divmod(index, self.ncols)
        width, height = fig.get_size_inches()
        left = col * self.width + self.left
        bottom = self.legend_height + (self.nrows - 1 - row) * self.height + self.bottom
        return fig.add_axes((left / width, bottom / height, self.square / width, self.square / height))


def eat_map(record: Mapping[str, Any], ax: Axes | None = None) -> Figure:
    """Draw the EAT-Map of one result record (from ``results.json``) and return its Figure.

    >>> from eatkit.report import load_run
    >>> fig = eat_map(load_run("out/weat").records[0])            # doctest: +SKIP
    >>> fig.savefig("weat1-eatmap.svg")                           # doctest: +SKIP
    """
    check_record(record)
    if ax is None:
        layout = _Layout([record], 1, legend=False)
        ax = layout.axes(layout.figure(), 0)
    _draw(ax, record)
    return ax.figure


def _legend_handles(records: Sequence[Mapping[str, Any]]) -> list[Any]:
    from matplotlib.patches import Patch

    thresholds = records[0].get("pattern_thresholds") or {}
    rule = ""
    if "effect_size" in thresholds and "alpha" in thresholds:
        rule = f" (|d| < {thresholds['effect_size']} or p \u2265 {thresholds['alpha']})"
    return [
        Patch(facecolor=POSITIVE, hatch=POSITIVE_HATCH, edgecolor="white", label="associated, d > 0"),
        Patch(facecolor=NEGATIVE, hatch=NEGATIVE_HATCH, edgecolor="white", label="associated, d < 0"),
        Patch(facecolor=NEUTRAL, edgecolor="white", label=f"not associated{rule}"),
    ]


def eat_map_grid(records: Sequence[Mapping[str, Any]], ncols: int = 5) -> Figure:
    """EAT-Maps of a whole suite, ``ncols`` to a row, with a legend of the shading.

    >>> fig = eat_map_grid(load_run("out/weat").records, ncols=5)   # doctest: +SKIP
    """
    if not records:
        raise EatkitError("eat_map_grid needs at least one result record")
    if ncols < 1:
        raise EatkitError(f"eat_map_grid: ncols must be a positive integer, got {ncols}")
    for record in records:
        check_record(record)
    layout = _Layout(records, min(ncols, len(records)), legend=True)
    fig = layout.figure()
    for index, record in enumerate(records):
        _draw(layout.axes(fig, index), record)
    fig.legend(handles=_legend_handles(records), loc="lower center", bbox_to_anchor=(0.5, 0.0), ncols=3,
               fontsize=9, frameon=False, title="Level 2 (ML-EAT)", title_fontsize=9)
    return fig
