"""Coverage of the outcome layer's intervals by simulation (issue 43; run by hand, not a test).

    python bench/bench_coverage.py [--draws 20000] [--seed 0]

For each interval of :mod:`eatkit.stats.outcomes` and each setting, draws data sets from a known truth, computes
the 95% interval of each, and prints the share that holds the truth (the coverage), its Monte Carlo standard
error and whether it lies within 1.5 points of 95%. Settings of a proportion are averaged over a grid of true
shares (the coverage of a discrete interval oscillates with p; the grid mean is the usual criterion, Brown, Cai &
DasGupta 2001), the minimum over the grid is printed beside it. Intervals of count data depend on the counts
alone, so each distinct table is computed once and the draws look them up.
"""

from __future__ import annotations

import argparse
from functools import lru_cache

import numpy as np

from eatkit.stats.outcomes import (clustered_proportion, paired_choices, paired_scores, proportion,
                                   proportion_difference)

LEVEL = 0.95
GRID = np.linspace(0.05, 0.95, 19)


def _proportion_rows(draws: int, rng: np.random.Generator) -> list[tuple[str, str, float, float]]:
    rows = []
    for method in ("wilson", "clopper-pearson"):
        for n in (20, 50, 200):
            table = [proportion(k, n, method=method) for k in range(n + 1)]
            low, high = np.array([r.ci_low for r in table]), np.array([r.ci_high for r in table])
            per_p = []
            for p in GRID:
                k = rng.binomial(n, p, size=draws)
                per_p.append(np.mean((low[k] <= p) & (p <= high[k])))
            rows.append((f"proportion {method}", f"n={n}, p in 0.05..0.95", float(np.mean(per_p)),
                         float(np.min(per_p))))
    return rows


def _difference_rows(draws: int, rng: np.random.Generator) -> list[tuple[str, str, float, float]]:
    rows = []
    for n, (p1, p2) in ((30, (0.3, 0.5)), (100, (0.2, 0.25)), (100, (0.5, 0.5))):
        interval = lru_cache(maxsize=None)(lambda a, b: proportion_difference(a, n, b, n))
        k1, k2 = rng.binomial(n, p1, size=draws), rng.binomial(n, p2, size=draws)
        hit = [interval(int(a), int(b)).ci_low <= p1 - p2 <= interval(int(a), int(b)).ci_high for a, b in zip(k1, k2)]
        rows.append(("difference Newcombe", f"n={n}+{n}, p={p1}, {p2}", float(np.mean(hit)), float("nan")))
    return rows


def _paired_rows(draws: int, rng: np.random.Generator) -> list[tuple[str, str, float, float]]:
    rows = []
    # cells (both, first only, second only, neither) of the true 2 x 2 table of paired outcomes
    for n, cells in ((40, (0.3, 0.15, 0.05, 0.5)), (100, (0.4, 0.1, 0.1, 0.4)), (200, (0.1, 0.05, 0.02, 0.83)),
                     (60, (0.45, 0.2, 0.1, 0.25))):
        truth = cells[1] - cells[2]

        @lru_cache(maxsize=None)
        def interval(a: int, b: int, c: int, d: int) -> tuple[float, float]:
            r = paired_choices([1] * (a + b) + [0] * (c + d), [1] * a + [0] * b + [1] * c + [0] * d)
            return r.ci_low, r.ci_high

        tables = rng.multinomial(n, cells, size=draws)
        hit = [lo <= truth <= hi for lo, hi in (interval(*map(int, t)) for t in tables)]
        rows.append(("paired Newcombe (method 10)", f"n={n}, cells={cells}", float(np.mean(hit)), float("nan")))
    return rows


def _score_rows(draws: int, rng: np.random.Generator) -> list[tuple[str, str, float, float]]:
    rows = []
    for n, shift in ((30, 0.3), (80, 0.0)):
        hit = 0
        for _ in range(draws):
            d = rng.standard_normal(n) + shift
            r = paired_scores(d, np.zeros(n), permutations=1, n_resamples=1000, rng=rng)
            hit += r.ci_low <= shift <= r.ci_high
        rows.append(("paired scores bootstrap", f"n={n}, normal differences", hit / draws, float("nan")))
    return rows


def _cluster_rows(draws: int, rng: np.random.Generator) -> list[tuple[str, str, float, float]]:
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
            hit += r.ci_low <= truth <= r.ci_high
        rows.append(("clustered CR1 (t, G-1 df)", f"{clusters} clusters x {size}, sd={sd}", hit / draws,
                     float("nan")))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=20000, help="draws per setting (tables and proportions)")
    parser.add_argument("--slow-draws", type=int, default=2000, help="draws per setting (bootstrap, clusters)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = (_proportion_rows(args.draws, rng) + _difference_rows(args.draws, rng) + _paired_rows(args.draws, rng)
            + _score_rows(args.slow_draws, rng) + _cluster_rows(args.slow_draws, rng))
    print(f"{'interval':30} {'setting':44} {'coverage':>8} {'MC SE':>6} {'min(p)':>7}  within 1.5 pt of 95%")
    for name, setting, coverage, lowest in rows:
        draws = args.slow_draws if name.startswith(("paired scores", "clustered")) else args.draws
        se = np.sqrt(LEVEL * (1 - LEVEL) / draws)
        mark = "yes" if abs(coverage - LEVEL) <= 0.015 else "NO"
        low = "" if np.isnan(lowest) else f"{lowest:.3f}"
        print(f"{name:30} {setting:44} {coverage:8.4f} {se:6.4f} {low:>7}  {mark}")


if __name__ == "__main__":
    main()
