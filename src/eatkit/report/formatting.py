"""How numbers from a run folder are written in tables, plots and the HTML report (presentation only)."""

from __future__ import annotations

import math
from typing import Any

#: significance marks for Benjamini-Hochberg q-values, strictest first
STAR_LEVELS: tuple[tuple[float, str], ...] = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
#: the legend of the significance marks, shared by every figure that uses them
STARS_NOTE = (
    ", ".join(f"{mark} q < {level:g}" for level, mark in reversed(STAR_LEVELS))
    + " (q: p-value after Benjamini-Hochberg correction across the run)"
)


def is_missing(value: Any) -> bool:
    """True for ``None`` and NaN (a statistic the run could not compute)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt_d(value: float | None) -> str:
    """An effect size with two decimals, as papers report Cohen's d.

    >>> fmt_d(1.5049), fmt_d(-0.2), fmt_d(None)
    ('1.50', '-0.20', 'n/a')
    """
    return "n/a" if is_missing(value) else f"{value:.2f}"


def fmt_p(value: float | None) -> str:
    """A p- or q-value: three decimals down to 0.001, two significant digits below.

    >>> fmt_p(0.0123), fmt_p(0.00001234), fmt_p(None)
    ('0.012', '1.2e-05', 'n/a')
    """
    if is_missing(value):
        return "n/a"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def stars(q: float | None) -> str:
    """``***``/``**``/``*`` for q < 0.001/0.01/0.05, else ``""``.

    >>> stars(0.0004), stars(0.03), stars(0.2)
    ('***', '*', '')
    """
    if is_missing(q):
        return ""
    return next((mark for level, mark in STAR_LEVELS if q < level), "")


def fmt_sizes(first: int, second: int) -> str:
    """A set size as the iEAT tables write it: ``"8"``, or ``"8/7"`` when the two sets differ.

    >>> fmt_sizes(8, 8), fmt_sizes(8, 7)
    ('8', '8/7')
    """
    return str(first) if first == second else f"{first}/{second}"
