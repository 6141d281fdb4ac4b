"""Ranking probe statistics ("American == White" seed, section 4): known answers, hand-computed values,
brute-force references; rates with Wilson intervals; pooled-SD d with ddof 0 and 1 and Welch vs scipy."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from eatkit import compare_shares, rank_shares
from eatkit.errors import EatkitError
from eatkit.stats import sc_eat
from eatkit.stats.outcomes import proportion
from eatkit.stats.proportions import group_rates
from eatkit.stats.ranking import correlate_regions, max_skew, ndkl

GROUPS4 = ["Asian"] * 5 + ["Black"] * 7 + ["Latino"] * 4 + ["White"] * 6


def test_shares_equal_to_the_reference_give_r_and_r_squared_of_one() -> None:
    rng = np.random.default_rng(1)
    raw = rng.random((10, 4))
    ref = pd.DataFrame(raw / raw.sum(axis=1, keepdims=True), index=[f"s{i}" for i in range(10)],
                       columns=["Asian", "Black", "Hispanic", "White"])
    shares = ref.rename(columns={"Hispanic": "Latino"}).iloc[::-1]  # another region order: aligned by name
    c = compare_shares(shares, ref, columns={"Latino": "Hispanic"})
    assert c.r == pytest.approx({"Asian": 1.0, "Black": 1.0, "Latino": 1.0, "White": 1.0}, abs=1e-12)
    assert c.r_squared == pytest.approx(1.0, abs=1e-12)
    assert all(p < 1e-6 for p in c.r_p_values.values())
    assert c.columns["Latino"] == "Hispanic" and c.n_regions == 10


def test_r_squared_is_the_uniform_average_of_per_output_ols_fits() -> None:
    rng = np.random.default_rng(2)
    idx = [f"s{i}" for i in range(12)]
    shares = pd.DataFrame(rng.dirichlet(np.ones(3), size=12), index=idx, columns=list("abc"))
    ref = pd.DataFrame(rng.random((12, 3)), index=idx, columns=list("abc"))
    c = compare_shares(shares, ref)
    # brute force: OLS with intercept on all shares (lstsq on [1, shares]), R^2 = 1 - SSres/SStot, per output
    design = np.column_stack([np.ones(12), shares.to_numpy()])
    r2 = []
    for col in "abc":
        y = ref[col].to_numpy()
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        r2.append(1 - ((y - design @ coef) ** 2).sum() / ((y - y.mean()) ** 2).sum())
    assert c.r_squared_by_output == pytest.approx(dict(zip("abc", r2)), rel=1e-10)
    assert c.r_squared == pytest.approx(np.mean(r2), rel=1e-10)
    # shares sum to one: 2 free slopes, F-test with (2, 12 - 2 - 1) df
    f = (r2[0] / 2) / ((1 - r2[0]) / 9)
    assert c.r_squared_p_values["a"] == pytest.approx(sps.f.sf(f, 2, 9), rel=1e-9)
    assert c.r["b"] == pytest.approx(sps.pearsonr(shares["b"], ref["b"]).statistic, rel=1e-12)


def test_group_blind_model_gives_each_group_about_k_over_g() -> None:
    rng = np.random.default_rng(3)
    labels = np.repeat(["a", "b", "c", "d"], [30, 40, 25, 35])
    sims = rng.normal(size=(500, labels.size))  # similarities independent of group
    shares = rank_shares(sims, labels, repeats=100, rng=5)
    assert shares.k == 25 and shares.group_size == 25
    np.testing.assert_allclose(shares.values.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(shares.values.mean(axis=0), 0.25, atol=0.012)  # k/G of k slots each (SE ~0.004)


def test_similarities_ordered_by_group_fill_all_k_slots_with_the_top_group() -> None:
    labels = np.array(GROUPS4)
    base = {"Asian": 0.0, "Black": 1.0, "Latino": 2.0, "White": 3.0}
    sims = np.array([[base[g] + 0.01 * i for i, g in enumerate(labels)],
                     [-base[g] for g in labels]])
    shares = rank_shares(sims, labels, repeats=20, rng=0)
    assert shares.row("0") == {"Asian": 0.0, "Black": 0.0, "Latino": 0.0, "White": 1.0}
    assert shares.row("1")["Asian"] == 1.0
    # k = 2m: both slots of the top two groups
    two = rank_shares(sims, labels, k=8, repeats=20, rng=0, regions=["up", "down"])
    assert two.row("up")["White"] == 0.5 and two.row("up")["Latino"] == 0.5


def test_rank_shares_matches_a_brute_force_average_over_all_balancings() -> None:
    # groups of 3 and 2, m = 2, k = 2: average over all C(3,2) x C(2,2) balancings = exact expectation;
    # with many repeats the sampled mean converges to it
    labels = ["a", "a", "a", "b", "b"]
    sims = np.array([[0.9, 0.1, 0.5, 0.7, 0.3], [0.2, 0.3, 0.4, 0.5, 0.6]])
    expected = np.zeros((2, 2))
    subsets = list(combinations(range(3), 2))
    for sub in subsets:
        cols = [*sub, 3, 4]
        for r in range(2):
            top = np.argsort(-sims[r, cols])[:2]
            expected[r] += np.bincount([0 if cols[t] < 3 else 1 for t in top], minlength=2) / 2
    expected /= len(subsets)
    shares = rank_shares(sims, labels, repeats=6000, rng=11)
    np.testing.assert_allclose(shares.values, expected, atol=0.02)


def test_ties_at_the_kth_value_are_shared_in_proportion() -> None:
    sims = np.zeros((1, 4))  # every image tied: each group gets half of k in expectation
    shares = rank_shares(sims, ["a", "a", "b", "b"], k=1, repeats=3, rng=0)
    assert shares.values[0].tolist() == [0.5, 0.5]


def test_rank_shares_is_reproducible_from_its_seed_and_records_it() -> None:
    rng = np.random.default_rng(4)
    sims = rng.normal(size=(3, 22))
    a = rank_shares(sims, GROUPS4, repeats=30, rng=9)
    b = rank_shares(sims, GROUPS4, repeats=30, rng=9)
    assert (a.values == b.values).all() and a.regions == b.regions == ("0", "1", "2")
    assert a.seed == 9 and a.group_counts == {"Asian": 5, "Black": 7, "Latino": 4, "White": 6}
    assert rank_shares(sims, GROUPS4, repeats=30).seed is not None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"k": 0}, "k must be an integer from 1 to 16"),
    ({"repeats": 0}, "repeats must be a positive integer"),
    ({"groups": ["a"] * 22}, "at least 2 groups"),
    ({"groups": ["a", "b"]}, "groups has 2 labels but there are 22 images"),
    ({"group_size": 5}, "group 'Latino' has 4 images, fewer than the 5 that the downsampling draws"),
])
def test_rank_shares_bad_input(kwargs, message) -> None:
    args = {"similarities": np.zeros((2, 22)), "groups": GROUPS4, **kwargs}
    with pytest.raises(EatkitError, match=message):
        rank_shares(**args)


def test_region_table_with_missing_or_extra_regions_is_refused() -> None:
    shares = pd.DataFrame({"a": [0.1, 0.2, 0.3]}, index=["x", "y", "z"])
    with pytest.raises(EatkitError, match="lacks 1 region.*: z; has 1 region.*not ranked: w"):
        compare_shares(shares, pd.DataFrame({"a": [1.0, 2.0, 3.0]}, index=["x", "y", "w"]))
    with pytest.raises(EatkitError, match="no column b"):
        compare_shares(shares.rename(columns={"a": "b"}), pd.DataFrame({"a": [1.0, 2, 3]}, index=list("xyz")))


def test_dataframes_and_region_values_give_the_same_comparison() -> None:
    from eatkit.stats.ranking import RegionValues, region_values

    rng = np.random.default_rng(6)
    frame = pd.DataFrame(rng.random((5, 2)), index=list("vwxyz"), columns=["a", "b"])
    ref = pd.DataFrame(rng.random((5, 2)), index=list("zyxwv"), columns=["a", "b"])
    plain = RegionValues(frame.to_numpy(), tuple(frame.index), ("a", "b"))
    assert compare_shares(frame, ref) == compare_shares(plain, region_values(ref))
    with pytest.raises(EatkitError, match="the reference table must be RegionValues or a DataFrame"):
        compare_shares(plain, [[1.0, 2.0]])
    with pytest.raises(EatkitError, match="regions has 1 names but the similarities have 2 rows"):
        rank_shares(np.zeros((2, 4)), ["a", "a", "b", "b"], regions=["x"])


def test_correlate_regions_is_pearson_per_group_and_column() -> None:
    shares = pd.DataFrame({"a": [0.1, 0.4, 0.2, 0.3], "b": [0.9, 0.6, 0.8, 0.7]}, index=list("wxyz"))
    table = pd.DataFrame({"iat": [0.3, 0.1, 0.5, 0.2]}, index=list("zwxy"))
    c = correlate_regions(shares, table)
    aligned = [0.1, 0.5, 0.2, 0.3]
    assert c.r["a"]["iat"] == pytest.approx(sps.pearsonr(shares["a"], aligned).statistic, rel=1e-12)
    assert c.r["b"]["iat"] == pytest.approx(-c.r["a"]["iat"], rel=1e-12)


def test_max_skew_by_hand() -> None:
    ranked = ["a", "a", "b", "a", "b", "b", "b", "b"]  # desired (whole list): a 3/8, b 5/8
    # top 2: a = 1 -> ln(1 / (3/8)) = ln(8/3); top 4: a 3/4 -> ln(2), b 1/4 -> ln(2/5): max ln 2
    assert max_skew(ranked, 2) == pytest.approx(math.log(8 / 3), rel=1e-12)
    assert max_skew(ranked, 4) == pytest.approx(math.log(2), rel=1e-12)
    assert max_skew(ranked, 8) == pytest.approx(0.0, abs=1e-12)
    # uniform desired over three groups, one absent: top 3 = a, a, b -> ln((2/3) / (1/3)) = ln 2
    assert max_skew(ranked, 3, {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}) == pytest.approx(math.log(2), rel=1e-12)
    np.testing.assert_allclose(max_skew([ranked, ranked[::-1]], 2), [math.log(8 / 3), math.log(8 / 5)])


def test_ndkl_by_hand() -> None:
    ranked = ["a", "b", "b", "a"]  # desired 1/2, 1/2
    kl = [math.log(2), 0.0, (1 / 3) * math.log(2 / 3) + (2 / 3) * math.log(4 / 3), 0.0]
    weights = [1 / math.log2(i + 1) for i in range(1, 5)]
    assert ndkl(ranked) == pytest.approx(sum(k * w for k, w in zip(kl, weights)) / sum(weights), rel=1e-12)
    assert ndkl(["a", "b", "a", "b"], {"a": 0.5, "b": 0.5}) < ndkl(["a", "a", "b", "b"])
    with pytest.raises(EatkitError, match="sum to 1"):
        ndkl(ranked, {"a": 0.5, "b": 0.6})


def test_wilson_interval_closed_form() -> None:
    # 97 of 100 at 95%: z = 1.959964; centre (0.97 + z^2/200) / (1 + z^2/100)
    z = sps.norm.ppf(0.975)
    p, n = 0.97, 100
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    r = proportion(97, 100)
    assert r.ci == pytest.approx((centre - half, centre + half), rel=1e-12)
    assert r.ci == pytest.approx((0.9154, 0.9897), abs=1e-4)  # rounded, by hand
    assert proportion(10, 10).ci[1] == 1.0
    with pytest.raises(EatkitError, match="must not exceed n"):
        proportion(11, 10)


def test_group_rates_chi_square_matches_scipy_and_handles_no_variation() -> None:
    r = group_rates({"W": 177, "A": 3, "B": 135}, {"W": 183, "A": 109, "B": 197})
    table = [[3, 106], [135, 62], [177, 6]]
    ref = sps.chi2_contingency(table, correction=False)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12) and r.dof == 2
    assert r.rates["A"] == pytest.approx(3 / 109)
    flat = group_rates({"a": 5, "b": 5}, {"a": 5, "b": 5})
    assert math.isnan(flat.p_value) and flat.dof == 0


@pytest.mark.parametrize("ddof", [0, 1])
def test_pooled_sd_sc_eat_with_ddof_and_welch_against_scipy(ddof: int) -> None:
    rng = np.random.default_rng(7)
    T = rng.normal(size=8)
    A, B = rng.normal(size=(9, 8)), rng.normal(size=(14, 8))
    r = sc_eat(T, A, B, sd="pooled", ddof=ddof, p_method="welch", alternative="less")
    cos = lambda M: M @ T / (np.linalg.norm(M, axis=1) * np.linalg.norm(T))  # noqa: E731
    ua, ub = cos(A), cos(B)
    pooled = math.sqrt((8 * np.var(ua, ddof=ddof) + 13 * np.var(ub, ddof=ddof)) / 21)
    assert r.effect_size == pytest.approx((ua.mean() - ub.mean()) / pooled, rel=1e-10)
    assert r.ddof == ddof
    # Welch's t by hand: t = (mean_a - mean_b) / sqrt(v_a/n_a + v_b/n_b), Welch-Satterthwaite df, variances
    # with the same ddof (ddof 1: exactly scipy's ttest_ind)
    va, vb = np.var(ua, ddof=ddof) / 9, np.var(ub, ddof=ddof) / 14
    t = (ua.mean() - ub.mean()) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / 8 + vb**2 / 13)
    assert r.p_value == pytest.approx(sps.t.cdf(t, df), rel=1e-10)
    if ddof == 1:
        assert r.p_value == pytest.approx(sps.ttest_ind(ua, ub, equal_var=False, alternative="less").pvalue,
                                          rel=1e-10)
