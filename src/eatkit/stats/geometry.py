"""Feature-space geometry of image classes: intra-class variation and inter-class distance (seed 004).

The thesis (Ranjit 2021, §2.2) scores a class of images by the similarity between two random folds of its
features (intra-class variation, §2.2.1) and a pair of classes by the similarity between a fold of each
(inter-class distance, §2.2.2), repeated for T iterations; it reports the mean with the min-max range.

Folds (``fold=``):

* ``"half"`` (default): each iteration splits a class of n images at random into two disjoint folds of
  ``n // 2`` images (the odd image out is unused) and scores the mean pairwise similarity between them; an
  inter-class score uses one such fold of each class. The thesis gives no fold size; halves use all the
  data and make intra- and inter-class scores of a class use folds of the same size.
* ``"pair"``: one random image per fold (two distinct images of a class), the literal reading of §2.2.1.
* ``"centroid"``: the similarity of the two halves' mean vectors.

Similarities (``similarity=``): ``"cosine"`` (higher = closer) or ``"euclidean"`` (a distance: lower =
closer). Fast path: for unit vectors the mean pairwise cosine between folds A and B is
``(1/|A||B|) Σ_a Σ_b u_a·u_b = ū_A · ū_B``, the dot product of the folds' mean unit vectors, so no pairwise
matrix is formed; the fold sums of all iterations are one matrix product (fold indicators x unit rows), and
the second half's sum is the class total minus the first's. An inter-class score reuses the first-half
means already computed for the intra-class scores (each class is split once per iteration).

``exact_mean``: for ``"half"`` and ``"pair"`` folds every ordered pair of distinct images is equally likely
to be compared, so the limit of the iteration mean is the mean over all pairs of distinct images (intra)
or all cross pairs (inter), computed exactly and reported beside the sampled mean.

The default T = 1000 iterations (the thesis gives none) keeps the Monte Carlo error of the mean far below
the spread between classes (it is ``sd / sqrt(T)``; both are reported).

Not reproduced: the thesis's one-sample t-test "with the null hypothesis being that the mean is the mean
of the sampled data". A sample's mean always equals itself, so t = 0 and p = 1 whatever the data: that test
cannot reject and says nothing. Classes are compared instead by :func:`compare_classes` and models by
:func:`spearman_by_group`.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps
from scipy.spatial.distance import cdist

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_count, check_sets, check_values
from eatkit.stats.effect_size import cohens_d
from eatkit.stats._random import resolve_rng
from eatkit.stats.options import check_choice

FOLDS: tuple[str, ...] = ("half", "pair", "centroid")
SIMILARITIES: tuple[str, ...] = ("cosine", "euclidean")
DEFAULT_ITERATIONS = 1000
#: bytes of fold means held at once (iterations are computed in blocks of this size; the random folds are
#: drawn before, so the blocking changes nothing)
_BLOCK_BYTES = 1 << 28
#: Spearman p-values are exact (all n! orderings) up to this many classes
SPEARMAN_EXACT_MAX = 8


@dataclass(frozen=True)
class GeometryScore:
    """An intra-class (one class) or inter-class (two classes) score over ``iterations`` random folds.

    ``mean``, ``sd`` (ddof = 1), ``min`` and ``max`` summarise ``values`` (one per iteration);
    ``exact_mean`` is the iteration mean's limit (see the module docstring; None for centroid folds);
    ``fold_sizes`` are the images per fold of each class; ``sizes`` the class sizes.
    """

    kind: str
    classes: tuple[str, ...]
    mean: float
    sd: float
    min: float
    max: float
    exact_mean: float | None
    values: np.ndarray
    iterations: int
    fold: str
    similarity: str
    sizes: tuple[int, ...]
    fold_sizes: tuple[int, ...]
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON types (without the per-iteration values)."""
        return {
            "kind": self.kind, "classes": list(self.classes), "mean": self.mean, "sd": self.sd,
            "min": self.min, "max": self.max, "exact_mean": self.exact_mean, "iterations": self.iterations,
            "fold": self.fold, "similarity": self.similarity, "sizes": list(self.sizes),
            "fold_sizes": list(self.fold_sizes), "seed": self.seed,
        }


@dataclass(frozen=True)
class GeometryScores:
    """All scores of one call of :func:`geometry_scores`: ``intra[class]`` and ``inter[(a, b)]``."""

    intra: dict[str, GeometryScore]
    inter: dict[tuple[str, str], GeometryScore]
    seed: int | None


def intra_class_variation(
    F: Any, *, iterations: int = DEFAULT_ITERATIONS, fold: str = "half", similarity: str = "cosine",
    rng: Any = None,
) -> GeometryScore:
    """Similarity between two random folds of one class's features ``F`` (n, d), over ``iterations``.

    >>> F = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> s = intra_class_variation(F, iterations=200, rng=0)
    >>> round(s.exact_mean, 4), s.fold_sizes     # 4 of the 6 pairs are orthogonal
    (0.3333, (2, 2))
    """
    return geometry_scores({"class": F}, pairs=(), iterations=iterations, fold=fold,
                           similarity=similarity, rng=rng).intra["class"]


def inter_class_distance(
    F_i: Any, F_j: Any, *, iterations: int = DEFAULT_ITERATIONS, fold: str = "half",
    similarity: str = "cosine", rng: Any = None,
) -> GeometryScore:
    """Similarity between a random fold of class ``F_i`` and one of class ``F_j``, over ``iterations``.

    >>> s = inter_class_distance([[1.0, 0.0], [2.0, 0.0]], [[1.0, 1.0], [3.0, 3.0]], rng=0)
    >>> round(s.min, 6), round(s.max, 6)     # every cross pair is at 45 degrees
    (0.707107, 0.707107)
    """
    return geometry_scores({"i": F_i, "j": F_j}, pairs=[("i", "j")], intra=False, iterations=iterations,
                           fold=fold, similarity=similarity, rng=rng).inter[("i", "j")]


def geometry_scores(
    classes: Mapping[str, Any],
    *,
    pairs: Iterable[tuple[str, str]] | None = None,
    intra: bool = True,
    iterations: int = DEFAULT_ITERATIONS,
    fold: str = "half",
    similarity: str = "cosine",
    rng: Any = None,
) -> GeometryScores:
    """Intra-class scores of every class and inter-class scores of ``pairs`` (default: all pairs).

    Each class is split into random folds once per iteration (one random stream: the classes' folds are
    drawn in the order of ``classes``); its intra-class score compares the two folds and an inter-class
    score compares its first fold with the other class's first fold.

    >>> rng = np.random.default_rng(1)
    >>> out = geometry_scores({"a": rng.normal(size=(10, 4)), "b": rng.normal(size=(12, 4))}, rng=0)
    >>> sorted(out.intra), list(out.inter), out.inter[("a", "b")].fold_sizes
    (['a', 'b'], [('a', 'b')], (5, 6))
    """
    if fold not in FOLDS:
        raise EatkitError(f"fold must be one of {', '.join(FOLDS)}, got {fold!r}")
    if similarity not in SIMILARITIES:
        raise EatkitError(f"similarity must be one of {', '.join(SIMILARITIES)}, got {similarity!r}")
    iterations = check_count("iterations", iterations)
    if not classes:
        raise EatkitError("geometry scores need at least one class")
    # identical images are data here (intra-class variation 0), not a degenerate comparison
    data = check_sets(2, rules=False, **{str(k): v for k, v in classes.items()})
    names = list(data)
    pair_list = _checked_pairs(names, pairs)
    generator, seed = resolve_rng(rng)
    folds = dict(zip(data, _draw_folds([len(X) for X in data.values()], iterations, fold, generator)))
    # cosine scores use unit rows (the centroid fold's mean vectors are taken before normalising)
    unit = {k: X / np.linalg.norm(X, axis=1, keepdims=True) for k, X in data.items()} \
        if similarity == "cosine" else data
    if fold == "half" and similarity == "euclidean":
        values = _pairwise_distance_scores(data, folds, pair_list, intra)
    else:
        values = _fold_mean_scores(data if fold == "centroid" else unit, folds, pair_list, intra, fold, similarity)
    exact = _exact_means(unit, pair_list, intra, fold, similarity)

    settings = {"iterations": iterations, "fold": fold, "similarity": similarity, "seed": seed}

    def score(kind: str, key: tuple[str, ...]) -> GeometryScore:
        return _score(kind, key, values[key], data, folds, exact.get(key), settings)

    intra_scores = {n: score("intra", (n,)) for n in names} if intra else {}
    inter_scores = {(a, b): score("inter", (a, b)) for a, b in pair_list}
    return GeometryScores(intra_scores, inter_scores, seed)


def _score(kind: str, key: tuple[str, ...], v: np.ndarray, data: dict[str, np.ndarray],
           folds: dict[str, tuple[np.ndarray, np.ndarray]], exact_mean: float | None,
           settings: dict[str, Any]) -> GeometryScore:
    """The score ``kind`` of the classes ``key`` from its values over the iterations ``v``."""
    sizes = tuple(len(data[k]) for k in key)
    fold_sizes = tuple(folds[k][0].shape[1] for k in key) * (2 if kind == "intra" else 1)
    return GeometryScore(
        kind=kind, classes=key, mean=float(v.mean()), sd=float(v.std(ddof=1)) if v.size > 1 else 0.0,
        min=float(v.min()), max=float(v.max()), exact_mean=exact_mean, values=v, sizes=sizes,
        fold_sizes=fold_sizes, **settings,
    )


def _checked_pairs(names: list[str], pairs: Iterable[tuple[str, str]] | None) -> list[tuple[str, ...]]:
    """The inter-class pairs (default: all pairs of ``names``), each of two different known classes."""
    pair_list = list(itertools.combinations(names, 2)) if pairs is None else [tuple(p) for p in pairs]
    for a, b in pair_list:
        for name in (a, b):
            if name not in names:
                raise EatkitError(f"inter-class pair ({a}, {b}) names an unknown class '{name}'")
        if a == b:
            raise EatkitError(f"inter-class pair ({a}, {b}) compares a class with itself")
    return pair_list


def _draw_folds(
    sizes: Sequence[int], iterations: int, fold: str, rng: np.random.Generator,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per class of ``sizes[i]`` images and per iteration, the row indices of fold A and of fold B
    (disjoint, uniformly random): the ranks 1..m and m+1..2m of n independent uniform keys (a partial sort;
    ties have probability ~2^-53). The keys are drawn class by class from ``rng``; the partial sorts run
    in threads (they release the GIL), which changes no fold."""
    keys = [rng.random((iterations, n)) for n in sizes]

    def split(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = k.shape[1]
        m = 1 if fold == "pair" else n // 2
        order = np.argpartition(k, (m - 1, 2 * m - 1) if 2 * m < n else m - 1, axis=1)
        return order[:, :m], order[:, m:2 * m]

    with ThreadPoolExecutor(min(len(keys), os.cpu_count() or 1)) as pool:
        return list(pool.map(split, keys))


def _fold_means(rows: np.ndarray, idx: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Mean of ``rows[idx[t]]`` for each iteration t (a fold-indicator matrix times the rows), into ``out``."""
    t, m = idx.shape
    if m == 1:
        return np.take(rows, idx[:, 0], axis=0, out=out)
    indicator = np.zeros((t, rows.shape[0]))
    np.put_along_axis(indicator, idx, 1.0, axis=1)
    out = np.matmul(indicator, rows, out=out)
    out /= m
    return out


def _fold_mean_scores(
    data: dict[str, np.ndarray], folds: dict[str, tuple[np.ndarray, np.ndarray]],
    pairs: list[tuple[str, str]], intra: bool, fold: str, similarity: str,
) -> dict[tuple[str, ...], np.ndarray]:
    """Scores from fold means: dot of mean unit vectors (cosine, half/pair; ``data`` holds the unit rows),
    cosine of mean vectors (cosine, centroid) or distance between mean vectors (euclidean, centroid/pair; a
    pair's mean is the image itself).

    Each class's rows are taken relative to its first row c (fold mean = c + v̄), and the scores are
    expanded in c and v̄: no rounding enters through c, so a class of identical vectors (v = 0) gives the
    same value in every iteration, and a distance of exactly 0.
    """
    unit = similarity == "cosine" and fold != "centroid"
    shifts, rows, totals = _relative_rows(data)
    iterations = next(iter(folds.values()))[0].shape[0]
    dim = next(iter(rows.values())).shape[1]
    out: dict[tuple[str, ...], list[np.ndarray]] = {}
    step = max(1, _BLOCK_BYTES // (8 * len(rows) * dim))
    for start in range(0, iterations, step):
        block = slice(start, start + step)
        stacked = np.empty((len(rows), len(range(iterations)[block]), dim))
        first = {k: _fold_means(rows[k], folds[k][0][block], stacked[i]) for i, k in enumerate(rows)}
        if intra:
            for k in rows:
                score = _intra_fold_score(rows[k], shifts[k], totals[k], first[k], folds[k], block, unit, similarity)
                out.setdefault((k,), []).append(score)
        for pair, score in _inter_fold_scores(pairs, shifts, first, stacked, unit, similarity).items():
            out.setdefault(pair, []).append(score)
    return {k: np.concatenate(v) for k, v in out.items()}


def _relative_rows(data: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], ...]:
    """Each class's first row c, its rows less c, and their sum (:func:`_fold_mean_scores`)."""
    shifts = {k: R[0] for k, R in data.items()}
    rows = {k: R - R[0] for k, R in data.items()}
    return shifts, rows, {k: R.sum(axis=0) for k, R in rows.items()}


def _intra_fold_score(rows: np.ndarray, shift: np.ndarray, total: np.ndarray, first: np.ndarray,
                      folds: tuple[np.ndarray, np.ndarray], block: slice, unit: bool, similarity: str) -> np.ndarray:
    """A class's intra-class scores over a block of iterations (:func:`_fold_mean_scores`): its first fold's
    means ``first`` against its second fold's (the rest of the class when the folds are its halves)."""
    a, b = folds[0][block], folds[1][block]
    n, m = rows.shape[0], a.shape[1]
    complement = m > 1 and n - 2 * m <= 1  # the second half: the rest (less the odd one out)
    left = rows[_missing(a, b, n)[:, 0]] if complement and n > 2 * m else None
    if complement and unit:
        return _complement_dots(shift, first, total, left, m)
    second = _fold_means(rows, b) if not complement else (total - m * first - (0.0 if left is None else left)) / m
    return _similarity(shift, first, shift, second, unit, similarity)


def _inter_fold_scores(pairs: list[tuple[str, str]], shifts: dict[str, np.ndarray], first: dict[str, np.ndarray],
                       stacked: np.ndarray, unit: bool, similarity: str) -> dict[tuple[str, str], np.ndarray]:
    """The inter-class scores of ``pairs`` over a block of iterations (:func:`_fold_mean_scores`): every
    class's dots at once for cosine, pair by pair otherwise."""
    if not (similarity == "cosine" and pairs):
        return {(p, q): _similarity(shifts[p], first[p], shifts[q], first[q], unit, similarity) for p, q in pairs}
    dots = _all_dots(np.stack(list(shifts.values())), stacked)
    at = {k: i for i, k in enumerate(shifts)}
    out = {}
    for p, q in pairs:
        i, j = at[p], at[q]
        score = dots[:, i, j] if unit else dots[:, i, j] / np.sqrt(dots[:, i, i] * dots[:, j, j])
        out[(p, q)] = np.clip(score, -1.0, 1.0)
    return out


def _complement_dots(c: np.ndarray, v: np.ndarray, total: np.ndarray, left: np.ndarray | None, m: int) -> np.ndarray:
    """Row-wise (c + v)·(c + w) for unit rows (c·c = 1), the second fold's mean w = (total - m v - left) / m
    substituted (total: the class's rows summed; left: the odd row out, or None): dot products with v only,
    no second-fold matrix."""
    vc = v @ c
    cw = c @ total - m * vc
    vw = v @ total - m * np.einsum("ij,ij->i", v, v)
    if left is not None:
        cw -= left @ c
        vw -= np.einsum("ij,ij->i", v, left)
    return np.clip(1.0 + vc + (cw + vw) / m, -1.0, 1.0)


def _all_dots(C: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``D[t, i, j] = (c_i + v_i[t])·(c_j + v_j[t])`` for all classes i, j at once (C: the shifts (K, d), V:
    the fold means (K, t, d)), expanded as in :func:`_dots`: batched matrix products, not one per pair."""
    K, t, d = V.shape
    cv = (V.reshape(K * t, d) @ C.T).reshape(K, t, K)  # cv[j, t, i] = v_j[t]·c_i
    vv = np.matmul(V.transpose(1, 0, 2), V.transpose(1, 2, 0))  # vv[t, i, j] = v_i[t]·v_j[t]
    return (C @ C.T)[np.newaxis] + cv.transpose(1, 2, 0) + cv.transpose(1, 0, 2) + vv


def _missing(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """The one row index (per iteration) in neither fold, as a (t, 1) array: n(n-1)/2 minus the others."""
    return (n * (n - 1) // 2 - a.sum(axis=1, dtype=np.int64) - b.sum(axis=1, dtype=np.int64))[:, None]


def _dots(c: np.ndarray, v: np.ndarray, e: np.ndarray, w: np.ndarray, ce: float | None = None) -> np.ndarray:
    """Row-wise (c + v)·(e + w) expanded as c·e + c·w + v·e + v·w (``ce``: c·e when known exactly)."""
    return (c @ e if ce is None else ce) + w @ c + v @ e + np.einsum("ij,ij->i", v, w)


def _similarity(c: np.ndarray, v: np.ndarray, e: np.ndarray, w: np.ndarray, unit: bool,
                similarity: str) -> np.ndarray:
    """Row-wise score of fold means c + v and e + w (c, e: the classes' shifts)."""
    if similarity == "euclidean":
        return np.linalg.norm((c - e) + (v - w), axis=1)
    # within a class of unit rows, c·c is 1 exactly (c is one of the unit rows)
    dots = _dots(c, v, e, w, 1.0 if unit and c is e else None)
    if not unit:   # cosine of the fold centroids
        dots = dots / np.sqrt(_dots(c, v, c, v) * _dots(e, w, e, w))
    return np.clip(dots, -1.0, 1.0)   # a mean of cosines lies in [-1, 1]; clip rounding only


def _pairwise_distance_scores(
    data: dict[str, np.ndarray], folds: dict[str, tuple[np.ndarray, np.ndarray]],
    pairs: list[tuple[str, str]], intra: bool,
) -> dict[tuple[str, ...], np.ndarray]:
    """Mean pairwise Euclidean distance between folds: a^T D b / (|a| |b|) for fold indicators a, b."""

    def indicator(idx: np.ndarray, n: int) -> np.ndarray:
        out = np.zeros((idx.shape[0], n))
        np.put_along_axis(out, idx, 1.0 / idx.shape[1], axis=1)
        return out

    out: dict[tuple[str, ...], np.ndarray] = {}
    if intra:
        for k, X in data.items():
            a, b = (indicator(f, len(X)) for f in folds[k])
            out[(k,)] = np.einsum("ij,ij->i", a @ cdist(X, X), b)
    for p, q in pairs:
        a, b = indicator(folds[p][0], len(data[p])), indicator(folds[q][0], len(data[q]))
        out[(p, q)] = np.einsum("ij,ij->i", a @ cdist(data[p], data[q]), b)
    return out


def _exact_means(
    data: dict[str, np.ndarray], pairs: list[tuple[str, str]], intra: bool, fold: str, similarity: str,
) -> dict[tuple[str, ...], float]:
    """The limit of the iteration mean for half and pair folds: the mean over all pairs of distinct images
    (intra) or all cross pairs (inter)."""
    if fold == "centroid":
        return {}
    out: dict[tuple[str, ...], float] = {}
    if similarity == "cosine":  # data holds unit rows
        if intra:
            for k, U in data.items():
                n, s = len(U), U.sum(axis=0)
                # Σ_{i≠j} u_i·u_j = |Σ u|² - n for unit vectors
                out[(k,)] = float(np.clip((s @ s - n) / (n * (n - 1)), -1.0, 1.0))
        means = {k: data[k].mean(axis=0) for k in {k for pair in pairs for k in pair}}
        for p, q in pairs:
            out[(p, q)] = float(np.clip(means[p] @ means[q], -1.0, 1.0))
        return out
    if intra:
        for k, X in data.items():
            n = len(X)
            out[(k,)] = float(cdist(X, X).sum() / (n * (n - 1)))
    for p, q in pairs:
        out[(p, q)] = float(cdist(data[p], data[q]).mean())
    return out


# --- comparing a class with a reference class ------------------------------------------------------


@dataclass(frozen=True)
class ClassComparison:
    """A class's intra-class similarity against a reference class's (see :func:`compare_classes`).

    ``difference`` = intra(class) - intra(reference) over all pairs of distinct images; ``scores`` /
    ``reference_scores`` are the per-image scores (each image's mean similarity to the rest of its class);
    ``effect_size`` is Cohen's d of those (pooled SD); ``t``, ``df``, ``p_welch`` are Welch's t-test of
    them (approximate: per-image scores of one class share images, so they are not independent);
    ``p_permutation`` re-labels the pooled images (exact when ``p_value_exact``).
    """

    classes: tuple[str, str]
    difference: float
    effect_size: float
    t: float
    df: float
    p_welch: float
    p_permutation: float
    p_value_exact: bool
    n_permutations: int
    alternative: str
    similarity: str
    sizes: tuple[int, int]
    seed: int | None
    scores: np.ndarray
    reference_scores: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON types (without the per-image scores)."""
        return {
            "classes": list(self.classes), "difference": self.difference, "effect_size": self.effect_size,
            "t": self.t, "df": self.df, "p_welch": self.p_welch, "p_permutation": self.p_permutation,
            "p_value_exact": self.p_value_exact, "n_permutations": self.n_permutations, "alternative": self.alternative,
            "similarity": self.similarity, "sizes": list(self.sizes), "seed": self.seed,
        }


def compare_classes(
    F: Any, F_ref: Any, *, similarity: str = "cosine", alternative: str = "two-sided",
    permutations: int = 10_000, rng: Any = None, names: tuple[str, str] = ("class", "reference"),
) -> ClassComparison:
    """Is a class tighter (or looser) than a reference class (the thesis's ``random`` class)?

    The statistic is the difference of the classes' mean similarities over pairs of distinct images. The
    permutation test pools both classes' images and re-labels them into groups of the original sizes
    (exact over all re-labellings when there are at most ``permutations`` of them; otherwise that many
    random ones, p = (count + 1) / (draws + 1)). Welch's t and Cohen's d (pooled SD) use the per-image
    scores. With ``"euclidean"`` the scores are distances (a tighter class has a *lower* score).

    >>> F = np.array([[1.0, 0.1], [1.0, 0.0], [1.0, -0.1]]); R = np.array([[0.0, 1.0], [-1.0, 0.2], [0.3, -1.0]])
    >>> c = compare_classes(F, R, alternative="greater")
    >>> c.p_value_exact, c.n_permutations, round(c.p_permutation, 2)   # only the observed split of 20 is as tight
    (True, 20, 0.05)
    """
    if similarity not in SIMILARITIES:
        raise EatkitError(f"similarity must be one of {', '.join(SIMILARITIES)}, got {similarity!r}")
    check_choice("alternative", alternative)
    permutations = check_count("permutations", permutations)
    sets = check_sets(2, **{names[0]: F, names[1]: F_ref}) if names[0] != names[1] else \
        check_sets(2, first=F, second=F_ref)
    X, R = sets.values()
    k, m = len(X), len(R)
    pooled = np.concatenate([X, R])
    if similarity == "cosine":
        U = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        K = U @ U.T
    else:
        K = cdist(pooled, pooled)
    np.fill_diagonal(K, 0.0)
    scores = K[:k, :k].sum(axis=1) / (k - 1)
    ref_scores = K[k:, k:].sum(axis=1) / (m - 1)
    observed = float(scores.mean() - ref_scores.mean())
    generator, seed = resolve_rng(rng)
    n = k + m
    total_partitions = math.comb(n, k)
    exact = total_partitions <= permutations
    if exact:
        chosen = np.array(list(itertools.combinations(range(n), k)), dtype=np.intp)
    else:
        order = generator.permuted(np.broadcast_to(np.arange(n, dtype=np.int32), (permutations, n)), axis=1)
        chosen = order[:, :k]
    diffs = _relabelled_differences(K, chosen, k, m)
    tol = 1e-12 * max(1.0, float(np.abs(K).max()))
    counts = {"greater": int(np.count_nonzero(diffs >= observed - tol)),
              "less": int(np.count_nonzero(diffs <= observed + tol)),
              "two-sided": int(np.count_nonzero(np.abs(diffs) >= abs(observed) - tol))}
    count = counts[alternative]
    p_perm = count / len(chosen) if exact else (count + 1) / (len(chosen) + 1)
    welch = sps.ttest_ind(scores, ref_scores, equal_var=False, alternative=alternative)
    return ClassComparison(
        classes=(names[0], names[1]), difference=observed,
        effect_size=float(cohens_d(scores, ref_scores, sd="pooled")), t=float(welch.statistic),
        df=float(welch.df), p_welch=float(welch.pvalue), p_permutation=float(p_perm), p_value_exact=exact,
        n_permutations=len(chosen), alternative=alternative, similarity=similarity, sizes=(k, m),
        seed=None if exact else seed, scores=scores, reference_scores=ref_scores,
    )


@dataclass(frozen=True)
class OneSampleT:
    """A one-sample t-test of a class's per-iteration scores against ``popmean`` (e.g. the reference
    class's mean score): ``t`` with ``df`` = n - 1 degrees of freedom and its ``p_value`` under
    ``alternative``; ``mean`` and ``n`` of the scores tested."""

    t: float
    df: int
    p_value: float
    mean: float
    popmean: float
    n: int
    alternative: str


def one_sample_t(scores: Any, popmean: float, *, alternative: str = "two-sided") -> OneSampleT:
    """The thesis's one-sample t-test (seed 004, §2.2: "we also compute a one-sample t-significance test" of
    the T iteration values of a class): t = (mean - popmean) / (SD / sqrt(T)), SD with ddof 1.

    The T values are random folds of the same images, not independent samples, so the p-value is smaller
    than an independent-sample test of the same size would give; :func:`compare_classes`' permutation test
    re-labels images and is the test to rely on. Offered so that the thesis's analysis can be repeated.

    >>> r = one_sample_t([0.9, 1.1, 1.0, 1.2, 0.8], popmean=0.5)
    >>> round(r.t, 4), r.df, round(r.p_value, 5)
    (7.0711, 4, 0.00211)
    """
    check_choice("alternative", alternative)
    values = check_values("scores", scores)
    if values.size < 2 or np.ptp(values) == 0:
        raise EatkitError(f"a one-sample t-test needs at least 2 scores that are not all equal, got {values.size} "
                          f"score(s) from {values.min():.6g} to {values.max():.6g}")
    if not math.isfinite(popmean):
        raise EatkitError(f"popmean must be a finite number, got {popmean!r}")
    # t = (mean - mu0) / (s / sqrt(n)), df = n - 1 (Student)
    result = sps.ttest_1samp(values, popmean, alternative=alternative)
    return OneSampleT(t=float(result.statistic), df=int(values.size - 1), p_value=float(result.pvalue),
                      mean=float(values.mean()), popmean=float(popmean), n=int(values.size), alternative=alternative)


def _relabelled_differences(K: np.ndarray, chosen: np.ndarray, k: int, m: int) -> np.ndarray:
    """W(S) - W(complement) for each row of ``chosen`` (the k indices of S), where W is the mean of K over
    pairs of distinct members: the quadratic form of S's indicator, and the complement's from
    1ᵀK1 - 2·sᵀK1 + sᵀKs (K has a zero diagonal)."""
    n = K.shape[0]
    row_sums = K.sum(axis=1)
    grand = row_sums.sum()
    out = np.empty(len(chosen))
    for start in range(0, len(chosen), 2048):
        idx = chosen[start:start + 2048]
        s = np.zeros((len(idx), n))
        np.put_along_axis(s, idx, 1.0, axis=1)
        inside = np.einsum("ij,ij->i", s @ K, s)
        outside = grand - 2.0 * (s @ row_sums) + inside
        out[start:start + 2048] = inside / (k * (k - 1)) - outside / (m * (m - 1))
    return out


# --- comparing models by the ranks of their class scores --------------------------------------------


@dataclass(frozen=True)
class SpearmanResult:
    """Spearman's rho between two models' scores of the classes in ``group``, with its p-value.

    ``method`` is ``"exact"`` (all n! orderings of one model's ranks) or ``"t-approximation"``; rho and p
    are NaN when one model gives all classes the same score (ranks undefined).
    """

    group: str
    classes: tuple[str, ...]
    rho: float
    p_value: float
    n: int
    method: str
    alternative: str

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "classes": list(self.classes), "rho": self.rho, "p_value": self.p_value,
                "n": self.n, "method": self.method, "alternative": self.alternative}


def spearman_by_group(
    first: Mapping[str, float], second: Mapping[str, float],
    groups: Mapping[str, Sequence[str]] | None = None, *, alternative: str = "two-sided",
) -> list[SpearmanResult]:
    """Spearman's rho of two models' per-class scores (thesis §2.3), for each group of classes.

    ``groups`` maps a group name (e.g. "individual", "paired", "comparisons") to the score keys it
    holds; default: one group ``"all"`` of the keys both models have. p is exact for at most
    ``SPEARMAN_EXACT_MAX`` classes and the t-approximation above.

    >>> a = {"man": 0.5, "woman": 0.6, "car": 0.7, "random": 0.2}
    >>> b = {"man": 0.4, "woman": 0.45, "car": 0.9, "random": 0.1}
    >>> r = spearman_by_group(a, b)[0]
    >>> r.rho, round(r.p_value, 4), r.method      # 1 of the 24 orderings is as concordant, 1 as discordant
    (1.0, 0.0833, 'exact')
    >>> many = {f"c{i}": float(i) for i in range(12)}   # 12 classes, same order: 2 of the 12! orderings
    >>> r = spearman_by_group(many, many)[0]; r.p_value == 2 / math.factorial(12), r.method
    (True, 'exact')
    """
    check_choice("alternative", alternative)
    if groups is None:
        groups = {"all": [k for k in first if k in second]}
    results = []
    for group, keys in groups.items():
        keys = tuple(keys)
        missing = [k for k in keys if k not in first or k not in second]
        if missing:
            raise EatkitError(f"group '{group}' names class(es) without a score in both models: {', '.join(missing)}")
        if len(keys) < 2:
            raise EatkitError(f"group '{group}' has {len(keys)} class(es); Spearman's rho needs at least 2")
        x = check_values(f"scores of group '{group}' (first model)", [first[k] for k in keys])
        y = check_values(f"scores of group '{group}' (second model)", [second[k] for k in keys])
        results.append(_spearman(group, keys, x, y, alternative))
    return results


def _spearman(group: str, keys: tuple[str, ...], x: np.ndarray, y: np.ndarray, alternative: str) -> SpearmanResult:
    n = len(keys)
    rx, ry = sps.rankdata(x), sps.rankdata(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return SpearmanResult(group, keys, math.nan, math.nan, n, "undefined (constant scores)", alternative)
    rho = float(np.corrcoef(rx, ry)[0, 1])   # Pearson correlation of the ranks (ties: mid-ranks)
    if n <= SPEARMAN_EXACT_MAX:
        perms = np.array(list(itertools.permutations(ry)))
        rc = rx - rx.mean()
        pc = perms - perms.mean(axis=1, keepdims=True)
        null = (pc @ rc) / (np.linalg.norm(pc, axis=1) * np.linalg.norm(rc))
        tol = 1e-12
        count = {"greater": np.count_nonzero(null >= rho - tol), "less": np.count_nonzero(null <= rho + tol),
                 "two-sided": np.count_nonzero(np.abs(null) >= abs(rho) - tol)}[alternative]
        return SpearmanResult(group, keys, rho, float(count / len(null)), n, "exact", alternative)
    if abs(abs(rho) - 1) < 1e-12 and len(np.unique(rx)) == len(np.unique(ry)) == n:
        # |rho| = 1 without ties: of the n! orderings only the identity (rho = 1) and its reverse (-1) reach it,
        # so the exact p is 2/n! two-sided, 1/n! on the observed side, 1 on the other (the t-approximation: 0)
        side = {"two-sided": 2, "greater": 1 if rho > 0 else math.factorial(n),
                "less": 1 if rho < 0 else math.factorial(n)}[alternative]
        return SpearmanResult(group, keys, rho, side / math.factorial(n), n, "exact", alternative)
    p = float(sps.spearmanr(x, y, alternative=alternative).pvalue)
    return SpearmanResult(group, keys, rho, p, n, "t-approximation", alternative)
