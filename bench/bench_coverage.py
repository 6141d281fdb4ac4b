"""Coverage of the outcome layer's intervals (issue 43; run by hand, not a test).

    python bench/bench_coverage.py [--draws 20000] [--seed 0]

For each interval of :mod:`eatkit.stats.outcomes` and each setting, prints the share of 95% intervals that hold
the truth (the coverage) and checks the claim that interval makes (exit status 1 when one fails):

- **within 1.5 points of 95%** for the approximate intervals (Wilson, Newcombe's difference and paired
  intervals, the paired bootstrap, the cluster-robust interval): they aim at nominal coverage on average (a
  simulated row is judged with two Monte Carlo standard errors added to the 1.5 points);
- **never below 95%** for Clopper-Pearson: exact by construction, its coverage is at least nominal at every
  true share, so it is conservative (at n = 20 its mean coverage is about 97%); the bench prints its excess.

A proportion's coverage is computed exactly, sum_k Binomial(k; n, p) [low_k <= p <= high_k], at 181 true shares
from 0.05 to 0.95 (the coverage of a discrete interval oscillates with p: the mean over shares is the usual
criterion, Brown, Cai & DasGupta 2001; the minimum is printed beside it, and is what Clopper-Pearson's claim is
about). The other intervals are simulated (``--draws`` data sets per setting, ``--slow-draws`` for the bootstrap
and the clusters), with the Monte Carlo standard error printed; intervals of count data depend on the counts
alone, so each distinct table is computed once and the draws look them up. docs/answers.md says which interval
is the default and why; tests/test_outcomes.py checks its numbers with :func:`exact_coverage`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from eatkit.stats.outcomes import (clustered_proportion, paired_choices, paired_scores, proportion,
                                   proportion_difference)

LEVEL = 0.95
TOLERANCE = 0.015  # "within 1.5 points of nominal"
GRID = np.linspace(0.05, 0.95, 181)
#: the claim each interval makes: "nominal" (within TOLERANCE of LEVEL on average) or "at least" (never below
#: LEVEL at any true value: an exact interval)
CLAIMS = {"proportion clopper-pearson": "at least"}


@dataclass(frozen=True)
class Row:
    """One setting's coverage (mean over true shares for a proportion), its minimum over the shares (NaN when
    there is one truth) and the draws it was simulated from (0: computed exactly)."""

    name: str
    setting: str
    coverage: float
    lowest: float
    draws: int

    @property
    def claim(self) -> str:
        return CLAIMS.get(self.name, "nominal")

    def holds(self) -> bool:
        """Whether the row meets its claim: at least LEVEL at every share (exact rows: to 1e-12), or within
        TOLERANCE of LEVEL, plus two Monte Carlo standard errors for a simulated row (a row outside that is
        evidence against the claim, not noise)."""
        if self.claim == "at least":
            return self.lowest >= LEVEL - 1e-12
        return abs(self.coverage - LEVEL) <= TOLERANCE + 2 * self.se

    @property
    def se(self) -> float:
        """The Monte Carlo standard error of a simulated coverage at nominal (0 for an exact row)."""
        return 0.0 if self.draws == 0 else float(np.sqrt(LEVEL * (1 - LEVEL) / self.draws))


def exact_coverage(method: str, n: int, shares=GRID, level: float = LEVEL) -> np.ndarray:
    """The exact coverage of ``proportion(k, n, method=method)``'s interval at each true share:
    sum_k Binomial(k; n, p) [low_k <= p <= high_k].

    >>> round(float(exact_coverage("clopper-pearson", 20).mean()), 3)
    0.975
    """
    from scipy import stats as sps

    table = [proportion(k, n, method=method, confidence_level=level) for k in range(n + 1)]
    low, high = np.array([r.ci for r in table]).T
    p = np.asarray(shares, dtype=float)[:, None]
    holds = (low[None, :] <= p) & (p <= high[None, :])
    return (sps.binom.pmf(np.arange(n + 1)[None, :], n, p) * holds).sum(axis=1)


def _proportion_rows() -> list[Row]:
    rows = []
    for method in ("wilson", "clopper-pearson"):
        for n in (20, 50, 200):
            coverage = exact_coverage(method, n)
            rows.append(Row(f"proportion {method}", f"n={n}, p in 0.05..0.95", float(coverage.mean()),
                            float(coverage.min()), 0))
    return rows


def _difference_rows(draws: int, rng: np.random.Generator) -> list[Row]:
    rows = []
    for n, (p1, p2) in ((30, (0.3, 0.5)), (100, (0.2, 0.25)), (100, (0.5, 0.5))):
        interval = lru_cache(maxsize=None)(lambda a, b: proportion_difference(a, n, b, n))
        k1, k2 = rng.binomial(n, p1, size=draws), rng.binomial(n, p2, size=draws)
        hit = [interval(int(a), int(b)).ci[0] <= p1 - p2 <= interval(int(a), int(b)).ci[1] for a, b in zip(k1, k2)]
        rows.append(Row("difference Newcombe", f"n={n}+{n}, p={p1}, {p2}", float(np.mean(hit)), float("nan"), draws))
    return rows


def _paired_rows(draws: int, rng: np.random.Generator) -> list[Row]:
    rows = []
    # cells (both, first only, second only, neither) of the true 2 x 2 table of paired outcomes
    for n, cells in ((40, (0.3, 0.15, 0.05, 0.5)), (100, (0.4, 0.1, 0.1, 0.4)), (200, (0.1, 0.05, 0.02, 0.83)),
                     (60, (0.45, 0.2, 0.1, 0.25))):
        truth = cells[1] - cells[2]

        @lru_cache(maxsize=None)
        def interval(a: int, b: int, c: int, d: int) -> tuple[float, float]:
            r = paired_choices([1] * (a + b) + [0] * (c + d), [1] * a + [0] * b + [1] * c + [0] * d)
            return r.ci

        tables = rng.multinomial(n, cells, size=draws)
        hit = [lo <= truth <= hi for lo, hi in (interval(*map(int, t)) for t in tables)]
        rows.append(Row("paired Newcombe (method 10)", f"n={n}, cells={cells}", float(np.mean(hit)), float("nan"),
                        draws))
    return rows


def _score_rows(draws: int, rng: np.random.Generator) -> list[Row]:
    rows = []
    for n, shift in ((30, 0.3), (80, 0.0)):
        hit = 0
        for _ in range(draws):
            d = rng.standard_normal(n) + shift
            r = paired_scores(d, np.zeros(n), permutations=1, n_bootstrap=1000, rng=rng)
            hit += r.ci[0] <= shift <= r.ci[1]
        rows.append(Row("paired scores bootstrap", f"n={n}, normal differences", hit / draws, float("nan"), draws))
    return rows


def _cluster_rows(draws: int, rng: np.random.Generator) -> list[Row]:
    rows = []
    for clusters, size, sd in ((20, 10, 1.0), (40, 5, 0.5)):
        labels = np.repeat(np.arange(clusters), size)
        # logit-normal cluster effects; the truth is the population share E[expit(mu + u)]
        truth = float(np.mean(1 / (1 + np.exp(-(-0.5 + sd * rng.standard_normal(2_000_000))))))
        hit = 0
        for _ in range(draws):
            p = 1 / (1 + np.exp(-(-0.5 + sd * rng.standard_normal(clusters))))
            y = rng.random(clusters * size) < np.repeat(p, size)
            r = clustered_proportion(y, labels)
            hit += r.ci[0] <= truth <= r.ci[1]
        rows.append(Row("clustered CR1 (t, G-1 df)", f"{clusters} clusters x {size}, sd={sd}", hit / draws,
                        float("nan"), draws))
    return rows


def _line(row: Row) -> str:
    se = "exact" if row.draws == 0 else f"{row.se:.4f}"
    low = "" if np.isnan(row.lowest) else f"{row.lowest:.4f}"
    if row.claim == "at least":
        claim = f"never below 95%: {'yes' if row.holds() else 'NO'} (excess {100 * (row.coverage - LEVEL):+.2f} pt " \
                f"mean, {100 * (row.lowest - LEVEL):+.2f} pt min)"
    else:
        claim = f"within 1.5 pt (+ 2 MC SE) of 95%: {'yes' if row.holds() else 'NO'}"
    return f"{row.name:30} {row.setting:44} {row.coverage:8.4f} {se:>6} {low:>7}  {claim}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=20000, help="draws per setting (tables)")
    parser.add_argument("--slow-draws", type=int, default=2000, help="draws per setting (bootstrap, clusters)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = (_proportion_rows() + _difference_rows(args.draws, rng) + _paired_rows(args.draws, rng)
            + _score_rows(args.slow_draws, rng) + _cluster_rows(args.slow_draws, rng))
    print(f"{'interval':30} {'setting':44} {'coverage':>8} {'MC SE':>6} {'min(p)':>7}  claim")
    for row in rows:
        print(_line(row))
    failed = [row for row in rows if not row.holds()]
    print(f"{len(rows) - len(failed)} of {len(rows)} settings meet their interval's claim")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
