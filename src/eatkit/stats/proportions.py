"""Rates per group (VQA "yes" answers, captions that mention race): Wilson intervals and a chi-square
test of independence across groups."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.options import check_option


def wilson_interval(successes: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (Wilson 1927):
    (p̂ + z²/2n ± z sqrt(p̂(1 - p̂)/n + z²/4n²)) / (1 + z²/n), z the normal quantile of the level.

    >>> [round(v, 4) for v in wilson_interval(0, 10)]
    [0.0, 0.2775]
    """
    from scipy import stats as sps

    level = check_option("confidence_level", confidence_level)
    if not isinstance(n, numbers.Integral) or not isinstance(successes, numbers.Integral) or n < 1 \
            or not 0 <= successes <= n:
        raise EatkitError(f"a proportion needs whole counts 0 <= successes <= n, n >= 1; got {successes} of {n}")
    z = float(sps.norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # the bounds are exactly 0 and 1 at p = 0 and p = 1 (the formula gives them up to rounding)
    low = 0.0 if successes == 0 else float(centre - half)
    high = 1.0 if successes == n else float(centre + half)
    return low, high


@dataclass(frozen=True)
class GroupRates:
    """The rate of an outcome per group with Wilson intervals, and Pearson's chi-square test of
    independence of group and outcome (no continuity correction).

    Attributes
    ----------
    rates, counts, totals, intervals : dict keyed by group
    confidence_level : float
    statistic, p_value : float
        Chi-square statistic and p-value; NaN when the outcome never or always occurs (no test).
    dof : int
    min_expected : float
        Smallest expected cell count (the chi-square approximation wants >= 5).
    """

    rates: dict[str, float]
    counts: dict[str, int]
    totals: dict[str, int]
    intervals: dict[str, tuple[float, float]]
    confidence_level: float
    statistic: float
    p_value: float
    dof: int
    min_expected: float

    def to_dict(self) -> dict[str, Any]:
        return {"rates": dict(self.rates), "counts": dict(self.counts), "totals": dict(self.totals),
                "intervals": {g: list(v) for g, v in self.intervals.items()},
                "confidence_level": self.confidence_level, "statistic": self.statistic,
                "p_value": self.p_value, "dof": self.dof, "min_expected": self.min_expected}


def group_rates(counts: Mapping[str, int], totals: Mapping[str, int],
                confidence_level: float = 0.95) -> GroupRates:
    """Rate ``counts[g] / totals[g]`` per group, Wilson intervals, and the chi-square test of the
    groups x (outcome, not outcome) table: X² = Σ (O - E)² / E, E = row total x column total / N.

    >>> r = group_rates({"a": 9, "b": 1}, {"a": 10, "b": 10})
    >>> r.rates["a"], round(r.statistic, 3), r.dof
    (0.9, 12.8, 1)
    """
    from scipy import stats as sps

    if set(counts) != set(totals) or len(counts) < 1:
        raise EatkitError("counts and totals must name the same groups")
    groups = sorted(counts)
    intervals = {g: wilson_interval(int(counts[g]), int(totals[g]), confidence_level) for g in groups}
    table = np.array([[counts[g], totals[g] - counts[g]] for g in groups], dtype=np.float64)
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    if len(groups) < 2 or (expected == 0).any():
        statistic, p, dof = float("nan"), float("nan"), 0
    else:
        res = sps.chi2_contingency(table, correction=False)
        statistic, p, dof = float(res.statistic), float(res.pvalue), int(res.dof)
    return GroupRates(rates={g: counts[g] / totals[g] for g in groups}, counts={g: int(counts[g]) for g in groups},
                      totals={g: int(totals[g]) for g in groups}, intervals=intervals,
                      confidence_level=float(confidence_level), statistic=statistic, p_value=p, dof=dof,
                      min_expected=float(expected.min()))
