"""Permutation tests for a difference between two groups of association values.

Every EAT-family p-value (WEAT/iEAT/SEAT level 1, SC-EAT and ML-EAT level 2, specificity analysis) is a
test of this one form: the pooled values ``v = first ∪ second`` are re-partitioned into two groups of the
original sizes ``k = len(first)`` and ``m = len(second)``, and the observed partition is compared with
all (or randomly sampled) re-partitions. The null distribution is over the ``C(k + m, k)`` partitions.

Because the group sizes are fixed, the EAT statistic ``s = Σ_first - Σ_second`` (Caliskan et al. 2017,
eq. 1 of the iEAT seed) and the difference of means ``D = mean_first - mean_second`` are both increasing
functions of the subset sum ``Σ_first``. So

* ``"greater"``: p = #{partitions S : Σ_S ≥ Σ_first} / #partitions,
* ``"less"``:    p = #{partitions S : Σ_S ≤ Σ_first} / #partitions,
* ``"two-sided"``: p = #{partitions S : |D(S)| ≥ |D_obs|} / #partitions, the difference of *means*
  being the statistic whose null expectation is 0 also for unequal group sizes. (For equal sizes this
  is |s(S)| ≥ |s_obs|.) We do not double the smaller tail: the |D| rule is a proper p-value, never
  exceeds 1, and is what the exact count gives directly.

The observed partition is one of the partitions, so an exact p is never below 1 / C(k + m, k).

Ties: subset sums computed in different orders differ by rounding. A partition counts as reaching the
observed statistic when its sum is within ``tolerance = 4 (k + m) ε Σ|v| + 2 (k + m) atol`` (ε =
float64 machine epsilon) of the threshold: a bound on the rounding error of any two summation orders,
plus the rounding error ``atol`` of each value itself (the EAT passes that of its cosines).
Partitions whose true sums differ from the observed one by less than this are counted as ties (in the
conservative direction); for real embeddings this changes p by far less than its last printed digit.

Exact counting never enumerates partitions: the values are split into two halves, every subset sum of
each half is listed by subset size (sorted), and pairs (left subset, right subset) of total size k whose
sums reach the threshold are counted with binary search ("meet in the middle"). That costs about
``2^(n/2)`` sums per half instead of ``C(n, k)`` partitions: 25 + 25 values (1.26e14 partitions) need
2 x 3.4e7 sums. Monte Carlo draws partitions uniformly, without replacement within a draw (a partial
Fisher-Yates shuffle of the indices, vectorised over draws), and reports ``(count + 1) / (draws + 1)``
(the observed partition counted as a draw; Phipson & Smyth 2010) with its Monte Carlo standard error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_values
from eatkit.stats.options import check_permutations

#: Monte Carlo draws used when ``permutations="auto"`` cannot afford the exact count.
DEFAULT_MONTE_CARLO = 100_000
#: ``permutations="auto"`` counts exactly when at most this many subset sums must be listed
#: (two halves of 22 values each: 1-2 s and about 100 MB on a 2-core machine).
AUTO_EXACT_MAX_SUMS = 2 * 2**22
#: ``permutations="exact"`` refuses inputs that would list more subset sums than this (about 3 GB).
EXACT_MAX_SUMS = 2 * 2**26
#: draws generated per vectorised Monte Carlo batch (small enough to stay in cache; part of the seeded
#: stream's layout, so changing it changes sampled p-values for a given seed)
MC_BATCH = 1 << 12


@dataclass(frozen=True)
class PermutationOutcome:
    """The p-values of a two-group permutation test, for all three alternatives at once.

    Attributes
    ----------
    p_values : dict
        ``{"greater": p, "less": p, "two-sided": p}``.
    exact : bool
        True when every partition was counted.
    n_permutations : int
        Partitions evaluated: all of them (exact) or the number of random draws (Monte Carlo).
    n_partitions : int
        Number of distinct partitions, ``C(k + m, k)``.
    standard_errors : dict
        Monte Carlo standard error of each p-value (0.0 when exact).
    counts : dict
        Partitions (or draws) that reached the observed statistic, per alternative.
    tolerance : float
        The tie tolerance on subset sums (see the module docstring).
    seed : int or None
        The seed of the random stream (Monte Carlo only; None when exact or when a Generator was passed).
    """

    p_values: dict[str, float]
    exact: bool
    n_permutations: int
    n_partitions: int
    standard_errors: dict[str, float]
    counts: dict[str, int]
    tolerance: float
    seed: int | None


def exact_cost(n: int, k: int) -> int:
    """Number of subset sums the exact count lists for ``k`` of ``n`` values (its time and memory)."""
    k = min(k, n - k)
    left = n // 2
    return _sums_up_to(left, k) + _sums_up_to(n - left, k)


def check_exact_feasible(k: int, m: int) -> None:
    """Refuse, before any computing, an exact count for ``k`` + ``m`` values that ``permutations="exact"``
    cannot afford.

    >>> check_exact_feasible(25, 25)
    """
    cost = exact_cost(k + m, k)
    if cost > EXACT_MAX_SUMS:
        raise EatkitError(
            f"an exact permutation test for {k} + {m} values would list {cost:.3g} subset sums "
            f"(about {cost * 8 * 3 / 1e9:.0f} GB); pass a number of Monte Carlo permutations instead"
        )


def group_permutation_test(
    first: Any,
    second: Any,
    *,
    permutations: str | int = "auto",
    rng: Any = None,
    atol: float = 0.0,
) -> PermutationOutcome:
    """Permutation p-values for ``mean(first) - mean(second)`` over re-partitions of the pooled values.

    Parameters
    ----------
    first, second : array_like, 1-D
        Association values of the two groups (e.g. s(x, A, B) for x in X and s(y, A, B) for y in Y).
    permutations : "auto", "exact" or int
        "exact" counts all partitions (error if that cannot fit in memory); an int draws that many
        random partitions; "auto" is exact when cheap (see ``AUTO_EXACT_MAX_SUMS``) and otherwise draws
        ``DEFAULT_MONTE_CARLO``.
    rng : None, int or numpy.random.Generator
        Randomness for Monte Carlo draws.
    atol : float
        Absolute rounding error of each value (e.g. of computed cosines); widens the tie tolerance by
        ``2 (k + m) atol`` so that values equal in exact arithmetic are treated as ties.

    Examples
    --------
    >>> out = group_permutation_test([3.0, 4.0, 5.0], [0.0, 1.0, 2.0], permutations="exact")
    >>> out.p_values["greater"], out.n_partitions   # only the observed split of 20 is as extreme
    (0.05, 20)
    """
    x = check_values("first", first)
    y = check_values("second", second)
    return permutation_tests(x[:, np.newaxis], y[:, np.newaxis], permutations=permutations, rng=rng, atol=atol)[0]


def permutation_tests(
    first: np.ndarray,
    second: np.ndarray,
    *,
    permutations: str | int = "auto",
    rng: Any = None,
    atol: float = 0.0,
) -> list[PermutationOutcome]:
    """:func:`group_permutation_test` for each column of ``first`` (k, q) and ``second`` (m, q).

    The columns are re-partitioned by the same rows (e.g. the SC-EATs of X and of Y both re-partition
    A ∪ B), so Monte Carlo draws are shared between columns: each column's p-value is valid on its own,
    and the draws cost one shuffle instead of q.
    """
    permutations = check_permutations(permutations)
    generator, seed = resolve_rng(rng)
    k, m = first.shape[0], second.shape[0]
    n = k + m
    n_partitions = math.comb(n, k)
    values = np.concatenate([first, second])
    eps = np.finfo(np.float64).eps
    tolerances = [4.0 * n * eps * float(np.abs(col).sum()) + 2.0 * n * atol for col in values.T]
    thresholds = [
        _thresholds(float(col[:k].sum()), float(col.sum()), k, m, tol) for col, tol in zip(values.T, tolerances)
    ]
    cost = exact_cost(n, k)
    if permutations == "exact":
        check_exact_feasible(k, m)
    if permutations == "exact" or (permutations == "auto" and cost <= AUTO_EXACT_MAX_SUMS):
        outcomes = []
        for col, t, tol in zip(values.T, thresholds, tolerances):
            counts = _count_exact(col, k, t)
            p_values = {alt: min(1.0, c / n_partitions) for alt, c in counts.items()}
            zeros = {alt: 0.0 for alt in counts}
            outcomes.append(PermutationOutcome(p_values, True, n_partitions, n_partitions, zeros, counts, tol, None))
        return outcomes
    draws = DEFAULT_MONTE_CARLO if permutations == "auto" else int(permutations)
    outcomes = []
    for counts, tol in zip(_monte_carlo_counts(values, k, draws, generator, thresholds), tolerances):
        p_values = {alt: (c + 1) / (draws + 1) for alt, c in counts.items()}
        # binomial standard error of the reported p (never 0, also when no draw reached the observed value)
        errors = {alt: math.sqrt(p * (1 - p) / draws) for alt, p in p_values.items()}
        outcomes.append(PermutationOutcome(p_values, False, draws, n_partitions, errors, counts, tol, seed))
    return outcomes


# --- thresholds -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Thresholds:
    """Subset-sum thresholds for the three alternatives, tolerance applied.

    ``greater`` counts Σ_S ≥ ge and ``less`` counts Σ_S ≤ le. The two-sided count is the near tail (the
    one-sided count on the observed side of the null centre) plus the far tail beyond the mirror image of
    the observed sum: Σ_S ≤ far when the observed sum lies above the centre (``far_is_upper`` False),
    Σ_S ≥ far when below. ``all_two_sided``: the observed |D| is within rounding of 0, so every
    partition is at least as extreme.
    """

    ge: float
    le: float
    far: float
    far_is_upper: bool
    all_two_sided: bool

    def mirrored(self, total: float) -> "_Thresholds":
        """Thresholds for the complement subsets: Σ_C = total - Σ_S."""
        far = total - self.far
        return _Thresholds(total - self.le, total - self.ge, far, not self.far_is_upper, self.all_two_sided)


def _thresholds(observed: float, total: float, k: int, m: int, tol: float) -> _Thresholds:
    # D(S) = Σ_S / k - (total - Σ_S) / m is 0 at the centre Σ_S = total k / (k + m); the partitions with
    # |D(S)| ≥ |D_obs| are those on the observed side beyond Σ_obs and those beyond its mirror image.
    centre = total * k / (k + m)
    mirror = 2.0 * centre - observed
    above = observed >= centre
    return _Thresholds(
        ge=observed - tol,
        le=observed + tol,
        far=mirror + tol if above else mirror - tol,
        far_is_upper=not above,
        all_two_sided=abs(observed - centre) <= tol,
    )


def _two_sided(near: int, far: int, total: int, t: _Thresholds) -> int:
    return total if t.all_two_sided else min(total, near + far)


def _count_sums(sums: np.ndarray, t: _Thresholds) -> dict[str, int]:
    """Counts for sampled subset sums."""
    ge = int(np.count_nonzero(sums >= t.ge))
    le = int(np.count_nonzero(sums <= t.le))
    if t.far_is_upper:
        near, far = le, int(np.count_nonzero(sums >= t.far))
    else:
        near, far = ge, int(np.count_nonzero(sums <= t.far))
    return {"greater": ge, "less": le, "two-sided": _two_sided(near, far, sums.size, t)}


# --- exact counting by meet in the middle -----------------------------------------------------------


def _sums_up_to(n: int, k: int) -> int:
    return sum(math.comb(n, j) for j in range(min(n, k) + 1))


def _subset_sums_by_size(values: np.ndarray, kmax: int) -> list[np.ndarray]:
    """Sorted sums of all subsets of ``values`` of each size 0..kmax (index = subset size).

    Built one value at a time: subsets of size j either skip the value or add it to a subset of size
    j - 1; both lists are sorted, and a stable sort of their concatenation is a linear merge (timsort).
    """
    sums = [np.zeros(1)]
    for v in values:
        top = min(len(sums), kmax)
        grown = [sums[0]]
        for j in range(1, top + 1):
            added = sums[j - 1] + v
            grown.append(np.sort(np.concatenate([sums[j], added]), kind="stable") if j < len(sums) else added)
        sums = grown
    return sums


def _count_exact(values: np.ndarray, k: int, t: _Thresholds) -> dict[str, int]:
    """Exact counts of size-k subsets reaching each threshold (meet in the middle)."""
    n = values.size
    # Count the smaller side: a size-k subset S has Σ_S ≥ c exactly when its complement (size n - k)
    # has Σ ≤ total - c; this halves the work when k > n / 2.
    if k > n - k:
        c = _count_exact(values, n - k, t.mirrored(float(values.sum())))
        return {"greater": c["less"], "less": c["greater"], "two-sided": c["two-sided"]}
    half = n // 2
    left = _subset_sums_by_size(values[:half], k)
    right = _subset_sums_by_size(values[half:], k)
    ge = le = far = pairs = 0
    for j, lsums in enumerate(left):
        if not 0 <= k - j < len(right):
            continue
        rsums = right[k - j]
        pairs += lsums.size * rsums.size
        ascending = lsums[::-1]  # queries in ascending order let numpy's binary search reuse its position
        ge += lsums.size * rsums.size - int(np.searchsorted(rsums, t.ge - ascending, side="left").sum())
        le += int(np.searchsorted(rsums, t.le - ascending, side="right").sum())
        if t.all_two_sided:
            continue
        if t.far_is_upper:
            far += lsums.size * rsums.size - int(np.searchsorted(rsums, t.far - ascending, side="left").sum())
        else:
            far += int(np.searchsorted(rsums, t.far - ascending, side="right").sum())
    near = le if t.far_is_upper else ge
    return {"greater": ge, "less": le, "two-sided": _two_sided(near, far, pairs, t)}


# --- Monte Carlo ------------------------------------------------------------------------------------


def _monte_carlo_counts(
    values: np.ndarray, k: int, draws: int, rng: np.random.Generator, thresholds: list[_Thresholds]
) -> list[dict[str, int]]:
    """Counts, per column of ``values`` (n, q), of ``draws`` uniformly random size-k row subsets (each
    drawn without replacement) whose sums reach the column's thresholds. Memory is bounded by the batch.

    Vectorised partial Fisher-Yates: for position i = 0..r-1, swap column i with a uniform column in
    [i, n). Only r = min(k, n - k) positions are shuffled; when the complement is the smaller side its
    sum is subtracted from the total.
    """
    n, q = values.shape
    r = min(k, n - k)
    total = values.sum(axis=0)
    counts = [{"greater": 0, "less": 0, "two-sided": 0} for _ in range(q)]
    base = np.arange(n, dtype=np.int8 if n < 2**7 else np.int16 if n < 2**15 else np.int64)
    for start in range(0, draws, MC_BATCH):
        b = min(MC_BATCH, draws - start)
        perm = np.tile(base, (b, 1))
        rows = np.arange(b)
        for i in range(r):
            j = rng.integers(i, n, size=b)
            swapped = perm[rows, j]
            perm[rows, j] = perm[:, i]
            perm[:, i] = swapped
        chosen = perm[:, :r]
        for c in range(q):
            sums = values[chosen, c].sum(axis=1)
            batch_counts = _count_sums(sums if r == k else total[c] - sums, thresholds[c])
            for alt, value in batch_counts.items():
                counts[c][alt] += value
    return counts
