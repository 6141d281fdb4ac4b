"""Answer benchmarks in the report: BBQ's per-category table (accuracy, bias score with its interval, p and
the Benjamini-Hochberg q) and a figure of the bias scores with their intervals, ambiguous and disambiguated
contexts side by side. Everything shown comes from the records; nothing is recomputed here."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from eatkit.report.formatting import fmt_ci, fmt_number, fmt_p
from eatkit.report.kinds import Table
from eatkit.specs import BBQ

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class BBQRenderer(Table):
    """BBQ: one row per category and context condition, and the figure of the bias scores."""

    heading = "BBQ (bias benchmark for QA)"
    columns = (
        ("category", lambda r: r.category), ("context", lambda r: r.context), ("n", lambda r: str(r.n)),
        ("accuracy", lambda r: fmt_number(r.accuracy, 3)),
        ("accuracy CI", lambda r: fmt_ci(r.accuracy_ci, ".3f")),
        ("bias score", lambda r: fmt_number(r.bias_score, 3)), ("CI", lambda r: fmt_ci(r.ci, ".3f")),
        ("p", lambda r: fmt_p(r.p_value)), ("q", lambda r: fmt_p(r.q_value)),
        ("dropped", lambda r: str(r.unanswered + r.unmatched + r.no_target)),
    )
    legend = BBQ.presentation.legend + ("; dropped: answers naming no option, items not answered, items without a "
                                        "bias-consistent answer")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        from eatkit.report.style import figure_html

        figure = figure_html(bbq_figure(records), "BBQ bias scores with intervals",
                             escape("BBQ bias scores per category with their intervals; filled: q < 0.05"))
        return super().html_section(run, records, label) + figure


def _draw(ax: Any, record: Any, y: int, ink: str) -> None:
    """One bias score and its interval (filled when q < 0.05)."""
    if record.ci is not None:
        ax.plot(record.ci, [y, y], color=ink, linewidth=1)
    filled = record.q_value is not None and record.q_value < 0.05
    ax.plot([record.bias_score], [y], "o", color=ink, markerfacecolor=ink if filled else "white", markersize=5)


def bbq_figure(records: Sequence[Any]) -> Figure:
    """The bias score of each category with its interval, one panel per context condition (filled markers:
    q < 0.05)."""
    from eatkit.report.style import INK, new_figure

    contexts = [c for c in ("ambig", "disambig") if any(r.context == c for r in records)]
    categories = list(dict.fromkeys(r.category for r in records))
    fig = new_figure(4 * len(contexts), 0.9 + 0.35 * len(categories))
    axes = fig.subplots(1, len(contexts), sharey=True, squeeze=False)[0]
    for ax, context in zip(axes, contexts):
        for r in (r for r in records if r.context == context):
            _draw(ax, r, categories.index(r.category), INK)
        ax.axvline(0, color="#999999", linewidth=0.8)
        ax.set_xlim(-1, 1)
        ax.set_title(context, fontsize=9)
        ax.set_xlabel("bias score", fontsize=8)
    axes[0].set_yticks(range(len(categories)), categories, fontsize=8)
    axes[0].set_ylim(len(categories) - 0.5, -0.5)
    return fig
