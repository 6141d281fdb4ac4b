"""Properties of the EAT statistics that hold for every input (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from eatkit.stats import eat, group_permutation_test, sc_eat
from eatkit.errors import EatkitError
from eatkit.errors import EatkitError
from eatkit.stats.degeneracy import check_degenerate

# the autouse cache fixture of conftest.py is function-scoped but irrelevant to these pure functions
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MIRROR = {"greater": "less", "less": "greater", "two-sided": "two-sided"}

# small integer coordinates produce exact ties, duplicated vectors and orthogonal pairs on purpose
coordinate = st.integers(-4, 4).map(float)


@st.composite
def embedding_set(draw, dim: int, max_rows: int = 6, min_rows: int = 2) -> np.ndarray:
    rows = draw(st.integers(min_rows, max_rows))
    arr = draw(arrays(np.float64, (rows, dim), elements=coordinate))
    assume((np.abs(arr).sum(axis=1) > 0).all())  # cosine needs non-zero rows
    return arr


@st.composite
def eat_inputs(draw, max_targets: int = 6) -> tuple[np.ndarray, ...]:
    dim = draw(st.integers(2, 4))
    X = draw(embedding_set(dim, max_targets))
    Y = draw(embedding_set(dim, max_targets))
    A = draw(embedding_set(dim, 4))
    B = draw(embedding_set(dim, 4))
    assume(_not_degenerate(X=X, Y=Y, A=A, B=B))  # degenerate sets are errors (eatkit.stats.degeneracy)
    return X, Y, A, B


def _not_degenerate(**sets: np.ndarray) -> bool:
    try:
        check_degenerate(sets)
    except EatkitError:
        return False
    return True


def _spread(result) -> float:
    return float(np.concatenate(result.associations).std())


@SETTINGS
@given(eat_inputs())
def test_swapping_targets_flips_d_and_mirrors_p(sets) -> None:
    X, Y, A, B = sets
    forward = eat(X, Y, A, B, permutations="exact")
    backward = eat(Y, X, A, B, permutations="exact")
    for alt, mirror in MIRROR.items():
        assert backward.p_values[mirror] == forward.p_values[alt]
    assert backward.statistic == pytest.approx(-forward.statistic, abs=1e-12)
    assume(_spread(forward) > 1e-9)  # d of (almost) constant associations is rounding noise
    assert backward.effect_size == pytest.approx(-forward.effect_size, rel=1e-9, abs=1e-9)


@SETTINGS
@given(
    eat_inputs(),
    st.sampled_from("XYAB"),
    st.integers(0, 5),
    st.floats(1e-3, 1e3),
)
def test_scaling_a_vector_changes_nothing(sets, which: str, row: int, factor: float) -> None:
    X, Y, A, B = sets
    before = eat(X, Y, A, B, permutations="exact")
    scaled = dict(zip("XYAB", (X.copy(), Y.copy(), A.copy(), B.copy())))
    scaled[which][row % len(scaled[which])] *= factor
    after = eat(**scaled, permutations="exact")
    np.testing.assert_allclose(
        np.concatenate(after.associations), np.concatenate(before.associations), atol=1e-12
    )
    # all associations equal up to rounding: see test_scaling_keeps_ties_between_rounding_noise
    assume(_spread(before) > 1e-9)
    assert after.p_values == before.p_values
    assert after.effect_size == pytest.approx(before.effect_size, rel=1e-9, abs=1e-9)


def test_scaling_keeps_ties_between_rounding_noise() -> None:
    # A and B are the same direction, so every s(w, A, B) is 0; scaling A by 1.5 makes the computed
    # cosines differ in the last bit (s = +-1.1e-16). Without the cosines' rounding bound in the tie
    # tolerance, d = 2.2e-16 / 1.6e-16 = 1.41 with p("greater") = 0.5 instead of 0 and 1.
    X = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 2.0]])
    Y = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, -3.0]])
    A = np.array([[0.0, 1.0, 1.0]])
    with pytest.raises(EatkitError, match="sets 'A' and 'B' hold the same vectors"):
        eat(X, Y, A, A, permutations="exact")  # the same set twice is refused (issue 26)
    after = eat(X, Y, 1.5 * A, A, permutations="exact")
    assert (after.effect_size, after.p_values["greater"]) == (0.0, 1.0)


@SETTINGS
@given(
    arrays(np.float64, st.integers(1, 9), elements=st.floats(-1, 1, allow_subnormal=False)),
    arrays(np.float64, st.integers(1, 9), elements=st.floats(-1, 1, allow_subnormal=False)),
    st.sampled_from(["exact", 1, 7, 300]),
)
def test_p_values_are_in_the_unit_interval_and_at_least_one_partition(first, second, permutations) -> None:
    out = group_permutation_test(first, second, permutations=permutations, rng=0)
    floor = 1 / math.comb(first.size + second.size, first.size) if out.p_value_exact else 1 / (permutations + 1)
    for p in out.p_values.values():
        assert floor <= p <= 1.0
    # the observed split reaches itself: "greater" and "less" together cover every partition at least once
    assert out.counts["greater"] + out.counts["less"] >= out.n_permutations + (1 if out.p_value_exact else 0)


@SETTINGS
@given(
    arrays(np.float64, st.integers(2, 9), elements=st.floats(-1, 1, allow_subnormal=False)),
    arrays(np.float64, st.integers(2, 9), elements=st.floats(-1, 1, allow_subnormal=False)),
)
def test_swapping_groups_mirrors_the_exact_counts(first, second) -> None:
    forward = group_permutation_test(first, second, permutations="exact")
    backward = group_permutation_test(second, first, permutations="exact")
    for alt, mirror in MIRROR.items():
        assert backward.counts[mirror] == forward.counts[alt]


@SETTINGS
@given(eat_inputs(max_targets=30), st.integers(0, 2**32), st.integers(1, 3000))
def test_same_seed_same_monte_carlo_result(sets, seed: int, draws: int) -> None:
    X, Y, A, B = sets
    a = eat(X, Y, A, B, permutations=draws, rng=seed)
    b = eat(X, Y, A, B, permutations=draws, rng=seed)
    c = eat(X, Y, A, B, permutations=draws, rng=np.random.default_rng(seed))
    assert a.p_values == b.p_values == c.p_values
    assert a.standard_errors == b.standard_errors
    if draws < a.n_partitions:
        assert (a.seed, c.seed, a.n_permutations, a.p_value_exact) == (seed, None, draws, False)
    else:  # as many draws as partitions, or more: every partition is counted instead
        assert (a.n_permutations, a.p_value_exact) == (a.n_partitions, True)


@SETTINGS
@given(eat_inputs())
def test_sc_eat_swapping_attributes_flips_d_and_mirrors_p(sets) -> None:
    X, _, A, B = sets
    forward = sc_eat(X, A, B, permutations="exact")
    backward = sc_eat(X, B, A, permutations="exact")
    for alt, mirror in MIRROR.items():
        assert backward.p_values[mirror] == forward.p_values[alt]
    assume(_spread(forward) > 1e-9)
    assert backward.effect_size == pytest.approx(-forward.effect_size, rel=1e-9, abs=1e-9)


def _transform(sets, seed: int, scale: float) -> tuple[np.ndarray, ...]:
    """Every vector multiplied by ``scale`` times one random orthogonal matrix (a rotation or reflection)."""
    dim = sets[0].shape[1]
    q, r = np.linalg.qr(np.random.default_rng(seed).normal(size=(dim, dim)))
    q = q * np.sign(np.diag(r))  # the Haar-distributed orthogonal matrix
    return tuple(scale * (s @ q) for s in sets)


@SETTINGS
@given(eat_inputs(), st.integers(0, 2**32 - 1), st.floats(1e-3, 1e3), st.sampled_from(["caliskan", "pooled"]))
def test_rotating_and_scaling_the_whole_space_changes_nothing(sets, seed: int, scale: float, sd: str) -> None:
    before = eat(*sets, permutations="exact", sd=sd, alternative="two-sided")
    after = eat(*_transform(sets, seed, scale), permutations="exact", sd=sd, alternative="two-sided")
    np.testing.assert_allclose(
        np.concatenate(after.associations), np.concatenate(before.associations), atol=1e-12
    )
    assume(_spread(before) > 1e-9)
    assert after.p_values == before.p_values
    assert after.effect_size == pytest.approx(before.effect_size, rel=1e-9, abs=1e-9)


@SETTINGS
@given(eat_inputs(), st.integers(2, 3))
def test_duplicating_every_stimulus_leaves_d_unchanged(sets, copies: int) -> None:
    X, Y, A, B = sets
    doubled = [np.concatenate([s] * copies) for s in sets]
    n = len(X) + len(Y)
    for ddof, factor in ((0, 1.0), (1, math.sqrt((copies * n - 1) / (copies * (n - 1))))):
        # population SD: d is unchanged; sample SD (ddof=1): only its n - 1 changes, by this closed form
        before = eat(X, Y, A, B, permutations=10, rng=0, ddof=ddof)
        after = eat(*doubled, permutations=10, rng=0, ddof=ddof)
        assert after.statistic == pytest.approx(copies * before.statistic, rel=1e-9, abs=1e-12)
        assume(_spread(before) > 1e-9)
        assert after.effect_size == pytest.approx(factor * before.effect_size, rel=1e-9, abs=1e-9)
    # duplicating the attributes alone changes no association at all
    same = eat(X, Y, *doubled[2:], permutations="exact")
    reference = eat(X, Y, A, B, permutations="exact")
    np.testing.assert_allclose(np.concatenate(same.associations), np.concatenate(reference.associations),
                               atol=1e-12)
    assert same.p_values == reference.p_values


@SETTINGS
@given(eat_inputs(max_targets=8), st.sampled_from(["exact", 1, 9, 200]), st.integers(0, 2**32 - 1))
def test_eat_and_sc_eat_p_values_lie_in_one_over_n_plus_one_to_one(sets, permutations, seed: int) -> None:
    X, Y, A, B = sets
    for result, total in ((eat(X, Y, A, B, permutations=permutations, rng=seed), math.comb(len(X) + len(Y), len(X))),
                          (sc_eat(X[0], A, B, permutations=permutations, rng=seed),
                           math.comb(len(A) + len(B), len(A)))):
        n = result.n_permutations
        floor = 1 / total if result.p_value_exact else 1 / (n + 1)
        if not result.p_value_exact:
            assert n == permutations
        for p in result.p_values.values():
            assert floor - 1e-15 <= p <= 1.0
