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


#: a tile-grid map of the US: (row, column) of each state and D.C. (a common equal-area layout; no shapes)
US_TILES: dict[str, tuple[str, int, int]] = {
    "Alaska": ("AK", 0, 0), "Maine": ("ME", 0, 11), "Vermont": ("VT", 1, 10), "New Hampshire": ("NH", 1, 11),
    "Washington": ("WA", 2, 1), "Idaho": ("ID", 2, 2), "Montana": ("MT", 2, 3), "North Dakota": ("ND", 2, 4),
    "Minnesota": ("MN", 2, 5), "Illinois": ("IL", 2, 6), "Wisconsin": ("WI", 2, 7), "Michigan": ("MI", 2, 8),
    "New York": ("NY", 2, 9), "Rhode Island": ("RI", 2, 10), "Massachusetts": ("MA", 2, 11),
    "Oregon": ("OR", 3, 1), "Nevada": ("NV", 3, 2), "Wyoming": ("WY", 3, 3), "South Dakota": ("SD", 3, 4),
    "Iowa": ("IA", 3, 5), "Indiana": ("IN", 3, 6), "Ohio": ("OH", 3, 7), "Pennsylvania": ("PA", 3, 8),
    "New Jersey": ("NJ", 3, 9), "Connecticut": ("CT", 3, 10),
    "California": ("CA", 4, 1), "Utah": ("UT", 4, 2), "Colorado": ("CO", 4, 3), "Nebraska": ("NE", 4, 4),
    "Missouri": ("MO", 4, 5), "Kentucky": ("KY", 4, 6), "West Virginia": ("WV", 4, 7), "Virginia": ("VA", 4, 8),
    "Maryland": ("MD", 4, 9), "Delaware": ("DE", 4, 10),
    "Arizona": ("AZ", 5, 2), "New Mexico": ("NM", 5, 3), "Kansas": ("KS", 5, 4), "Arkansas": ("AR", 5, 5),
    "Tennessee": ("TN", 5, 6), "North Carolina": ("NC", 5, 7), "South Carolina": ("SC", 5, 8),
    "District of Columbia": ("DC", 5, 9),
    "Oklahoma": ("OK", 6, 4), "Louisiana": ("LA", 6, 5), "Mississippi": ("MS", 6, 6), "Alabama": ("AL", 6, 7),
    "Georgia": ("GA", 6, 8), "Hawaii": ("HI", 7, 0), "Texas": ("TX", 7, 4), "Florida": ("FL", 7, 9),
}


def tile_map(record: Any) -> Any:
    """One tile-grid map of the US per group, each state's tile shaded by the group's share of its top k
    (the seed's Figure 2, centre); ``None`` when the record's regions are not the US states."""
    if set(record.shares) != set(US_TILES):
        return None
    import matplotlib

    groups = record.groups
    fig = new_figure(3.2 * len(groups), 2.6)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    cmap = matplotlib.colormaps["viridis"]
    top = max(max(v.values()) for v in record.shares.values()) or 1.0
    for ax, g in zip(axes, groups):
        for state, (code, row, col) in US_TILES.items():
            value = record.shares[state][g] / top
            ax.add_patch(matplotlib.patches.Rectangle((col, -row), 0.94, 0.94, color=cmap(value)))
            ax.text(col + 0.47, -row + 0.47, code, ha="center", va="center", fontsize=5,
                    color="white" if value < 0.6 else "black")
        ax.set_xlim(-0.1, 12)
        ax.set_ylim(-7.1, 1)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(f"{g}", fontsize=9)
    fig.colorbar(matplotlib.cm.ScalarMappable(matplotlib.colors.Normalize(0, top), cmap), ax=list(axes),
                 shrink=0.7, label=f"share of top {record.k}")
    return fig


class RankingRenderer(Table):
    heading = "Ranking probe"
    columns = (
        ("test", lambda r: r.test), ("prompt", lambda r: r.prompt), ("k", lambda r: str(r.k)),
        ("repeats", lambda r: str(r.repeats)), ("R²", lambda r: fmt_number(r.r_squared)),
        ("r per group", lambda r: ", ".join(f"{g} {fmt_number(v)}" for g, v in r.r.items())),
        ("mean MaxSkew@k", lambda r: fmt_number(r.mean_max_skew)), ("mean NDKL", lambda r: fmt_number(r.mean_ndkl, 3)),
        ("r with other tables", lambda r: "; ".join(
            f"{table}: " + ", ".join(f"{g}~{c} {fmt_number(v)} (p {fmt_p(r.correlation_p_values[table][g][c])})"
                                     for g, cols in groups.items() for c, v in cols.items())
            for table, groups in r.correlations.items()) or "none"),
    )
    legend = ("R²: multi-output linear regression of the reference on the ranked shares, averaged over outputs; "
              "r: Pearson r across regions of each group's share of the top k with its reference column; "
              "MaxSkew@k, NDKL: ranking fairness of each region's full ranking (0 = proportional); r with other "
              "tables: Pearson r across regions of each group's share with each column of a --table (e.g. state IAT "
              "means)")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        figures = "".join(figure_html(shares_plot(r), f"Ranked shares vs reference, {label}",
                                      escape(f"Share of each group among the top {r.k} images of each region "
                                             f"(prompt set '{r.prompt}', {r.repeats} balanced draws of "
                                             f"{r.group_size} images per group) against '{r.reference}'; dashed: "
                                             "equality."))
                          for r in records)
        maps = "".join(figure_html(fig, f"Ranked shares by state, {label}",
                                   escape(f"Each group's share of the top {r.k} images of each state and D.C. "
                                          "on a tile grid (one tile per state; colour scale shared by the panels)."))
                       for r in records if (fig := tile_map(r)) is not None)
        return super().html_section(run, records, label) + figures + maps


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
        ("region answers per group", lambda r: ", ".join(f"{g} {_percent(v)}" for g, v in
                                                         (r.region_answers or {}).get("rates", {}).items())),
    )
    legend = ("yes rate: answers equal to the 'yes' answer; χ², p: Pearson's test of group x (yes, other) "
              "independence; region answers: the share of answers naming a region of the record's region table "
              "(by default a US state or D.C.)")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        regional = [_RegionRates(r) for r in records if r.region_answers and any(r.region_answers["counts"].values())]
        if not regional:
            return super().html_section(run, records, label)
        level = records[0].confidence_level
        return super().html_section(run, records, label) + figure_html(
            rates_plot(regional, _question_label, f"share naming a region of {records[0].region_table}"),
            f"Answers naming a region, {label}",
            escape(f"Share of answers that name a region of {records[0].region_table} per group (the seed's Figure 4); "
                   f"error bars: {100 * level:g}% Wilson intervals."))

    def plot(self, records: Sequence[Any]) -> Any:
        return rates_plot(records, _question_label, f"rate of '{records[0].yes_answer}'")


def _question_label(record: Any) -> str:
    return record.question if len(record.question) < 30 else record.question[:27] + "..."


class _RegionRates:
    """A VQA record seen through its region-answer rates (what :func:`rates_plot` reads)."""

    def __init__(self, record: Any) -> None:
        self.question, self.groups = record.question, record.groups
        self.rates, self.intervals = record.region_answers["rates"], record.region_answers["intervals"]


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
