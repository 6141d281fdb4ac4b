"""Benchmark of the field's metrics (issue 27; run by hand, with nice):

    nice python bench/bench_metrics.py

On 25 + 25 targets x 25 attributes (25 + 25 for MAC and RNSB, which take two attribute sets), d = 300, random
vectors: for each metric the median time (of 5 runs, all in this one run) of

* ``loop``: the value alone, by a per-word Python loop in the style of WEFE 1.0.1's implementation
  (scipy.spatial.distance.cosine / numpy.linalg.norm per word pair, scikit-learn-free for RNSB: one
  numpy Newton fit per call),
* ``value``: eatkit's value alone (no permutations, no resamples; RNSB: its 20 fits),
* ``with p and CI``: eatkit's value with its permutation p (``permutations="auto"``: 100,000 Monte Carlo
  re-partitions for RND and ECT at 25 + 25, all 2^25 sign patterns being too many for RIPA: 100,000
  draws) and a 2,000-resample bootstrap CI,

and the ratios value / loop and (with p and CI) / loop.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
from scipy.spatial import distance
from scipy.stats import spearmanr

from eatkit.stats import metrics as sm

N, D, RUNS, RESAMPLES = 25, 300, 5, 2000


def median_time(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- per-word loops in the style of WEFE's implementation ----------------------------------------


def loop_rnd(X, Y, A):
    mx, my = np.average(X, axis=0), np.average(Y, axis=0)
    total = 0.0
    for a in A:
        total += np.linalg.norm(np.subtract(a, mx)) - np.linalg.norm(np.subtract(a, my))
    return total / len(A)


def loop_ect(X, Y, A):
    means = [np.mean(s, axis=0) for s in (X, Y)]
    sims = [[1 - distance.cosine(m, a) for a in A] for m in means]
    return spearmanr(sims[0], sims[1]).correlation


def loop_ripa(X, Y, A):
    scores = []
    for a in A:
        per = []
        for x, y in zip(X, Y):
            b = np.array(x) - np.array(y)
            per.append(np.dot(a, b / np.linalg.norm(b)))
        scores.append(np.mean(per))
    return np.mean(scores)


def loop_mac(T, As):
    scores = []
    for t in T:
        for A in As:
            scores.append(np.mean([distance.cosine(t, a) for a in A]))
    return np.mean(scores)


def loop_rnsb(T, A, B):
    return sm.rnsb([T], A, B, n_fits=1, holdout=False).value  # one fit, as WEFE's n_iterations=1


def loop_direct_bias(X, Y, N_):
    rows = []
    for x, y in zip(X, Y):
        x, y = x / np.linalg.norm(x), y / np.linalg.norm(y)
        centre = (x + y) / 2
        rows += [x - centre, y - centre]
    g = np.linalg.svd(np.array(rows), full_matrices=False)[2][0]
    return np.mean([abs(1 - distance.cosine(w, g)) for w in N_])


def main() -> None:
    rng = np.random.default_rng(0)
    X, Y, A, B = (rng.normal(size=(N, D)) for _ in range(4))
    T = np.concatenate([X, Y])
    full = dict(n_bootstrap=RESAMPLES, rng=1)
    cases = {
        "rnd": (lambda: loop_rnd(X, Y, A), lambda: sm.rnd(X, Y, A, permutations=1),
                lambda: sm.rnd(X, Y, A, **full)),
        "ect": (lambda: loop_ect(X, Y, A), lambda: sm.ect(X, Y, A, permutations=1),
                lambda: sm.ect(X, Y, A, **full)),
        "ripa": (lambda: loop_ripa(X, Y, A), lambda: sm.ripa(X, Y, A, permutations=1),
                 lambda: sm.ripa(X, Y, A, **full)),
        "mac": (lambda: loop_mac(T, [A, B]), lambda: sm.mac([X, Y], [A, B]), lambda: sm.mac([X, Y], [A, B], **full)),
        "rnsb": (lambda: loop_rnsb(T, A, B), lambda: sm.rnsb([X, Y], A, B, rng=1),
                 lambda: sm.rnsb([X, Y], A, B, **full)),
        "direct_bias": (lambda: loop_direct_bias(X, Y, A), lambda: sm.direct_bias(X, Y, A),
                        lambda: sm.direct_bias(X, Y, A, **full)),
    }
    print(f"{N} + {N} targets x {N} attributes, d = {D}; median of {RUNS} runs; p and CI: permutations='auto', "
          f"{RESAMPLES} bootstrap resamples")
    print(f"{'metric':<12} {'loop':>10} {'value':>10} {'p and CI':>10} {'value/loop':>11} {'p+CI/loop':>10}")
    for name, (loop, value, with_uncertainty) in cases.items():
        t_loop, t_value, t_full = (median_time(f) for f in (loop, value, with_uncertainty))
        print(f"{name:<12} {t_loop:>9.4f}s {t_value:>9.4f}s {t_full:>9.3f}s {t_value / t_loop:>11.3g} "
              f"{t_full / t_loop:>10.3g}")


if __name__ == "__main__":
    main()
