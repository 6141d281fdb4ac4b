"""Descriptive summaries that analyses put in their records: mean and SD of repeated measurements, and
the change along a series in percent. (The report formats these numbers; it computes none.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.options import check_ddof


@dataclass(frozen=True)
class Description:
    """The mean and SD of ``n`` values (per column when summarised along an axis), the SD computed with
    ``ddof`` delta degrees of freedom: SD = sqrt(sum((x - mean)^2) / (n - ddof)); NaN where n - ddof < 1."""

    mean: Any
    sd: Any
    n: int
    ddof: int


def describe(values: Any, *, axis: int = 0, ddof: int = 1) -> Description:
    """Mean and SD of ``values`` along ``axis`` (e.g. over a group's images, per frame).

    >>> d = describe([[1.0, 2.0], [3.0, 6.0]])
    >>> d.mean.tolist(), d.sd.tolist(), d.n
    ([2.0, 4.0], [1.4142135623730951, 2.8284271247461903], 2)
    >>> float(describe([5.0]).sd)
    nan
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0 or x.ndim == 0:
        raise EatkitError("describe needs at least one value")
    ddof = check_ddof(ddof)
    n = x.shape[axis]
    mean = x.mean(axis=axis)
    sd = x.std(axis=axis, ddof=ddof) if n - ddof >= 1 else np.full_like(mean, np.nan)
    return Description(mean, sd[()] if np.ndim(sd) == 0 else sd, n, ddof)


def percent_change(series: Any) -> np.ndarray:
    """The change of each value of a series from its first value, in percent: 100 (x_t / x_0 - 1)
    (the generation probe's brightness change; the "American == White" seed reports +35 %).

    >>> percent_change([200.0, 250.0, 150.0]).tolist()
    [0.0, 25.0, -25.0]
    """
    x = np.asarray(series, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise EatkitError("percent_change needs a non-empty 1-D series")
    return 100.0 * (x / x[0] - 1.0)
