"""Independent reference computations for the statistics tests (no eatkit code is used here).

* :func:`brute_force_p_values` enumerates every partition with ``itertools.combinations`` and sums with
  ``math.fsum`` (correctly rounded), applying the tie tolerance documented in
  :mod:`eatkit.stats.permutation`: ``tol = 4 (k + m) eps sum|v| + 2 (k + m) atol`` on subset sums.
* :func:`loop_associations` computes s(w, A, B) with plain Python loops over vector components.
* :func:`vectors_with_associations` builds 2-D targets whose s(w, A, B) with ``A = [(1, 0)]`` and
  ``B = [(0, 1)]`` are given numbers: for w = (cos t, sin t), s = cos t - sin t = sqrt(2) cos(t + pi/4).
"""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np

UNIT_A = np.array([[1.0, 0.0]])
UNIT_B = np.array([[0.0, 1.0]])


def brute_force_p_values(first, second, atol: float = 0.0) -> tuple[dict[str, float], dict[str, int], int]:
    """Exact p-values of every alternative by enumeration: (p-values, counts, number of partitions).

    ``atol`` is the per-value rounding error the library adds to its tie tolerance (2 n atol); the EAT
    passes 2 (dim + 2) eps for cosine-based associations.

    "greater" counts partitions S with sum(S) >= sum(first), "less" with sum(S) <= sum(first), and
    "two-sided" with |D(S)| >= |D(first)|, D = mean of the first group - mean of the second.
    """
    values = [float(v) for v in first] + [float(v) for v in second]
    k, m = len(first), len(second)
    n = k + m
    tol = 4 * n * sys.float_info.epsilon * math.fsum(abs(v) for v in values) + 2 * n * atol
    total = math.fsum(values)
    observed = math.fsum(values[:k])

    def diff_of_means(subset_sum: float) -> float:
        return subset_sum / k - (total - subset_sum) / m

    d_observed = abs(diff_of_means(observed))
    d_tol = tol * (1 / k + 1 / m)  # the sum tolerance carried over to D (D is linear in the sum)
    counts = {"greater": 0, "less": 0, "two-sided": 0}
    partitions = 0
    for subset in itertools.combinations(values, k):
        s = math.fsum(subset)
        partitions += 1
        counts["greater"] += s >= observed - tol
        counts["less"] += s <= observed + tol
        counts["two-sided"] += abs(diff_of_means(s)) >= d_observed - d_tol
    return {alt: c / partitions for alt, c in counts.items()}, counts, partitions


def association_atol(dim: int) -> float:
    """The per-value rounding bound eat() and sc_eat() use for ``dim``-dimensional vectors."""
    return 2 * (dim + 2) * sys.float_info.epsilon


def cosine(u, v) -> float:
    """cos(u, v) with scalar loops."""
    dot = math.fsum(float(p) * float(q) for p, q in zip(u, v))
    return dot / (
        math.sqrt(math.fsum(float(p) ** 2 for p in u)) * math.sqrt(math.fsum(float(q) ** 2 for q in v))
    )


def loop_associations(W, A, B) -> list[float]:
    """s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b) for each row w, with scalar loops."""
    return [
        math.fsum(cosine(w, a) for a in A) / len(A) - math.fsum(cosine(w, b) for b in B) / len(B) for w in W
    ]


def vectors_with_associations(values) -> np.ndarray:
    """2-D unit vectors w with s(w, UNIT_A, UNIT_B) = value (each |value| < sqrt(2))."""
    t = np.arccos(np.asarray(values, dtype=float) / math.sqrt(2)) - math.pi / 4
    return np.column_stack([np.cos(t), np.sin(t)])


def enumerated_counts(first, second, atol: float = 0.0) -> dict[str, int]:
    """The counts of :func:`brute_force_p_values` for up to about 24 values, vectorised: every subset sum
    of the pooled values is built by doubling (each sum adds its values in index order, so its rounding
    error is below a quarter of the tolerance) and the size-k ones are compared with the same rule."""
    values = np.concatenate([np.asarray(first, float), np.asarray(second, float)])
    k, n = len(first), values.size
    tol = 4 * n * sys.float_info.epsilon * math.fsum(abs(v) for v in values) + 2 * n * atol
    total, observed = math.fsum(values), math.fsum(values[:k])
    sums, sizes = np.zeros(1), np.zeros(1, dtype=np.int8)
    for v in values:
        sums, sizes = np.concatenate([sums, sums + v]), np.concatenate([sizes, sizes + 1])
    s = sums[sizes == k]
    d = s / k - (total - s) / (n - k)  # difference of means of each partition
    d_observed = abs(observed / k - (total - observed) / (n - k))
    return {
        "greater": int(np.count_nonzero(s >= observed - tol)),
        "less": int(np.count_nonzero(s <= observed + tol)),
        "two-sided": int(np.count_nonzero(np.abs(d) >= d_observed - tol * (1 / k + 1 / (n - k)))),
    }
