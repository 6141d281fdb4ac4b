"""Random-effects meta-analysis (eatkit.stats.meta_analysis) against statsmodels' combine_effects,
published metafor results and estimating equations written out here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from eatkit.errors import EatkitError
from eatkit.stats.meta_analysis import random_effects, smd_variance

from conftest import lazy_module
sm_meta = lazy_module("statsmodels.stats.meta_analysis")
# statsmodels takes the square root of a negative DL tau² + v when Q < k - 1 (its DL is not truncated at 0)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")

# Kacker 2004, Table 1 (the example of statsmodels' tests): effects and their variances
KACKER_Y = np.array([61.00, 61.40, 62.21, 62.30, 62.34, 62.60, 62.70, 62.84, 65.90])
KACKER_V = np.array([0.2025, 1.2100, 0.0900, 0.2025, 0.3844, 0.5625, 0.0676, 0.0225, 1.8225])
# metafor rma(y, v, method="PM" | "DL", control=list(tol=1e-9)), as printed in statsmodels' results_meta.py
KACKER_PM = {"tau2": 0.705395309224248, "b": 62.4076199113286, "se": 0.338030602684471,
             "ci": (61.7450921043947, 63.0701477182625), "QE": 24.801897741835, "QEp": 0.00167935146372742}
KACKER_DL = {"tau2": 0.288049246973751, "b": 62.3901386044504, "se": 0.245749668040304,
             "ci": (61.9084781058787, 62.8717991030221), "I2": 67.744403741711}

# BCG vaccine trials (Colditz et al. 1994; metafor's dat.bcg): tpos, tneg, cpos, cneg
BCG = np.array([[4, 119, 11, 128], [6, 300, 29, 274], [3, 228, 11, 209], [62, 13536, 248, 12619],
                [33, 5036, 47, 5761], [180, 1361, 372, 1079], [8, 2537, 10, 619], [505, 87886, 499, 87892],
                [29, 7470, 45, 7232], [17, 1699, 65, 1600], [186, 50448, 141, 27197], [5, 2493, 3, 2338],
                [27, 16886, 29, 17825]], dtype=float)


def bcg_log_risk_ratios() -> tuple[np.ndarray, np.ndarray]:
    a, b, c, d = BCG.T
    return np.log(a / (a + b)) - np.log(c / (c + d)), 1 / a - 1 / (a + b) + 1 / c - 1 / (c + d)


PM_OPTIONS = {"atol": 1e-10, "maxiter": 10_000}


def statsmodels_result(y, v, method):
    return sm_meta.combine_effects(y, v, method_re=method, **(PM_OPTIONS if method == "iterated" else {}))


def statsmodels_pm_converges(y, v) -> bool:
    # statsmodels 0.15's Paule-Mandel iteration stops with tau² = 0 (converged False) when a step
    # overshoots the root (the estimating equation turns negative): those inputs are checked against the
    # estimating equation itself
    return sm_meta._fit_tau_iterative(y, v, **PM_OPTIONS)[1] is True


def generalised_q(y, v, tau2):
    w = 1 / (v + tau2)
    return w @ (y - w @ y / w.sum()) ** 2


def assert_matches_statsmodels(y, v, ours_method, theirs_method):
    ours = random_effects(y, v, method=ours_method)
    theirs = statsmodels_result(y, v, theirs_method)
    assert ours.tau2 == pytest.approx(theirs.tau2, abs=1e-9, rel=1e-9)
    assert ours.estimate == pytest.approx(theirs.mean_effect_re, abs=1e-9, rel=1e-9)
    assert ours.se == pytest.approx(theirs.sd_eff_w_re, abs=1e-9, rel=1e-9)
    np.testing.assert_allclose(ours.ci, theirs.conf_int(use_t=False)[1], rtol=1e-9, atol=1e-9)
    assert ours.fixed_estimate == pytest.approx(theirs.mean_effect_fe, rel=1e-12)
    assert ours.fixed_se == pytest.approx(theirs.sd_eff_w_fe, rel=1e-12)
    assert ours.q == pytest.approx(theirs.q, rel=1e-9)
    assert ours.q_p_value == pytest.approx(theirs.test_homogeneity().pvalue, rel=1e-9, abs=1e-15)
    assert ours.i2 == pytest.approx(max(0.0, theirs.i2), abs=1e-9)
    np.testing.assert_allclose(ours.weights, theirs.weights_rel_re, rtol=1e-9)


@pytest.mark.parametrize(("ours", "theirs"), [("dl", "dl"), ("pm", "iterated")])
def test_equals_statsmodels_on_published_examples(ours, theirs):
    for y, v in ((KACKER_Y, KACKER_V), bcg_log_risk_ratios()):
        assert_matches_statsmodels(y, v, ours, theirs)


@pytest.mark.parametrize(("ours", "theirs"), [("dl", "dl"), ("pm", "iterated")])
def test_equals_statsmodels_on_random_inputs(ours, theirs):
    rng = np.random.default_rng(38)
    checked = 0
    for _ in range(200):
        k = int(rng.integers(3, 30))
        v = rng.uniform(0.005, 0.3, k)
        y = rng.normal(rng.normal(), np.sqrt(v + rng.uniform(0, 0.3)))
        if statsmodels_result(y, v, "dl").tau2 <= 0:
            continue  # statsmodels' DL does not truncate tau² at 0 (compared separately below)
        if theirs == "iterated" and not statsmodels_pm_converges(y, v):
            tau2 = random_effects(y, v, method="pm").tau2
            assert tau2 > 0 and generalised_q(y, v, tau2) == pytest.approx(k - 1, rel=1e-12)
            continue
        assert_matches_statsmodels(y, v, ours, theirs)
        checked += 1
    assert checked > 100


def test_published_metafor_values():
    pm = random_effects(KACKER_Y, KACKER_V, method="pm")
    assert pm.tau2 == pytest.approx(KACKER_PM["tau2"], abs=1e-9)
    assert pm.estimate == pytest.approx(KACKER_PM["b"], abs=1e-9)
    assert pm.se == pytest.approx(KACKER_PM["se"], abs=1e-9)
    np.testing.assert_allclose(pm.ci, KACKER_PM["ci"], atol=1e-9)
    assert pm.q == pytest.approx(KACKER_PM["QE"], abs=1e-9)
    assert pm.q_p_value == pytest.approx(KACKER_PM["QEp"], abs=1e-12)
    dl = random_effects(KACKER_Y, KACKER_V, method="dl")
    assert dl.tau2 == pytest.approx(KACKER_DL["tau2"], abs=1e-9)
    assert dl.estimate == pytest.approx(KACKER_DL["b"], abs=1e-9)
    assert dl.se == pytest.approx(KACKER_DL["se"], abs=1e-9)
    np.testing.assert_allclose(dl.ci, KACKER_DL["ci"], atol=1e-9)
    assert dl.i2 * 100 == pytest.approx(KACKER_DL["I2"], abs=1e-9)
    # BCG, REML (metafor's rma default, its printed output): tau² 0.3132, estimate -0.7145, se 0.1798,
    # Q(df = 12) = 152.2330, I² 92.22% (metafor's I² uses tau²; Higgins-Thompson's (Q - df) / Q is 92.12%)
    reml = random_effects(*bcg_log_risk_ratios(), method="reml")
    assert (round(reml.tau2, 4), round(reml.estimate, 4), round(reml.se, 4), round(reml.q, 4)) == \
        (0.3132, -0.7145, 0.1798, 152.2330)
    assert reml.q_df == 12


def test_reml_is_the_restricted_likelihood_maximum():
    # independent: maximise the restricted log-likelihood numerically
    def neg_restricted_loglik(tau2, y, v):
        w = 1 / (v + tau2)
        mu = w @ y / w.sum()
        return 0.5 * (np.log(v + tau2).sum() + np.log(w.sum()) + w @ (y - mu) ** 2)

    rng = np.random.default_rng(5)
    for _ in range(20):
        v = rng.uniform(0.01, 0.2, 12)
        y = rng.normal(0.3, np.sqrt(v + 0.1))
        best = optimize.minimize_scalar(neg_restricted_loglik, bounds=(0, 10), args=(y, v), method="bounded",
                                        options={"xatol": 1e-12})
        assert random_effects(y, v, method="reml").tau2 == pytest.approx(best.x, abs=1e-6)


def test_homogeneous_effects_give_the_fixed_effect():
    v = np.array([0.04, 0.05, 0.06, 0.05])
    y = np.array([0.30, 0.31, 0.29, 0.30])  # Q far below k - 1: statsmodels' DL tau² would be negative
    assert sm_meta.combine_effects(y, v, method_re="dl").tau2 < 0
    for method in ("dl", "pm", "reml"):
        r = random_effects(y, v, method=method)
        assert r.tau2 == 0 and r.i2 == 0
        assert r.estimate == pytest.approx(r.fixed_estimate, rel=1e-15) and r.se == pytest.approx(r.fixed_se)


def test_prediction_interval_follows_higgins_2009():
    y, v = bcg_log_risk_ratios()
    r = random_effects(y, v, method="dl", confidence_level=0.9)
    half = stats.t.ppf(0.95, len(y) - 2) * np.sqrt(r.tau2 + r.se**2)
    np.testing.assert_allclose(r.prediction_interval, (r.estimate - half, r.estimate + half), rtol=1e-12)
    assert r.ci[1] - r.ci[0] == pytest.approx(2 * stats.norm.ppf(0.95) * r.se)
    assert all(np.isnan(random_effects([0.1, 0.4], [0.01, 0.02]).prediction_interval))
    assert r.to_dict()["prediction_interval"] == list(r.prediction_interval)


def test_smd_variance_closed_form():
    # Borenstein et al. 2009, eq. 4.20 written out: (n1 + n2) / (n1 n2) + d² / (2 (n1 + n2))
    assert smd_variance(0.0, 10, 10) == pytest.approx(0.2)
    np.testing.assert_allclose(smd_variance(np.array([1.0, 2.0]), 8, 12), [20 / 96 + 1 / 40, 20 / 96 + 4 / 40])


@pytest.mark.parametrize(("effects", "variances", "kw", "message"), [
    ([0.1], [0.1], {}, "at least 2 effect sizes"),
    ([0.1, 0.2], [0.1], {}, "one length"),
    ([0.1, np.nan], [0.1, 0.1], {}, "'effects' has non-finite values"),
    ([0.1, 0.2], [0.1, 0.0], {}, "variances must be positive"),
    ([0.1, 0.2], [0.1, 0.1], {"method": "hs"}, "method must be one of dl, pm, reml"),
    ([0.1, 0.2], [0.1, 0.1], {"confidence_level": 1.5}, r"confidence_level must be a number in \(0, 1\), got 1.5"),
])
def test_bad_inputs(effects, variances, kw, message):
    with pytest.raises(EatkitError, match=message):
        random_effects(effects, variances, **kw)
