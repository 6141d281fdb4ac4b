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

Ties: a partition counts as reaching the observed statistic when its sum is within
``tolerance = 4 (k + m) ε Σ|v| + 2 (k + m) atol`` (ε = float64 machine epsilon) of the threshold: a
bound on the rounding error of any two summation orders, plus the rounding error ``atol`` of each value
itself (the EAT passes that of its cosines). Partitions whose true sums differ from the observed one by
less than this are counted as ties (in the conservative direction); for real embeddings this changes p
by far less than its last printed digit.

Exact integer arithmetic: before counting, each column is scaled by a power of two ``δ`` such that
``Σ|v| / δ < 2^58`` and rounded to int64 (values larger than ``2^5 δ`` keep every bit; a subset sum moves
by at most ``(k + m) δ / 2``, under 1/256 of the tolerance). Every subset sum is then an exact integer,
the tolerance is ``⌊tolerance / δ⌋`` and the three alternatives become integer thresholds on the subset
sum (the two-sided rule ``|(k + m) Σ_S - k Σ_v| ≥ |(k + m) Σ_obs - k Σ_v| - (k + m) tol`` multiplied out
in Python integers). No count depends on summation order, chunking, thread count or machine.

How the partitions are counted: exactly in :mod:`eatkit.stats.exact_counts` (integer subset sums, meet in
the middle, the C counter, the numba kernels and the numpy reference; the count store), or by drawing them
in :mod:`eatkit.stats.monte_carlo`. Their public names are importable from here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_values
from eatkit.stats.exact_counts import (EXACT_MAX_SUMS, NUMPY_EXACT_MAX_SUMS, count_below, IntThresholds, scaled_integers,
                                       check_exact_feasible, compiled, count_store, exact_cost)
from eatkit.stats.monte_carlo import MC_BATCH, monte_carlo_counts, check_monte_carlo_feasible, random_subsets
from eatkit.stats.options import check_permutations

#: the test, and the counting's public names (importable from here as before the counting had its modules)
__all__ = ["DEFAULT_MONTE_CARLO", "AUTO_EXACT_MAX_SUMS", "MC_BATCH", "PermutationOutcome", "group_permutation_test",
           "permutation_tests", "check_exact_feasible", "check_monte_carlo_feasible", "compiled", "count_store",
           "exact_cost", "random_subsets"]

#: Monte Carlo draws used when ``permutations="auto"`` cannot afford the exact count.
DEFAULT_MONTE_CARLO = 100_000
#: ``permutations="auto"`` counts exactly when at most this many subset sums must be listed (see
#: ``exact_cost``): up to 25 + 25 values (about 0.4 s of CPU with the C counter or the numba kernels, a few
#: seconds with numpy alone). The rule depends on the sizes only, never on what is installed, so the same
#: command gives an exact p, or the same seeded Monte Carlo p, on every machine.
AUTO_EXACT_MAX_SUMS = 2 * 2**25


@dataclass(frozen=True)
class PermutationOutcome:
    """The p-values of a two-group permutation test, for all three alternatives at once.

    Attributes
    ----------
    p_values : dict
        ``{"greater": p, "less": p, "two-sided": p}``.
    p_value_exact : bool
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
    p_value_exact: bool
    n_permutations: int
    n_partitions: int
    standard_errors: dict[str, float]
    counts: dict[str, int]
    tolerance: float
    seed: int | None

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
        "exact" counts all partitions (error, before any computing, beyond 32 + 32 values: see
        :func:`check_exact_feasible`); an int draws that many random partitions; "auto" is exact when it
        takes about a second or less (see ``AUTO_EXACT_MAX_SUMS``) and otherwise draws
        ``DEFAULT_MONTE_CARLO``. A number at least ``C(k + m, k)`` counts every partition instead
        (``p_value_exact`` True); a number whose estimated time exceeds ``MC_MAX_SECONDS`` is an error (see
        :func:`check_monte_carlo_feasible`).
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
    scaled = [scaled_integers(col, tol) for col, tol in zip(values.T, tolerances)]
    ints = np.column_stack([q for q, _ in scaled]) if scaled else np.zeros((n, 0), dtype=np.int64)
    thresholds = [IntThresholds.of(q, k, tol_q) for q, tol_q in scaled]
    if permutations == "exact":
        check_exact_feasible(k, m)
    cost = exact_cost(n, k)
    cheap = cost <= AUTO_EXACT_MAX_SUMS
    # as many random draws as there are partitions, or more: every partition is counted instead (exact,
    # recorded as such, and faster); this needs the exact count to be feasible at all
    enough = isinstance(permutations, int) and permutations >= n_partitions and \
        cost <= (EXACT_MAX_SUMS if compiled() else NUMPY_EXACT_MAX_SUMS)
    if permutations == "exact" or (permutations == "auto" and cheap) or enough:
        return _exact_outcomes(scaled, thresholds, tolerances, k, n_partitions)
    draws = DEFAULT_MONTE_CARLO if permutations == "auto" else int(permutations)
    check_monte_carlo_feasible(k, m, draws, len(scaled))
    key = int(generator.integers(0, 2**63))
    sampled = monte_carlo_counts(ints, k, draws, key, thresholds)
    outcomes = []
    for counts, tol in zip(sampled, tolerances):
        p_values = {alt: (c + 1) / (draws + 1) for alt, c in counts.items()}
        # binomial standard error of the reported p (never 0, also when no draw reached the observed value)
        errors = {alt: math.sqrt(p * (1 - p) / draws) for alt, p in p_values.items()}
        outcomes.append(PermutationOutcome(p_values, False, draws, n_partitions, errors, counts, tol, seed))
    return outcomes


def _exact_outcomes(scaled: list[tuple[np.ndarray, int]], thresholds: list[IntThresholds], tolerances: list[float],
                    k: int, n_partitions: int) -> list[PermutationOutcome]:
    """The outcomes of counting every partition, one per column."""
    outcomes = []
    for (q, _), t, tol in zip(scaled, thresholds, tolerances):
        counts = t.counts(count_below(q, k, t.needed()), n_partitions)
        p_values = {alt: c / n_partitions for alt, c in counts.items()}
        zeros = {alt: 0.0 for alt in counts}
        outcomes.append(PermutationOutcome(p_values, True, n_partitions, n_partitions, zeros, counts, tol, None))
    return outcomes
