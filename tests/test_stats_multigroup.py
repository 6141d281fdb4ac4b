"""SAME and the generalised WEAT (eatkit.stats.multigroup) against EmbeddingBiasScores' definitions written
out here independently (word by word, loops), and their permutation p against brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats.multigroup import generalized_weat, same


def cos(u, v):
    return float(np.dot(u, v) / math.sqrt(np.dot(u, u) * np.dot(v, v)))


def centre(vectors):
    return np.mean([np.asarray(v) / np.linalg.norm(v) for v in vectors], axis=0)


def reference_same_components(attribute_sets):
    # Schröder et al.: d_1 = c(A_1) - c(A_2); d_j = c(A_1) - c(A_j) minus its projections on the earlier ones
    components = [centre(attribute_sets[0]) - centre(attribute_sets[1])]
    for j in range(2, len(attribute_sets)):
        d = centre(attribute_sets[0]) - centre(attribute_sets[j])
        for earlier in components:
            e = earlier / np.linalg.norm(earlier)
            d = d - np.dot(d, e) * e
        components.append(d)
    return components


def reference_same(targets, attribute_sets):
    components = reference_same_components(attribute_sets)
    biases = []
    for t in targets:
        b = abs(cos(t, components[0]))
        for d in components[1:]:
            b += abs(cos(t, d)) * np.linalg.norm(d)
        biases.append(b)
    return float(np.mean(biases)), biases


def reference_generalized_weat(target_sets, attribute_sets):
    # Swinger et al. 2019: Σ_i <mean(X_i) - mean_j mean(X_j), mean(A_i) - mean_j mean(A_j)>, unit vectors
    x_means = [centre(x) for x in target_sets]
    a_means = [centre(a) for a in attribute_sets]
    x_bar, a_bar = np.mean(x_means, axis=0), np.mean(a_means, axis=0)
    return float(sum(np.dot(x - x_bar, a - a_bar) for x, a in zip(x_means, a_means)))


def regroup(units, sizes, labels):
    return [[units[i] for i in range(len(units)) if labels[i] == g] for g in range(len(sizes))]


def brute_force_p(statistic, units, sizes, alternative):
    observed_labels = tuple(g for g, size in enumerate(sizes) for _ in range(size))
    observed = statistic(regroup(units, sizes, observed_labels))
    labelings = set(itertools.permutations(observed_labels))
    values = [statistic(regroup(units, sizes, labels)) for labels in labelings]
    tol = 1e-12 * max(1, abs(observed))
    if alternative == "greater":
        hits = sum(v >= observed - tol for v in values)
    else:
        hits = sum(abs(v) >= abs(observed) - tol for v in values)
    return hits / len(labelings), len(labelings)


def random_sets(rng, sizes, dim=5, shift=0.0):
    return [rng.normal(size=(n, dim)) + shift * rng.normal(size=dim) for n in sizes]


@pytest.mark.parametrize("groups", [2, 3, 4])
def test_same_equals_the_definition(groups):
    rng = np.random.default_rng(groups)
    for _ in range(5):
        attributes = random_sets(rng, [int(n) for n in rng.integers(2, 6, groups)], dim=8, shift=1.0)
        targets = rng.normal(size=(7, 8))
        r = same(targets, attributes, permutations=1, n_bootstrap=0, rng=0)
        value, biases = reference_same(targets, attributes)
        assert r.value == pytest.approx(value, abs=1e-9)
        np.testing.assert_allclose(r.per_target, biases, atol=1e-9)
        if groups == 2:
            signed = [cos(t, reference_same_components(attributes)[0]) for t in targets]
            assert r.skew == pytest.approx(np.mean(signed), abs=1e-9)
            assert r.stereotype == pytest.approx(np.std(signed), abs=1e-9)
        else:
            assert math.isnan(r.skew)


@pytest.mark.parametrize("groups", [2, 3])
def test_generalized_weat_equals_the_definition(groups):
    rng = np.random.default_rng(10 + groups)
    for _ in range(5):
        sizes = [int(n) for n in rng.integers(2, 6, groups)]
        targets = random_sets(rng, sizes, dim=6, shift=1.0)
        attributes = random_sets(rng, [int(n) for n in rng.integers(2, 6, groups)], dim=6, shift=1.0)
        r = generalized_weat(targets, attributes, permutations=1, n_bootstrap=0, rng=0)
        assert r.value == pytest.approx(reference_generalized_weat(targets, attributes), abs=1e-9)
        # the per-target scores' group means sum to the statistic
        means = [np.mean(r.per_target[sum(sizes[:i]):sum(sizes[:i + 1])]) for i in range(groups)]
        assert sum(means) == pytest.approx(r.value, abs=1e-12)


def test_two_group_generalized_weat_is_half_the_weat_statistic_of_centred_means():
    # for n = 2, <x1 - xbar, c1 - cbar> + <x2 - xbar, c2 - cbar> = <x1 - x2, c1 - c2> / 2
    rng = np.random.default_rng(3)
    targets, attributes = random_sets(rng, [4, 5]), random_sets(rng, [3, 6])
    r = generalized_weat(targets, attributes, permutations=1, n_bootstrap=0, rng=0)
    expected = np.dot(centre(targets[0]) - centre(targets[1]), centre(attributes[0]) - centre(attributes[1])) / 2
    assert r.value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("sizes", [(3, 3), (2, 3, 2)])
def test_generalized_weat_permutation_p_equals_enumeration(alternative, sizes):
    rng = np.random.default_rng(sum(sizes))
    targets = random_sets(rng, sizes, dim=4, shift=0.5)
    attributes = random_sets(rng, [3] * len(sizes), dim=4, shift=1.0)
    units = [v for s in targets for v in s]
    expected, count = brute_force_p(lambda sets: reference_generalized_weat(sets, attributes), units, sizes,
                                    alternative)
    r = generalized_weat(targets, attributes, alternative=alternative, permutations=10_000, n_bootstrap=0, rng=0)
    assert r.p_value_exact and r.permutations == count
    assert r.p_value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("sizes", [(3, 3), (2, 2, 3)])
def test_same_permutation_p_equals_enumeration(sizes):
    rng = np.random.default_rng(7 * len(sizes))
    attributes = random_sets(rng, sizes, dim=4, shift=1.5)
    targets = rng.normal(size=(4, 4)) + attributes[0].mean(axis=0)
    units = [v for s in attributes for v in s]
    expected, count = brute_force_p(lambda sets: reference_same(targets, sets)[0], units, sizes, "greater")
    r = same(targets, attributes, permutations=10_000, n_bootstrap=0, rng=0)
    assert r.p_value_exact and r.permutations == count
    assert r.p_value == pytest.approx(expected, abs=1e-12)


def test_monte_carlo_p_and_bootstrap_are_seeded():
    rng = np.random.default_rng(1)
    targets = random_sets(rng, [8, 8, 8], shift=1.0)
    attributes = random_sets(rng, [5, 5, 5], shift=1.0)
    first = generalized_weat(targets, attributes, permutations=500, n_bootstrap=200, rng=4)
    second = generalized_weat(targets, attributes, permutations=500, n_bootstrap=200, rng=4)
    assert not first.p_value_exact and first.permutations == 500 and first.seed == 4
    assert first.p_value == second.p_value and first.ci == second.ci
    assert 1 / 501 <= first.p_value <= 1
    assert first.ci[0] <= first.value <= first.ci[1]
    s = same(targets[0], attributes, permutations=300, n_bootstrap=100, rng=2)
    assert s.ci[0] <= s.value <= s.ci[1]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: generalized_weat([np.eye(2)], [np.eye(2)]), "at least 2 sets"),
    (lambda: generalized_weat([np.eye(2)] * 3, [np.eye(2)] * 2), "pairs target and attribute sets"),
    (lambda: same(np.eye(3), [np.eye(2), np.eye(2)]), "dimension"),
    (lambda: same(np.eye(2), [np.eye(2), np.eye(2)], alternative="less"), "alternative"),
    (lambda: same(np.eye(2), [np.eye(2), [[np.nan, 1.0]]]), "non-finite"),
])
def test_bad_inputs(call, message):
    with pytest.raises(EatkitError, match=message):
        call()


def distinct_labelings(sizes):
    """Every distinct assignment of units to groups of ``sizes``, by nested combinations (independent of
    eatkit's enumeration)."""
    def fill(free, group):
        if group == len(sizes) - 1:
            yield {i: group for i in free}
            return
        for chosen in itertools.combinations(free, sizes[group]):
            for tail in fill([i for i in free if i not in chosen], group + 1):
                yield {**dict.fromkeys(chosen, group), **tail}
    for mapping in fill(list(range(sum(sizes))), 0):
        yield tuple(mapping[i] for i in range(sum(sizes)))


def test_exact_counts_every_assignment_beyond_ten_thousand_equal_to_brute_force():
    # 4 + 4 + 4 target words: 34,650 assignments, more than the 10,000 "auto" draws; "exact" counts them all
    sizes = (4, 4, 4)
    rng = np.random.default_rng(12)
    targets = random_sets(rng, sizes, dim=4, shift=0.4)
    attributes = random_sets(rng, [3, 3, 3], dim=4, shift=1.0)
    units = [v for s in targets for v in s]
    labelings = list(distinct_labelings(sizes))
    observed = reference_generalized_weat(targets, attributes)
    values = np.array([reference_generalized_weat(regroup(units, sizes, labels), attributes) for labels in labelings])
    expected = float(np.mean(values >= observed - 1e-12 * max(1, abs(observed))))
    r = generalized_weat(targets, attributes, permutations="exact", n_bootstrap=0)
    assert len(labelings) == 34_650 == r.permutations and r.p_value_exact
    assert r.p_value == pytest.approx(expected, abs=1e-15)
    sampled = generalized_weat(targets, attributes, n_bootstrap=0, rng=0)  # the default 10,000 draws: sampled
    assert not sampled.p_value_exact and sampled.permutations == 10_000


@pytest.mark.parametrize("sizes", [(1, 1), (2, 1), (3, 2, 2), (2, 2, 2, 1)])
def test_the_enumeration_lists_each_assignment_once(sizes):
    from eatkit.stats.multigroup import _assignments, n_assignments

    listed = [tuple(row) for block in _assignments(sizes) for row in block]
    assert sorted(listed) == sorted(distinct_labelings(sizes)) and len(listed) == n_assignments(sizes)


def test_exact_beyond_an_hour_is_refused_with_the_estimate_never_sampled():
    rng = np.random.default_rng(0)
    with pytest.raises(EatkitError, match=r"an exact permutation test over every assignment of groups of 20, 20, "
                                          r"20 \(5.78e\+26 assignments\) would take about .* days"):
        generalized_weat(random_sets(rng, [20, 20, 20]), random_sets(rng, [3, 3, 3]), permutations="exact")
    with pytest.raises(EatkitError, match="would take about"):
        same(rng.normal(size=(5, 5)), random_sets(rng, [30, 30]), permutations="exact")


def test_multigroup_sets_go_through_the_degeneracy_rules():
    from eatkit.stats.degeneracy import DegeneracyWarning

    rng = np.random.default_rng(5)
    T, A, B = rng.normal(size=(4, 5)), rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    with pytest.raises(EatkitError, match="sets 'A1' and 'A2' hold the same vectors"):
        same(T, [A, A[::-1]], n_bootstrap=0)  # was a value from rounding noise
    with pytest.raises(EatkitError, match="sets 'T1' and 'T2' hold the same vectors"):
        generalized_weat([T[:2], T[1::-1]], [A, B], n_bootstrap=0)
    with pytest.raises(EatkitError, match="set 'A2' holds 3 stimuli that all share one vector"):
        same(T, [A, np.ones((3, 5))], n_bootstrap=0)
    with pytest.warns(DegeneracyWarning, match=r"sets 'A1' and 'A3' share 1 vector\(s\) \(row\(s\) 0 of 'A1'\)"):
        same(T, [A, B, np.r_[A[:1], B[1:] + 1]], n_bootstrap=0)


def test_an_exact_multigroup_record_warns_of_its_p_floor():
    from types import SimpleNamespace

    from eatkit.stats.degeneracy import p_floor_warning

    record = SimpleNamespace(p_value=0.5, p_value_exact=True, n_permutations=2)
    assert p_floor_warning(record, 0.05) == ("the smallest p-value this test can reach is 0.5 (1 of 2 partitions), "
                                             "above alpha=0.05: no result can be significant")
