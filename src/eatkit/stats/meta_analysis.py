"""Random-effects meta-analysis of effect sizes: one bias measured many ways (sentence contexts, prompt
templates, the models of a sweep, generation seeds) combined into one estimate with its heterogeneity.

The between-measurement variance tau² is estimated by DerSimonian-Laird (method of moments), Paule-Mandel
(generalised Q equal to its expectation) or REML; the combined effect is the inverse-variance weighted mean
with weights 1 / (v_i + tau²). Within-measurement variances come from :func:`smd_variance` (the closed form
for a standardised mean difference) or from a resampling distribution (the variance of bootstrap d).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_values
from eatkit.stats.options import check_option
from eatkit.stats.association import differential_association, unit_rows
from eatkit.stats.degeneracy import META_RANGE, check_range
from eatkit.stats.effect_size import cohens_d

#: the estimators of tau² :func:`random_effects` knows
METHODS = ("dl", "pm", "reml")


@dataclass(frozen=True)
class RandomEffectsResult:
    """A random-effects combination of ``k`` effect sizes and how it was computed.

    Attributes
    ----------
    estimate, se : float
        Combined effect mu = Σ w_i y_i / Σ w_i, w_i = 1 / (v_i + tau²), and its standard error (Σ w_i)^-1/2.
    ci : tuple of float
        Normal (Wald) confidence interval estimate ± z se at ``confidence_level``.
    z, p_value : float
        Wald statistic estimate / se and its two-sided normal p (H0: mu = 0).
    tau2 : float
        Between-measurement variance (method ``method``; truncated at 0).
    i2 : float
        I² = max(0, (Q - (k - 1)) / Q) (Higgins & Thompson 2002): the share of variation beyond chance.
    q, q_df, q_p_value : float, int, float
        Cochran's Q = Σ (y_i - mu_FE)² / v_i, its degrees of freedom k - 1 and chi-square p
        (H0: no heterogeneity; "the measurements disagree more than chance" when small).
    prediction_interval : tuple of float
        Where the effect of a new measurement is expected: mu ± t_{k-2} sqrt(tau² + se²) (Higgins, Thompson
        & Spiegelhalter 2009, eq. 11); NaN for k < 3.
    fixed_estimate, fixed_se : float
        The common-effect (fixed, tau² = 0) estimate and its standard error.
    weights : tuple of float
        Relative random-effects weights w_i / Σ w (sum to 1), in input order.
    effects, variances : tuple of float
        The combined effect sizes y_i and their within-measurement variances v_i, in input order.
    effect_cis : tuple of (float, float)
        Each effect's own normal interval y_i ± z sqrt(v_i) (the rows of a forest plot).
    method : str
        ``"dl"`` (DerSimonian & Laird 1986), ``"pm"`` (Paule & Mandel 1982) or ``"reml"``.
    confidence_level : float
    k : int
        Number of effect sizes combined.
    """

    estimate: float
    se: float
    ci: tuple[float, float]
    z: float
    p_value: float
    tau2: float
    i2: float
    q: float
    q_df: int
    q_p_value: float
    prediction_interval: tuple[float, float]
    fixed_estimate: float
    fixed_se: float
    weights: tuple[float, ...] = field(repr=False)
    effects: tuple[float, ...] = field(repr=False)
    variances: tuple[float, ...] = field(repr=False)
    effect_cis: tuple[tuple[float, float], ...] = field(repr=False)
    method: str
    confidence_level: float
    k: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (tuples become lists)."""
        return {name: [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value
                for name, value in self.__dict__.items()}


def smd_variance(d: Any, n1: int, n2: int) -> np.ndarray | float:
    """Large-sample variance of a standardised mean difference between groups of n1 and n2:
    V(d) = (n1 + n2) / (n1 n2) + d² / (2 (n1 + n2)) (Hedges & Olkin 1985, eq. 5.15; Borenstein et al.
    2009, eq. 4.20). For an EAT d (X and Y target sets, SD over X ∪ Y) it is the closed-form approximation;
    the bootstrap variance of d is the resampling alternative.

    >>> round(smd_variance(0.5, 8, 8), 6)
    0.257812
    """
    for name, n in (("n1", n1), ("n2", n2)):
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
            raise EatkitError(f"{name} must be a positive integer, got {n!r}")
    values = check_values("d", np.ravel(d))
    variance = (n1 + n2) / (n1 * n2) + values**2 / (2 * (n1 + n2))
    return float(variance[0]) if np.ndim(d) == 0 else variance.reshape(np.shape(d))


def _checked(effects: Any, variances: Any) -> tuple[np.ndarray, np.ndarray]:
    y = check_values("effects", effects)
    v = check_values("variances", variances)
    if v.shape != y.shape:
        raise EatkitError(f"effects and variances must have one length, got {y.size} and {v.size}")
    if y.size < 2:
        raise EatkitError(f"a meta-analysis needs at least 2 effect sizes, got {y.size}")
    if (v <= 0).any():
        raise EatkitError(f"variances must be positive; effect {int(np.argmax(v <= 0))} has {v[v <= 0][0]!r}")
    why = "the weights 1/v and the weighted squared effects stay in double precision"
    check_range("effects", y, (0.0, META_RANGE[1]), why)
    check_range("variances", v, META_RANGE, why)
    return y, v


def _generalised_q(y: np.ndarray, v: np.ndarray, tau2: float) -> float:
    w = 1.0 / (v + tau2)
    mu = w @ y / w.sum()
    return float(w @ (y - mu) ** 2)


def _reml_score(y: np.ndarray, v: np.ndarray, tau2: float) -> float:
    # d/d tau² of the restricted log-likelihood -1/2 [Σ ln(v_i + tau²) + ln Σ w_i + Σ w_i (y_i - mu)²]
    # (Viechtbauer 2005, eq. 9): -Σ w_i + Σ w_i² / Σ w_i + Σ w_i² (y_i - mu)², halved
    w = 1.0 / (v + tau2)
    mu = w @ y / w.sum()
    return float(-w.sum() + (w @ w) / w.sum() + (w * w) @ (y - mu) ** 2) / 2


def _root(function: Any, y: np.ndarray, v: np.ndarray) -> float:
    """The tau² >= 0 where a decreasing estimating function crosses 0 (0 when it starts below 0)."""
    from scipy import optimize

    if function(0.0) <= 0:
        return 0.0
    high = max(float(np.var(y)), float(v.max()), 1e-12)
    while function(high) > 0:
        high *= 2
    return float(optimize.brentq(function, 0.0, high, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))


def _tau2(y: np.ndarray, v: np.ndarray, q: float, method: str) -> float:
    k = y.size
    if method == "dl":
        # DerSimonian & Laird 1986: tau² = max(0, (Q - (k - 1)) / (Σ w - Σ w² / Σ w)), w = 1 / v
        w = 1.0 / v
        return max(0.0, float((q - (k - 1)) / (w.sum() - (w @ w) / w.sum())))
    if method == "pm":
        # Paule & Mandel 1982 (DerSimonian & Kacker 2007, eq. 6): generalised Q(tau²) = k - 1
        return _root(lambda t: _generalised_q(y, v, t) - (k - 1), y, v)
    return _root(lambda t: _reml_score(y, v, t), y, v)


def random_effects(effects: Any, variances: Any, method: str = "dl",
                   confidence_level: float = 0.95) -> RandomEffectsResult:
    """Combine effect sizes ``effects`` with within-measurement ``variances`` in a random-effects model
    y_i = mu + u_i + e_i, u_i ~ N(0, tau²), e_i ~ N(0, v_i).

    ``method`` estimates tau²: ``"dl"`` DerSimonian-Laird, ``"pm"`` Paule-Mandel (statsmodels'
    ``method_re="iterated"``, solved here to machine precision), ``"reml"`` restricted maximum likelihood
    (the root of its score). Intervals are normal (Wald); the prediction interval uses t with k - 2 df.

    >>> r = random_effects([0.2, 0.5, 0.9], [0.01, 0.02, 0.015])
    >>> round(r.estimate, 4), round(r.tau2, 4), round(r.i2, 3), r.method
    (0.5297, 0.1272, 0.898, 'dl')
    """
    from scipy import stats as sps

    if method not in METHODS:
        raise EatkitError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    level = check_option("confidence_level", confidence_level)
    y, v = _checked(effects, variances)
    k = y.size
    w_fixed = 1.0 / v
    fixed = float(w_fixed @ y / w_fixed.sum())
    q = float(w_fixed @ (y - fixed) ** 2)  # Cochran 1954
    tau2 = _tau2(y, v, q, method)
    w = 1.0 / (v + tau2)
    estimate = float(w @ y / w.sum())
    se = math.sqrt(1.0 / w.sum())
    crit = float(sps.norm.isf((1 - level) / 2))
    z = estimate / se
    if k >= 3:  # Higgins, Thompson & Spiegelhalter 2009, eq. 11
        half = float(sps.t.isf((1 - level) / 2, k - 2)) * math.sqrt(tau2 + se * se)
        prediction = (estimate - half, estimate + half)
    else:
        prediction = (math.nan, math.nan)
    return RandomEffectsResult(
        estimate=estimate, se=se, ci=(estimate - crit * se, estimate + crit * se), z=z,
        p_value=float(2 * sps.norm.sf(abs(z))), tau2=tau2,
        i2=max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0,
        q=q, q_df=k - 1, q_p_value=float(sps.chi2.sf(q, k - 1)), prediction_interval=prediction,
        fixed_estimate=fixed, fixed_se=math.sqrt(1.0 / w_fixed.sum()),
        weights=tuple(float(x) for x in w / w.sum()), effects=tuple(map(float, y)), variances=tuple(map(float, v)),
        effect_cis=tuple((float(a - crit * math.sqrt(b)), float(a + crit * math.sqrt(b))) for a, b in zip(y, v)),
        method=method, confidence_level=level, k=k)


def _sampled_associations(X: Any, Y: Any, A: Any, B: Any) -> tuple[np.ndarray, np.ndarray]:
    """s(x_i, A_i, B_i) and s(y_i, A_i, B_i) of every sample i, as (samples, words) arrays."""
    sets = [np.asarray(v, dtype=np.float64) for v in (X, Y, A, B)]
    if any(v.ndim != 3 for v in sets) or len({v.shape[1:] for v in sets}) != 1:
        raise EatkitError("contextual samples must be (words, samples, dim) arrays with one number of samples and "
                          f"one dimension, got shapes {', '.join(str(v.shape) for v in sets)}")
    x, y, a, b = (unit_rows(v.reshape(-1, v.shape[-1])).reshape(v.shape) for v in sets)

    def s(targets: np.ndarray) -> np.ndarray:  # (samples, words): s(w_i, A_i, B_i)
        cos_a = np.einsum("wsd,asd->swa", targets, a)
        cos_b = np.einsum("wsd,bsd->swb", targets, b)
        return differential_association(cos_a, cos_b)

    return s(x), s(y)


def sampled_effect_sizes(X: Any, Y: Any, A: Any, B: Any, *, sd: str = "caliskan", ddof: int = 1) -> np.ndarray:
    """EAT effect size of each sample of contextual embeddings (CEAT, Guo & Caliskan 2021, §3): the sets
    are (words, samples, dim) arrays, sample i holding each word's embedding in its i-th sentence context;
    d_i = (mean_x s(x_i, A_i, B_i) - mean_y s(y_i, A_i, B_i)) / SD (:func:`~eatkit.stats.effect_size.cohens_d`).

    >>> rng = np.random.default_rng(0)
    >>> X, Y, A, B = (rng.normal(size=(3, 4, 5)) for _ in range(4))
    >>> sampled_effect_sizes(X, Y, A, B).shape
    (4,)
    """
    return cohens_d(*_sampled_associations(X, Y, A, B), sd=sd, ddof=ddof)


#: the within-sample variances of CEAT's per-context effect sizes: ``"hedges-olkin"``, the closed form of a
#: standardised mean difference (:func:`smd_variance`), or ``"ceat"``, as CEAT's code weights them
#: (weiguowilliam/CEAT, code/ceat.py ``effect_size``): the sample variance (ddof 1) of the association scores
#: s(w, A, B) over X ∪ Y
CEAT_VARIANCES = ("hedges-olkin", "ceat")


def ceat(X: Any, Y: Any, A: Any, B: Any, *, variance: str = "hedges-olkin", method: str = "dl", sd: str = "caliskan",
         ddof: int = 1, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray, RandomEffectsResult]:
    """CEAT's combined effect (Guo & Caliskan 2021) of contextual samples (see :func:`sampled_effect_sizes`):
    the per-sample effect sizes d_i, their within-sample variances v_i (``variance``: :data:`CEAT_VARIANCES`)
    and their random-effects combination (:func:`random_effects`). With ``variance="ceat"`` and
    ``method="dl"`` the estimate is CEAT's code's combined effect size (its ``ceat_meta``: DerSimonian-Laird
    over weights 1 / (v_i + tau²)); its one-sided p is ``norm.sf(z)`` of the result's ``z``.

    >>> rng = np.random.default_rng(0)
    >>> X, Y, A, B = (rng.normal(size=(3, 5, 4)) + shift for shift in (1.0, -1.0, 1.0, -1.0))
    >>> d, v, r = ceat(X, Y, A, B, variance="ceat")
    >>> d.shape, v.shape, r.k, r.method
    ((5,), (5,), 5, 'dl')
    """
    if variance not in CEAT_VARIANCES:
        raise EatkitError(f"variance must be one of {', '.join(CEAT_VARIANCES)}, got {variance!r}")
    sx, sy = _sampled_associations(X, Y, A, B)
    d = cohens_d(sx, sy, sd=sd, ddof=ddof)
    if not np.isfinite(d).all():
        raise EatkitError("an effect size of a context sample is not finite (its association values are all equal)")
    if variance == "ceat":
        v = np.var(np.concatenate([sx, sy], axis=1), axis=1, ddof=1)
    else:
        v = np.asarray(smd_variance(d, sx.shape[1], sy.shape[1]))
    return d, v, random_effects(d, v, method=method, confidence_level=confidence_level)
