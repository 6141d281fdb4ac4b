"""How each kind of record is shown: one renderer per kind, with a console table for ``eatkit run`` and
an HTML section for the report. Adding a kind of analysis adds one line to :data:`RENDERERS`.

A renderer has ``console_table(records) -> str`` and ``html_section(run, records, label) -> str``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from html import escape
from typing import Any

from eatkit.io import load_object
from eatkit.records import Record
from eatkit.report.formatting import fmt_d, fmt_p, fmt_sizes

#: record kind -> "module:class" of its renderer
RENDERERS: dict[str, str] = {
    "eat": "eatkit.report.eat_html:EATRenderer",
    "sc-eat": "eatkit.report.kinds:SCEATRenderer",
    "grounded": "eatkit.report.grounded:GroundedRenderer",
    "ranking": "eatkit.report.probes:RankingRenderer",
    "vqa": "eatkit.report.probes:VQARenderer",
    "caption": "eatkit.report.probes:CaptionRenderer",
    "generation": "eatkit.report.probes:GenerationRenderer",
    "geometry": "eatkit.report.geometry:GeometryRenderer",
}


@cache
def renderer(kind: str) -> Any:
    """The renderer of a record kind (a kind without one is shown as a generic table of its fields)."""
    return load_object(RENDERERS[kind])() if kind in RENDERERS else FieldTable()


def console_tables(records: Sequence[Record]) -> str:
    """The console tables of a run's records, one per kind, in order of first appearance."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.kind, []).append(record)
    return "\n\n".join(renderer(kind).console_table(group) for kind, group in groups.items())


class Table:
    """A renderer that shows records as one table: ``columns`` are (header, cell function) pairs, the
    first the row label; ``legend`` explains the columns."""

    columns: tuple[tuple[str, Callable[[Any], str]], ...] = ()
    legend: str = ""
    heading: str = "Results"

    def rows(self, records: Sequence[Any]) -> list[tuple[str, ...]]:
        return [tuple(cell(r) for _, cell in self.columns) for r in records]

    def console_table(self, records: Sequence[Any]) -> str:
        from eatkit.report.eat_html import aligned

        rows = [tuple(h for h, _ in self.columns), *self.rows(records)]
        return aligned(rows, numeric=range(1, len(self.columns))) + (f"\n{self.legend}" if self.legend else "")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h, _ in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in self.rows(records))
        return (f"<h3>{escape(self.heading)}</h3><div class=\"scroll\"><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table></div><p class=\"note\">{escape(self.legend)}</p>")


class SCEATRenderer(Table):
    """Single-category tests: T with A vs B."""

    heading = "Single-category tests"
    columns = (
        ("test", lambda r: r.test), ("T", lambda r: r.t_name), ("A", lambda r: r.a_name), ("B", lambda r: r.b_name),
        ("n_t", lambda r: str(r.n_t)), ("n_a", lambda r: fmt_sizes(r.n_a, r.n_b)),
        ("d", lambda r: fmt_d(r.effect_size)), ("p", lambda r: _marked(r)), ("q", lambda r: fmt_p(r.q_value)),
    )
    legend = ("d: effect size of T with A vs B (SD: see the manifest's sd and ddof); p: permutation p over "
              "re-partitions of A ∪ B († sampled, else exact) or Welch's t-test; q: Benjamini-Hochberg across the run")


def _marked(record: Any) -> str:
    sampled = record.p_method == "permutation" and not record.p_value_exact
    return fmt_p(record.p_value) + ("†" if sampled else "")


class FieldTable(Table):
    """The fallback for a kind without a renderer: test and title only."""

    columns = (("test", lambda r: r.test), ("title", lambda r: r.title))
