"""Reports of a series of runs (``series.json``, written by :class:`eatkit.run.series.SeriesResult`): the EAT
of each test at every point, side by side, and levels 1 and 2 drawn over the series (ML-EAT seed, Fig. 3
for HistWords decades; Table 2 for prompts). Presentation only: every number comes from the run folders.

Side-by-side tables (:func:`series_table`) give, per test, one row per point: level 1 d, level 2 d of X
and of Y, the EAT pattern and the level-3 cells as ``mean (SD)``; ``*`` marks p < alpha (level 1: the
q-value of the run; level 2: the one-sided p towards the sign of d), and ``~`` a d whose sign differs
from the first point's (a sign change). A record's warnings (e.g. the anisotropy rule) follow its row.
A test of another kind with a headline field (:class:`eatkit.kinds.Presentation`) gets one row per point
with that value, ``*`` for q < 0.05 and ``~`` for a sign change.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eatkit.errors import EatkitError
from eatkit.io import inside, read_json
from eatkit.kinds import get_kind
from eatkit.report.formatting import fmt_d, is_missing
from eatkit.report.run import Run, load_run
from eatkit.report.style import INK, figure_html, new_figure, wrap
from eatkit.stats.multitest import significant

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the mark of a sign change against the first point
SIGN_CHANGE = "~"
#: the level-3 cells, in the seed's table order
CELLS = ("xa", "xb", "ya", "yb")
#: the significance level of a record that records none (its q-value, else its p-value, below it)
ALPHA = 0.05


@dataclass(frozen=True)
class Series:
    """A loaded series: its kind (``"series"`` or ``"prompts"``), point labels and runs, in order."""

    kind: str
    labels: list[str]
    runs: list[Run]

    def tests(self) -> list[str]:
        """The ids of the tests of the first point whose kind has a headline field, in suite order."""
        return [r.test for r, _ in self.runs[0].headlined]

    def points(self, test: str) -> list[Any]:
        """The record of ``test`` at every point (a point without it is an error naming the point)."""
        out = []
        for label, run in zip(self.labels, self.runs):
            found = [r for r, _ in run.headlined if r.test == test]
            if not found:
                raise EatkitError(f"series point '{label}' has no result for test '{test}'")
            out.append(found[0])
        return out


def is_series(folder: str | Path) -> bool:
    """Whether ``folder`` holds a series (``series.json``: a FIFO or folder of that name too, which its reader
    then names) rather than one run."""
    return (Path(folder) / "series.json").exists()


def load_series(folder: str | Path) -> Series:
    """Read ``series.json`` and every point's run folder (each checked as :func:`load_run` checks it)."""
    folder = Path(folder)
    path = folder / "series.json"
    data = read_json(path, "series file")  # (eatkit's one reader: a regular file, bounded, nesting checked)
    points = data.get("points") if isinstance(data, dict) else None
    if not isinstance(points, list) or len(points) < 2 or data.get("schema") != "eatkit.series/1" or \
            not all(map(_is_point, points)):
        raise EatkitError(f"{path} is not an eatkit series (schema eatkit.series/1 with 2 or more points)")
    return Series(str(data.get("kind", "series")), [p["label"] for p in points],
                  [load_run(inside(folder, p["folder"], f"{path}: point folder")) for p in points])


def _is_point(point: Any) -> bool:
    """Whether a series point is an object with a string label and folder."""
    return isinstance(point, dict) and isinstance(point.get("label"), str) and isinstance(point.get("folder"), str)


def _sig(record: Any, level: str) -> bool:
    if level == "1":
        p = record.q_value if not is_missing(record.q_value) else record.p_value
        return significant(p, getattr(record, "pattern_thresholds", {}).get("alpha", ALPHA))
    return getattr(record, f"level2_{level}_association") is not None  # decided by the analysis


def _d(record: Any, first: Any, level: str, name: str = "effect_size") -> str:
    name = name if level == "1" else f"level2_{level}_effect_size"
    d, d0 = getattr(record, name), getattr(first, name)
    changed = record is not first and not is_missing(d) and not is_missing(d0) and d * d0 < 0
    return fmt_d(d) + ("*" if _sig(record, level) else "") + (SIGN_CHANGE if changed else "")


def _multilevel(record: Any) -> bool:
    """Whether the record has the ML-EAT levels that the series layout of the seed shows."""
    return all(hasattr(record, f) for f in ("level2_x_effect_size", "level2_y_effect_size", "level3", "pattern"))


def _cell(record: Any, pair: str) -> str:
    stats = record.level3.get(pair, {})
    mean, sd = stats.get("mean"), stats.get("sd")
    return "n/a" if is_missing(mean) else f"{fmt_d(mean)} ({fmt_d(sd)})"


def series_rows(series: Series, test: str) -> list[tuple[str, ...]]:
    """One row per point: label, d (level 1), d(X), d(Y) (level 2), pattern, the four level-3 cells."""
    records = series.points(test)
    if not _multilevel(records[0]):
        name = get_kind(records[0].kind).presentation.headline or "effect_size"
        return [(label, _d(r, records[0], "1", name)) for label, r in zip(series.labels, records)]
    return [(label, _d(r, records[0], "1"), _d(r, records[0], "x"), _d(r, records[0], "y"), r.pattern,
             *(_cell(r, c) for c in CELLS)) for label, r in zip(series.labels, records)]


def _header(series: Series, record: Any) -> tuple[str, ...]:
    point = "prompt" if series.kind == "prompts" else "point"
    if not _multilevel(record):
        return (point, str(get_kind(record.kind).presentation.headline))
    return (point, "d", f"d({record.x_name})", f"d({record.y_name})", "pattern",
            *(f"{getattr(record, f'{t}_name')},{getattr(record, f'{a}_name')}" for t, a in
              (("x", "a"), ("x", "b"), ("y", "a"), ("y", "b"))))


def series_table(series: Series) -> str:
    """The console table: per test, its title, then one aligned row per point (module docstring)."""
    from eatkit.report.eat_html import aligned

    blocks = []
    for test in series.tests():
        records = series.points(test)
        labels = [repr(label) if series.kind == "prompts" else label for label in series.labels]
        rows = [_header(series, records[0]), *((lab, *row[1:]) for lab, row in zip(labels, series_rows(series, test)))]
        warnings = [f"  {label}: {w}" for label, r in zip(series.labels, records) for w in r.warnings]
        blocks.append("\n".join([f"{test}: {records[0].title}", aligned(rows, numeric=range(1, 4)), *warnings]))
    legend = (f"d: level 1; d(X), d(Y): level 2; cells: level-3 mean (SD) cosine. * significant "
              f"(level 1: q < alpha; level 2: associated); {SIGN_CHANGE} sign differs from the first point")
    return "\n\n".join(blocks) + "\n" + legend


def series_plot(series: Series, test: str) -> Figure:
    """Levels 1 and 2 of ``test`` over the series, the EAT pattern written at each point (seed Fig. 3).

    Filled markers are significant (level 1: q < alpha; level 2: associated with an attribute).
    """
    records = series.points(test)
    first = records[0]
    fig = new_figure(max(6.0, 0.75 * len(records) + 2.5), 4.2)
    ax = fig.add_subplot()
    x = list(range(len(records)))
    lines = (("1", "effect_size", "-", "o", f"level 1 d({first.x_name}, {first.y_name})"),
             ("x", "level2_x_effect_size", "--", "s", f"level 2 d({first.x_name})"),
             ("y", "level2_y_effect_size", ":", "^", f"level 2 d({first.y_name})"))
    for level, field, style, marker, label in lines:
        values = [float("nan") if is_missing(getattr(r, field)) else getattr(r, field) for r in records]
        ax.plot(x, values, linestyle=style, color=INK, linewidth=1.3, marker=marker, markersize=6,
                markerfacecolor="white", label=label)
        for xi, v, r in zip(x, values, records):
            ax.plot([xi], [v], marker=marker, color=INK, markersize=6, linestyle="none",
                    markerfacecolor=INK if _sig(r, level) else "white")
    top = ax.get_ylim()[1]
    for xi, r in zip(x, records):
        ax.text(xi, top, r.pattern, rotation=60, fontsize=7, ha="left", va="bottom", color=INK)
    ax.axhline(0, color="#777777", linewidth=0.8, linestyle="--", zorder=0)
    ax.set_xticks(x, [wrap(label, 18) for label in series.labels], fontsize=8,
                  rotation=45 if len(records) > 6 else 0)
    ax.set_ylabel("effect size d", fontsize=9)
    ax.set_title(wrap(first.title, 70), fontsize=10, pad=60)
    ax.legend(fontsize=8, frameon=False, loc="best", title="filled marker: significant", title_fontsize=7)
    return fig


def series_html(series: Series) -> str:
    """An HTML section per test: the plot over the series and the side-by-side table."""
    parts = []
    for test in series.tests():
        records = series.points(test)
        head = "".join(f"<th>{escape(h)}</th>" for h in _header(series, records[0]))
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                       for row in series_rows(series, test))
        notes = "".join(f"<li>{escape(label)}: {escape(w)}</li>" for label, r in zip(series.labels, records)
                        for w in r.warnings)
        plot = figure_html(series_plot(series, test), f"{test} over the series",
                           "Levels 1 and 2 at each point; filled markers are significant; the EAT pattern "
                           "is written above each point.") if _multilevel(records[0]) else ""
        parts.append(f"<section><h3>{escape(records[0].title)}</h3>{plot}<table><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>{f'<ul>{notes}</ul>' if notes else ''}</section>")
    legend = (f"<p>d: level 1; d(X), d(Y): level 2; cells: level-3 mean (SD) cosine. * significant; "
              f"{SIGN_CHANGE} sign differs from the first point.</p>")
    return legend + "".join(parts)
