"""MaxSkew@k and NDKL with a permutation null and a bootstrap CI (eatkit.stats.ranking.skew_uncertainty):
calibration of p under a group-blind model, coverage of the CI under a group-aware one."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import optimize, stats

from eatkit.errors import EatkitError
from eatkit.stats.ranking import max_skew, ndkl, skew_uncertainty

GROUPS = np.array(["a", "b", "c"])


def test_observed_values_are_the_measures_of_the_ranking():
    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=40), GROUPS[rng.integers(0, 3, 40)]
    ranked = labels[np.argsort(-scores, kind="stable")]
    desired = {"a": 0.5, "b": 0.3, "c": 0.2}
    for d in (None, desired):
        r = skew_uncertainty(scores, labels, 10, d, permutations=10, n_bootstrap=10, rng=1)
        assert r.max_skew == max_skew(ranked, 10, d) and r.ndkl == ndkl(ranked, d)
    assert r.desired == desired


def test_permutation_p_approaches_the_enumerated_p():
    scores, labels = np.array([0.9, 0.8, 0.5, 0.4, 0.2, 0.1]), np.array(list("abaabb"))
    observed = max_skew(labels, 2)
    shuffles = set(itertools.permutations(labels))
    exact = np.mean([max_skew(list(s), 2) >= observed - 1e-12 for s in shuffles])
    r = skew_uncertainty(scores, labels, 2, permutations=20_000, n_bootstrap=1, rng=3)
    assert r.p_max_skew == pytest.approx(exact, abs=0.01)


def test_p_is_calibrated_under_a_group_blind_model():
    # random similarities: every ranking is group-blind; 200 simulations, seeded
    rng = np.random.default_rng(38)
    labels = np.repeat(GROUPS, [60, 50, 40])
    p_skew, p_ndkl = [], []
    for i in range(200):
        r = skew_uncertainty(rng.normal(size=labels.size), labels, 30, permutations=200, n_bootstrap=1, rng=i)
        p_skew.append(r.p_max_skew)
        p_ndkl.append(r.p_ndkl)
    # NDKL is (almost) continuous: its p is uniform
    assert stats.kstest(p_ndkl, "uniform").pvalue > 0.05
    # MaxSkew@k is a function of top-k counts (ties): its p is uniform up to conservative ties, never
    # smaller than uniform (one-sided KS: empirical CDF above the uniform's)
    assert stats.kstest(p_skew, "uniform", alternative="greater").pvalue > 0.05
    assert np.mean(np.array(p_skew) <= 0.05) <= 0.08


def test_bootstrap_ci_covers_the_true_skew():
    # group-aware model: images of groups a, b, c (probability 1/3 each), scores N(mu_g, 1); the true
    # MaxSkew at the top fraction q is ln(P(score > t | a) / q), t the population's (1 - q) quantile
    mu, q, n = np.array([0.5, 0.0, 0.0]), 0.2, 400
    threshold = optimize.brentq(lambda t: np.mean(stats.norm.sf(t - mu)) - q, -5, 5)
    true = np.log(stats.norm.sf(threshold - mu[0]) / q)
    desired = dict.fromkeys(GROUPS.tolist(), 1 / 3)
    rng = np.random.default_rng(1)
    covered = 0
    for i in range(200):
        groups = rng.integers(0, 3, n)
        r = skew_uncertainty(rng.normal(mu[groups], 1), GROUPS[groups], int(q * n), desired, permutations=1,
                             n_bootstrap=200, rng=i)
        covered += r.max_skew_ci[0] <= true <= r.max_skew_ci[1]
    assert 0.93 <= covered / 200 <= 0.97


@pytest.mark.parametrize(("kw", "message"), [
    ({"k": 0}, "k must be an integer from 1 to 4"),
    ({"groups": ["a", "b"]}, "one length"),
    ({"desired": {"a": 0.2, "b": 0.2}}, "sum to 1"),
    ({"permutations": 0}, "permutations must be a positive integer"),
    ({"scores": [0.1, np.nan, 0.2, 0.3]}, "non-finite"),
])
def test_bad_inputs(kw, message):
    call = {"scores": [0.4, 0.3, 0.2, 0.1], "groups": list("abab"), "k": 2, **kw}
    with pytest.raises(EatkitError, match=message):
        skew_uncertainty(call.pop("scores"), call.pop("groups"), call.pop("k"), **call)
