"""Stability of an EAT over its stimulus sets: resampling every set, subsampling, and reliability.

The permutation test and eatkit's default bootstrap are conditional on the attribute sets; but the
attribute words are a sample too, and results change with them (Antoniak & Mimno 2021, "Bad Seeds",
ACL; Du, Fang & Nguyen 2021, "Assessing the Reliability of Word Embedding Gender Bias Measures", EMNLP).
:func:`stimulus_stability` reports

* **bootstrap over all four sets**: the percentile interval of d when X, Y, A and B are all resampled
  with replacement (:func:`~eatkit.stats.bootstrap_effect_size` with ``resample=("X", "Y", "A", "B")``),
  and the share of resamples whose d has the sign of the observed d;
* **subsampling**: ``n_subsamples`` draws of ``fraction`` of each set (without replacement), each tested
  like the full test (the same permutation test, exact or with ``subsample_permutations`` Monte Carlo
  partitions, one column a subsample; Welch's test with ``p_method="welch"``); the interval of their d and the share that keep the verdict
  (significant at ``alpha`` in the same direction, or not significant, as the full test);
* **split-half reliability** of the per-target scores s(w, A, B), w ∈ X ∪ Y: A and B are each split
  into random halves, the targets' scores from the two halves are correlated (Pearson r) and
  Spearman-Brown corrected, 2r / (1 + r); the mean over ``n_splits`` random splits;
* **internal consistency** (Du et al. 2021, §3.3: Cronbach's alpha with the per-word bias scores of each
  "base pair" as the items and the target words as the subjects): here every attribute pair (a, b) ∈
  A × B is an item scoring a target w by cos(w, a) - cos(w, b) (the mean over all items is s(w, A, B)),
  alpha = k / (k - 1) (1 - Σ_i var(item_i) / var(Σ_i item_i)), k = |A| |B| items, variances with ddof 1
  over the targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_sets, check_share
from eatkit.stats.association import cosine_matrix, differential_association, rounding_error
from eatkit.stats.bootstrap import bootstrap_effect_size
from eatkit.stats.differential import EATResult, welch_p_values
from eatkit.stats.effect_size import cohens_d
from eatkit.stats.influence import full_test
from eatkit.stats.options import TestOptions
from eatkit.stats.permutation import permutation_tests

#: Monte Carlo partitions per subsample's p-value
SUBSAMPLE_PERMUTATIONS = 1999


@dataclass(frozen=True, kw_only=True)
class Stability:
    """How an EAT's d and verdict hold up when its stimulus sets are resampled (module docstring).

    Attributes
    ----------
    effect_size, p_value : float
        The full test.
    significant : bool
        The full test's verdict, p < ``alpha``.
    bootstrap_interval : tuple of float
        Percentile interval (``confidence_level``) of d, all four sets resampled.
    bootstrap_same_sign : float
        Share of those resamples whose d has the sign of the observed d.
    subsample_interval : tuple of float
        Percentile interval of d over the subsamples.
    verdict_kept : float
        Share of subsamples with the full test's verdict.
    split_half : float
        Mean Spearman-Brown corrected split-half reliability of s(w, A, B) over ``n_splits`` splits.
    cronbach_alpha : float
        Internal consistency of the attribute pairs as items (Du et al. 2021).
    """

    effect_size: float
    p_value: float
    significant: bool
    alpha: float
    alternative: str
    sd: str
    ddof: int
    confidence_level: float
    bootstrap_interval: tuple[float, float]
    bootstrap_same_sign: float
    n_bootstrap: int
    fraction: float
    subsample_sizes: dict[str, int]
    n_subsamples: int
    permutations: int
    subsample_interval: tuple[float, float]
    verdict_kept: float
    split_half: float
    n_splits: int
    cronbach_alpha: float
    seed: int | None
    subsample_effect_sizes: np.ndarray = field(repr=False)
    subsample_p_values: np.ndarray = field(repr=False)


def stimulus_stability(X: Any, Y: Any, A: Any, B: Any, *, alternative: str = "greater",
                       permutations: str | int = "auto", alpha: float = 0.05, n_bootstrap: int = 2000,
                       confidence_level: float = 0.95, n_subsamples: int = 500, fraction: float = 0.8,
                       subsample_permutations: int = SUBSAMPLE_PERMUTATIONS, n_splits: int = 200,
                       rng: Any = None, ddof: int = 1, sd: str = "caliskan", p_method: str = "permutation",
                       reference: EATResult | None = None) -> Stability:
    """Bootstrap over all sets, subsampling, split-half reliability and Cronbach's alpha of an EAT.

    Parameters
    ----------
    X, Y, A, B : array_like, shape (n, d)
        Embeddings; every set needs at least 2 stimuli (A and B are split in halves).
    permutations : "auto", "exact" or int
        The full test's p-value (as in :func:`~eatkit.stats.eat`).
    fraction : float
        Share of each set kept by a subsample (at least 2 targets and 1 attribute of each set).
    subsample_permutations : int
        Monte Carlo partitions of each subsample's permutation test (exact when there are at most that many).
    alternative, alpha, n_bootstrap, confidence_level, rng, ddof, sd, p_method
        As in :func:`~eatkit.stats.eat` and :func:`~eatkit.stats.bootstrap_effect_size`.
    reference : EATResult, optional
        The full test, when already computed with these options: not computed again.

    Examples
    --------
    >>> rng = np.random.default_rng(0); axis = rng.normal(size=8)
    >>> X, Y, A, B = (rng.normal(size=(6, 8)) + s * axis for s in (1, -1, 1, -1))
    >>> st = stimulus_stability(X, Y, A, B, rng=1, n_bootstrap=500, n_subsamples=100)
    >>> st.significant, st.verdict_kept > 0.5, bool(st.cronbach_alpha > 0.5)
    (True, True, True)
    """
    options = TestOptions(alternative=alternative, permutations=permutations, ddof=ddof, sd=sd,
                          p_method=p_method).validated()
    alpha, fraction = check_share("alpha", alpha), check_share("fraction", fraction)
    n_subsamples = check_count("n_subsamples", n_subsamples)
    subsample_permutations = check_count("subsample_permutations", subsample_permutations)
    n_splits = check_count("n_splits", n_splits)
    sets = check_sets(2, X=X, Y=Y, A=A, B=B)
    generator, seed = resolve_rng(rng)
    vectors = [sets[r] for r in "XYAB"]
    full = full_test(sets, options, generator if seed is None else seed, reference)
    significant = full.p_value < alpha
    boot = bootstrap_effect_size(*vectors, n_bootstrap=n_bootstrap, confidence_level=confidence_level,
                                 resample=("X", "Y", "A", "B"), rng=generator, ddof=options.ddof, sd=sd)
    cos = {t + a: cosine_matrix(sets[t], sets[a]) for t in "XY" for a in "AB"}
    atol = rounding_error(sets["X"].shape[1])
    sizes = {r: max(2 if r in "XY" else 1, math.ceil(fraction * len(sets[r]))) for r in "XYAB"}
    groups = []
    weights = {a: _subset_weights(generator, n_subsamples, len(sets[a]), sizes[a]) for a in "AB"}
    for t in "XY":
        s_all = differential_association(cos[t + "A"], cos[t + "B"], weights["A"], weights["B"])  # (R, |t|)
        keep = np.argsort(generator.random(s_all.shape), axis=1)[:, :sizes[t]]
        groups.append(np.take_along_axis(s_all, keep, axis=1))
    d_sub = np.asarray(cohens_d(groups[0], groups[1], sd=sd, ddof=options.ddof, atol=atol))
    if options.p_method == "welch":
        p_sub = np.array([welch_p_values(f, g, options.ddof)[alternative] for f, g in zip(*groups)])
    else:
        k, m = sizes["X"], sizes["Y"]
        count = "exact" if math.comb(k + m, k) <= subsample_permutations else subsample_permutations
        outs = permutation_tests(np.ascontiguousarray(groups[0].T), np.ascontiguousarray(groups[1].T),
                                 permutations=count, rng=generator, atol=atol)
        p_sub = np.array([o.p_values[alternative] for o in outs])
    kept = (p_sub < alpha) == significant
    if significant:  # significant in the same direction (matters for "two-sided")
        kept &= np.sign(d_sub) == np.sign(full.effect_size)
    tail = (1 - confidence_level) / 2
    low, high = np.quantile(d_sub, [tail, 1 - tail])
    return Stability(
        effect_size=full.effect_size, p_value=full.p_value, significant=bool(significant), alpha=alpha,
        alternative=alternative, sd=sd, ddof=options.ddof, confidence_level=confidence_level,
        bootstrap_interval=(boot.low, boot.high),
        bootstrap_same_sign=float(np.mean(np.sign(boot.distribution) == np.sign(full.effect_size))),
        n_bootstrap=boot.n_bootstrap, fraction=fraction, subsample_sizes=sizes, n_subsamples=n_subsamples,
        permutations=subsample_permutations, subsample_interval=(float(low), float(high)),
        verdict_kept=float(kept.mean()), split_half=split_half_reliability(cos, n_splits, generator),
        n_splits=n_splits, cronbach_alpha=cronbach_alpha(cos), seed=seed,
        subsample_effect_sizes=d_sub, subsample_p_values=p_sub,
    )


def split_half_reliability(cos: dict[str, np.ndarray], n_splits: int, rng: np.random.Generator) -> float:
    """Mean Spearman-Brown corrected correlation, over random splits of A and of B into halves, between the
    targets' s(w, A1, B1) and s(w, A2, B2) (``cos``: the cosine matrices "XA", "XB", "YA", "YB")."""
    halves = {}
    for a in "AB":
        n = cos["X" + a].shape[1]
        first = np.argsort(rng.random((n_splits, n)), axis=1) < n // 2  # each row: a random half (n // 2)
        halves[a] = (first / first.sum(axis=1, keepdims=True), ~first / (~first).sum(axis=1, keepdims=True))
    scores = [np.hstack([differential_association(cos[t + "A"], cos[t + "B"], halves["A"][h], halves["B"][h])
                         for t in "XY"]) for h in (0, 1)]  # (n_splits, |X| + |Y|) each
    r = np.array([np.corrcoef(u, v)[0, 1] for u, v in zip(*scores)])
    return float(np.mean(2 * r / (1 + r)))  # Spearman-Brown prophecy for the doubled length


def cronbach_alpha(cos: dict[str, np.ndarray]) -> float:
    """Cronbach's alpha of the attribute pairs (a, b) as items, item score cos(w, a) - cos(w, b), over the
    targets w ∈ X ∪ Y (Du et al. 2021's internal consistency across base pairs).

    >>> c = {"XA": np.array([[0.9, 0.8]]), "XB": np.array([[0.1, 0.2]]),
    ...      "YA": np.array([[0.2, 0.4], [0.5, 0.3]]), "YB": np.array([[0.8, 0.6], [0.5, 0.7]])}
    >>> round(cronbach_alpha(c), 4)
    0.979
    """
    ca = np.vstack([cos["XA"], cos["YA"]])
    cb = np.vstack([cos["XB"], cos["YB"]])
    items = (ca[:, :, None] - cb[:, None, :]).reshape(ca.shape[0], -1)  # (targets, |A| |B|)
    k = items.shape[1]
    total = items.sum(axis=1)
    return float(k / (k - 1) * (1 - items.var(axis=0, ddof=1).sum() / total.var(ddof=1)))


def _subset_weights(rng: np.random.Generator, rows: int, n: int, size: int) -> np.ndarray:
    """Row r: weight 1/size on a random size-``size`` subset of n stimuli, 0 elsewhere."""
    chosen = np.argsort(rng.random((rows, n)), axis=1) < size
    return chosen / size
