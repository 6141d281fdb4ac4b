"""EAT-Maps: the ML-EAT seed's four-quadrant picture of a test's level-2 result.

Columns are the targets X and Y, rows the attributes A and B (Wolfe, Hiniker & Howe, ML-EAT, section
"EAT-Maps"). The cell (attribute, target) is shaded when the run recorded that target as associated with
that attribute (``level2_x_association`` / ``level2_y_association``): towards A means a positive level-2
effect size (vermillion), towards B a negative one (blue); every other cell is grey. Each of the nine EAT
patterns thus has its own map. Records whose associations, signs and pattern disagree are refused
(:func:`~eatkit.report.run.check_record`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from eatkit.errors import EatkitError
from eatkit.report.formatting import AT_FLOOR, TEXT_SYMBOLS, fmt_d, fmt_p_marked, p_note
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


def cell_style(association: str | None, attribute: str) -> tuple[str, str]:
    """(facecolor, hatch) of the cell ``attribute`` in a target's column: shaded by the sign of the level-2
    d (towards A: d > 0, towards B: d < 0) where the target is associated with ``attribute``, else grey.

    >>> cell_style("A", "A"), cell_style("A", "B"), cell_style("B", "B")
    (('#D55E00', '//'), ('#DDDDDD', ''), ('#0072B2', '\\\\\\\\'))
    """
    if association != attribute:
        return NEUTRAL, ""
    return (POSITIVE, POSITIVE_HATCH) if attribute == "A" else (NEGATIVE, NEGATIVE_HATCH)


def p_phrase(record: Any) -> str:
    """The level-1 p-value as the map's caption writes it, with the mark of a sampled one.

    >>> from types import SimpleNamespace as Rec
    >>> rec = dict(p_method="permutation", p_value_exact=False, n_permutations=99999, p_value=1e-05)
    >>> p_phrase(Rec(**rec)), p_phrase(Rec(**rec | {"p_value": 0.0123})), p_phrase(Rec(**rec | {"p_method": "welch"}))
    ('p ≤ 1.0e-05', 'p = 0.012†', 'p = 1.0e-05')
    """
    text = fmt_p_marked(record)
    return f"p {AT_FLOOR} {text[1:]}" if text.startswith(AT_FLOOR) else f"p = {text}"


def _title(record: Mapping[str, Any]) -> str:
    return wrap(record.title, 27, split_words=True)


def _column_labels(record: Mapping[str, Any]) -> list[str]:
    return [wrap(f"{t}: {record.names()[k.upper()]}", _COLUMN_CHARS, split_words=True) for t, k in _TARGETS]


def _row_labels(record: Mapping[str, Any]) -> list[str]:
    return [wrap(f"{a}: {record.names()[a]}", _ROW_CHARS, split_words=True) for a in _ATTRIBUTES]


def _draw(ax: Axes, record: Mapping[str, Any]) -> None:
    from matplotlib.patches import Rectangle

    for col, (target, key) in enumerate(_TARGETS):
        association, effect = record.level2(key).association, record.level2(key).effect_size
        for row, attribute in enumerate(_ATTRIBUTES):
            face, hatch = cell_style(association, attribute)
            cell = Rectangle((col, row), 1, 1, facecolor=face, hatch=hatch, edgecolor="white", linewidth=3)
            cell.set_gid(f"eatmap-{record.test}-{attribute}{target}")
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
    ax.set_xlabel(f"{record.pattern}\nd = {fmt_d(record.effect_size)}, {p_phrase(record)}", fontsize=9,
                  color=INK)


class _Layout:
    """Where the maps go, in inches: a fixed square per test with room for its title, labels and caption.

    (Constrained layout cannot place equal-aspect axes under multi-line titles without overlaps.)
    """

    width, left, square, bottom, legend, note_line = 2.9, 1.05, 1.55, 0.55, 0.75, 0.16

    def __init__(self, records: Sequence[Mapping[str, Any]], ncols: int, legend: bool, note: str = "") -> None:
        title_lines = max(_title(r).count("\n") + 1 for r in records)
        label_lines = max(label.count("\n") + 1 for r in records for label in _column_labels(r))
        self.top = 0.25 + 0.15 * title_lines + 0.135 * label_lines
        self.height = self.top + self.square + self.bottom
        self.ncols, self.nrows = ncols, math.ceil(len(records) / ncols)
        self.note = wrap(note, int(14 * ncols * self.width)) if note else ""
        self.note_height = (self.note.count("\n") + 1) * self.note_line + 0.1 if note else 0.0
        self.legend_height = self.legend + self.note_height if legend else 0.0

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

    thresholds = records[0].pattern_thresholds
    rule = ""
    if "effect_size" in thresholds and "alpha" in thresholds:
        rule = f" (|d| < {thresholds['effect_size']} or p \u2265 {thresholds['alpha']})"
    return [
        Patch(facecolor=POSITIVE, hatch=POSITIVE_HATCH, edgecolor="white", label="associated, d > 0"),
        Patch(facecolor=NEGATIVE, hatch=NEGATIVE_HATCH, edgecolor="white", label="associated, d < 0"),
        Patch(facecolor=NEUTRAL, edgecolor="white", label=f"not associated{rule}"),
    ]


def eat_map_grid(records: Sequence[Mapping[str, Any]], ncols: int = 5, p_legend: bool = True) -> Figure:
    """EAT-Maps of a whole suite, ``ncols`` to a row, with a legend of the shading and, unless ``p_legend`` is
    false (a caption outside the figure explains them), of the p-values and their marks.

    >>> fig = eat_map_grid(load_run("out/weat").records, ncols=5)   # doctest: +SKIP
    """
    if not records:
        raise EatkitError("eat_map_grid needs at least one result record")
    if ncols < 1:
        raise EatkitError(f"eat_map_grid: ncols must be a positive integer, got {ncols}")
    for record in records:
        check_record(record)
    note = p_note(records, TEXT_SYMBOLS) if p_legend else ""
    layout = _Layout(records, min(ncols, len(records)), legend=True, note=note)
    fig = layout.figure()
    for index, record in enumerate(records):
        _draw(layout.axes(fig, index), record)
    height = fig.get_size_inches()[1]
    fig.legend(handles=_legend_handles(records), loc="lower center", bbox_to_anchor=(0.5, layout.note_height / height),
               ncols=3, fontsize=9, frameon=False, title="Level 2 (ML-EAT)", title_fontsize=9)
    if note:
        fig.text(0.5, 0.05 / height, layout.note, ha="center", va="bottom", fontsize=8, color=INK)
    return fig
