"""Presentation of a random-effects meta-analysis (:func:`eatkit.stats.meta_analysis.random_effects`): a
forest plot, a one-line summary, and the audit page's section of a sweep's ``meta-analysis.csv``
(:func:`eatkit.run.meta_analysis.write_meta_analysis`). Everything drawn or printed is a field of the
result; nothing is recomputed here.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eatkit.errors import EatkitError
from eatkit.io import read_csv, read_json
from eatkit.report.formatting import fmt_interval
from eatkit.report.style import INK, figure_html, new_figure, wrap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the estimators' names as printed
METHOD_NAMES = {"dl": "DerSimonian-Laird", "pm": "Paule-Mandel", "reml": "REML"}
#: the most effects a forest plot draws, one row each (a figure of 1.5 million rows took hours to draw): beyond
#: it, those of largest weight, and a note; the combined effect and its intervals are always those of all
MAX_FOREST_ROWS = 60


def _field(result: Any, name: str) -> Any:
    """A field of a result or of its JSON form (where JSON's null stands for NaN)."""
    value = result[name] if isinstance(result, Mapping) else getattr(result, name)
    if isinstance(value, list):
        return [float("nan") if v is None else v for v in value]
    return float("nan") if value is None else value


def summary_line(result: Any) -> str:
    """One line: the combined effect, its CI and its p (the test of no effect); then the heterogeneity: tau²,
    I², Cochran's Q and its p (do the effects differ more than chance?); the prediction interval (a
    :class:`~eatkit.stats.meta_analysis.RandomEffectsResult` or its ``to_dict()``).

    >>> from eatkit.stats.meta_analysis import random_effects
    >>> summary_line(random_effects([0.2, 0.5, 0.9], [0.01, 0.02, 0.015]))
    'random effects (DerSimonian-Laird, k = 3): 0.530 [95% CI 0.103, 0.956], p = 0.015; heterogeneity: tau² = 0.127, I² = 90%, Q(2) = 19.62, heterogeneity p = 5.5e-05; 95% prediction interval -4.779, 5.839'
    """
    level = f"{_field(result, 'confidence_level'):.0%}"
    low, high = _field(result, "ci")
    p_low, p_high = _field(result, "prediction_interval")
    prediction = "" if p_low != p_low else f"; {level} prediction interval {p_low:.3f}, {p_high:.3f}"
    return (f"random effects ({METHOD_NAMES[_field(result, 'method')]}, k = {_field(result, 'k')}): "
            f"{_field(result, 'estimate'):.3f} [{level} CI {low:.3f}, {high:.3f}], p = {_field(result, 'p_value'):.2g}; "
            f"heterogeneity: tau² = {_field(result, 'tau2'):.3g}, I² = {_field(result, 'i2'):.0%}, "
            f"Q({_field(result, 'q_df')}) = {_field(result, 'q'):.2f}, heterogeneity p = {_field(result, 'q_p_value'):.2g}"
            f"{prediction}")


def drawn_rows(weights: Sequence[float], limit: int = MAX_FOREST_ROWS) -> list[int]:
    """The indices of the effects a forest plot draws: all of them when there are at most ``limit``, else the
    ``limit`` of largest weight (ties: the earlier), in their own order.

    >>> drawn_rows([0.1, 0.4, 0.2, 0.2, 0.1], limit=3)
    [1, 2, 3]
    """
    import numpy as np

    if len(weights) <= limit:
        return list(range(len(weights)))
    return sorted(np.argsort(-np.asarray(weights, dtype=float), kind="stable")[:limit].tolist())


def random_effects_forest(result: Any, labels: Sequence[str], title: str | None = None) -> Figure:
    """Forest plot: each effect with its own interval (marker size by its random-effects weight), the
    combined effect as a diamond spanning its CI, and the prediction interval as a line through it. Of more
    than :data:`MAX_FOREST_ROWS` effects, those of largest weight (:func:`drawn_rows`), with a note.

    >>> from eatkit.stats.meta_analysis import random_effects
    >>> fig = random_effects_forest(random_effects([0.2, 0.5, 0.9], [0.01, 0.02, 0.015]), ["a", "b", "c"])
    >>> len(fig.axes[0].get_yticklabels())
    4
    """
    effects, cis, weights = _field(result, "effects"), _field(result, "effect_cis"), _field(result, "weights")
    if len(labels) != len(effects):
        raise EatkitError(f"a forest plot needs one label per effect: {len(labels)} labels, {len(effects)} effects")
    rows = drawn_rows(weights)
    note = (f"\nthe {len(rows)} of {len(effects)} effects of largest weight drawn; the combined effect and its "
            f"intervals from all {len(effects)}" if len(rows) < len(effects) else "")
    labels, effects, cis = [labels[i] for i in rows], [effects[i] for i in rows], [cis[i] for i in rows]
    biggest, weights = max(weights), [weights[i] for i in rows]
    k = len(effects)
    ax = new_figure(7.5, 1.4 + 0.28 * (k + 1)).add_subplot()
    for y, (effect, (low, high), weight) in enumerate(zip(effects, cis, weights)):
        ax.plot([low, high], [y, y], color=INK, linewidth=1.2)
        ax.plot([effect], [y], marker="s", color=INK, linestyle="none", markersize=3 + 6 * (weight / biggest) ** 0.5)
    estimate, (low, high) = _field(result, "estimate"), _field(result, "ci")
    p_low, p_high = _field(result, "prediction_interval")
    if p_low == p_low:  # defined for k >= 3
        ax.plot([p_low, p_high], [k, k], color="#777777", linewidth=1.2, linestyle=":")
    ax.fill([low, estimate, high, estimate], [k, k - 0.3, k, k + 0.3], color=INK)
    ax.axvline(0, color="#777777", linewidth=1, linestyle="--", zorder=0)
    ax.set_yticks(range(k + 1), [wrap(str(label), 40) for label in labels] + ["combined (random effects)"],
                  fontsize=8.5)
    ax.set_ylim(k + 0.7, -0.7)
    ax.set_xlabel("effect size", fontsize=9)
    ax.grid(axis="x", color="#EEEEEE", zorder=0)
    ax.set_title(wrap(title or summary_line(result), 100) + note, fontsize=8.5)
    return ax.figure


def forest_svg(result: Any, labels: Sequence[str], label: str) -> str:
    """The forest plot of :func:`random_effects_forest` (the same rows, weights, diamond and prediction interval;
    :func:`drawn_rows` of many) as a light inline ``<svg>`` written directly, ``label`` its accessible name: the
    audit page draws one per test and setting (matplotlib took ~0.16 s of CPU each, 48 of them in a 78-cell sweep).

    >>> from eatkit.stats.meta_analysis import random_effects
    >>> svg = forest_svg(random_effects([0.2, 0.5, 0.9], [0.01, 0.02, 0.015]), ["a", "b", "c"], "forest plot")
    >>> svg.count('class="effect"'), svg.count("<polygon")
    (3, 1)
    """
    effects, cis, weights = _field(result, "effects"), _field(result, "effect_cis"), _field(result, "weights")
    if len(labels) != len(effects):
        raise EatkitError(f"a forest plot needs one label per effect: {len(labels)} labels, {len(effects)} effects")
    rows = drawn_rows(weights)
    estimate, ci, prediction = _field(result, "estimate"), _field(result, "ci"), _field(result, "prediction_interval")
    finite = [v for v in [*(v for i in rows for v in cis[i]), *ci, 0.0, *prediction] if v == v]
    ticks = nice_ticks(min(finite), max(finite))

    def x(value: float) -> float:
        return _LEFT + (value - ticks[0]) / (ticks[-1] - ticks[0]) * _WIDTH

    bottom, biggest = 10 + _STEP * (len(rows) + 1), max(weights)
    body = [f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="4" y2="{bottom}" stroke="#777" stroke-dasharray="4 3"/>']
    body += [_forest_row(10 + _STEP * y, str(labels[i]), effects[i], cis[i], 3 + 6 * (weights[i] / biggest) ** 0.5, x)
             for y, i in enumerate(rows)]
    body.append(_forest_combined(10 + _STEP * len(rows), estimate, ci, prediction, x))
    note = (f"; the {len(rows)} of {len(effects)} effects of largest weight drawn; the combined effect and its "
            f"intervals from all {len(effects)}" if len(rows) < len(effects) else "")
    body += [f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{bottom}" y2="{bottom + 4}" stroke="{INK}"/><text '
             f'x="{x(t):.1f}" y="{bottom + 15}" text-anchor="middle">{t:g}</text>' for t in ticks]
    body.append(f'<text x="{_LEFT + _WIDTH / 2}" y="{bottom + 30}" text-anchor="middle">effect size'
                f'{html.escape(note)}</text>')
    return (f'<svg class="forest" width="{_LEFT + _WIDTH + 20}" height="{bottom + 38}" role="img" '
            f'aria-label="{html.escape(label)}" font-size="10" fill="#222">{"".join(body)}</svg>')


#: the forest SVG's label column, plot width and row height, in pixels
_LEFT, _WIDTH, _STEP = 190, 330, 18


def _forest_row(mid: float, label: str, effect: float, ci: Sequence[float], side: float,
                x: Callable[[float], float]) -> str:
    """One effect of :func:`forest_svg`: its label, interval and square (``side`` px, by its weight) at ``mid``."""
    return (f'<text x="{_LEFT - 8}" y="{mid + 4}" text-anchor="end">{html.escape(_short(label))}</text>'
            f'<line x1="{x(ci[0]):.1f}" x2="{x(ci[1]):.1f}" y1="{mid}" y2="{mid}" stroke="{INK}"/>'
            f'<rect class="effect" data-v="{effect!r}" x="{x(effect) - side / 2:.1f}" y="{mid - side / 2:.1f}" '
            f'width="{side:.1f}" height="{side:.1f}" fill="{INK}"/>')


def _forest_combined(mid: float, estimate: float, ci: Sequence[float], prediction: Sequence[float],
                     x: Callable[[float], float]) -> str:
    """The combined effect of :func:`forest_svg`: its diamond over the CI, the prediction interval dotted."""
    dotted = (f'<line x1="{x(prediction[0]):.1f}" x2="{x(prediction[1]):.1f}" y1="{mid}" y2="{mid}" stroke="#777" '
              'stroke-dasharray="2 2"/>' if prediction[0] == prediction[0] else "")  # (defined for k >= 3)
    return (f'{dotted}<text x="{_LEFT - 8}" y="{mid + 4}" text-anchor="end">combined (random effects)</text>'
            f'<polygon points="{x(ci[0]):.1f},{mid} {x(estimate):.1f},{mid - 6} {x(ci[1]):.1f},{mid} '
            f'{x(estimate):.1f},{mid + 6}" fill="{INK}"/>')


def nice_ticks(low: float, high: float, most: int = 7) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) covering ``[low, high]`` (``[low, low + 1]``
    when they are equal), at most ``most``.

    >>> nice_ticks(-0.23, 1.4), nice_ticks(3.0, 3.0)[::5]
    ([-0.5, 0.0, 0.5, 1.0, 1.5], [3.0, 4.0])
    """
    high = high if high > low else low + 1.0
    span = high - low
    power = 10.0 ** math.floor(math.log10(span / (most - 1)))
    step = next(m * power for m in (1, 2, 5, 10) if span / (m * power) <= most - 1)
    first = math.floor(low / step)
    return [round((first + i) * step, 12) for i in range(math.ceil(high / step) - first + 1)]


def _short(text: str, most: int = 34) -> str:
    return text if len(text) <= most else text[:most - 1] + "\u2026"


#: the columns of a sweep's ``meta-analysis.csv`` the audit page shows
_SHOWN = ("suite", "test", "setting", "k", "estimate", "ci_low", "ci_high", "tau2", "i2", "q", "q_df", "q_p_value",
          "prediction_low", "prediction_high")


def meta_analysis_html(path: Path | None, alpha: float = 0.05) -> str:
    """The audit page's section: per test, the random-effects combination of the models' d (``path``: a
    sweep's ``meta-analysis.csv``); "" when there is none.

    >>> meta_analysis_html(None)
    ''
    """
    if path is None or not path.exists():
        return ""
    rows = read_csv(path, "meta-analysis table", _SHOWN)  # (eatkit's one reader)
    if not rows:
        return ""
    forests = ""
    details = path.with_suffix(".json")
    if details.exists():  # a forest plot per test: every model's d and interval, the combined diamond
        for t in read_json(details, "meta-analysis details"):
            svg = forest_svg(t["result"], t["models"], "forest plot of " + str(t["test"]))
            figure = f'<figure>{svg}<figcaption>{html.escape(summary_line(t["result"]))}</figcaption></figure>'
            forests += (f'<details><summary>forest plot: {html.escape(t["suite"])} / {html.escape(t["test"])} '
                        f'({html.escape(str(t["setting"]))})</summary>{figure}</details>')

    def number(row: Mapping[str, str], name: str, spec: str) -> str:
        return "" if row[name] in ("", "nan") else format(float(row[name]), spec)

    body = "".join(
        f'<tr><th scope="row">{html.escape(r["suite"])} / {html.escape(r["test"])}</th>'
        f'<td>{html.escape(r["setting"])}</td><td>{html.escape(r["k"])}</td>'
        f'<td>{number(r, "estimate", ".2f")} {fmt_interval(r["ci_low"], r["ci_high"])}</td>'
        f'<td>{number(r, "tau2", ".3g")}</td><td>{number(r, "i2", ".0%")}</td>'
        f'<td>{number(r, "q", ".2f")} ({html.escape(r["q_df"])})</td><td>{number(r, "q_p_value", ".3g")}</td>'
        f'<td>{"yes" if float(r["q_p_value"]) < alpha else "no"}</td>'
        f'<td>{fmt_interval(r["prediction_low"], r["prediction_high"], brackets=False)}</td></tr>'
        for r in rows)
    return ('<h2>Across models (random effects)</h2><p class="note">Per test, the models\' effect sizes d combined '
            'by a DerSimonian-Laird random-effects model (within-model variance: the large-sample variance of a '
            'standardised mean difference; docs/meta-analysis.md): the combined d with its 95% CI, the between-model '
            f'variance tau², I², Cochran\'s Q (df) and its p ("disagree": p &lt; {alpha:g}, the models differ more '
            'than chance), and the 95% prediction interval for a new model. The models share their stimuli: read the '
            'heterogeneity as how much they differ.</p><table class="rankings"><thead><tr><th>test</th><th>setting'
            '</th><th>models</th><th>combined d [CI]</th><th>tau²</th><th>I²</th><th>Q (df)</th><th>p</th>'
            f'<th>disagree</th><th>prediction interval</th></tr></thead><tbody>{body}</tbody></table>{forests}')


def forest_page(result: Any, labels: Sequence[str], title: str) -> str:
    """A self-contained HTML page: the forest plot and the summary line (``eatkit meta --html``)."""
    from eatkit._version import __version__

    figure = figure_html(random_effects_forest(result, labels, title), f"forest plot: {title}",
                         html.escape(summary_line(result)))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="generator" content="eatkit {html.escape(__version__)}"><title>{html.escape(title)}</title>'
            f"</head><body><h1>{html.escape(title)}</h1>{figure}</body></html>\n")
