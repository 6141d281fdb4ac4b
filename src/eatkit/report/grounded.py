"""Grounded-WEAT/SEAT records in seed 001's layout (its Tables 3-6): one row per bias test and embedding
kind (W word, S sentence, C contextual; with a mask, its name), one column per experiment; a cell is the
effect size and p-value, marked * when p < 0.05; each experiment's question in one line under the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from eatkit.kinds import Plot
from eatkit.report.eat_html import aligned
from eatkit.report.formatting import fmt_d, fmt_p_marked
from eatkit.stats.grounded import QUESTIONS
from eatkit.stats.multitest import significant

LEVELS = {"word": "W", "sentence": "S", "contextual": "C"}
MASKED = {"language": "contextual words", "vision": "image regions of people"}
ALPHA = 0.05


def _level(record: Any) -> str:
    return LEVELS[record.embedding] + (f" ({record.mask} masked)" if record.mask else "")


def _cell(record: Any) -> str:
    mark = "*" if significant(record.p_value, ALPHA) else ""
    return f"{fmt_d(record.effect_size)} (p {fmt_p_marked(record)}){mark}"


def _masks(records: Sequence[Any]) -> list[str]:
    return list(dict.fromkeys(r.mask for r in records if r.mask))


def layout(records: Sequence[Any]) -> tuple[list[int], list[tuple[str, str, dict[int, Any]]]]:
    """The experiments present and the rows (family, level, {experiment: record}), in the seed's order:
    families as they first appear, levels W, S, C."""
    experiments = sorted({r.experiment for r in records})
    rows: dict[tuple[str, str], dict[int, Any]] = {}
    order = list(LEVELS)
    for r in sorted(records, key=lambda r: order.index(r.embedding)):
        rows.setdefault((r.family, _level(r)), {})[r.experiment] = r
    families = list(dict.fromkeys(r.family for r in records))
    ordered = sorted(rows.items(), key=lambda item: families.index(item[0][0]))
    return experiments, [(family, level, cells) for (family, level), cells in ordered]


def legend(experiments: Sequence[int], masks: Sequence[str] = ()) -> list[str]:
    """One line per experiment shown (its question), per mask, and the cells' key.

    >>> legend([2])[0]
    'Experiment 2: Can grounded evidence that counters a stereotype alleviate biases? (each target with its own images)'
    """
    lines = [f"Experiment {e}: {QUESTIONS[e]}" for e in experiments]
    lines += [f"Masked inputs (--mask {m}): experiment 2 with the {MASKED[m]} masked, experiment 3's second variant "
              "(seed 001, section 4.3): the bias left when that modality cannot carry it" for m in masks]
    lines.append(f"Cells: effect size d (experiment 3: (|d_X| + |d_Y|) / 2) and permutation p (sampled: †); "
                 f"* p < {ALPHA}. W/S/C: word, sentence, contextual embeddings.")
    return lines


class GroundedRenderer:
    """Console table and HTML section of ``grounded`` records."""

    def console_table(self, records: Sequence[Any]) -> str:
        experiments, rows = layout(records)
        header = ("test", "level", *(f"experiment {e}" for e in experiments))
        body = [(family, level, *(_cell(cells[e]) if e in cells else "" for e in experiments))
                for family, level, cells in rows]
        notes = legend(experiments, _masks(records))
        return aligned([header, *body], numeric=range(2, 2 + len(experiments))) + "\n" + "\n".join(notes)

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        experiments, rows = layout(records)
        head = "".join(f"<th>{escape(h)}</th>" for h in ("test", "level", *(f"Experiment {e}" for e in experiments)))
        body = []
        for family, level, cells in rows:
            tds = []
            for e in experiments:
                r = cells.get(e)
                text = escape(_cell(r)) if r is not None else ""
                tds.append(f"<td><strong>{text}</strong></td>" if r is not None and r.p_value < ALPHA
                           else f"<td>{text}</td>")
            body.append(f"<tr><td>{escape(family)}</td><td>{escape(level)}</td>{''.join(tds)}</tr>")
        notes = "".join(f"<p class=\"note\">{escape(line)}</p>" for line in legend(experiments, _masks(records)))
        from eatkit.report.intervals import plots_html

        return (f"<h3>Grounded-WEAT/SEAT ({escape(label)})</h3><div class=\"scroll\"><table><thead><tr>{head}</tr>"
                f"</thead><tbody>{''.join(body)}</tbody></table></div>{notes}"
                + plots_html(PLOTS, records, f"Grounded-WEAT/SEAT ({label})"))


#: the figure: d of each test, embedding and experiment (panels by experiment)
PLOTS = (Plot("effect_size", label=("test", "embedding", "mask"), axis="d", panels="experiment"),)


# -- several runs: models as columns (seed 001, Tables 3-6) and significant tests per bias type (Table 7) --

#: the bias type of each test family of the grounded suites (seed 001, Table 7: 6 gender and 7 race tests)
BIAS_TYPES: dict[str, str] = {
    "M/W, Occupation": "gender", "DB: M/W, Competent": "gender", "DB: M/W, Likeable": "gender",
    "C6": "gender", "C8": "gender", "C11": "gender",
    "ABW": "race", "EA/AA, Occupation": "race", "+DB: EA/AA, Competent": "race", "+DB: EA/AA, Likeable": "race",
    "C3": "race", "+C12": "race", "+C13": "race",
}


def models_rows(labelled: Sequence[tuple[str, Sequence[Any]]]) -> tuple[list[str], list[list[str]]]:
    """A table with one column per run (model) and one row per test, embedding level and experiment, the
    layout of seed 001's Tables 3-6 across models: (header, rows of cells).

    >>> from types import SimpleNamespace as R
    >>> r = R(family="C6", embedding="word", mask=None, experiment=1, effect_size=0.5, p_value=0.01,
    ...       p_method="permutation", p_value_exact=True)
    >>> models_rows([("vilt", [r]), ("lxmert", [])])[1]
    [['C6', 'W', '1', '0.50 (p 0.010)*', '']]
    """
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    order = list(LEVELS)
    for label, records in labelled:
        for r in sorted(records, key=lambda r: (r.experiment, order.index(r.embedding))):
            rows.setdefault((r.family, _level(r), r.experiment), {})[label] = r
    families = list(dict.fromkeys(key[0] for key in rows))
    keys = sorted(rows, key=lambda key: (families.index(key[0]), key[2]))
    labels = [label for label, _ in labelled]
    body = [[family, level, str(e), *(_cell(rows[(family, level, e)][m]) if m in rows[(family, level, e)] else ""
                                      for m in labels)] for family, level, e in keys]
    return ["test", "level", "experiment", *labels], body


def significant_counts(labelled: Sequence[tuple[str, Sequence[Any]]]) -> dict[str, dict[tuple[int, str], dict[str, str]]]:
    """Seed 001's Table 7: per bias type, (experiment, level) -> model -> "significant / tests" (p < 0.05;
    the bias type of a family from :data:`BIAS_TYPES`, families it lacks are left out).

    >>> from types import SimpleNamespace as R
    >>> rs = [R(family=f, embedding="word", mask=None, experiment=1, p_value=p) for f, p in (("C6", .01), ("C8", .2))]
    >>> significant_counts([("vilt", rs)])
    {'gender': {(1, 'W'): {'vilt': '1 / 2'}}}
    """
    tally: dict[str, dict[tuple[int, str], dict[str, list[int]]]] = {}
    for label, records in labelled:
        for r in records:
            if r.family not in BIAS_TYPES:
                continue
            cell = tally.setdefault(BIAS_TYPES[r.family], {}).setdefault((r.experiment, _level(r)), {})
            count = cell.setdefault(label, [0, 0])
            count[0] += r.p_value < ALPHA
            count[1] += 1
    return {bias: {key: {m: f"{k} / {n}" for m, (k, n) in cells.items()} for key, cells in sorted(by.items())}
            for bias, by in tally.items()}


def comparison_html(labelled: Sequence[tuple[str, Sequence[Any]]]) -> str:
    """The grounded records of several runs: models as columns, then the significant-test counts."""
    header, body = models_rows(labelled)
    labels = [label for label, _ in labelled]
    html = [_html_table(header, body)]
    for bias, cells in significant_counts(labelled).items():
        rows = [[f"experiment {e}", level, *(by.get(m, "") for m in labels)] for (e, level), by in cells.items()]
        html.append(f"<h3>Significant {escape(bias)} bias tests (p &lt; {ALPHA})</h3>"
                    + _html_table(["experiment", "level", *labels], rows))
    notes = legend(sorted({r.experiment for _, records in labelled for r in records}),
                   _masks([r for _, records in labelled for r in records]))
    return "".join(html) + "".join(f"<p class=\"note\">{escape(line)}</p>" for line in notes)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<div class=\"scroll\"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
