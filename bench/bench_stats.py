"""Benchmark of the EAT statistics core against the acceptance bars of issue 5 (run by hand, not a test).

    python bench/bench_stats.py

All inputs are random 300-d vectors (seeded). Times are wall-clock medians of several repeats in this one
run (the number is printed); a ratio is the median of per-pair ratios of interleaved runs (A, B, A, B, ...)
so that the load of a shared machine hits both sides alike. The exact 25 + 25 test runs once, in a child
process, so that its peak resident memory (ru_maxrss) is its own.
"""

from __future__ import annotations

import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy
from scipy import stats as sps

from eatkit.stats import eat, group_permutation_test

DIM = 300
EXACT_CHILD_FLAG = "--exact-25-child"


def embeddings(n_targets: int, n_attributes: int = 25, seed: int = 1) -> tuple[np.ndarray, ...]:
    """X, Y, A, B with no planted bias. The seed gives middling p-values (0.85 for 25 + 25, 0.54 for
    20 + 20): the exact count is slowest there (a p near 0 or 1 lets the binary searches end early)."""
    g = np.random.default_rng(seed)
    A, B = g.normal(size=(n_attributes, DIM)), g.normal(size=(n_attributes, DIM))
    return g.normal(size=(n_targets, DIM)), g.normal(size=(n_targets, DIM)), A, B


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def paired(slow, fast, repeats: int) -> tuple[float, float, float, object, object]:
    """Interleaved timings of two functions (slow, fast, slow, fast, ...) so that the load of a shared
    machine hits both alike: (median slow time, median fast time, median of the per-pair ratios,
    last results)."""
    pairs = [(timed(slow, 1), timed(fast, 1)) for _ in range(repeats)]
    ratios = [a[0] / b[0] for a, b in pairs]
    return (
        statistics.median(a[0] for a, _ in pairs),
        statistics.median(b[0] for _, b in pairs),
        statistics.median(ratios),
        pairs[-1][0][1],
        pairs[-1][1][1],
    )


def exact_25_child() -> None:
    """Child process: one exact 25 + 25 EAT; prints its time, p-value and peak RSS as JSON."""
    sets = embeddings(25)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    r = eat(*sets, permutations="exact")
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_kib": peak,
                "baseline_kib": baseline,
                "p": r.p_value,
                "exact": r.exact,
                "partitions": r.n_partitions,
            }
        )
    )


def python_loop_p(values: list[float], k: int, observed: float, iterations: int) -> float:
    """The sent-bias / iEAT style: shuffle the pooled list and re-sum the first group, in Python."""
    pooled = list(values)
    hits = 0
    for _ in range(iterations):
        random.shuffle(pooled)
        hits += sum(pooled[:k]) - sum(pooled[k:]) >= observed
    return hits / iterations


def main() -> None:
    rows: list[tuple[str, str, str, bool]] = []

    def report(name: str, measured: str, target: str, ok: bool) -> None:
        rows.append((name, measured, target, ok))

    print(
        f"eatkit statistics benchmark: {DIM}-d random vectors, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
    )

    # 1. exact 25 + 25 targets, 25 + 25 attributes: time and peak memory, once, in a child process
    child = subprocess.run(
        [sys.executable, __file__, EXACT_CHILD_FLAG], capture_output=True, text=True, check=True
    )
    exact25 = json.loads(child.stdout)
    assert exact25["exact"] and exact25["partitions"] == math.comb(50, 25)
    peak_gb = exact25["peak_kib"] * 1024 / 1e9
    report(
        "exact p, 25+25 targets / 25+25 attributes (1 run)",
        f"{exact25['seconds']:.2f} s",
        "<= 30 s",
        exact25["seconds"] <= 30,
    )
    report(
        "  peak resident memory of that process (ru_maxrss)",
        f"{peak_gb:.2f} GB (before: {exact25['baseline_kib'] * 1024 / 1e9:.2f} GB)",
        "<= 4 GB",
        peak_gb <= 4,
    )

    # 2. exact 20 + 20 targets
    sets20 = embeddings(20)
    t20, r20 = timed(lambda: eat(*sets20, permutations="exact"), repeats=5)
    assert r20.exact and r20.n_partitions == math.comb(40, 20)
    report("exact p, 20+20 targets (median of 5)", f"{t20:.3f} s", "<= 1 s", t20 <= 1)

    # 3. 10^6 Monte Carlo permutations, 25 + 25 targets, through eat()
    sets25 = embeddings(25)
    draws = 10**6
    t_mc, r_mc = timed(lambda: eat(*sets25, permutations=draws, rng=1), repeats=3)
    report(
        "10^6 Monte Carlo permutations via eat(), 25+25 (median of 3)", f"{t_mc:.3f} s", "<= 1 s", t_mc <= 1
    )

    # 4. per permutation vs a Python shuffle-and-sum loop on the same precomputed associations
    sx, sy = r_mc.associations
    pooled = list(np.concatenate([sx, sy]))
    observed = float(sx.sum() - sy.sum())
    loop_iterations = 20_000
    random.seed(0)
    t_loop, t_lib, ratio_loop, loop_p, lib = paired(
        lambda: python_loop_p(pooled, sx.size, observed, loop_iterations),
        lambda: group_permutation_test(sx, sy, permutations=draws, rng=2),
        repeats=3,
    )
    # per permutation: the loop ran loop_iterations, eatkit `draws`
    per_loop, per_lib = t_loop / loop_iterations, t_lib / draws
    ratio_loop *= draws / loop_iterations
    report(
        "per permutation: Python loop / eatkit (3 interleaved pairs)",
        f"{ratio_loop:.0f}x ({per_loop * 1e6:.2f} us vs {per_lib * 1e9:.0f} ns)",
        ">= 10x",
        ratio_loop >= 10,
    )

    # 5. vs scipy.stats.permutation_test, same associations, 10^5 resamples, alternative "greater"
    resamples = 10**5

    def mean_difference(x, y, axis):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    t_scipy, t_ours, ratio_scipy, sp, ours = paired(
        lambda: sps.permutation_test(
            (sx, sy),
            mean_difference,
            vectorized=True,
            n_resamples=resamples,
            permutation_type="independent",
            alternative="greater",
            rng=np.random.default_rng(3),
        ),
        lambda: group_permutation_test(sx, sy, permutations=resamples, rng=4),
        repeats=5,
    )
    report(
        "vs scipy.stats.permutation_test, 10^5 resamples (5 interleaved pairs)",
        f"{ratio_scipy:.1f}x ({t_scipy:.3f} s vs {t_ours:.3f} s)",
        ">= 5x",
        ratio_scipy >= 5,
    )
    p_ours, p_scipy = ours.p_values["greater"], float(sp.pvalue)
    p_mid = (p_ours + p_scipy) / 2
    se = math.sqrt(2 * p_mid * (1 - p_mid) / resamples)
    report(
        "  same p-value within 4 Monte Carlo SE (eatkit vs scipy)",
        f"{p_ours:.5f} vs {p_scipy:.5f} (|diff| = {abs(p_ours - p_scipy) / se:.1f} SE)",
        "<= 4 SE",
        abs(p_ours - p_scipy) <= 4 * se,
    )
    # the child's exact test used the same seeded 25 + 25 sets: the sampled p-values must agree with it
    p_exact, p_mc = exact25["p"], r_mc.p_values["greater"]
    se_mc = math.sqrt(p_exact * (1 - p_exact) / draws)
    report(
        "  10^6-draw p within 4 SE of the exact 25+25 p",
        f"{p_mc:.5f} vs {p_exact:.5f} (|diff| = {abs(p_mc - p_exact) / se_mc:.1f} SE)",
        "<= 4 SE",
        abs(p_mc - p_exact) <= 4 * se_mc,
    )
    print(
        f"(Python loop p-value from {loop_iterations} draws: {loop_p:.4f}; eatkit from {draws} draws: "
        f"{lib.p_values['greater']:.5f})"
    )

    width = max(len(r[0]) for r in rows)
    mwidth = max(len(r[1]) for r in rows)
    print()
    print(f"{'figure'.ljust(width)}  {'measured'.ljust(mwidth)}  {'target':9}  result")
    for name, measured, target, ok in rows:
        print(f"{name.ljust(width)}  {measured.ljust(mwidth)}  {target:9}  {'PASS' if ok else 'FAIL'}")
    print(
        "\nTimes are wall-clock medians of the stated repeats on a shared 2-core machine; a ratio is the "
        "median of the per-pair ratios of interleaved runs in this one process."
    )


if __name__ == "__main__":
    if EXACT_CHILD_FLAG in sys.argv:
        exact_25_child()
    else:
        main()
