"""Grounded-WEAT/SEAT records in seed 001's layout (its Tables 3-6): one row per bias test and embedding
kind (W word, S sentence, C contextual; with a mask, its name), one column per experiment; a cell is the
effect size and p-value, marked * when p < 0.05; each experiment's question in one line under the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

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
        return (f"<h3>Grounded-WEAT/SEAT ({escape(label)})</h3><div class=\"scroll\"><table><thead><tr>{head}</tr>"
                f"</thead><tbody>{''.join(body)}</tbody></table></div>{notes}")
