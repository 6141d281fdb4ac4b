"""Agreement between bias measures across models (Du et al. 2021, reliability of bias measures): a
confidence interval for a Spearman correlation between two measures' scores of the models, and the
intraclass correlation of a models x measures table (do the measures rank the models consistently?).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_values
from eatkit.stats.options import check_option

#: Shrout & Fleiss's (1979) single-score forms: one-way random, two-way random (absolute agreement),
#: two-way mixed (consistency)
ICC_FORMS = ("1,1", "2,1", "3,1")


def spearman_ci(rho: float, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """CI of a Spearman correlation of n pairs by Fisher's z with Bonett & Wright's (2000) variance
    (1 + rho²/2) / (n - 3): tanh(atanh(rho) ± z sqrt((1 + rho²/2) / (n - 3))); (NaN, NaN) for n <= 3 or an
    undefined (NaN) rho.

    >>> [round(v, 4) for v in spearman_ci(0.6, 20)]
    [0.175, 0.8365]
    """
    from scipy import stats as sps

    level = check_option("confidence_level", confidence_level)
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise EatkitError(f"n must be a positive integer, got {n!r}")
    if math.isnan(rho) or n <= 3:  # an undefined rho (a measure that ties every model) has no interval
        return (math.nan, math.nan)
    if not -1 <= rho <= 1:
        raise EatkitError(f"a correlation lies in [-1, 1], got {rho!r}")
    if abs(rho) == 1:
        return (float(rho), float(rho))
    half = float(sps.norm.isf((1 - level) / 2)) * math.sqrt((1 + rho * rho / 2) / (n - 3))
    z = math.atanh(rho)
    return (math.tanh(z - half), math.tanh(z + half))


@dataclass(frozen=True)
class ICCResult:
    """An intraclass correlation of n targets (rows, e.g. models) scored by k raters (columns, e.g.
    measures), with its F test and CI (Shrout & Fleiss 1979; McGraw & Wong 1996).

    Attributes
    ----------
    form : str
        ``"1,1"``, ``"2,1"`` or ``"3,1"`` (see :data:`ICC_FORMS`).
    icc : float
    ci : tuple of float
        The F-distribution interval at ``confidence_level``.
    f, df1, df2, p_value : float, int, float, float
        F = MS_rows / MS_error (MS_within for 1,1), its degrees of freedom and p (H0: ICC = 0).
    n, k : int
    confidence_level : float
    """

    form: str
    icc: float
    ci: tuple[float, float]
    f: float
    df1: int
    df2: float
    p_value: float
    n: int
    k: int
    confidence_level: float


def icc(scores: Any, form: str = "3,1", confidence_level: float = 0.95) -> ICCResult:
    """Intraclass correlation of a targets x raters table ``scores`` (no missing values).

    ``"3,1"`` (consistency, raters fixed) asks whether the raters order the targets alike, which is the
    question for bias measures on different scales when given their ranks; ``"2,1"`` adds absolute
    agreement; ``"1,1"`` ignores which rater scored which target.

    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> round(icc(table).icc, 2), round(icc(table, "2,1").icc, 2), round(icc(table, "1,1").icc, 2)
    (0.71, 0.29, 0.17)
    """
    from scipy import stats as sps

    if form not in ICC_FORMS:
        raise EatkitError(f"form must be one of {', '.join(ICC_FORMS)}, got {form!r}")
    level = check_option("confidence_level", confidence_level)
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise EatkitError(f"an ICC needs a targets x raters table with at least 2 of each, got shape {x.shape}")
    check_values("scores", x.ravel())
    n, k = x.shape
    grand = x.mean()
    # two-way ANOVA mean squares (Shrout & Fleiss 1979, Table 1)
    ss_rows = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((x - grand) ** 2).sum()
    ms_r, ms_c = ss_rows / (n - 1), ss_cols / (k - 1)
    ms_e = (ss_total - ss_rows - ss_cols) / ((n - 1) * (k - 1))
    ms_w = (ss_total - ss_rows) / (n * (k - 1))
    alpha = 1 - level
    if (ms_w if form == "1,1" else ms_e) == 0:  # no disagreement at all: F is infinite, the CI undefined
        same_rows = ms_r == 0
        return ICCResult(form=form, icc=math.nan if same_rows else 1.0, ci=(math.nan, math.nan),
                         f=math.nan if same_rows else math.inf, df1=n - 1,
                         df2=float(n * (k - 1) if form == "1,1" else (n - 1) * (k - 1)),
                         p_value=math.nan if same_rows else 0.0, n=n, k=k, confidence_level=level)
    # the F test of ICC = 0: MS_rows against MS_within (one-way) or MS_error (two-way)
    f, df1, df2 = (ms_r / ms_w, n - 1, float(n * (k - 1))) if form == "1,1" else \
        (ms_r / ms_e, n - 1, float((n - 1) * (k - 1)))
    if form == "2,1":
        value = (ms_r - ms_e) / (ms_r + (k - 1) * ms_e + k * (ms_c - ms_e) / n)
        # McGraw & Wong 1996, Table 7, case 2A: F with Satterthwaite's denominator df v
        a, b = k * value / (n * (1 - value)), 1 + k * value * (n - 1) / (n * (1 - value))
        v = (a * ms_c + b * ms_e) ** 2 / ((a * ms_c) ** 2 / (k - 1) + (b * ms_e) ** 2 / ((n - 1) * (k - 1)))
        f_low, f_high = sps.f.isf(alpha / 2, df1, v), sps.f.isf(alpha / 2, v, df1)
        denominator = k * ms_c + (k * n - k - n) * ms_e
        ci = (n * (ms_r - f_low * ms_e) / (f_low * denominator + n * ms_r),
              n * (f_high * ms_r - ms_e) / (denominator + n * f_high * ms_r))
    else:
        within = ms_w if form == "1,1" else ms_e
        value = (ms_r - within) / (ms_r + (k - 1) * within)  # Shrout & Fleiss eq. 2 (1,1) and 4 (3,1)
        f_low, f_high = f / sps.f.isf(alpha / 2, df1, df2), f * sps.f.isf(alpha / 2, df2, df1)
        ci = ((f_low - 1) / (f_low + k - 1), (f_high - 1) / (f_high + k - 1))
    return ICCResult(form=form, icc=float(value), ci=(float(ci[0]), float(ci[1])), f=float(f), df1=df1, df2=df2,
                     p_value=float(sps.f.sf(f, df1, df2)), n=n, k=k, confidence_level=level)
