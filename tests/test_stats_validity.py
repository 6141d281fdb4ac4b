"""Stimulus influence, stability over the sets, power and vector-set diagnostics (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats import eat
from eatkit.stats.influence import stimulus_influence

ROLES = ("X", "Y", "A", "B")


def _sets(seed: int, sizes=(6, 5, 4, 5), dim: int = 12, shift: float = 0.4):
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=dim)
    X = rng.normal(size=(sizes[0], dim)) + shift * axis
    Y = rng.normal(size=(sizes[1], dim)) - shift * axis
    A = rng.normal(size=(sizes[2], dim)) + shift * axis
    B = rng.normal(size=(sizes[3], dim)) - shift * axis
    return {"X": X, "Y": Y, "A": A, "B": B}


@pytest.mark.parametrize("sd", ["caliskan", "pooled"])
@pytest.mark.parametrize("seed", [0, 1])
def test_leave_one_out_equals_recomputation(seed, sd):
    sets = _sets(seed)
    r = stimulus_influence(*(sets[k] for k in ROLES), sd=sd, rng=3, loo_permutations=500)
    assert r.effect_size == eat(*(sets[k] for k in ROLES), sd=sd).effect_size
    for role in ROLES:
        assert r.leave_one_out[role].shape == (len(sets[role]),)
        for i in range(len(sets[role])):
            reduced = dict(sets, **{role: np.delete(sets[role], i, axis=0)})
            expected = eat(*(reduced[k] for k in ROLES), sd=sd, permutations="exact")
            assert abs(r.leave_one_out[role][i] - expected.effect_size) <= 1e-12
            # the partitions are few enough to be counted exactly: the same p as eat's
            assert r.loo_p_value_exact
            assert r.leave_one_out_p[role][i] == pytest.approx(expected.p_value, rel=1e-12)


def test_ranked_and_flips():
    sets = _sets(2, sizes=(8, 8, 6, 6), shift=0.3)
    r = stimulus_influence(*(sets[k] for k in ROLES), rng=0)
    ranked = r.ranked()
    assert len(ranked) == sum(len(sets[k]) for k in ROLES)
    changes = [abs(x.change) for x in ranked]
    assert changes == sorted(changes, reverse=True)
    top = ranked[0]
    assert top.effect_size == r.leave_one_out[top.role][top.index]
    significant = r.p_value < r.alpha
    assert all((f.p_value < r.alpha) != significant for f in r.flips())
    assert {(f.role, f.index) for f in r.flips()} == {
        (role, i) for role in ROLES for i, p in enumerate(r.leave_one_out_p[role]) if (p < 0.05) != significant}


def test_leave_one_out_monte_carlo_is_seeded():
    sets = _sets(4, sizes=(17, 17, 3, 3))  # 16 + 17 values: beyond the cheap exact counts
    a = stimulus_influence(*(sets[k] for k in ROLES), rng=5, loo_permutations=999)
    b = stimulus_influence(*(sets[k] for k in ROLES), rng=5, loo_permutations=999)
    assert not a.loo_p_value_exact and a.seed == 5
    for role in ROLES:
        np.testing.assert_array_equal(a.leave_one_out_p[role], b.leave_one_out_p[role])
        exact = [eat(*(dict(sets, **{role: np.delete(sets[role], i, axis=0)})[k] for k in ROLES)).p_value
                 for i in range(len(sets[role]))]
        # Monte Carlo p within 5 standard errors of the exact one
        se = np.sqrt(np.maximum(np.array(exact) * (1 - np.array(exact)), 1e-3) / 999)
        assert np.all(np.abs(a.leave_one_out_p[role] - exact) <= 5 * se + 2 / 1000)


def test_influence_rejects_too_small_sets():
    sets = _sets(0, sizes=(2, 5, 4, 5))
    with pytest.raises(EatkitError, match="set 'X' has 2 stimuli; this test needs at least 3"):
        stimulus_influence(*(sets[k] for k in ROLES))


# --- power ------------------------------------------------------------------------------------------

from eatkit.stats.permutation import permutation_tests  # noqa: E402
from eatkit.stats.power import (  # noqa: E402
    caliskan_effect_size,
    minimum_detectable_effect,
    required_set_size,
)


@pytest.mark.parametrize("n", [8, 16, 25, 32])
def test_minimum_detectable_effect_agrees_with_statsmodels(n):
    from statsmodels.stats.power import TTestIndPower

    m = minimum_detectable_effect(n, n, alpha=0.05, power=0.8, alternative="greater")
    reference = TTestIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=1.0,
                                            alternative="larger")
    assert m.cohens_d == pytest.approx(reference, rel=0.10)
    assert m.t_test_cohens_d == pytest.approx(reference, rel=1e-6)
    assert m.effect_size == pytest.approx(caliskan_effect_size(m.cohens_d, n, n))
    assert not m.p_value_exact and m.permutations == 1999


@pytest.mark.parametrize("n", [8, 16, 25, 32])
def test_permutation_test_at_the_minimum_detectable_effect_has_the_power(n):
    """2,000 fresh normal data sets shifted by the MDE: eatkit's own permutation test (the same 1,999
    Monte Carlo partitions a test, one column a data set) rejects in 80% +- 3% of them."""
    m = minimum_detectable_effect(n, n)
    rng = np.random.default_rng(12345)
    first = rng.standard_normal((n, 2000)) + m.cohens_d
    second = rng.standard_normal((n, 2000))
    outcomes = permutation_tests(first, second, permutations=1999, rng=7)
    rate = np.mean([o.p_values["greater"] < 0.05 for o in outcomes])
    assert abs(rate - 0.8) <= 0.03
    # and at half that effect, far less
    half = permutation_tests(second + m.cohens_d / 2, first - m.cohens_d, permutations=1999, rng=8)
    assert np.mean([o.p_values["greater"] < 0.05 for o in half]) < 0.5


def test_minimum_detectable_effect_exact_and_alternatives():
    exact = minimum_detectable_effect(4, 4)
    assert exact.p_value_exact  # C(8, 4) = 70 partitions
    # the smallest p of 4 + 4 is 1/70: with alpha 0.01 nothing is detectable
    with pytest.raises(EatkitError, match="no p-value is below alpha=0.01"):
        minimum_detectable_effect(4, 4, alpha=0.01)
    # "less" is the mirror image of "greater"; two-sided needs a larger effect
    assert minimum_detectable_effect(8, 8, alternative="less").cohens_d == minimum_detectable_effect(8, 8).cohens_d
    two = minimum_detectable_effect(16, 16, alternative="two-sided", n_simulations=1000)
    assert two.cohens_d > minimum_detectable_effect(16, 16, n_simulations=1000).cohens_d
    assert two.cohens_d == pytest.approx(two.t_test_cohens_d, rel=0.1)


def test_required_set_size_is_the_smallest_detecting_size():
    n = required_set_size(1.0, n_simulations=1000)
    assert minimum_detectable_effect(n, n, n_simulations=1000).cohens_d <= 1.0
    assert minimum_detectable_effect(n - 1, n - 1, n_simulations=1000).cohens_d > 1.0
    with pytest.raises(EatkitError, match="cohens_d must be a positive effect size"):
        required_set_size(0.0)


def test_caliskan_effect_size_matches_simulated_caliskan_d():
    from eatkit.stats import cohens_d

    rng = np.random.default_rng(0)
    x = rng.standard_normal((20000, 25)) + 0.8
    y = rng.standard_normal((20000, 25))
    simulated = np.median(cohens_d(x, y))
    assert caliskan_effect_size(0.8, 25, 25) == pytest.approx(simulated, abs=0.01)


# --- stability and reliability ----------------------------------------------------------------------

from eatkit.stats.association import cosine_matrix  # noqa: E402
from eatkit.stats.stability import cronbach_alpha, split_half_reliability, stimulus_stability  # noqa: E402


def _cos(sets):
    return {t + a: cosine_matrix(sets[t], sets[a]) for t in "XY" for a in "AB"}


def test_cronbach_alpha_equals_the_item_covariance_formula():
    sets = _sets(5, sizes=(5, 4, 3, 4))
    cos = _cos(sets)
    targets = np.vstack([sets["X"], sets["Y"]])
    unit = lambda v: v / np.linalg.norm(v)  # noqa: E731
    items = np.array([[unit(w) @ unit(a) - unit(w) @ unit(b) for a in sets["A"] for b in sets["B"]] for w in targets])
    c = np.cov(items, rowvar=False)  # (items, items), ddof 1
    k = c.shape[0]
    expected = k / (k - 1) * (1 - np.trace(c) / c.sum())
    assert cronbach_alpha(cos) == pytest.approx(expected, rel=1e-12)


def test_split_half_of_duplicated_attributes_is_one():
    sets = _sets(6, sizes=(5, 5, 3, 3))
    twice = dict(sets, A=np.vstack([sets["A"][:1]] * 4), B=np.vstack([sets["B"][:1]] * 4))
    assert split_half_reliability(_cos(twice), 50, np.random.default_rng(0)) == pytest.approx(1.0, abs=1e-12)
    # unrelated random attributes: far from 1
    noise = _sets(7, sizes=(10, 10, 8, 8), dim=200, shift=0.0)
    assert split_half_reliability(_cos(noise), 200, np.random.default_rng(0)) < 0.8


def test_subsamples_of_the_whole_sets_are_the_full_test():
    sets = _sets(8, sizes=(3, 3, 2, 2))
    st = stimulus_stability(*(sets[k] for k in ROLES), fraction=0.9, rng=0, n_subsamples=20, n_bootstrap=200)
    full = eat(*(sets[k] for k in ROLES))
    assert st.subsample_sizes == {"X": 3, "Y": 3, "A": 2, "B": 2}
    assert np.allclose(st.subsample_effect_sizes, full.effect_size, rtol=0, atol=1e-12)
    assert st.verdict_kept == 1.0 and st.effect_size == full.effect_size


def test_stability_of_a_strong_and_of_a_null_effect():
    strong = _sets(9, sizes=(12, 12, 8, 8), dim=20, shift=1.0)
    st = stimulus_stability(*(strong[k] for k in ROLES), rng=1, n_subsamples=200, n_bootstrap=500)
    assert st.significant and st.verdict_kept > 0.95 and st.bootstrap_same_sign > 0.95
    assert st.bootstrap_interval[0] < st.effect_size < st.bootstrap_interval[1]
    assert st.cronbach_alpha > 0.8 and st.split_half > 0.8
    null = _sets(10, sizes=(12, 12, 8, 8), dim=200, shift=0.0)
    st0 = stimulus_stability(*(null[k] for k in ROLES), rng=1, n_subsamples=200, n_bootstrap=500)
    assert not st0.significant and st0.verdict_kept > 0.5
    assert st0.bootstrap_interval[0] < 0 < st0.bootstrap_interval[1]
    # seeded: the same numbers again
    again = stimulus_stability(*(null[k] for k in ROLES), rng=1, n_subsamples=200, n_bootstrap=500)
    np.testing.assert_array_equal(again.subsample_p_values, st0.subsample_p_values)
    assert again.bootstrap_interval == st0.bootstrap_interval and again.split_half == st0.split_half


def test_stability_rejects_bad_options():
    sets = _sets(0)
    with pytest.raises(EatkitError, match="fraction must lie strictly between 0 and 1, got 1.0"):
        stimulus_stability(*(sets[k] for k in ROLES), fraction=1.0)
    with pytest.raises(EatkitError, match="n_subsamples must be a positive integer"):
        stimulus_stability(*(sets[k] for k in ROLES), n_subsamples=0)


def test_reference_is_used_and_checked():
    sets = _sets(11)
    vectors = [sets[k] for k in ROLES]
    full = eat(*vectors, permutations=999, rng=4)
    r = stimulus_influence(*vectors, reference=full, rng=1)
    assert r.p_value == full.p_value  # a sampled p, taken from the reference
    st = stimulus_stability(*vectors, reference=full, rng=1, n_subsamples=10, n_bootstrap=100)
    assert st.p_value == full.p_value
    with pytest.raises(EatkitError, match="reference must be the EAT of the same sets"):
        stimulus_influence(*vectors, reference=eat(*vectors, sd="pooled"))
    with pytest.raises(EatkitError, match="reference must be the EAT of the same sets"):
        stimulus_stability(vectors[1], vectors[0], *vectors[2:], reference=full)


@pytest.mark.parametrize("call, message", [
    (lambda s: stimulus_influence(*s, alpha=1.5), "alpha must lie strictly between 0 and 1, got 1.5"),
    (lambda s: stimulus_influence(*s, loo_permutations=0), "loo_permutations must be a positive integer"),
    (lambda s: stimulus_stability(*s, alpha=0), "alpha must lie strictly between 0 and 1, got 0"),
    (lambda s: minimum_detectable_effect(1, 5), "power needs at least 2 values in each group, got 1 and 5"),
    (lambda s: minimum_detectable_effect(5, 5, power=1.0), "power must lie strictly between 0 and 1, got 1.0"),
    (lambda s: minimum_detectable_effect(5, 5, alternative="up"), "alternative must be one of"),
    (lambda s: minimum_detectable_effect(5.5, 5), "n_x must be a positive integer"),
])
def test_bad_options_are_one_line_errors(call, message):
    with pytest.raises(EatkitError, match=message):
        call([_sets(0)[k] for k in ROLES])


def test_welch_runs_use_welch_throughout():
    from eatkit.stats.differential import welch_p_values

    sets = _sets(12, sizes=(8, 8, 5, 5))
    vectors = [sets[k] for k in ROLES]
    full = eat(*vectors, p_method="welch")
    r = stimulus_influence(*vectors, p_method="welch", reference=full)
    without = eat(vectors[0][1:], *vectors[1:], p_method="welch")
    assert r.leave_one_out_p["X"][0] == pytest.approx(without.p_value, rel=1e-12)
    st = stimulus_stability(*vectors, p_method="welch", reference=full, fraction=0.9, n_subsamples=30, rng=0,
                            n_bootstrap=100)
    assert st.subsample_sizes == {"X": 8, "Y": 8, "A": 5, "B": 5}  # every subsample is the whole test
    np.testing.assert_allclose(st.subsample_p_values, full.p_value, rtol=1e-9)
    assert welch_p_values(*full.associations, 1)["greater"] == full.p_value
