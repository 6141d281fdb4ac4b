"""Bootstrap confidence intervals of d, and the specificity (false-positive) analysis."""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter

import numpy as np
import pytest
from stats_reference import loop_associations

from eatkit.stats import bootstrap_effect_size, eat, specificity


def _biased_sets(n_targets: int, n_attributes: int, seed: int) -> tuple[np.ndarray, ...]:
    """X near A's direction, Y near B's, in 10-D with unit-variance noise around the two directions."""
    g = np.random.default_rng(seed)
    a, b = np.eye(10)[0] * 2, np.eye(10)[1] * 2
    X = a + g.normal(size=(n_targets, 10))
    Y = b + g.normal(size=(n_targets, 10))
    A = a + g.normal(size=(n_attributes, 10))
    B = b + g.normal(size=(n_attributes, 10))
    return X, Y, A, B


# --- bootstrap --------------------------------------------------------------------------------------


def test_interval_contains_the_point_estimate_and_is_reported() -> None:
    X, Y, A, B = _biased_sets(8, 8, seed=0)
    d = eat(X, Y, A, B).effect_size
    ci = bootstrap_effect_size(X, Y, A, B, n_bootstrap=3000, rng=1)
    assert d > 1.0
    assert ci.low < d < ci.high
    assert ci.n_bootstrap == ci.distribution.size == 3000
    assert ci.low == pytest.approx(np.quantile(ci.distribution, 0.025))
    assert ci.high == pytest.approx(np.quantile(ci.distribution, 0.975))
    assert (ci.confidence_level, ci.method, ci.resampled, ci.seed) == (0.95, "percentile", ("X", "Y"), 1)


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    X, Y, A, B = _biased_sets(6, 5, seed=2)
    a = bootstrap_effect_size(X, Y, A, B, n_bootstrap=3000, rng=7)  # > one batch of 2048
    b = bootstrap_effect_size(X, Y, A, B, n_bootstrap=3000, rng=7)
    c = bootstrap_effect_size(X, Y, A, B, n_bootstrap=3000, rng=8)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert not np.array_equal(a.distribution, c.distribution)
    fresh = bootstrap_effect_size(X, Y, A, B, n_bootstrap=500)
    assert isinstance(fresh.seed, int)
    again = bootstrap_effect_size(X, Y, A, B, n_bootstrap=500, rng=fresh.seed)
    np.testing.assert_array_equal(fresh.distribution, again.distribution)


def test_interval_narrows_when_the_sets_grow() -> None:
    small = bootstrap_effect_size(*_biased_sets(8, 8, seed=3), n_bootstrap=2000, rng=0)
    large = bootstrap_effect_size(*_biased_sets(64, 64, seed=3), n_bootstrap=2000, rng=0)
    # 8x more stimuli: the width should shrink by about sqrt(8) = 2.8
    assert (large.high - large.low) < 0.6 * (small.high - small.low)


@pytest.mark.parametrize("sd", ["caliskan", "pooled"])
def test_no_resampled_set_reproduces_the_point_estimate(sd: str) -> None:
    X, Y, A, B = _biased_sets(7, 4, seed=4)
    d = eat(X, Y, A, B, sd=sd).effect_size
    ci = bootstrap_effect_size(X, Y, A, B, n_bootstrap=50, resample=(), sd=sd, rng=0)
    np.testing.assert_allclose(ci.distribution, d, rtol=1e-12)
    assert ci.low == pytest.approx(d) and ci.high == pytest.approx(d)


def _frequencies_match(distribution: np.ndarray, outcomes: list[float]) -> None:
    """Every resampled d is one of the equally likely enumerated outcomes, at its expected frequency."""
    values = np.unique(np.round(outcomes, 9))
    expected = Counter(np.round(outcomes, 9).tolist())
    # each resample maps to its enumerated value
    nearest = values[np.abs(distribution[:, None] - values[None, :]).argmin(axis=1)]
    np.testing.assert_allclose(nearest, distribution, atol=1e-9)
    counts = Counter(nearest.tolist())
    n = distribution.size
    for value, ways in expected.items():
        p = ways / len(outcomes)
        assert abs(counts[value] / n - p) <= 4 * math.sqrt(p * (1 - p) / n), (value, counts[value] / n, p)


def test_resampling_targets_draws_with_replacement_within_the_set() -> None:
    # Resampling X alone (3 stimuli): 27 equally likely index triples; d of each computed by loops.
    X, Y, A, B = _biased_sets(3, 4, seed=5)
    sx, sy = loop_associations(X, A, B), loop_associations(Y, A, B)
    outcomes = []
    for triple in itertools.product(range(3), repeat=3):
        group = [sx[i] for i in triple]
        outcomes.append((statistics.fmean(group) - statistics.fmean(sy)) / statistics.stdev(group + sy))
    ci = bootstrap_effect_size(X, Y, A, B, n_bootstrap=20_000, resample=("X",), rng=11)
    assert ci.resampled == ("X",)
    _frequencies_match(ci.distribution, outcomes)


def test_resampling_attributes_recomputes_every_association() -> None:
    # Resampling A alone (3 stimuli): s(w, A*, B) uses the multiset A* for every target.
    X, Y, A, B = _biased_sets(4, 3, seed=6)
    outcomes = []
    for triple in itertools.product(range(3), repeat=3):
        star = A[list(triple)]
        sx, sy = loop_associations(X, star, B), loop_associations(Y, star, B)
        outcomes.append((statistics.fmean(sx) - statistics.fmean(sy)) / statistics.stdev(sx + sy))
    ci = bootstrap_effect_size(X, Y, A, B, n_bootstrap=20_000, resample=("A",), rng=12)
    _frequencies_match(ci.distribution, outcomes)


# --- specificity (iEAT seed section 6) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sets", "alternative"),
    [
        ("gaussian", "greater"),
        ("gaussian", "two-sided"),
        ("biased", "greater"),  # re-partitioning destroys the original bias: still no excess positives
    ],
)
def test_false_positive_rates_are_near_alpha(sets: str, alternative: str) -> None:
    if sets == "gaussian":
        g = np.random.default_rng(20)
        X, Y, A, B = (g.normal(size=(8, 20)) for _ in range(4))
    else:
        X, Y, A, B = _biased_sets(8, 8, seed=21)
    n = 2000
    r = specificity(X, Y, A, B, n_splits=n, permutations="exact", alternative=alternative, rng=1)
    partitions = math.comb(16, 8)  # exact inner p-values are multiples of 1 / 12870
    for alpha, rate in r.false_positive_rates.items():
        expected = (math.ceil(alpha * partitions) - 1) / partitions  # P(p < alpha) for a uniform rank
        assert abs(rate - expected) <= 4 * math.sqrt(expected * (1 - expected) / n), (alpha, rate)
    assert sorted(r.false_positive_rates) == [0.01, 0.05, 0.1]
    assert r.p_values.size == r.effect_sizes.size == n
    assert ((r.p_values > 0) & (r.p_values <= 1)).all()
    assert r.alternative == alternative


def test_specificity_is_reproducible_with_a_seed() -> None:
    g = np.random.default_rng(22)
    X, Y, A, B = (g.normal(size=(6, 5)) for _ in range(4))
    a = specificity(X, Y, A, B, n_splits=40, permutations=500, rng=3, alphas=(0.2,))
    b = specificity(X, Y, A, B, n_splits=40, permutations=500, rng=3, alphas=(0.2,))
    np.testing.assert_array_equal(a.p_values, b.p_values)
    np.testing.assert_array_equal(a.effect_sizes, b.effect_sizes)
    assert (a.seed, a.permutations, list(a.false_positive_rates)) == (3, 500, [0.2])
    assert a.false_positive_rates[0.2] == float(np.mean(a.p_values < 0.2))
