"""Benchmark of the feature-space geometry scores (issue 14; run by hand, not a test).

    python bench/bench_geometry.py [--iterations 1000]

13 classes of 500 random 1280-d features (EfficientNet-Lite0's penultimate width), seeded; the intra-class
score of every class and the inter-class score of all 78 pairs, half folds, cosine, 1000 iterations. The
fast path is timed as the median of 3 runs (wall and CPU time: on a shared machine the wall time
includes other processes' load, printed). The reference is the naive computation (per iteration, the
pairwise cosine matrix between the two folds and its mean, on the same folds): it is timed on the first
``--naive-iterations`` iterations and scaled to all of them (it is linear in the iterations), and its
values are checked against the fast path's on those iterations.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time

import numpy as np

from eatkit.stats.geometry import _draw_folds, geometry_scores

N_CLASSES, N_IMAGES, DIM = 13, 500, 1280


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--naive-iterations", type=int, default=20)
    args = parser.parse_args()
    g = np.random.default_rng(0)
    centres = g.normal(size=(N_CLASSES, DIM))
    classes = {f"c{i}": centres[i] + 1.5 * g.normal(size=(N_IMAGES, DIM)) for i in range(N_CLASSES)}
    T = args.iterations

    times, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = geometry_scores(classes, iterations=T, rng=1)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    fast = statistics.median(times)

    # naive reference on the same folds (same seed, same draw order)
    draw = np.random.default_rng(1)
    folds = dict(zip(classes, _draw_folds([N_IMAGES] * N_CLASSES, T, "half", draw)))
    unit = {k: X / np.linalg.norm(X, axis=1, keepdims=True) for k, X in classes.items()}
    t_naive = args.naive_iterations
    start = time.perf_counter()
    worst = 0.0
    for t in range(t_naive):
        for k, U in unit.items():
            a, b = folds[k][0][t], folds[k][1][t]
            value = (U[a] @ U[b].T).mean()
            worst = max(worst, abs(value - out.intra[k].values[t]))
        for p, q in itertools.combinations(classes, 2):
            value = (unit[p][folds[p][0][t]] @ unit[q][folds[q][0][t]].T).mean()
            worst = max(worst, abs(value - out.inter[(p, q)].values[t]))
    naive = (time.perf_counter() - start) * T / t_naive

    print(f"{N_CLASSES} classes x {N_IMAGES} images, d = {DIM}, {T} iterations, half folds, cosine: "
          f"{N_CLASSES} intra-class + {len(out.inter)} inter-class scores")
    print(f"fast path (fold-mean dot products): median {fast:.3f} s of {len(times)} runs "
          f"({', '.join(f'{x:.3f}' for x in times)}); goal <= 1 s: {'met' if fast <= 1.0 else 'NOT met'}")
    print(f"  CPU time of this process: median {statistics.median(cpu):.3f} s (all threads; on a shared "
          f"machine wall time also counts other processes' load: os.getloadavg() = {os.getloadavg()[0]:.1f})")
    print(f"naive pairwise matrices: {naive:.1f} s (timed on {t_naive} iterations, scaled to {T})")
    print(f"speed-up: {naive / fast:.0f}x; largest difference from the naive values: {worst:.2e}")


if __name__ == "__main__":
    main()
