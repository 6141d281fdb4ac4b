"""How probe records are shown: console tables and report sections with the plots a reader wants:
ranked shares against the reference per group (with Pearson r), yes-rates with Wilson intervals,
caption-mention rates per top-p, brightness curves along the generation. Nothing is recomputed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

from eatkit.report.formatting import fmt_number, fmt_p
from eatkit.report.kinds import Table
from eatkit.report.style import INK, figure_html, new_figure


def _percent(value: float | None) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{100 * value:.1f}%"


# -- ranking ---------------------------------------------------------------------------------------------


def shares_plot(record: Any) -> Any:
    """One panel per group: each region's share of the top k against the reference, with Pearson r."""
    groups = record.groups
    fig = new_figure(2.6 * len(groups), 2.8)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    regions = list(record.shares)
    for ax, g in zip(axes, groups):
        x = [record.reference_shares[r][g] for r in regions]
        y = [record.shares[r][g] for r in regions]
        ax.scatter(x, y, s=10, color=INK, alpha=0.7)
        top = max(max(x), max(y), 1e-9) * 1.05
        ax.plot([0, top], [0, top], color="#999999", lw=0.8, ls="--")
        ax.set_title(f"{g}: r = {fmt_number(record.r.get(g))}", fontsize=9)
        ax.set_xlabel(f"reference ({record.reference_columns.get(g, g)})", fontsize=8)
        ax.set_ylabel(f"share of top {record.k}", fontsize=8)
        ax.tick_params(labelsize=7)
    return fig


class RankingRenderer(Table):
    heading = "Ranking probe"
    columns = (
        ("test", lambda r: r.test), ("prompt", lambda r: r.prompt), ("k", lambda r: str(r.k)),
        ("repeats", lambda r: str(r.repeats)), ("R²", lambda r: fmt_number(r.r_squared)),
        ("r per group", lambda r: ", ".join(f"{g} {fmt_number(v)}" for g, v in r.r.items())),
        ("mean MaxSkew@k", lambda r: fmt_number(r.mean_max_skew)), ("mean NDKL", lambda r: fmt_number(r.mean_ndkl, 3)),
    )
    legend = ("R²: multi-output linear regression of the reference on the ranked shares, averaged over outputs; "
              "r: Pearson r across regions of each group's share of the top k with its reference column; "
              "MaxSkew@k, NDKL: ranking fairness of each region's full ranking (0 = proportional)")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        figures = "".join(figure_html(shares_plot(r), f"Ranked shares vs reference, {label}",
                                      escape(f"Share of each group among the top {r.k} images of each region "
                                             f"(prompt set '{r.prompt}', {r.repeats} balanced draws of "
                                             f"{r.group_size} images per group) against '{r.reference}'; dashed: "
                                             "equality."))
                          for r in records)
        return super().html_section(run, records, label) + figures


# -- rates (VQA, captions) ----------------------------------------------------------------------------------


def rates_plot(records: Sequence[Any], label_of: Any, ylabel: str) -> Any:
    """Grouped bars: one bar per group for each record (question or top-p), Wilson intervals as error bars."""
    groups = list(dict.fromkeys(g for r in records for g in r.groups))
    fig = new_figure(max(4.0, 1.0 + 0.5 * len(groups) * len(records)), 3.0)
    ax = fig.subplots()
    width = 0.8 / max(1, len(groups))
    for j, g in enumerate(groups):
        xs = np.arange(len(records)) + (j - (len(groups) - 1) / 2) * width
        rates = [r.rates.get(g, np.nan) for r in records]
        low = [r.rates[g] - r.intervals[g][0] if g in r.rates else 0 for r in records]
        high = [r.intervals[g][1] - r.rates[g] if g in r.rates else 0 for r in records]
        ax.bar(xs, rates, width, yerr=[low, high], capsize=2, label=g)
    ax.set_xticks(np.arange(len(records)), [label_of(r) for r in records], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.legend(fontsize=7, frameon=False)
    return fig


class _RateRenderer(Table):
    what = ""

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        level = records[0].confidence_level if records else 0.95
        return super().html_section(run, records, label) + figure_html(
            self.plot(records), f"{self.heading}, {label}",
            escape(f"{self.what} per group; error bars: {100 * level:g}% Wilson intervals."))


class VQARenderer(_RateRenderer):
    heading = "Visual question answering"
    what = "Rate of the answer 'yes'"
    columns = (
        ("test", lambda r: r.test), ("question", lambda r: r.question),
        ("yes rate per group", lambda r: ", ".join(f"{g} {_percent(v)}" for g, v in r.rates.items())),
        ("top answers per group", lambda r: "; ".join(
            f"{g}: " + ", ".join(f"{a} {n}" for a, n in list(t.items())[:3]) for g, t in r.answers.items())),
        ("χ²", lambda r: fmt_number(r.chi_square)), ("p", lambda r: fmt_p(r.p_value)),
    )
    legend = "yes rate: answers equal to the 'yes' answer; χ², p: Pearson's test of group x (yes, other) independence"

    def plot(self, records: Sequence[Any]) -> Any:
        return rates_plot(records, lambda r: r.question if len(r.question) < 30 else r.question[:27] + "...",
                          f"rate of '{records[0].yes_answer}'")


class CaptionRenderer(_RateRenderer):
    heading = "Captions that mention race or ethnicity"
    what = "Rate of captions matching the lexicon"
    columns = (
        ("test", lambda r: r.test), ("top-p", lambda r: f"{r.top_p:g}"),
        ("mention rate per group", lambda r: ", ".join(f"{g} {_percent(v)}" for g, v in r.rates.items())),
        ("descriptors", lambda r: "; ".join(f"{g}: " + ", ".join(f"{d} {n}" for d, n in t.items())
                                            for g, t in r.descriptors.items() if t) or "none"),
        ("χ²", lambda r: fmt_number(r.chi_square)), ("p", lambda r: fmt_p(r.p_value)),
    )
    legend = ("mention: the caption contains '<descriptor> <noun>' of the lexicon (see the record's lexicon); "
              "χ², p: Pearson's test of group x (mention, none) independence")

    def plot(self, records: Sequence[Any]) -> Any:
        return rates_plot(sorted(records, key=lambda r: r.top_p), lambda r: f"top-p {r.top_p:g}",
                          "rate of captions mentioning race")


# -- generation --------------------------------------------------------------------------------------------


def brightness_plot(record: Any) -> Any:
    """Mean region brightness per group against the optimisation step (band: ± 1 SD)."""
    fig = new_figure(4.5, 3.0)
    ax = fig.subplots()
    for g in record.groups:
        mean = np.asarray(record.brightness_mean[g], dtype=float)
        sd = np.asarray([np.nan if v is None else v for v in record.brightness_sd[g]], dtype=float)
        ax.plot(record.steps, mean, marker="o", ms=3, label=f"{g} (n={record.n[g]})")
        ax.fill_between(record.steps, mean - sd, mean + sd, alpha=0.15)
    ax.set_xlabel("optimisation step", fontsize=8)
    ax.set_ylabel("mean region brightness (0-255)", fontsize=8)
    ax.legend(fontsize=7, frameon=False)
    return fig


class GenerationRenderer(Table):
    heading = "CLIP-guided generation"
    columns = (
        ("test", lambda r: r.test), ("prompt", lambda r: r.prompt),
        ("steps", lambda r: str(r.steps[-1])),
        ("brightness change at the last frame", lambda r: ", ".join(
            f"{g} {fmt_number(v[-1], 1)}%" for g, v in r.change_percent.items())),
        ("largest change", lambda r: ", ".join(
            f"{g} {fmt_number(max(v, key=lambda x: -np.inf if x is None else x), 1)}%" for g, v in r.change_percent.items())),
    )
    legend = "brightness: mean pixel value of the region (all channels) per frame, averaged over the group's images"

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        return super().html_section(run, records, label) + "".join(
            figure_html(brightness_plot(r), f"Brightness curves, {label}",
                        escape(f"Mean brightness of region {r.region_pixels} (x, y, w, h in pixels) of each frame, "
                               f"per group, along the optimisation toward '{r.prompt}'; band: ± 1 SD."))
            for r in records)
