"""Bootstrap confidence intervals for the EAT effect size, resampling stimuli within each set.

Each resample draws, with replacement and independently, |X| stimuli from X and |Y| from Y -- and, when
``resample`` lists them, |A| from A and |B| from B (the other sets stay fixed) -- recomputes every
association s(w, A*, B*) from the precomputed cosine matrices, and the effect size of the resample. The
interval is the percentile interval of the resampled effect sizes.

By default only the targets are resampled: like the permutation test, which re-partitions X ∪ Y, the
interval is conditional on the attribute sets. Resampling A and B as well (``resample=("X", "Y", "A",
"B")``) adds the variability of the attribute stimuli; with the small attribute sets of many tests
(6-8 words) that interval is wide and can be far from symmetric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.progress import tracker
from eatkit.stats._validation import check_count, check_sets
from eatkit.stats.cost import check_cost
from eatkit.stats.association import cosine_matrix, differential_association, rounding_error
from eatkit.stats.effect_size import check_sd_sizes, cohens_d
from eatkit.stats.options import TestOptions, check_option
from eatkit.stats._random import resolve_rng

_BATCH = 2048  # resamples per vectorised batch (part of the seeded stream's layout, like MC_BATCH)
#: the most resamples a bootstrap takes (80 MB of effect sizes; 10^5 already fix a 95% CI's ends to about
#: two digits): beyond, a one-line error before any work rather than an allocation that fails or a run
#: that does not end
MAX_RESAMPLES = 10**7


@dataclass(frozen=True, kw_only=True)
class BootstrapResult:
    """Percentile bootstrap interval of the effect size (``method`` "percentile")."""

    low: float
    high: float
    confidence_level: float
    n_bootstrap: int
    resampled: tuple[str, ...]
    seed: int | None
    distribution: np.ndarray = field(repr=False)
    method: str = "percentile"


def bootstrap_effect_size(
    X: Any,
    Y: Any,
    A: Any,
    B: Any,
    *,
    n_bootstrap: int = 10_000,
    confidence_level: float = 0.95,
    resample: tuple[str, ...] = ("X", "Y"),
    rng: Any = None,
    ddof: int = 1,
    sd: str = "caliskan",
) -> BootstrapResult:
    """Percentile bootstrap CI of the EAT effect size d.

    Examples
    --------
    >>> X = [[1.0, 0.1], [0.9, 0.2], [1.0, 0.0]]; Y = [[0.1, 1.0], [0.2, 0.9], [0.0, 1.0]]
    >>> A = [[1.0, 0.0], [0.8, 0.1]]; B = [[0.0, 1.0], [0.1, 0.8]]
    >>> ci = bootstrap_effect_size(X, Y, A, B, n_bootstrap=200, rng=0)
    >>> bool(ci.low <= ci.high), ci.n_bootstrap
    (True, 200)
    """
    sets = check_sets({"A": 1, "B": 1}, X=X, Y=Y, A=A, B=B)
    ddof = TestOptions(sd=sd, ddof=ddof).validated().ddof
    check_sd_sizes(sd, len(sets["X"]), len(sets["Y"]), ddof)
    confidence_level = check_option("confidence_level", confidence_level)
    n_bootstrap = check_count("n_bootstrap", n_bootstrap)
    if n_bootstrap > MAX_RESAMPLES:
        raise EatkitError(f"n_bootstrap={n_bootstrap:.3g} bootstrap resamples is more than eatkit takes "
                          f"({MAX_RESAMPLES:.0e}; 10^4 to 10^5 give a 95% CI to two digits)")
    rows = sum(len(v) for v in sets.values())
    check_cost(f"{n_bootstrap:.3g} bootstrap resamples of {rows} stimuli", float(n_bootstrap) * rows * 4,
               "use fewer resamples (10^4 to 10^5 give a 95% CI to two digits)")
    unknown = set(resample) - {"X", "Y", "A", "B"}
    if unknown:
        raise EatkitError(f"resample lists unknown sets: {', '.join(sorted(unknown))} (use X, Y, A, B)")
    generator, seed = resolve_rng(rng)
    cos = {t + a: cosine_matrix(sets[t], sets[a]) for t in "XY" for a in "AB"}
    atol = rounding_error(sets["X"].shape[1])
    sizes = {name: len(v) for name, v in sets.items()}
    out = np.empty(n_bootstrap)
    with tracker("bootstrap", n_bootstrap, "resamples") as tick:
        for start in range(0, out.size, _BATCH):
            b = min(_BATCH, out.size - start)
            out[start : start + b] = _resampled_d(cos, sizes, resample, generator, b, sd=sd, ddof=ddof, atol=atol)
            tick.advance(b)
    tail = (1 - confidence_level) / 2
    with np.errstate(invalid="ignore"):  # resamples of zero variance give d = +-inf; between the two, no bound
        low, high = np.quantile(out, [tail, 1 - tail])
    return BootstrapResult(low=float(low), high=float(high), confidence_level=confidence_level, n_bootstrap=out.size,
                           resampled=tuple(resample), seed=seed, distribution=out)


def _resampled_d(cos: dict[str, np.ndarray], sizes: dict[str, int], resample: Sequence[str],
                 generator: np.random.Generator, b: int, *, sd: str, ddof: int, atol: float) -> np.ndarray:
    """d of ``b`` resamples (the sets named in ``resample`` drawn with replacement, the others fixed)."""
    # weights[name][r, i] = how often stimulus i of set `name` is in resample r, over the set size
    weights = {name: _weights(generator, b, sizes[name], name in resample) for name in "AB"}
    groups = []
    for t in "XY":
        # s(w, A*, B*) for every original target w, then weighted by the target resample
        s_all = differential_association(cos[t + "A"], cos[t + "B"], weights["A"], weights["B"])  # (b, |t|)
        idx = _indices(generator, b, sizes[t], t in resample)
        groups.append(np.take_along_axis(s_all, idx, axis=1))
    return cohens_d(groups[0], groups[1], sd=sd, ddof=ddof, atol=atol)


def _indices(rng: np.random.Generator, b: int, n: int, resampled: bool) -> np.ndarray:
    if not resampled:
        return np.broadcast_to(np.arange(n), (b, n))
    return rng.integers(0, n, size=(b, n))


def _weights(rng: np.random.Generator, b: int, n: int, resampled: bool) -> np.ndarray:
    """Row r: the multiplicity of each stimulus in resample r divided by n (so a dot product is a mean)."""
    if not resampled:
        return np.full((b, n), 1.0 / n)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=b) / n
