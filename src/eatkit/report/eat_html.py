"""The HTML sections of EAT records (kind ``"eat"``): the results table, EAT-Maps, the forest plot and
level 3, and the EAT console table of ``eatkit run``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from eatkit.analyses.eat import PAIRS, EATRecord
from eatkit.report.eatmap import eat_map_grid
from eatkit.report.formatting import STARS_NOTE, effect_size_label, fmt_d, fmt_p, fmt_p_marked, p_note
from eatkit.report.plots import forest_plot, level3_plot
from eatkit.report.run import Run
from eatkit.report.style import figure_html
from eatkit.report.tables import NUMERIC, caption, columns, csv_table, latex_table, markdown_table, table_rows
from eatkit.report.validity import validity_console, validity_html

_HTML_HEADERS = {
    "test": "Test", "x": "X", "y": "Y", "a": "A", "b": "B", "n_t": "n<sub>t</sub>", "n_a": "n<sub>a</sub>",
    "d": "d", "iat_d": "IAT d", "p": "p", "q": "q", "d_x": "d<sub>A,B,X</sub>", "p_x": "p<sub>A,B,X</sub>",
    "d_y": "d<sub>A,B,Y</sub>", "p_y": "p<sub>A,B,Y</sub>", "pattern": "Pattern",
}
_CELL_CLASS = {**{c: "num" for c in NUMERIC}, "pattern": "pattern"}


#: the shaded columns (the iEAT seed's Table 1 colours d by Cohen's small, medium and large) and their fields
_SHADED = {"d": "effect_size", "iat_d": "iat_d"}
SHADING_NOTE = "d shaded by Cohen's conventional sizes, as in the iEAT seed's Table 1: |d| ≥ 0.2 small, ≥ 0.5 medium, ≥ 0.8 large."


def _cell(tag: str, column: str, content: str, size: str | None = None) -> str:
    classes = [_CELL_CLASS[column]] if column in _CELL_CLASS else []
    classes += [f"es-{size}"] if size else []
    css = f' class="{" ".join(classes)}"' if classes else ""
    return f"<{tag}{css}>{content}</{tag}>"




def _results_html(run: Run) -> str:
    cols = columns(run.eat_records)
    head = "".join(_cell("th", c, _HTML_HEADERS[c]) for c in cols)
    body = []
    for record, row in zip(run.eat_records, table_rows(run.eat_records)):
        cells = [f'<th scope="row">{escape(row["test"])}<span class="title">{escape(record.title)}</span></th>']
        cells += [_cell("td", c, escape(row[c]), effect_size_label(getattr(record, _SHADED[c], None))
                        if c in _SHADED else None) for c in cols[1:]]
        body.append(f"<tr>{''.join(cells)}</tr>")
    dropped = [
        f"<li>{escape(r.test)} {escape(s)}: {escape(', '.join(map(str, words)))}</li>"
        for r in run.eat_records for s, words in r.dropped.items() if words
    ]
    dropped_html = (f'<p class="note">Stimuli left out (<code>--oov drop</code>, and later copies of a '
                    f'duplicated stimulus):</p><ul class="note">'
                    f"{''.join(dropped)}</ul>") if dropped else ""
    exports = "".join(
        f"<details><summary>{name}</summary><pre>{escape(text)}</pre></details>"
        for name, text in (("LaTeX (booktabs)", latex_table(run)), ("Markdown", markdown_table(run)),
                           ("CSV", csv_table(run)))
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
        f'<p class="note">{escape(caption(run))} {escape(SHADING_NOTE)}</p>{dropped_html}{exports}'
    )


def _level3_html(run: Run, label: str) -> str:
    rows = "".join(
        f"<tr><th scope=\"row\">{escape(r.test)}</th>"
        + "".join(f'<td class="num">{_level3_cell(r, pair)}</td>' for pair in PAIRS)
        + "".join(f'<td class="num">{_anisotropy_cell(r, key)}</td>' for key in ("baseline_mean", "spread"))
        + "</tr>"
        for r in run.eat_records
    )
    warned = "".join(f"<li>{escape(r.test)}: {escape(w)}</li>" for r in run.eat_records for w in r.warnings)
    if run.similarities is None:
        figure = (f'<p class="note">{escape(str(run.path / "similarities.npz"))} is absent: the level-3 '
                  "distributions are not shown, only their means and sds above.</p>")
    else:
        figure = figure_html(level3_plot(run.eat_records, run.similarities), f"Level-3 similarity distributions, {label}",
                         _LEVEL3_NOTE)
    return (
        '<p class="note">Mean (sd) cosine similarity of each target set with each attribute set:</p>'
        '<div class="scroll"><table><thead><tr><th>Test</th><th class="num">X\u00b7A</th>'
        '<th class="num">X\u00b7B</th><th class="num">Y\u00b7A</th><th class="num">Y\u00b7B</th>'
        '<th class="num">random pairs</th><th class="num">spread</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        f'<p class="note">{_ANISOTROPY_NOTE}</p>'
        + (f'<p class="note"><strong>Warnings:</strong></p><ul class="note">{warned}</ul>' if warned else "")
        + figure
    )


def _anisotropy_cell(record: Any, key: str) -> str:
    value = (record.anisotropy or {}).get(key)
    return "n/a" if value is None else fmt_d(value)


def _level3_cell(record: Any, pair: str) -> str:
    stats = record.level3.get(pair)
    if not isinstance(stats, Mapping):
        return "n/a"
    return f"{fmt_d(stats.get('mean'))} ({fmt_d(stats.get('sd'))})"


_EATMAP_NOTE = (
    "EAT-Maps (ML-EAT): columns are the targets X and Y, rows the attributes A and B. A cell is shaded where "
    "the target is associated with that attribute at level 2 (vermillion with / hatching: d &gt; 0; blue with "
    "\\ hatching: d &lt; 0; grey: no association, the column's level-2 d is printed between its grey cells). "
    "Under each map: the EAT pattern, and the level-1 effect size d with its p-value. "
)
_ANISOTROPY_NOTE = (
    "Random pairs: mean cosine of random pairs of the test's stimuli (the anisotropy baseline); spread: SD of "
    "all level-3 cosines of the test. A warning is raised when the baseline is at least 0.5 and the spread below "
    "0.05: cosine similarity then hardly discriminates (see eatkit.stats.isotropy; correct with "
    "<code>--postprocess center</code> or <code>abtt:D</code>)."
)
_LEVEL3_NOTE = (
    "Level 3 (ML-EAT): cosine similarities of every target stimulus with every attribute stimulus (box: "
    "quartiles and median; whiskers: 1.5 IQR; dots: outliers; diamond: mean in results.json). When all four "
    "distributions of every test crowd near 1, the embedding space is anisotropic and cosine similarity, hence "
    "the EAT, says little."
)


def _statistic(run: Run, key: str) -> Any:
    statistics = run.manifest.get("statistics")
    return statistics.get(key) if isinstance(statistics, Mapping) else None


def _ci_level(run: Run) -> float | None:
    level = _statistic(run, "confidence_level")
    return level if isinstance(level, float) and 0 < level < 1 else None


def _forest_note(run: Run) -> str:
    level, resamples = _ci_level(run), _statistic(run, "n_bootstrap")
    interval = f"{level:.0%} " if level is not None else ""
    count = f" ({resamples} resamples)" if isinstance(resamples, int) and resamples > 0 else ""
    permutation = all(r.p_method == "permutation" for r in run.eat_records)
    p_value = "the permutation p-value (which re-partitions X \u222a Y)" if permutation else "the p-value"
    return escape(
        f"Level-1 effect sizes d with {interval}percentile bootstrap confidence intervals{count}. The bootstrap "
        "resamples the target stimuli within X and within Y and keeps the attribute sets A and B fixed, so the "
        f"interval is conditional on the attribute sets; it answers a different question than {p_value} "
        "and can disagree with it, e.g. exclude 0 while p \u2265 0.05. "
        f"Filled markers: q < 0.05. {STARS_NOTE}."
    )


class EATRenderer:
    """How EAT records are shown: a console table and the report's EAT sections."""

    def console_table(self, records: Sequence[EATRecord]) -> str:
        """A plain-text table of level 1, the level-2 effect sizes and the pattern, with its legend."""
        header = ("test", "n_x", "n_y", "n_a", "n_b", "d", "p", "q", "d(X)", "d(Y)", "pattern")
        rows = [header] + [
            (r.test, str(r.n_x), str(r.n_y), str(r.n_a), str(r.n_b), fmt_d(r.effect_size), fmt_p_marked(r),
             fmt_p(r.q_value), fmt_d(r.level2_x_effect_size), fmt_d(r.level2_y_effect_size), r.pattern)
            for r in records
        ]
        lines = [aligned(rows, numeric=range(1, 10)), p_note(records) + "; q: p after Benjamini-Hochberg "
                 "correction among the EATs of the run", "d(X), d(Y): ML-EAT level 2 (X, resp. Y, with A vs B)"]
        trust = validity_console(records)
        return "\n".join(lines + ([trust] if trust else []))

    def html_section(self, run: Run, records: Sequence[EATRecord], label: str) -> str:
        """Results table, EAT-Maps, forest plot and level 3 of the run's EAT records."""
        return (
            f"<h3>Results</h3>{_results_html(run)}"
            "<h3>EAT-Maps</h3>"
            + figure_html(eat_map_grid(records, ncols=4, p_legend=False), f"EAT-Maps, {label}",
                          _EATMAP_NOTE + escape(p_note(records)) + ".")
            + "<h3>Effect sizes</h3>"
            + figure_html(forest_plot(records, ci_level=_ci_level(run)), f"Forest plot of effect sizes, {label}",
                          _forest_note(run))
            + f"<h3>Level 3: cosine similarities</h3>{_level3_html(run, label)}"
            + (f"<h3>How far to trust each test</h3>{panel}" if (panel := validity_html(records)) else "")
        )


def aligned(rows: Sequence[Sequence[str]], numeric: Any = ()) -> str:
    """Rows of cells as a plain-text table: columns padded, ``numeric`` ones right-aligned, a rule under
    the header row.

    >>> print(aligned([("a", "n"), ("xyz", "1")], numeric=[1]))
    a    n
    ---  -
    xyz  1
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
