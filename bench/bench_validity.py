"""Benchmark of the "how far to trust this" panel (``--validity``, issue 28; run by hand, not a test).

    nice python bench/bench_validity.py

Goal: for a 25 + 25 x 25 + 25 test, the panel costs under 2 s on the 2-core development machine. The
panel is :func:`eatkit.analyses.validity.validity_panel`, given the full test (as the run gives it ML-EAT's
level 1, so the full test's p is not part of the cost). Inputs are random 300-d vectors with a small planted
association (seeded). Each part is timed once after a warm-up (numba's kernels compiled), then the whole
panel; times are wall-clock medians of 3 repeats.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from eatkit.analyses.validity import N_RESAMPLES, N_SIMULATIONS, N_SPLITS, N_SUBSAMPLES, validity_panel
from eatkit.sources.base import Embedded
from eatkit.stats import eat, minimum_detectable_effect, stimulus_influence, stimulus_stability
from eatkit.stats.permutation import compiled

DIM, N, REPEATS, GOAL = 300, 25, 3, 2.0


def sets(seed: int = 1) -> dict[str, np.ndarray]:
    g = np.random.default_rng(seed)
    axis = g.normal(size=DIM)
    return {r: g.normal(size=(N, DIM)) + s * 0.05 * axis for r, s in zip("XYAB", (1, -1, 1, -1))}


def median_time(fn) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    v = sets()
    vectors = [v[r] for r in "XYAB"]
    full = eat(*vectors, rng=0)
    embedded = {r: Embedded(vectors=v[r], ids=tuple(f"{r}{i}" for i in range(N))) for r in "XYAB"}

    def panel() -> None:
        validity_panel(embedded, full, alpha=0.05, confidence_level=0.95, seed=0)

    panel()  # warm-up: numba compiles its kernels once per process
    parts = {
        "influence (leave-one-out d and p)": lambda: stimulus_influence(*vectors, reference=full, rng=0),
        f"stability ({N_RESAMPLES} resamples, {N_SUBSAMPLES} subsamples, {N_SPLITS} splits)": lambda: stimulus_stability(
            *vectors, reference=full, rng=0, n_bootstrap=N_RESAMPLES, n_subsamples=N_SUBSAMPLES, n_splits=N_SPLITS),
        f"power ({N_SIMULATIONS} simulated tests)": lambda: minimum_detectable_effect(N, N, n_simulations=N_SIMULATIONS),
    }
    print(f"validity panel, {N} + {N} x {N} + {N}, {DIM}-d; compiled kernels: {compiled()}; full test d = "
          f"{full.effect_size:.3f}, p = {full.p_value:.3g}")
    for name, fn in parts.items():
        print(f"  {name:<60} {median_time(fn):6.3f} s")
    total = median_time(panel)
    print(f"  {'whole panel':<60} {total:6.3f} s  (goal < {GOAL} s: {'met' if total < GOAL else 'NOT met'})")


if __name__ == "__main__":
    main()
