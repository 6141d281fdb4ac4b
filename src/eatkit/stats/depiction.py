"""Who gets generated: the distribution of perceived attribute classes (gender, skin tone, age) over the
images a text-to-image model generates from one prompt (DALL-Eval, Cho et al. ICCV 2023; Stable Bias,
Luccioni et al. NeurIPS 2023).

With p_k the share of the n images labelled class k of K classes,

* DALL-Eval's mean absolute deviation from uniform: MAD = (1/K) Σ_k |p_k - 1/K| (0: every class equally
  often; for K = 2 it is |p_1 - 1/2|);
* the Kullback-Leibler divergence from a reference distribution q (uniform, or a census or labour table):
  KL(p ‖ q) = Σ_k p_k ln(p_k / q_k), with 0 ln 0 = 0 (in nats; every q_k > 0);

each with a percentile bootstrap CI over the images (the n labels resampled with replacement); two models
(two label samples of one prompt) are compared by a permutation test of the difference of a measure,
re-splitting the pooled labels into samples of the original sizes (Monte Carlo, p = (1 + #{|Δ*| >= |Δ|}) /
(1 + draws), two-sided).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count
from eatkit.stats.options import check_option

MEASURES: tuple[str, ...] = ("mad", "kl")


def _shares(counts: Any) -> np.ndarray:
    """Rows of counts (..., K) as shares."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim < 1 or counts.shape[-1] < 2 or not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise EatkitError(f"class counts must be at least 2 non-negative numbers, got {np.asarray(counts).tolist()!r:.60}")
    totals = counts.sum(axis=-1, keepdims=True)
    if np.any(totals == 0):
        raise EatkitError("class counts of zero images have no distribution")
    return counts / totals


def mad_from_uniform(counts: Any) -> np.ndarray | float:
    """DALL-Eval's MAD = (1/K) Σ_k |p_k - 1/K| of the class counts (last axis).

    >>> mad_from_uniform([3, 1]), mad_from_uniform([2, 2, 2])
    (0.25, 0.0)
    """
    p = _shares(counts)
    k = p.shape[-1]
    out = np.abs(p - 1.0 / k).mean(axis=-1)
    return float(out) if out.ndim == 0 else out


def kl_divergence(counts: Any, reference: Any) -> np.ndarray | float:
    """KL(p ‖ q) in nats of the class shares p (last axis) from the reference distribution q.

    >>> round(kl_divergence([1, 1], [0.5, 0.5]), 12), round(kl_divergence([1, 0], [0.5, 0.5]), 6)
    (0.0, 0.693147)
    """
    p = _shares(counts)
    q = np.asarray(reference, dtype=np.float64)
    if q.shape != (p.shape[-1],) or not np.all(np.isfinite(q)) or np.any(q <= 0):
        raise EatkitError(f"the reference distribution must be {p.shape[-1]} positive shares, got "
                          f"{np.asarray(reference).tolist()!r:.60}")
    q = q / q.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / q), 0.0)
    out = terms.sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def _measure(name: str, counts: np.ndarray, reference: np.ndarray | None) -> Any:
    return mad_from_uniform(counts) if name == "mad" else kl_divergence(counts, reference)


@dataclass(frozen=True, kw_only=True)
class Depiction:
    """The class distribution of one prompt's images: counts, shares, MAD and KL with bootstrap CIs."""

    classes: tuple[str, ...]
    counts: tuple[int, ...]
    shares: tuple[float, ...]
    reference: tuple[float, ...]
    mad: float
    kl: float
    mad_ci: tuple[float, float] | None
    kl_ci: tuple[float, float] | None
    n_bootstrap: int
    confidence_level: float
    seed: int | None


def _labels(labels: Any, k: int, what: str) -> np.ndarray:
    out = np.asarray(labels)
    if out.ndim != 1 or out.size == 0 or not np.issubdtype(out.dtype, np.integer) or out.min() < 0 or out.max() >= k:
        raise EatkitError(f"{what} must be a non-empty list of class indices 0..{k - 1}, got {np.asarray(labels).tolist()!r:.60}")
    return out


def depiction(labels: Any, classes: Sequence[str], *, reference: Any = None, n_bootstrap: int = 2000,
              confidence_level: float = 0.95, rng: Any = None) -> Depiction:
    """The class distribution of ``labels`` (the class index of every image) over ``classes``, its MAD
    from uniform and its KL divergence from ``reference`` (shares per class; ``None``: uniform), each with a
    percentile bootstrap CI over the images (``n_bootstrap`` 0: none).

    >>> d = depiction([0, 0, 0, 1], ["man", "woman"], n_bootstrap=0)
    >>> d.counts, d.mad, round(d.kl, 4)
    ((3, 1), 0.25, 0.1308)
    """
    k = len(classes)
    labels = _labels(labels, k, "labels")
    q = np.full(k, 1.0 / k) if reference is None else np.asarray(reference, dtype=np.float64)
    counts = np.bincount(labels, minlength=k)
    kl = kl_divergence(counts, q)
    q = q / q.sum()
    n_bootstrap = check_count("n_bootstrap", n_bootstrap) if n_bootstrap else 0
    generator, seed = resolve_rng(rng)
    cis: dict[str, tuple[float, float] | None] = {"mad": None, "kl": None}
    if n_bootstrap:
        check_option("confidence_level", confidence_level)
        draws = generator.multinomial(labels.size, counts / labels.size, size=n_bootstrap)
        tail = (1 - confidence_level) / 2
        for name in MEASURES:
            low, high = np.quantile(_measure(name, draws, q), [tail, 1 - tail])
            cis[name] = (float(low), float(high))
    return Depiction(classes=tuple(classes), counts=tuple(int(c) for c in counts),
                     shares=tuple(float(s) for s in counts / counts.sum()), reference=tuple(float(v) for v in q),
                     mad=mad_from_uniform(counts), kl=kl, mad_ci=cis["mad"], kl_ci=cis["kl"],
                     n_bootstrap=n_bootstrap, confidence_level=confidence_level, seed=seed)


@dataclass(frozen=True, kw_only=True)
class DepictionComparison:
    """Two models' label samples of one prompt compared by a measure: the difference (first - second), its
    two-sided Monte Carlo permutation p and how it was computed."""

    measure: str
    difference: float
    p_value: float
    n_permutations: int
    seed: int | None
    alternative: str = "two-sided"
    sizes: tuple[int, int] = field(default=(0, 0))


def compare_depictions(first: Any, second: Any, n_classes: int, *, measure: str = "mad", reference: Any = None,
                       permutations: int = 10_000, rng: Any = None) -> DepictionComparison:
    """Permutation test of measure(first) - measure(second) between two label samples (module docstring).

    >>> r = compare_depictions([0] * 20, [0, 1] * 10, 2, permutations=2000, rng=0)
    >>> r.difference, r.p_value < 0.05
    (0.5, True)
    """
    if measure not in MEASURES:
        raise EatkitError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    a = _labels(first, n_classes, "first")
    b = _labels(second, n_classes, "second")
    q = np.full(n_classes, 1.0 / n_classes) if reference is None else np.asarray(reference, dtype=np.float64)
    permutations = check_count("permutations", permutations)
    generator, seed = resolve_rng(rng)

    def stat(x: np.ndarray, y: np.ndarray) -> Any:
        cx = np.stack([np.bincount(r, minlength=n_classes) for r in np.atleast_2d(x)])
        cy = np.stack([np.bincount(r, minlength=n_classes) for r in np.atleast_2d(y)])
        return _measure(measure, cx, q) - _measure(measure, cy, q)

    observed = float(stat(a, b)[0])
    pooled = np.concatenate([a, b])
    tol = 1e-12
    extreme = 0
    # in blocks of about 2**20 draws: memory stays bounded and Ctrl-C is seen between blocks; the generator
    # fills rows in order, so the re-splits (and the p-value) are those of one (permutations, n) draw
    block = max(1, (1 << 20) // pooled.size)
    for start in range(0, permutations, block):
        order = np.argsort(generator.random((min(block, permutations - start), pooled.size)), axis=1)
        shuffled = pooled[order]
        null = stat(shuffled[:, :a.size], shuffled[:, a.size:])
        extreme += int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))
    return DepictionComparison(measure=measure, difference=observed, p_value=(1 + extreme) / (1 + permutations),
                               n_permutations=permutations, seed=seed, sizes=(a.size, b.size))
