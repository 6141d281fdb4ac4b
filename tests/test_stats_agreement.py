"""Agreement between measures (eatkit.stats.agreement): ICC against Shrout & Fleiss's published example and
an ANOVA by statsmodels; the Spearman CI's coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from eatkit.errors import EatkitError
from eatkit.stats.agreement import icc, spearman_ci

# Shrout & Fleiss 1979, Table 2: 6 targets x 4 judges
SF = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float)


def test_shrout_fleiss_published_values():
    # their Table 4: ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71; 95% CIs as pingouin documents for this table
    expected = {"1,1": (0.17, (-0.13, 0.72)), "2,1": (0.29, (0.02, 0.76)), "3,1": (0.71, (0.34, 0.95))}
    for form, (value, ci) in expected.items():
        r = icc(SF, form)
        assert round(r.icc, 2) == value and tuple(round(c, 2) for c in r.ci) == ci
        assert r.n == 6 and r.k == 4


def test_mean_squares_equal_a_two_way_anova():
    anova = pytest.importorskip("statsmodels.stats.anova")
    ols = pytest.importorskip("statsmodels.formula.api").ols
    import pandas as pd

    rng = np.random.default_rng(2)
    x = rng.normal(size=(9, 5)) + rng.normal(size=(9, 1))
    frame = pd.DataFrame([(i, j, x[i, j]) for i in range(9) for j in range(5)], columns=["t", "r", "y"])
    table = anova.anova_lm(ols("y ~ C(t) + C(r)", frame).fit())
    ms_r, ms_c, ms_e = table["mean_sq"]
    r3, r2 = icc(x, "3,1"), icc(x, "2,1")
    assert r3.icc == pytest.approx((ms_r - ms_e) / (ms_r + 4 * ms_e), rel=1e-10)
    assert r2.icc == pytest.approx((ms_r - ms_e) / (ms_r + 4 * ms_e + 5 * (ms_c - ms_e) / 9), rel=1e-10)
    assert r3.f == pytest.approx(table["F"].iloc[0], rel=1e-10)
    assert r3.p_value == pytest.approx(table["PR(>F)"].iloc[0], rel=1e-8)


def test_spearman_ci_covers_the_population_value():
    rng = np.random.default_rng(0)
    rho, n, covered = 0.5, 30, 0
    truth = 6 / np.pi * np.arcsin(rho / 2)  # Spearman's rho of a bivariate normal
    cov = [[1, rho], [rho, 1]]
    for _ in range(400):
        x = rng.multivariate_normal([0, 0], cov, size=n)
        low, high = spearman_ci(stats.spearmanr(x[:, 0], x[:, 1]).statistic, n)
        covered += low <= truth <= high
    assert 0.92 <= covered / 400 <= 0.98


def test_perfect_consistency_is_one_without_an_interval():
    r = icc([[1, 1], [2, 2], [3, 3]])
    assert r.icc == 1.0 and r.p_value == 0.0 and np.isinf(r.f) and all(np.isnan(r.ci))


def test_spearman_ci_edges():
    assert all(np.isnan(spearman_ci(0.5, 3))) and all(np.isnan(spearman_ci(float("nan"), 10)))
    assert spearman_ci(1.0, 10) == (1.0, 1.0)
    low, high = spearman_ci(0.3, 50, 0.9)
    half = stats.norm.ppf(0.95) * np.sqrt((1 + 0.045) / 47)
    assert (low, high) == pytest.approx((np.tanh(np.arctanh(0.3) - half), np.tanh(np.arctanh(0.3) + half)))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: icc([[1, 2, 3]]), "at least 2 of each"),
    (lambda: icc(SF, "2,k"), "form must be one of"),
    (lambda: icc([[1, np.nan], [2, 3]]), "non-finite"),
    (lambda: spearman_ci(1.5, 10), "lies in \\[-1, 1\\]"),
])
def test_bad_inputs(call, message):
    with pytest.raises(EatkitError, match=message):
        call()
