"""Standardised effect sizes (Cohen's d) of a difference between two groups of association values.

Two standard deviations are offered:

* ``"caliskan"``: the SD of *all* values of both groups together (Caliskan et al. 2017; iEAT seed §3.3;
  ML-EAT seed eqs. 1 and 5), with ``ddof`` settable (default 1, the sample SD; Caliskan et al.'s code
  used ddof=1 too),
* ``"pooled"``: the pooled SD for unequal group sizes ("American == White" seed, appendix A.2, eq. 4):
  sqrt(((N1 - 1) s1² + (N2 - 1) s2²) / (N1 + N2 - 2)), with s1, s2 each group's SD computed with
  ``ddof`` (1: the sample SDs, the textbook pooled SD; 0: the population SDs the seed's authors used).
"""

from __future__ import annotations

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.options import TestOptions


def check_sd_sizes(sd: str, n_first: int, n_second: int, ddof: int) -> None:
    """Reject an SD (validated by :class:`~eatkit.stats.options.TestOptions`) undefined for these group sizes."""
    if sd == "pooled" and (n_first < 2 or n_second < 2):
        raise EatkitError(
            f"the pooled SD needs at least 2 values in each group, got {n_first} and {n_second}"
        )
    if sd == "caliskan" and n_first + n_second <= ddof:
        raise EatkitError(f"the SD with ddof={ddof} needs more than {ddof} values in all")


def cohens_d(
    first: np.ndarray, second: np.ndarray, *, sd: str = "caliskan", ddof: int = 1, atol: float = 0.0
) -> np.ndarray:
    """(mean(first) - mean(second)) / SD along the last axis (so it vectorises over bootstrap rows).

    ``atol`` is the rounding error of each value: an SD or a difference of means within 2 atol of zero
    is zero (so rounding noise in cosines is not standardised into an effect). A zero SD (all values
    identical) gives d = 0 when the means are equal and ±inf otherwise, rather than raising, so a
    degenerate resample does not abort a bootstrap.

    >>> float(cohens_d(np.array([1.0, 2.0]), np.array([0.0, 1.0])))
    1.224744871391589
    """
    first = np.asarray(first, dtype=np.float64)
    second = np.asarray(second, dtype=np.float64)
    options = TestOptions(sd=sd, ddof=ddof).validated()
    check_sd_sizes(sd, first.shape[-1], second.shape[-1], options.ddof)
    diff = first.mean(axis=-1) - second.mean(axis=-1)
    if sd == "caliskan":
        scale = np.concatenate([first, second], axis=-1).std(axis=-1, ddof=ddof)
    else:
        n1, n2 = first.shape[-1], second.shape[-1]
        v1, v2 = first.var(axis=-1, ddof=ddof), second.var(axis=-1, ddof=ddof)
        scale = np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2))
    diff = np.where(np.abs(diff) <= 2 * atol, 0.0, diff)
    scale = np.where(scale <= 2 * atol, 0.0, scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = diff / scale
    return np.where((scale == 0) & (diff == 0), 0.0, d)
