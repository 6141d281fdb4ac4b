"""How each kind of record is shown: a console table for ``eatkit run`` and an HTML section for the report.

A kind's spec (:mod:`eatkit.kinds`) names its renderer (``KindSpec.renderer``, a class with
``console_table(records) -> str`` and ``html_section(run, records, label) -> str``) or declares a
:class:`~eatkit.kinds.Presentation` (the record fields to show, their formats, a heading and a legend),
which :class:`FieldTable` turns into the table; a kind that declares nothing shows every field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from eatkit.io import load_object
from eatkit.kinds import Plot, get_kind
from eatkit.records import Record, is_interval
from eatkit.report.formatting import fmt_ci, fmt_d, fmt_p, fmt_sizes, fmt_value


def renderer(kind: str) -> Any:
    """The renderer of a record kind: the one its spec names, else a :class:`FieldTable` of its presentation."""
    spec = get_kind(kind)
    return load_object(spec.renderer)() if spec.renderer else FieldTable(spec)


def console_tables(records: Sequence[Record]) -> str:
    """The console tables of a run's records, one per renderer (:func:`by_renderer`)."""
    return "\n\n".join(shown.console_table(group) for shown, group in by_renderer(records))


def by_renderer(records: Sequence[Record]) -> list[tuple[Any, list[Record]]]:
    """The records grouped by renderer, in order of first appearance: kinds that share one (the metrics)
    make one table."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(get_kind(record.kind).renderer or record.kind, []).append(record)
    return [(renderer(group[0].kind), group) for group in groups.values()]


class Table:
    """A renderer that shows records as one table: ``columns`` are (header, cell function) pairs, the
    first the row label; ``legend`` explains the columns."""

    columns: tuple[tuple[str, Callable[[Any], str]], ...] = ()
    legend: str = ""
    heading: str = "Results"
    #: the figures under the table (:class:`eatkit.kinds.Plot`, drawn by :mod:`eatkit.report.intervals`)
    plots: tuple[Plot, ...] = ()

    def rows(self, records: Sequence[Any]) -> list[tuple[str, ...]]:
        return [tuple(cell(r) for _, cell in self.columns) for r in records]

    def console_table(self, records: Sequence[Any]) -> str:
        from eatkit.report.eat_html import aligned

        rows = [tuple(h for h, _ in self.columns), *self.rows(records)]
        return aligned(rows, numeric=range(1, len(self.columns))) + (f"\n{self.legend}" if self.legend else "")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h, _ in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in self.rows(records))
        from eatkit.report.intervals import plots_html

        return (f"<h3>{escape(self.heading)}</h3><div class=\"scroll\"><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table></div><p class=\"note\">{escape(self.legend)}</p>"
                + plots_html(self.plots, records, self.heading))


class SCEATRenderer(Table):
    """Single-category tests: T with A vs B."""

    heading = "Single-category tests"
    columns = (
        ("test", lambda r: r.test), ("T", lambda r: r.t_name), ("A", lambda r: r.a_name), ("B", lambda r: r.b_name),
        ("n_t", lambda r: str(r.n_t)), ("n_a", lambda r: fmt_sizes(r.n_a, r.n_b)),
        ("d", lambda r: fmt_d(r.effect_size)), ("p", lambda r: _marked(r)), ("q", lambda r: fmt_p(r.q_value)),
    )
    plots = (Plot("effect_size", label=("test",), axis="d (T with A vs B)"),)
    legend = ("d: effect size of T with A vs B (SD: see the manifest's sd and ddof); p: permutation p over "
              "re-partitions of A ∪ B († sampled, else exact) or Welch's t-test; q: Benjamini-Hochberg among the tests of this kind in the run")


def _marked(record: Any) -> str:
    sampled = record.p_method == "permutation" and not record.p_value_exact
    return fmt_p(record.p_value) + ("†" if sampled else "")


class MetricRenderer(Table):
    """The members of the metrics family (:data:`eatkit.specs.METRICS`): value, bootstrap CI, permutation p;
    the legend from their declarations (:func:`metric_legend`)."""

    heading = "Bias metrics"
    plots = (Plot("value", ("ci",), label=("test", "x_name", "y_name"), reference=None, axis="value", panels="metric"),)
    columns = (
        ("test", lambda r: r.test), ("metric", lambda r: r.metric), ("X", lambda r: r.x_name),
        ("Y", lambda r: r.y_name), ("A", lambda r: r.a_name), ("B", lambda r: r.b_name),
        ("value", lambda r: _g4(r.value)),
        ("CI", lambda r: f"[{_g4(r.ci[0])}, {_g4(r.ci[1])}]" if r.ci else "–"),
        ("p", lambda r: (fmt_p(r.p_value) + ("" if r.p_value_exact else "†")) if r.p_value is not None else "–"),
        ("q", lambda r: fmt_p(r.q_value)),
        ("spread", lambda r: f"±{_g4(r.spread['sd'])} ({r.spread['n_fits']:g} fits)" if r.spread else ""),
    )

    @property
    def legend(self) -> str:  # type: ignore[override]
        """The columns explained, from the members' declarations (:func:`metric_legend`)."""
        return metric_legend()


def metric_legend() -> str:
    """The legend of the metrics table, every member's part from its declaration (the one place): its
    definition (title) and value of no bias (``chance``), its null, and the columns.

    >>> "RND: Relative norm distance (Garg et al. 2018), no bias 0" in metric_legend()
    True
    """
    from eatkit.specs import METRICS

    members = [spec for spec in METRICS.members() if spec.member is not None and spec.ranking is not None]
    values = "; ".join(f"{s.member.label}: {s.title}, no bias {s.ranking.chance:g}" for s in members)
    nulls: dict[str, list[str]] = {}
    for spec in members:
        if spec.member.null:
            nulls.setdefault(spec.member.null, []).append(spec.member.label)
    shown = "; ".join(f"{', '.join(labels)}: {null}" for null, labels in nulls.items())
    return (f"value: each metric as declared ({values}; docs/metrics.md); CI: percentile bootstrap over the "
            f"stimuli; p: permutation p ({shown}; † sampled, else exact; – : the metric has no such null); "
            "q: Benjamini-Hochberg among the tests of this kind in the run; spread: the value's SD over the "
            "metric's repeated fits, where it fits a model")


def _g4(value: float | None) -> str:
    """A metric's value with four significant digits (metrics differ in scale, unlike Cohen's d)."""
    return "n/a" if value is None else f"{value:.4g}"


class FieldTable(Table):
    """The renderer of a kind without one of its own: a table of the fields its
    :class:`~eatkit.kinds.Presentation` lists (none listed: every field but the run's bookkeeping), each
    formatted with its format spec, else as :func:`~eatkit.report.formatting.fmt_value` writes it.

    >>> from eatkit.kinds import get_kind
    >>> [name for name, _ in FieldTable(get_kind("sc-eat")).columns][:4]
    ['test', 'title', 'p_value', 'q_value']
    """

    def __init__(self, spec: Any) -> None:
        shown = spec.presentation
        names = shown.columns or tuple(f for f in _fields(spec) if f not in _BOOKKEEPING)
        self.columns = tuple((name, _formatter(name, shown.formats.get(name)))
                             for name in ("test", *(n for n in names if n != "test")))
        self.heading = shown.heading or spec.title or spec.name
        self.legend = shown.legend
        self.plots = shown.plots


#: fields of every record that the generic table leaves out (the manifest and results.json have them)
_BOOKKEEPING = frozenset({"suite", "seed", "warnings", "dropped"})


def _fields(spec: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(spec.load_analysis().record_type))


def _formatter(name: str, spec: str | None) -> Callable[[Any], str]:
    if is_interval(name):  # [low, high]
        return lambda record: fmt_ci(getattr(record, name), spec or ".3g")
    return lambda record: fmt_value(getattr(record, name), spec)
