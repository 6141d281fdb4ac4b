"""Multiple-testing corrections across a battery of tests (adjusted p-values)."""

from __future__ import annotations

from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.options import check_option

METHODS = ("holm", "bh")


def adjust_p_values(p_values: Any, method: str = "bh") -> np.ndarray:
    """Adjusted p-values, in the input order.

    ``"holm"``: Holm (1979) step-down, controls the family-wise error rate:
    p̃_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).
    ``"bh"``: Benjamini & Hochberg (1995) step-up, controls the false discovery rate (the q-value):
    q_(i) = min_{j >= i} min(1, m p_(j) / j).

    >>> adjust_p_values([0.01, 0.04, 0.03], "bh")
    array([0.03, 0.04, 0.04])
    >>> adjust_p_values([0.01, 0.04, 0.03], "holm")
    array([0.03, 0.06, 0.06])
    """
    if method not in METHODS:
        raise EatkitError(f"method must be one of {', '.join(METHODS)}, got '{method}'")
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise EatkitError("p-values must be a 1-D array")
    if p.size == 0:
        return p.copy()
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise EatkitError("p-values must be finite numbers in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ranked / rank)[::-1])[::-1]
    out = np.empty(m)
    out[order] = adjusted
    return out


def significant(p_value: float | None, alpha: float) -> bool:
    """Whether a p- or q-value is below ``alpha`` (a missing or NaN value is not significant): the
    decision the reports mark. With Benjamini-Hochberg q-values (:func:`adjust_p_values`), the tests with
    q < alpha are those the step-up procedure rejects at FDR alpha (Benjamini & Hochberg 1995).

    >>> significant(0.01, 0.05), significant(0.05, 0.05), significant(None, 0.05), significant(float("nan"), 0.05)
    (True, False, False, False)
    """
    check_option("alpha", alpha)
    return p_value is not None and bool(np.isfinite(p_value)) and p_value < alpha
