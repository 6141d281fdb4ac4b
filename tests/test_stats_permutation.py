"""The two-group permutation test: exact counts vs brute force, Monte Carlo vs exact, ties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from stats_reference import brute_force_p_values

from eatkit.stats import group_permutation_test
from eatkit.stats import permutation
from eatkit.stats.permutation import DEFAULT_MONTE_CARLO

ALTERNATIVES = ("greater", "less", "two-sided")
SIZES = range(2, 11)


def _values(k: int, m: int, seed: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    return g.normal(shift, 1.0, size=k), g.normal(0.0, 1.0, size=m)


def _assert_within_4se(sampled: dict, exact: dict, draws: int) -> None:
    for alt in ALTERNATIVES:
        p = exact[alt]
        se = math.sqrt(p * (1 - p) / draws) + 1 / draws  # + the (count + 1) / (draws + 1) offset
        assert abs(sampled[alt] - p) <= 4 * se, (alt, sampled[alt], p, se)


# --- exact counting == enumeration ------------------------------------------------------------------


@pytest.mark.parametrize("k", SIZES)
@pytest.mark.parametrize("m", SIZES)
def test_exact_equals_brute_force_on_all_small_sizes(k: int, m: int) -> None:
    # a shift of 0.3 spreads the observed statistic over both tails across the grid
    x, y = _values(k, m, seed=100 * k + m, shift=0.3)
    p_ref, counts_ref, partitions = brute_force_p_values(x, y)
    out = group_permutation_test(x, y, permutations="exact")
    assert out.p_value_exact is True
    assert out.n_partitions == out.n_permutations == partitions == math.comb(k + m, k)
    assert out.counts == counts_ref
    assert out.p_values == p_ref
    assert out.standard_errors == {alt: 0.0 for alt in ALTERNATIVES}
    assert out.seed is None


@pytest.mark.parametrize(("k", "m"), [(1, 1), (1, 6), (6, 1), (1, 25), (3, 40), (40, 3), (4, 22), (21, 5)])
def test_exact_equals_brute_force_with_a_small_group(k: int, m: int) -> None:
    # many values but few partitions: the subset sums are listed only up to size min(k, m)
    x, y = _values(k, m, seed=k + 1000 * m, shift=0.5)
    p_ref, counts_ref, _ = brute_force_p_values(x, y)
    out = group_permutation_test(x, y)  # "auto" must choose the exact count here
    assert out.p_value_exact is True
    assert out.counts == counts_ref
    assert out.p_values == p_ref


@pytest.mark.parametrize(("k", "m"), [(4, 4), (7, 3), (2, 9), (10, 10)])
def test_auto_is_exact_for_small_sizes(k: int, m: int) -> None:
    x, y = _values(k, m, seed=7)
    auto = group_permutation_test(x, y)
    assert auto.p_value_exact is True
    assert auto.p_values == brute_force_p_values(x, y)[0]


def test_docstring_example_most_extreme_partition() -> None:
    out = group_permutation_test([3.0, 4.0, 5.0], [0.0, 1.0, 2.0], permutations="exact")
    # only the observed split reaches sum 12; "less": all 20; two-sided: {3,4,5} and its mirror {0,1,2}
    assert out.counts == {"greater": 1, "less": 20, "two-sided": 2}
    assert out.p_values == {"greater": 1 / 20, "less": 1.0, "two-sided": 2 / 20}


def test_tolerance_is_the_documented_bound() -> None:
    x, y = np.array([0.5, -1.5, 2.0]), np.array([0.25, -4.0])
    out = group_permutation_test(x, y, permutations="exact")
    assert out.tolerance == 4 * 5 * np.finfo(float).eps * 8.25


# --- ties -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("permutations", ["exact", 5000])
def test_all_equal_values_give_p_one(permutations) -> None:
    out = group_permutation_test(np.full(6, 0.3), np.full(4, 0.3), permutations=permutations, rng=0)
    assert out.p_values == {"greater": 1.0, "less": 1.0, "two-sided": 1.0}


@pytest.mark.parametrize("permutations", ["exact", 5000])
def test_same_multiset_in_both_groups_is_two_sided_p_one(permutations) -> None:
    # duplicated values; both groups hold {0.1, 0.2, 0.7}, so D_obs = 0 and every partition is as extreme
    out = group_permutation_test([0.1, 0.2, 0.7], [0.7, 0.1, 0.2], permutations=permutations, rng=0)
    assert out.p_values["two-sided"] == 1.0


def test_rounding_ties_are_counted() -> None:
    # 2-subsets of {0.1, 0.2, 0.3, 0.0}: sums .3 (observed, 0.1 + 0.2 = 0.30000000000000004 in float),
    # .4, .1, .5, .2 and .3 (0.3 + 0.0 = 0.29999999999999999): a tie the tolerance must count.
    out = group_permutation_test([0.1, 0.2], [0.3, 0.0], permutations="exact")
    assert out.counts["greater"] == 4  # .3, .4, .5, .3
    assert out.counts["less"] == 4  # .3, .1, .2, .3
    assert out.p_values["greater"] == 4 / 6


def test_heavily_tied_values_match_brute_force() -> None:
    g = np.random.default_rng(3)
    grid = np.array([0.1, 0.2, 0.3, 0.6])  # decimal sums that tie only up to rounding
    x, y = g.choice(grid, size=9), g.choice(grid, size=7)
    out = group_permutation_test(x, y, permutations="exact")
    assert out.counts == brute_force_p_values(x, y)[1]


@pytest.mark.parametrize(("k", "m"), [(3, 3), (5, 8), (10, 4), (13, 12)])
def test_observed_partition_always_counted(k: int, m: int) -> None:
    # the first group holds the k largest values: the observed split is the only one that extreme
    values = np.sort(np.random.default_rng(k * m).normal(size=k + m))[::-1]
    out = group_permutation_test(values[:k], values[k:], permutations="exact")
    total = math.comb(k + m, k)
    assert out.counts["greater"] == 1
    assert out.p_values["greater"] == 1 / total
    assert out.p_values["less"] == 1.0
    assert min(out.p_values.values()) >= 1 / total


# --- Monte Carlo ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "m", "seed"),
    [(5, 5, 0), (8, 6, 1), (3, 10, 2), (10, 3, 3), (12, 12, 4), (12, 12, 5), (15, 7, 6)],
)
def test_monte_carlo_within_4_standard_errors_of_exact(k: int, m: int, seed: int) -> None:
    x, y = _values(k, m, seed, shift=0.5)
    exact = group_permutation_test(x, y, permutations="exact").p_values
    draws = min(20_000, math.comb(k + m, k) - 1)  # (as many draws as partitions are counted exactly)
    out = group_permutation_test(x, y, permutations=draws, rng=seed)
    assert (out.p_value_exact, out.n_permutations, out.n_partitions, out.seed) == (
        False,
        draws,
        math.comb(k + m, k),
        seed,
    )
    _assert_within_4se(out.p_values, exact, draws)
    for alt in ALTERNATIVES:
        c = out.counts[alt]
        assert out.p_values[alt] == (c + 1) / (draws + 1)
        p = (c + 1) / (draws + 1)
        assert out.standard_errors[alt] == pytest.approx(math.sqrt(p * (1 - p) / draws))


def test_monte_carlo_draws_every_subset_uniformly() -> None:
    # With values 1, 2, 4, ..., 32 every 3-subset has its own sum, so the "greater" p of a split is the
    # share of the 20 subsets ranking at or above it: sampled p must track it for every observed split.
    values = 2.0 ** np.arange(6)
    sums = sorted(sum(c) for c in itertools.combinations(values, 3))
    draws = 20_000
    for i, chosen in enumerate(itertools.combinations(range(6), 3)):
        mask = np.isin(np.arange(6), chosen)
        out = group_permutation_test(values[mask], values[~mask], permutations=draws, rng=i)
        p = sum(s >= values[mask].sum() for s in sums) / 20
        assert abs(out.p_values["greater"] - p) <= 4 * math.sqrt(p * (1 - p) / draws) + 1 / draws, chosen


def test_exact_22_plus_22_agrees_with_a_million_draws() -> None:
    x, y = _values(22, 22, seed=22, shift=0.2)
    exact = group_permutation_test(x, y, permutations="exact")
    assert exact.p_value_exact and exact.n_partitions == math.comb(44, 22)
    assert 0.01 < exact.p_values["greater"] < 0.99  # a p-value with a non-trivial standard error
    sampled = group_permutation_test(x, y, permutations=10**6, rng=2022)
    _assert_within_4se(sampled.p_values, exact.p_values, 10**6)


@pytest.mark.slow
def test_exact_25_plus_25_agrees_with_a_million_draws() -> None:
    x, y = _values(25, 25, seed=25, shift=0.2)
    exact = group_permutation_test(x, y, permutations="exact")
    assert exact.p_value_exact and exact.n_partitions == math.comb(50, 25)
    sampled = group_permutation_test(x, y, permutations=10**6, rng=2025)
    _assert_within_4se(sampled.p_values, exact.p_values, 10**6)


def test_auto_switches_to_monte_carlo_above_about_a_second_of_counting() -> None:
    # 25 + 25, whether or not the compiled kernels are installed (the rule depends on the sizes only)
    largest = 25
    x, y = _values(largest + 1, largest + 1, seed=23)
    out = group_permutation_test(x, y, rng=5)
    assert (out.p_value_exact, out.n_permutations, out.seed) == (False, DEFAULT_MONTE_CARLO, 5)
    assert permutation.exact_cost(2 * largest, largest) <= permutation.AUTO_EXACT_MAX_SUMS < permutation.exact_cost(
        2 * largest + 2, largest + 1)


def test_seed_recorded_when_rng_is_none_repeats_the_run() -> None:
    x, y = _values(20, 20, seed=9)
    first = group_permutation_test(x, y, permutations=3000)
    assert isinstance(first.seed, int)
    again = group_permutation_test(x, y, permutations=3000, rng=first.seed)
    assert again.counts == first.counts


def test_generator_is_used_as_given() -> None:
    x, y = _values(20, 20, seed=9)
    a = group_permutation_test(x, y, permutations=3000, rng=np.random.default_rng(11))
    b = group_permutation_test(x, y, permutations=3000, rng=np.random.default_rng(11))
    c = group_permutation_test(x, y, permutations=3000, rng=np.random.default_rng(12))
    assert a.seed is None
    assert a.counts == b.counts
    assert a.counts != c.counts
