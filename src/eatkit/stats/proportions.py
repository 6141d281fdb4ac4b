"""Rates per group (VQA "yes" answers, captions that mention race): Wilson intervals (from the outcome
layer, :func:`eatkit.stats.outcomes.proportion`) and a chi-square test of independence across groups."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.degeneracy import check_group
from eatkit.stats.outcomes import proportion


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


def _check_groups(totals: Mapping[str, int]) -> None:
    """The ``empty-group`` rule on every group's total."""
    for g in sorted(totals):
        check_group("group", str(g), int(totals[g]))


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
    _check_groups(totals)
    shares = {g: proportion(int(counts[g]), int(totals[g]), confidence_level=confidence_level) for g in groups}
    intervals = {g: (r.ci_low, r.ci_high) for g, r in shares.items()}
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
