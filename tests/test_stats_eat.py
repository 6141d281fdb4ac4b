"""eat() and sc_eat(): effect sizes, statistics and p-values against independent computations."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps
from stats_reference import (
    association_atol,
    UNIT_A,
    UNIT_B,
    brute_force_p_values,
    cosine,
    loop_associations,
    vectors_with_associations,
)

from eatkit.stats import cohens_d, eat, sc_eat

ALTERNATIVES = ("greater", "less", "two-sided")


def _embeddings(sizes: tuple[int, ...], dim: int, seed: int) -> list[np.ndarray]:
    g = np.random.default_rng(seed)
    return [g.normal(size=(n, dim)) for n in sizes]


def _caliskan_d(sx, sy, ddof: int = 1) -> float:
    spread = statistics.stdev(sx + sy) if ddof == 1 else statistics.pstdev(sx + sy)
    return (statistics.fmean(sx) - statistics.fmean(sy)) / spread


# --- eat() against loops and enumeration ------------------------------------------------------------


@pytest.mark.parametrize(
    ("nx", "ny", "na", "nb", "dim"),
    [
        (2, 2, 2, 2, 3),
        (3, 7, 4, 4, 5),
        (8, 5, 3, 6, 10),
        (10, 2, 5, 5, 8),
        (10, 10, 6, 9, 20),
        (9, 10, 2, 2, 4),
    ],
)
def test_eat_equals_loops_and_brute_force(nx: int, ny: int, na: int, nb: int, dim: int) -> None:
    X, Y, A, B = _embeddings((nx, ny, na, nb), dim, seed=nx * 100 + ny)
    X[0] += 0.5 * A.mean(axis=0)  # make some p-values small, others large
    sx, sy = loop_associations(X, A, B), loop_associations(Y, A, B)
    p_ref, _, partitions = brute_force_p_values(sx, sy, association_atol(dim))
    for alt in ALTERNATIVES:
        r = eat(X, Y, A, B, alternative=alt, permutations="exact")
        assert r.alternative == alt
        assert r.p_value == p_ref[alt]
        assert r.p_values == p_ref
        assert r.p_value_exact is True and r.n_permutations == r.n_partitions == partitions
        assert r.effect_size == pytest.approx(_caliskan_d(sx, sy), rel=1e-10)
        assert r.statistic == pytest.approx(sum(sx) - sum(sy), rel=1e-10, abs=1e-12)
        np.testing.assert_allclose(r.associations[0], sx, rtol=0, atol=1e-13)
        np.testing.assert_allclose(r.associations[1], sy, rtol=0, atol=1e-13)


def test_hand_computed_3_plus_3() -> None:
    # A = {(2, 0)}, B = {(0, 3)}: s(w, A, B) = cos(w, e1) - cos(w, e2) = (w1 - w2) / |w|.
    X = [[1, 0], [4, 3], [1, 1]]  # s = 1 - 0 = 1;   4/5 - 3/5 = 1/5;   1/sqrt2 - 1/sqrt2 = 0
    Y = [[3, 4], [0, 1], [12, 5]]  # s = 3/5 - 4/5 = -1/5;   0 - 1 = -1;   12/13 - 5/13 = 7/13
    r = eat(X, Y, [[2, 0]], [[0, 3]], permutations="exact")
    np.testing.assert_allclose(r.associations[0], [1, 0.2, 0], atol=1e-15)
    np.testing.assert_allclose(r.associations[1], [-0.2, -1, 7 / 13], atol=1e-15)
    # statistic = (1 + 1/5 + 0) - (-1/5 - 1 + 7/13) = 6/5 + 6/5 - 7/13 = (156 - 35)/65 = 121/65
    assert r.statistic == pytest.approx(121 / 65, rel=1e-14)
    # d = (mean_X - mean_Y) / stdev(all six, ddof=1): mean_X - mean_Y = 2/5 - (-6/5 + 7/13)/3 = 121/195;
    # mean of all = (7/13)/6 = 7/78; sum of squares about it = 10013/4225 - 6 (7/78)^2 = 58853/25350;
    # variance = 58853/126750 = 0.46432347...; SD = 0.68141285...; d = 0.62051282 / 0.68141285 = 0.91062683
    variance = Fraction(58853, 126750)
    assert r.effect_size == pytest.approx((121 / 195) / math.sqrt(variance), rel=1e-13)
    assert r.effect_size == pytest.approx(0.9106268263, rel=1e-9)
    # The 20 partitions of {1, 7/13, 1/5, 0, -1/5, -1} into 3 + 3; X's sum is 6/5. Sums >= 6/5:
    # {1, 7/13, 1/5} = 1.738, {1, 7/13, 0} = 1.538, {1, 7/13, -1/5} = 1.338, {1, 1/5, 0} = 1.2 (observed).
    # Sums <= 6/5: all but the first three = 17. Two-sided |s| >= |s_obs|: those 4 and their complements.
    assert r.p_values == {"greater": 4 / 20, "less": 17 / 20, "two-sided": 8 / 20}
    assert r.p_value == 0.2 and r.n_partitions == 20


def test_ddof_is_settable_and_recorded() -> None:
    X, Y, A, B = _embeddings((5, 4, 3, 3), 6, seed=1)
    sx, sy = loop_associations(X, A, B), loop_associations(Y, A, B)
    r0 = eat(X, Y, A, B, ddof=0)
    r1 = eat(X, Y, A, B)
    assert (r0.ddof, r1.ddof) == (0, 1)
    assert r0.effect_size == pytest.approx(_caliskan_d(sx, sy, ddof=0), rel=1e-10)
    assert r1.effect_size == pytest.approx(_caliskan_d(sx, sy, ddof=1), rel=1e-10)
    assert r1.effect_size / r0.effect_size == pytest.approx(math.sqrt(8 / 9), rel=1e-12)  # n = 9


# --- unequal groups: pooled SD and Welch ("American == White" seed, appendix A.2) ----------------------


def test_pooled_sd_formula_by_hand() -> None:
    # first: mean 2.5, s1^2 = (2.25 + .25 + .25 + 2.25) / 3 = 5/3; second: mean 3, s2^2 = (1 + 1) / 1 = 2
    # sigma_p = sqrt(((4 - 1) 5/3 + (2 - 1) 2) / (4 + 2 - 2)) = sqrt(7/4); d = (2.5 - 3) / sqrt(7/4)
    d = cohens_d(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0]), sd="pooled")
    assert float(d) == pytest.approx(-0.5 / math.sqrt(7 / 4), rel=1e-15)
    assert float(d) == pytest.approx(-0.3779644730, rel=1e-9)


def test_pooled_sd_through_eat() -> None:
    # targets with s = .1, .2, .3, .4 and .2, .4: the same numbers as above divided by 10, so d is equal
    X = vectors_with_associations([0.1, 0.2, 0.3, 0.4])
    Y = 2 * vectors_with_associations([0.2, 0.4])  # same cosines; a vector in X and Y would be refused
    r = eat(X, Y, UNIT_A, UNIT_B, sd="pooled")
    assert r.effect_size == pytest.approx(-0.5 / math.sqrt(7 / 4), rel=1e-12)
    assert (r.sd, r.ddof) == ("pooled", 1)
    caliskan = eat(X, Y, UNIT_A, UNIT_B)
    # Caliskan SD of all six = stdev(.1, .2, .3, .4, .2, .4) = sqrt(0.0016667 ... ) -> a different d
    assert caliskan.effect_size == pytest.approx(-0.05 / statistics.stdev([0.1, 0.2, 0.3, 0.4, 0.2, 0.4]))


@pytest.mark.parametrize(("nx", "ny"), [(7, 3), (2, 9), (12, 30)])
def test_welch_matches_scipy_for_all_alternatives(nx: int, ny: int) -> None:
    X, Y, A, B = _embeddings((nx, ny, 4, 6), 12, seed=nx + ny)
    X += 0.3 * A.mean(axis=0)
    sx, sy = loop_associations(X, A, B), loop_associations(Y, A, B)
    for alt in ALTERNATIVES:
        r = eat(X, Y, A, B, p_method="welch", alternative=alt)
        expected = sps.ttest_ind(sx, sy, equal_var=False, alternative=alt).pvalue
        assert r.p_value == pytest.approx(expected, rel=1e-9)
        assert (r.p_method, r.p_value_exact, r.n_permutations) == ("welch", False, 0)
    assert r.p_values["greater"] + r.p_values["less"] == pytest.approx(1.0)


@pytest.mark.parametrize("sd", ["caliskan", "pooled"])
def test_unequal_sizes_are_never_truncated(sd: str) -> None:
    X, Y, A, B = _embeddings((7, 3, 2, 9), 5, seed=4)
    r = eat(X, Y, A, B, sd=sd, permutations="exact")
    assert [a.size for a in r.associations] == [7, 3]
    assert [a.size for a in r.associations] == [7, 3]
    assert r.n_partitions == math.comb(10, 3)
    sx, sy = loop_associations(X, A, B), loop_associations(Y, A, B)
    assert r.statistic == pytest.approx(sum(sx) - sum(sy), rel=1e-12)
    assert r.p_values == brute_force_p_values(sx, sy, association_atol(5))[0]
    sc = sc_eat(X, A, B, sd=sd, permutations="exact")
    assert [a.size for a in sc.associations] == [2, 9]
    assert sc.n_partitions == math.comb(11, 2)


# --- sc_eat() ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("nt", "na", "nb"), [(1, 4, 4), (5, 3, 7), (6, 8, 8)])
def test_sc_eat_equals_loops_and_brute_force(nt: int, na: int, nb: int) -> None:
    T, A, B = _embeddings((nt, na, nb), 6, seed=nt + na + nb)
    T[0] += A[0]
    # u(T, a) = mean_t cos(t, a) (ML-EAT seed eq. 6), with scalar loops
    ua = [statistics.fmean(cosine(t, a) for t in T) for a in A]
    ub = [statistics.fmean(cosine(t, b) for t in T) for b in B]
    p_ref = brute_force_p_values(ua, ub, association_atol(6))[0]
    target = T[0] if nt == 1 else T  # a single vector is a set of one
    r = sc_eat(target, A, B, permutations="exact", alternative="two-sided")
    assert r.groups == ("A", "B")
    assert r.p_values == p_ref and r.p_value == p_ref["two-sided"]
    assert r.effect_size == pytest.approx(_caliskan_d(ua, ub), rel=1e-10)
    assert r.statistic == pytest.approx(sum(ua) - sum(ub), rel=1e-10, abs=1e-12)


def test_sc_eat_docstring_example() -> None:
    r = sc_eat([1.0, 0.0], [[1.0, 0.1], [0.9, 0.0]], [[0.0, 1.0], [0.2, 1.0]], permutations="exact")
    # u(w, a) = .995, 1 and u(w, b) = 0, .196: the observed split is the top one of C(4, 2) = 6
    assert (r.n_partitions, r.p_value) == (6, 1 / 6)


# --- the result object ------------------------------------------------------------------------------


def test_monte_carlo_result_records_its_error_and_seed() -> None:
    X, Y, A, B = _embeddings((30, 30, 5, 5), 8, seed=8)
    r = eat(X, Y, A, B, permutations=4000, rng=77, alternative="less")
    assert (r.p_value_exact, r.n_permutations, r.seed, r.n_partitions) == (False, 4000, 77, math.comb(60, 30))
    p = r.p_value
    assert r.mc_standard_error == r.standard_errors["less"] > 0
    assert r.mc_standard_error == pytest.approx(math.sqrt(p * (1 - p) / 4000), rel=0.01)
    other = r.with_alternative("greater")
    assert (other.alternative, other.p_value) == ("greater", r.p_values["greater"])
    assert (r.seed, r.p_value_exact, r.groups) == (77, False, ("X", "Y"))
    assert "associations" not in repr(r)  # short repr: no arrays


def test_exact_result_has_no_standard_error_and_records_tolerance() -> None:
    X, Y, A, B = _embeddings((4, 4, 3, 3), 8, seed=8)
    r = eat(X, Y, A, B)
    sx, sy = r.associations
    values = np.concatenate([sx, sy])
    assert (r.p_value_exact, r.mc_standard_error, r.seed) == (True, 0.0, None)
    eps = np.finfo(float).eps
    assert r.tie_tolerance == 4 * 8 * eps * np.abs(values).sum() + 2 * 8 * association_atol(8)
