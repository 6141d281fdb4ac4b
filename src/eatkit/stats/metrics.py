"""The field's other bias metrics (the members of the metrics family, :data:`eatkit.specs.METRICS`), with
WEFE's definitions (dccuchile/wefe 1.0.1) where WEFE has the metric, a permutation p where the metric has
a null, and a bootstrap CI over stimuli (the table is checked against the declarations by
``tests/test_families.py``; each member's null is written in its declaration only).

=====================  =====================================================================  ======================
metric                 value                                                                  null of the p-value
=====================  =====================================================================  ======================
:func:`rnd`            mean_a [dist(a, mean X) - dist(a, mean Y)] (Garg et al. 2018)          X ∪ Y re-partitioned
:func:`ect`            Spearman ρ of cos(mean X, a) and cos(mean Y, a) over a (Dev & Phillips  X ∪ Y re-partitioned
                       2019)
:func:`ripa`           mean_{a, i} a · (x_i - y_i) / ‖x_i - y_i‖ (Ethayarajh et al. 2019)     pair order flipped
:func:`mac`            mean over targets t and attribute sets A_j of mean_a (1 - cos(t, a))   none
                       (Manzini et al. 2019)
:func:`rnsb`           KL(P ‖ uniform), P ∝ P(negative | t) of a logistic regression fitted   none
                       on A (positive) vs B (negative) (Sweeney & Najafian 2019)
:func:`direct_bias`    mean_w |cos(w, g)|^c, g the first principal component of the          none
                       centred pairs (Bolukbasi et al. 2016)
:func:`clustering`     share of X ∪ Y whose 2-means cluster matches their set, at least 0.5   X ∪ Y re-partitioned,
                       (Gonen & Goldberg 2019)                                                clusters fixed
=====================  =====================================================================  ======================

Permutation p-values follow the EAT's rules (:mod:`eatkit.stats.permutation`): with
``permutations="auto"`` every re-partition (or sign pattern) is enumerated when there are at most
``DEFAULT_MONTE_CARLO`` of them (p = #{≥ observed} / #all, the observed one included), otherwise
``DEFAULT_MONTE_CARLO`` are drawn from the seeded stream of ``rng`` (p = (#{≥ observed} + 1) / (draws + 1),
Phipson & Smyth 2010); an int draws that many; ``"exact"`` enumerates (refused beyond ``EXACT_MAX``).
"greater" counts null values ≥ the observed one, "less" ≤, "two-sided" |null| ≥ |observed|; a null value
within ``tolerance`` (a bound on the rounding of two summation orders) of the threshold counts as
reaching it. MAC, RNSB and direct bias are invariant under re-partitions of the targets, so they
have no such null: their p is None. The clustering accuracy's p is exact and conditional on its clusters
(:func:`clustering`).

The bootstrap CI (``n_bootstrap > 0``) resamples, with replacement and independently, the rows of every
set (target pairs as pairs for RIPA and direct bias), recomputes the metric and reports the percentile
interval; draws come from the same generator, after any permutation draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations, product
from typing import Any

import numpy as np
from scipy.special import expit, log_expit

from eatkit.errors import EatkitError
from eatkit.params import check
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_sets
from eatkit.stats.cost import check_cost
from eatkit.stats.association import cosine_matrix, unit_rows
from eatkit.stats.options import check_choice, check_option, check_permutations
from eatkit.stats.permutation import DEFAULT_MONTE_CARLO, MC_BATCH, random_subsets

#: the RND distances: WEFE's "norm" (Euclidean) and "cos" (WEFE uses the cosine *similarity* here)
DISTANCES: tuple[str, ...] = ("euclidean", "cosine")
#: ``permutations="exact"`` enumerates at most this many re-partitions or sign patterns
EXACT_MAX = 1 << 22
#: the inverse L2 penalty of RNSB's logistic regression (scikit-learn's default C, as WEFE uses)
RNSB_C = 1.0
#: share of each attribute set held out of an RNSB fit (WEFE: ``holdout=True``, ``test_size=0.2``)
RNSB_HOLDOUT = 0.2


@dataclass(frozen=True, kw_only=True)
class MetricResult:
    """One metric's value and how it was computed.

    Attributes
    ----------
    metric : str
        The name of the function that computed it (the kind's name in Python, eatkit.kinds.api_name).
    value : float
        The metric (WEFE's definition; see the function's docstring).
    options : dict
        The metric's own options (e.g. ``{"distance": "euclidean"}``).
    parts : dict
        Per-stimulus terms (e.g. RND's term of each attribute), as arrays.
    p_value : float or None
        The permutation p for ``alternative`` (None: the metric has no re-partition null).
    p_values : dict
        p for every alternative (empty when there is no null).
    alternative : str or None
    null : str
        What the null re-arranges: the member's declaration says it (``eatkit.kinds.Family.member``), and
        the API and the records take it from there ("" from the function itself).
    exact : bool
        True when every re-arrangement was enumerated.
    n_permutations, n_partitions : int
        Re-arrangements evaluated (all, or the draws) and their number in all.
    mc_standard_error : float
        Monte Carlo standard error of ``p_value`` (0 when exact or no null).
    tolerance : float
        Null values this close to the observed one count as ties.
    ci : tuple or None
        Percentile bootstrap interval ``(low, high)`` at ``confidence_level`` (None without resamples).
    n_bootstrap : int
    spread : dict
        RNSB: ``sd``, ``min``, ``max`` of the value over its ``n_fits`` fits (empty otherwise).
    seed : int or None
        Seed of the random draws (None when nothing was drawn or a Generator was passed).
    dropped : dict
        Words dropped from each set before the metric (``oov="drop"`` of :mod:`eatkit.metrics`).
    """

    metric: str
    value: float
    options: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    p_value: float | None = None
    p_values: dict[str, float] = field(default_factory=dict)
    alternative: str | None = None
    null: str = ""
    exact: bool = False
    n_permutations: int = 0
    n_partitions: int = 0
    mc_standard_error: float = 0.0
    tolerance: float = 0.0
    ci: tuple[float, float] | None = None
    confidence_level: float = 0.95
    n_bootstrap: int = 0
    spread: dict[str, float] = field(default_factory=dict)
    seed: int | None = None
    dropped: dict[str, list[str]] = field(default_factory=dict)


# --- the formulas -------------------------------------------------------------------------------------


#: a target mean m seen from the attributes: (m · a for every attribute a: (b, n_a), ‖m‖²: (b,)), for a batch
#: of b means; every RND and ECT formula is written on these, so re-partitions need no d-dimensional means
Geometry = tuple[np.ndarray, np.ndarray]


def _geometry(means: np.ndarray, A: np.ndarray) -> Geometry:
    """The :data:`Geometry` of explicit means (b, d)."""
    return means @ A.T, np.einsum("ij,ij->i", means, means)


def _observed(X: np.ndarray, Y: np.ndarray, A: np.ndarray) -> tuple[Geometry, Geometry]:
    """The :data:`Geometry` of mean X and of mean Y."""
    return _geometry(X.mean(0)[None], A), _geometry(Y.mean(0)[None], A)


def _partition_geometry(weights: np.ndarray, TA: np.ndarray, K: np.ndarray) -> Geometry:
    """The :data:`Geometry` of the means ``weights @ T`` (rows of weights over the targets T), from
    TA = T A^T and the Gram matrix K = T T^T: m·a = w TA, ‖m‖² = w K w^T (cost n, not d, per value)."""
    return weights @ TA, np.einsum("ij,ij->i", weights @ K, weights)


def _rnd_terms(gx: Geometry, gy: Geometry, A: np.ndarray, distance: str) -> np.ndarray:
    """RND's term of each attribute (Garg et al. 2018 as WEFE computes it), (b, n_a): dist(a, mean X) -
    dist(a, mean Y), Euclidean, or ("cosine", WEFE's "cos") the cosine *similarity*; RND is their mean."""
    a2 = np.einsum("ij,ij->i", A, A)
    if distance == "cosine":
        return np.subtract(*(dots / np.sqrt(np.outer(sq, a2)) for dots, sq in (gx, gy)))
    return np.subtract(*(np.sqrt(np.maximum(sq[:, None] - 2 * dots + a2, 0.0)) for dots, sq in (gx, gy)))


def _ect_values(gx: Geometry, gy: Geometry, A: np.ndarray) -> np.ndarray:
    """ECT (Dev & Phillips 2019, as WEFE): Spearman's ρ between cos(mean X, a) and cos(mean Y, a) over the
    attributes a, one value per row (the ranks' Pearson correlation; ties take average ranks)."""
    a = np.sqrt(np.einsum("ij,ij->i", A, A))
    ranks = [_ranks(dots / np.outer(np.sqrt(sq), a)) for dots, sq in (gx, gy)]
    centred = [r - r.mean(axis=1, keepdims=True) for r in ranks]
    num = np.einsum("ij,ij->i", centred[0], centred[1])
    den = np.sqrt(np.einsum("ij,ij->i", centred[0], centred[0]) * np.einsum("ij,ij->i", centred[1], centred[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


#: values of a row closer than this (relative to the row's largest magnitude) are one tie when ranked: a cosine
#: computed twice for the same pair of vectors (a resampled duplicate) may differ in its last bits, by the BLAS
#: kernel the machine picks, and a broken tie would change the ranks
RANK_TIE_RTOL = 1e-12


def _ranks(values: np.ndarray) -> np.ndarray:
    """The ranks of each row (1 = smallest), ties (values within ``RANK_TIE_RTOL``) taking their average rank
    (as ``scipy.stats.rankdata`` of exactly tied values; only rows with ties take the slower path).

    >>> _ranks(np.array([[0.3, 0.1 + 0.2, 0.1]])).tolist()  # 0.1 + 0.2 = 0.30000000000000004: a tie
    [[2.5, 2.5, 1.0]]
    """
    order = np.argsort(values, axis=1, kind="stable")
    ranks = np.empty_like(values)
    np.put_along_axis(ranks, order, np.arange(1.0, values.shape[1] + 1), axis=1)
    ordered = np.take_along_axis(values, order, axis=1)
    scale = np.max(np.abs(values), axis=1, keepdims=True)
    tied_next = np.diff(ordered, axis=1) <= RANK_TIE_RTOL * scale
    rows = np.flatnonzero(tied_next.any(axis=1))
    if rows.size:
        n = values.shape[1]  # each sorted position's tie group, numbered apart across rows
        group = np.cumsum(np.concatenate([np.ones((rows.size, 1), bool), ~tied_next[rows]], axis=1), axis=1)
        group += (np.arange(rows.size) * n)[:, None]
        positions = np.broadcast_to(np.arange(1.0, n + 1), group.shape).ravel()
        average = np.bincount(group.ravel(), positions) / np.maximum(np.bincount(group.ravel()), 1)
        tied = np.empty((rows.size, n))
        np.put_along_axis(tied, order[rows], average[group], axis=1)
        ranks[rows] = tied
    return ranks


def _mean_statistic(X: np.ndarray, Y: np.ndarray, A: np.ndarray,
                    of: Callable[[Geometry, Geometry], np.ndarray]) -> tuple[_Null, Callable[[np.ndarray], np.ndarray]]:
    """The re-partition null of X ∪ Y and a statistic ``of`` the two means' geometries, as a function of
    a batch of 0/1 membership rows (1: in the new X)."""
    T = np.concatenate([X, Y])
    TA, K = T @ A.T, T @ T.T
    k, m = len(X), len(Y)

    def statistic(rows: np.ndarray) -> np.ndarray:
        return of(_partition_geometry(rows / k, TA, K), _partition_geometry((1 - rows) / m, TA, K))

    return _Null("partition", len(T), k), statistic


def _ripa_terms(X: np.ndarray, Y: np.ndarray, A: np.ndarray) -> np.ndarray:
    """RIPA's term of each target pair i (Ethayarajh et al. 2019, as WEFE): mean_a a · b_i, with the
    relation vector b_i = (x_i - y_i) / ‖x_i - y_i‖."""
    return unit_rows(X - Y) @ A.mean(axis=0)


def _mac_terms(targets: Sequence[np.ndarray], attributes: Sequence[np.ndarray]) -> np.ndarray:
    """MAC's terms (Manzini et al. 2019, as WEFE): for every target t (of every set) and attribute set A_j,
    mean_{a ∈ A_j} (1 - cos(t, a)); MAC is their mean."""
    T = np.concatenate(targets)
    return np.stack([1.0 - cosine_matrix(T, Aj).mean(axis=1) for Aj in attributes], axis=1)


def gender_direction(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """The bias direction g of Bolukbasi et al. 2016 (§5): the first principal component of the
    definitional pairs (x_i, y_i) of unit vectors, each centred on its pair's mean (both centred vectors
    enter the PCA). Its sign is fixed so that mean_i (x_i - y_i) · g ≥ 0.

    >>> gender_direction(np.array([[1.0, 1.0], [1.0, -1.0]]), np.array([[-1.0, 1.0], [-1.0, -1.0]]))
    array([1., 0.])
    """
    X, Y = unit_rows(X), unit_rows(Y)
    same = np.flatnonzero(np.all(X == Y, axis=1))
    if same.size:
        raise EatkitError(f"definitional pair(s) {', '.join(map(str, same[:5]))} have the same direction in both "
                          "words (e.g. a pair (she, she)): no bias direction can be taken from them")
    half = (X - Y) / 2  # x_i - centre_i; y_i - centre_i is its negative, so [half; -half] has mean 0
    # its first right singular vector, from the (n, n) Gram matrix rather than a (2n, d) SVD
    u = np.linalg.eigh(half @ half.T)[1][:, -1]
    g = half.T @ u
    g /= np.linalg.norm(g)
    return g if float((X - Y).sum(axis=0) @ g) >= 0 else -g


def _direct_bias_of(X: np.ndarray, Y: np.ndarray, N: np.ndarray, c: float) -> tuple[float, np.ndarray]:
    """DirectBias_c = mean_{w ∈ N} |cos(w, g)|^c (Bolukbasi et al. 2016, §5) and the |cos(w, g)|."""
    cos = np.abs(unit_rows(N) @ gender_direction(X, Y))
    return float(np.mean(cos**c)), cos


def _logistic_fit(F: np.ndarray, labels: np.ndarray, C: float = RNSB_C, iterations: int = 100) -> np.ndarray:
    """L2-regularised logistic regression as scikit-learn's liblinear solver fits it (the intercept a
    feature of value 1, penalised like the weights): w minimising ½‖w‖² + C Σ_i log(1 + exp(-y_i w·f_i)),
    for labels ±1. Solved by Newton's method in the span of the rows (w = F^T α, the representer theorem),
    an (n, n) system however large the dimension: Δα = -(C D K + I)^{-1} (α + C g), K = F F^T."""
    K = F @ F.T
    alpha = np.zeros(len(F))
    for _ in range(iterations):
        margin = labels * (K @ alpha)
        p = expit(-margin)  # σ(-y w·f)
        step = np.linalg.solve(C * (p * (1 - p))[:, None] * K + np.eye(len(F)), alpha - C * labels * p)
        alpha -= step
        if np.max(np.abs(step)) <= 1e-12 * (1 + np.max(np.abs(alpha))):
            break
    return F.T @ alpha


def _rnsb_kl(T: np.ndarray, A: np.ndarray, B: np.ndarray, train_a: np.ndarray, train_b: np.ndarray) -> tuple[float, np.ndarray]:
    """RNSB of one fit (Sweeney & Najafian 2019, as WEFE): a logistic regression of A (label +1, positive)
    against B (label -1, negative) on the training rows; P(t) = P(negative | t) / Σ_t' P(negative | t');
    the value is KL(P ‖ uniform) = Σ_t P(t) log(|T| P(t)). Returns it and P(negative | t)."""
    features = np.concatenate([A[train_a], B[train_b]])
    labels = np.concatenate([np.ones(train_a.size), -np.ones(train_b.size)])
    ones = np.ones((len(features), 1))
    w = _logistic_fit(np.hstack([features, ones]), labels)
    scores = T @ w[:-1] + w[-1]
    negative = np.exp(log_expit(-scores))
    P = negative / negative.sum()
    return float(np.sum(P * np.log(P * P.size))), negative


def _holdout_split(n: int, generator: np.random.Generator) -> np.ndarray:
    """The rows of a set of ``n`` kept for training: a random round((1 - RNSB_HOLDOUT) n) of them, at least
    1 and at most n - 1 (WEFE's stratified 80/20 split, drawn per set)."""
    keep = min(n - 1, max(1, round((1 - RNSB_HOLDOUT) * n))) if n >= 2 else n
    return np.sort(generator.permutation(n)[:keep])


# --- the null distributions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Null:
    """Re-arrangements of the targets under a null: ``"partition"`` (which k of n rows form the first set)
    or ``"signs"`` (each of n pairs in its order or flipped), as batches of 0/1 or ±1 rows."""

    kind: str
    n: int
    k: int = 0

    @property
    def size(self) -> int:
        return math.comb(self.n, self.k) if self.kind == "partition" else 2**self.n

    def observed(self) -> np.ndarray:
        return self._rows(np.arange(self.k)[None, :]) if self.kind == "partition" else np.ones((1, self.n))

    def all(self) -> Iterator[np.ndarray]:
        source = combinations(range(self.n), self.k) if self.kind == "partition" else product((1.0, -1.0), repeat=self.n)
        while True:
            chunk = np.array([s for _, s in zip(range(MC_BATCH), source)], dtype=np.float64)
            if len(chunk) == 0:
                return
            yield self._rows(chunk.astype(np.int64)) if self.kind == "partition" else chunk

    def sample(self, draws: int, generator: np.random.Generator) -> Iterator[np.ndarray]:
        for start in range(0, draws, MC_BATCH):
            b = min(MC_BATCH, draws - start)
            if self.kind == "partition":
                yield self._rows(random_subsets(self.n, self.k, b, generator))
            else:
                yield np.where(generator.random((b, self.n)) < 0.5, 1.0, -1.0)

    def _rows(self, chosen: np.ndarray) -> np.ndarray:
        rows = np.zeros((len(chosen), self.n))
        np.put_along_axis(rows, chosen.astype(np.int64), 1.0, axis=1)
        return rows


def _permutation_p(null: _Null, statistic: Callable[[np.ndarray], np.ndarray], observed: float, tolerance: float,
                   alternative: str, permutations: str | int, generator: np.random.Generator) -> dict[str, Any]:
    """The permutation p-values of ``statistic`` (a function of a batch of re-arrangement rows)."""
    permutations = check_permutations(permutations)
    if permutations == "exact" and null.size > EXACT_MAX:
        raise EatkitError(f"an exact permutation test would enumerate {null.size:.3g} re-arrangements (at most "
                          f"{EXACT_MAX}); pass a number of Monte Carlo permutations instead")
    exact = permutations == "exact" or (permutations == "auto" and null.size <= DEFAULT_MONTE_CARLO)
    draws = null.size if exact else (DEFAULT_MONTE_CARLO if permutations == "auto" else int(permutations))
    check_cost(f"{draws:.3g} permutations of {null.n} stimuli", float(draws) * null.n * 4,
               "pass fewer permutations (10^4 to 10^5 give p to about two digits)")
    counts = dict.fromkeys(("greater", "less", "two-sided"), 0)
    for rows in (null.all() if exact else null.sample(draws, generator)):
        values = statistic(rows)
        counts["greater"] += int(np.count_nonzero(values >= observed - tolerance))
        counts["less"] += int(np.count_nonzero(values <= observed + tolerance))
        counts["two-sided"] += int(np.count_nonzero(np.abs(values) >= abs(observed) - tolerance))
    if exact:
        p_values = {alt: c / draws for alt, c in counts.items()}
    else:
        p_values = {alt: (c + 1) / (draws + 1) for alt, c in counts.items()}
    p = p_values[alternative]
    return dict(p_value=p, p_values=p_values, alternative=alternative, exact=exact, n_permutations=draws,
                n_partitions=null.size, mc_standard_error=0.0 if exact else math.sqrt(p * (1 - p) / draws),
                tolerance=tolerance)


def _tolerance(magnitude: float, n: int, d: int) -> float:
    """Rounding bound of two summation orders of a statistic of means of n rows of d-dimensional vectors
    whose terms are at most ``magnitude`` in size (relative to the terms, so that vectors scaled by 1e-42
    or 1e30 count the same ties: the degeneracy rules' scale invariance)."""
    return 8.0 * (n + d) * float(np.finfo(np.float64).eps) * magnitude


def percentile_bootstrap(compute: Callable[[list[np.ndarray]], float], sets: list[np.ndarray], n_bootstrap: int,
                         confidence_level: float, generator: np.random.Generator) -> tuple[float, float] | None:
    """Percentile interval of ``compute`` over resamples of the rows of every set (a (n, 2, d) array of pairs
    is resampled by pair); None without resamples.

    >>> low, high = percentile_bootstrap(lambda s: float(s[0].mean()), [np.arange(10.0)], 200, 0.9,
    ...                                  np.random.default_rng(0))
    >>> bool(low < 4.5 < high)
    True
    """
    if n_bootstrap == 0:
        return None
    size = sum(s.size for s in sets)  # one value reads every set once (RNSB's fit: some hundred times more)
    check_cost(f"{n_bootstrap:.3g} bootstrap resamples of {sum(len(s) for s in sets)} stimuli",
               float(n_bootstrap) * size * 100, "use fewer resamples (10^3 to 10^4 give a 95% CI to two digits)")
    values = np.empty(n_bootstrap)
    for r in range(n_bootstrap):
        values[r] = compute([s[generator.integers(0, len(s), len(s))] for s in sets])
    tail = (1 - confidence_level) / 2
    finite = values[np.isfinite(values)]
    low, high = np.quantile(finite, [tail, 1 - tail]) if finite.size else (math.nan, math.nan)
    return float(low), float(high)


# --- input checks ---------------------------------------------------------------------------------------


def _check(named: dict[str, Any], least: dict[str, int], *, scaled: bool = False) -> dict[str, np.ndarray]:
    """The sets checked by the family's one rule (:func:`check_sets`): at least ``least`` rows (default 1);
    ``scaled``: the metric depends on the vectors' scale (RNSB)."""
    return check_sets({name: least.get(name, 1) for name in named}, scaled=scaled, **named)


def _check_common(alternative: str, n_bootstrap: int, confidence_level: float) -> None:
    check_choice("alternative", alternative)
    if n_bootstrap != 0:
        check_count("n_bootstrap", n_bootstrap)
    check_option("confidence_level", confidence_level)


def _pairs(X: np.ndarray, Y: np.ndarray, what: str) -> None:
    if len(X) != len(Y):
        raise EatkitError(f"{what} pairs the targets row by row: X has {len(X)} stimuli and Y {len(Y)}")
    same = np.flatnonzero(np.all(X == Y, axis=1))
    if same.size:
        raise EatkitError(f"{what}: the pair(s) in row(s) {', '.join(map(str, same[:5]))} have equal vectors")


# --- the metrics ----------------------------------------------------------------------------------------


def rnd(X: Any, Y: Any, A: Any, *, distance: str = "euclidean", alternative: str = "two-sided",
        permutations: str | int = "auto", n_bootstrap: int = 0, confidence_level: float = 0.95,
        rng: Any = None) -> MetricResult:
    """Relative norm distance (Garg et al. 2018, PNAS 115(16), eq. in §Methods; WEFE's ``RND``):
    mean_{a ∈ A} [dist(a, mean X) - dist(a, mean Y)], dist Euclidean (``"euclidean"``, WEFE's "norm") or,
    as WEFE's ``"cos"``, the cosine *similarity* (``"cosine"``). Negative (Euclidean): A is nearer X.
    p: X ∪ Y re-partitioned at their sizes.

    >>> X = [[1.0, 0.0], [1.0, 0.2]]; Y = [[0.0, 1.0], [0.2, 1.0]]; A = [[1.0, 0.1], [0.9, 0.0]]
    >>> r = rnd(X, Y, A, permutations="exact")
    >>> round(r.value, 4), round(r.p_values["less"], 4), r.n_partitions   # 1 of 6 splits is as extreme
    (-1.206, 0.1667, 6)
    """
    sets = _check({"X": X, "Y": Y, "A": A}, {"X": 1, "Y": 1})
    X, Y, A = sets["X"], sets["Y"], sets["A"]
    check_choice("distance", distance, DISTANCES)
    _check_common(alternative, n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    null, statistic = _mean_statistic(X, Y, A, lambda gx, gy: _rnd_terms(gx, gy, A, distance).mean(axis=1))
    parts = _rnd_terms(*_observed(X, Y, A), A, distance)[0]
    value = float(parts.mean())
    p = _permutation_p(null, statistic, value, _tolerance(float(np.abs(parts).max()), null.n, X.shape[1]),
                       alternative, permutations, generator)
    ci = percentile_bootstrap(lambda s: float(_rnd_terms(*_observed(*s), s[2], distance).mean()), [X, Y, A], n_bootstrap,
                    confidence_level, generator)
    return MetricResult(metric="rnd", value=value, options={"distance": distance}, parts={"A": parts},
                        ci=ci, confidence_level=confidence_level,
                        n_bootstrap=n_bootstrap, seed=_seed(seed, p, n_bootstrap), **p)


def ect(X: Any, Y: Any, A: Any, *, alternative: str = "less", permutations: str | int = "auto",
        n_bootstrap: int = 0, confidence_level: float = 0.95, rng: Any = None) -> MetricResult:
    """Embedding coherence test (Dev & Phillips 2019, AISTATS, §3; WEFE's ``ECT``): Spearman's ρ between
    the cosine similarities of mean X and of mean Y with each attribute a ∈ A (1: no bias). p: X ∪ Y
    re-partitioned; by default "less" (less coherent than under random re-partitions: a bias).

    >>> X = [[1.0, 0.0, 0.1], [0.9, 0.1, 0.0]]; Y = [[0.0, 1.0, 0.1], [0.1, 0.9, 0.0]]
    >>> A = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.2], [0.0, 1.0, 0.0]]
    >>> round(ect(X, Y, A).value, 4)
    -1.0
    """
    sets = _check({"X": X, "Y": Y, "A": A}, {"X": 1, "Y": 1})
    X, Y, A = sets["X"], sets["Y"], sets["A"]
    if len(A) < 3:  # Spearman's rho of two pairs is +1 or -1
        raise EatkitError(f"ECT needs at least 3 attribute stimuli in A, got {len(A)}: Spearman's rho over "
                          f"{len(A)} attribute(s) is +1 or -1 whatever the data")
    _check_common(alternative, n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    null, statistic = _mean_statistic(X, Y, A, lambda gx, gy: _ect_values(gx, gy, A))
    value = float(_ect_values(*_observed(X, Y, A), A)[0])
    if not math.isfinite(value):
        raise EatkitError("ECT is undefined here: mean X or mean Y has the same cosine with every attribute")
    p = _permutation_p(null, statistic, value, _tolerance(1.0, null.n, X.shape[1]), alternative, permutations,
                       generator)  # a Spearman rho: terms of size 1
    ci = percentile_bootstrap(lambda s: float(_ect_values(*_observed(*s), s[2])[0]), [X, Y, A], n_bootstrap, confidence_level,
                    generator)
    return MetricResult(metric="ect", value=value, ci=ci,
                        confidence_level=confidence_level, n_bootstrap=n_bootstrap,
                        seed=_seed(seed, p, n_bootstrap), **p)


def ripa(X: Any, Y: Any, A: Any, *, alternative: str = "two-sided", permutations: str | int = "auto",
         n_bootstrap: int = 0, confidence_level: float = 0.95, rng: Any = None) -> MetricResult:
    """Relational inner product association (Ethayarajh et al. 2019, ACL, §4; WEFE's ``RIPA``): the
    target pairs (x_i, y_i) define relation vectors b_i = (x_i - y_i) / ‖x_i - y_i‖, and RIPA is the
    mean over attributes a and pairs i of a · b_i (positive: A leans towards X). p: the order within
    each pair flipped at random (b_i -> -b_i), 2^n sign patterns.

    >>> X = [[1.0, 0.0], [1.0, 0.5]]; Y = [[0.0, 1.0], [0.0, 1.5]]; A = [[1.0, 0.2]]
    >>> r = ripa(X, Y, A, permutations="exact")
    >>> round(r.value, 4), r.p_values["greater"], r.n_partitions
    (0.5657, 0.25, 4)
    """
    sets = _check({"X": X, "Y": Y, "A": A}, {})
    X, Y, A = sets["X"], sets["Y"], sets["A"]
    _pairs(X, Y, "RIPA")
    _check_common(alternative, n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    terms = _ripa_terms(X, Y, A)
    null = _Null("signs", len(terms))
    value = float(terms.mean())
    p = _permutation_p(null, lambda rows: rows @ terms / terms.size, value, _tolerance(float(np.abs(terms).max()), len(X), X.shape[1]),
                       alternative, permutations, generator)
    ci = percentile_bootstrap(lambda s: float(_ripa_terms(s[0][:, 0], s[0][:, 1], s[1]).mean()),
                    [np.stack([X, Y], axis=1), A], n_bootstrap, confidence_level, generator)
    return MetricResult(metric="ripa", value=value, parts={"pairs": terms}, ci=ci,
                        confidence_level=confidence_level, n_bootstrap=n_bootstrap,
                        seed=_seed(seed, p, n_bootstrap), **p)


def mac(targets: Sequence[Any], attributes: Sequence[Any], *, n_bootstrap: int = 0,
        confidence_level: float = 0.95, rng: Any = None) -> MetricResult:
    """Mean average cosine distance (Manzini et al. 2019, NAACL, §3.2; WEFE's ``MAC``): the mean, over every
    target t of every target set and every attribute set A_j, of mean_{a ∈ A_j} (1 - cos(t, a)). It has
    no re-partition null (it is a mean over all targets): no p.

    >>> round(mac([[[1.0, 0.0]], [[0.0, 1.0]]], [[[1.0, 0.0], [1.0, 1.0]]]).value, 4)
    0.3964
    """
    T = _named_sets("T", targets)
    A_ = _named_sets("A", attributes)
    sets = _check({**T, **A_}, {})
    _check_common("greater", n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    Ts, As = [sets[n] for n in T], [sets[n] for n in A_]
    terms = _mac_terms(Ts, As)
    ci = percentile_bootstrap(lambda s: float(_mac_terms(s[: len(Ts)], s[len(Ts):]).mean()), Ts + As, n_bootstrap,
                    confidence_level, generator)
    return MetricResult(metric="mac", value=float(terms.mean()), parts={"targets": terms}, ci=ci,
                        confidence_level=confidence_level, n_bootstrap=n_bootstrap,
                        seed=seed if n_bootstrap else None)


def rnsb(targets: Sequence[Any], A: Any, B: Any, *, n_fits: int = 20, holdout: bool = True, n_bootstrap: int = 0,
         confidence_level: float = 0.95, rng: Any = None) -> MetricResult:
    """Relative negative sentiment bias (Sweeney & Najafian 2019, ACL, §3; WEFE's ``RNSB``): a logistic
    regression (L2, C = 1, liblinear's penalised intercept) learns A (the first attribute set, positive)
    against B (negative); each target t of the union of ``targets`` gets P(negative | t); normalised to a
    distribution P over the targets, RNSB = KL(P ‖ uniform) (0: no bias). As in WEFE (``holdout=True``)
    each fit trains on a random 80% of each attribute set; ``value`` is the mean over ``n_fits`` seeded fits
    and ``spread`` their SD, min and max (WEFE issue #5: RNSB varies from run to run). No re-partition
    null (the KL is over the union of targets): no p. The bootstrap refits once per resample.

    >>> T = [[[1.0, 0.0], [0.8, 0.3]], [[0.0, 1.0], [0.3, 0.8]]]
    >>> r = rnsb(T, [[1.0, 0.1], [0.9, 0.0], [1.0, -0.1]], [[0.0, 1.0], [0.1, 0.9], [-0.1, 1.0]], rng=0)
    >>> round(r.value, 3), r.spread["n_fits"]
    (0.033, 20)
    """
    named = _named_sets("T", targets)
    sets = _check({**named, "A": A, "B": B}, {"A": 2, "B": 2}, scaled=True)
    n_fits = check("n_fits", n_fits)  # its one declaration, eatkit.params.N_FITS
    _check_common("greater", n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    T = np.concatenate([sets[n] for n in named])
    A, B = sets["A"], sets["B"]

    def fit(T: np.ndarray, A: np.ndarray, B: np.ndarray) -> tuple[float, np.ndarray]:
        if not holdout:
            return _rnsb_kl(T, A, B, np.arange(len(A)), np.arange(len(B)))
        return _rnsb_kl(T, A, B, _holdout_split(len(A), generator), _holdout_split(len(B), generator))

    fits = [fit(T, A, B) for _ in range(n_fits if holdout else 1)]
    kl = np.array([f[0] for f in fits])
    ci = percentile_bootstrap(lambda s: fit(*s)[0], [T, A, B], n_bootstrap, confidence_level, generator)
    spread = {"n_fits": len(kl), "sd": float(kl.std(ddof=1)) if len(kl) > 1 else 0.0, "min": float(kl.min()),
              "max": float(kl.max())}
    return MetricResult(metric="rnsb", value=float(kl.mean()), options={"n_fits": n_fits, "holdout": holdout},
                        parts={"negative": np.mean([f[1] for f in fits], axis=0), "fits": kl}, ci=ci,
                        confidence_level=confidence_level, n_bootstrap=n_bootstrap, spread=spread,
                        seed=seed if holdout or n_bootstrap else None)


def direct_bias(X: Any, Y: Any, N: Any, *, c: float = 1.0, n_bootstrap: int = 0, confidence_level: float = 0.95,
                rng: Any = None) -> MetricResult:
    """Direct bias (Bolukbasi et al. 2016, NeurIPS, §5): DirectBias_c = mean_{w ∈ N} |cos(w, g)|^c over the
    neutral words N, g the bias direction of the definitional pairs (x_i, y_i) (:func:`gender_direction`).
    ``c`` sets the strictness (the paper reports c = 1). The value is unchanged by flipping or
    re-partitioning the pairs: no p. The bootstrap resamples the pairs (as pairs) and N.

    >>> X = [[1.0, 0.1], [1.0, -0.1]]; Y = [[-1.0, 0.1], [-1.0, -0.1]]
    >>> round(direct_bias(X, Y, [[1.0, 1.0], [0.0, 1.0]]).value, 4)
    0.3536
    """
    sets = _check({"X": X, "Y": Y, "N": N}, {})
    X, Y, N = sets["X"], sets["Y"], sets["N"]
    _pairs(X, Y, "direct bias")
    c = check("c", c)  # its one declaration, eatkit.params.DIRECT_BIAS_C
    _check_common("greater", n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    value, cos = _direct_bias_of(X, Y, N, c)
    ci = percentile_bootstrap(lambda s: _direct_bias_of(s[0][:, 0], s[0][:, 1], s[1], c)[0], [np.stack([X, Y], axis=1), N],
                    n_bootstrap, confidence_level, generator)
    return MetricResult(metric="direct_bias", value=value, options={"c": c}, parts={"N": cos}, ci=ci,
                        confidence_level=confidence_level, n_bootstrap=n_bootstrap,
                        seed=seed if n_bootstrap else None)


def two_means(points: np.ndarray, generator: np.random.Generator, n_init: int = 10,
              iterations: int = 100) -> np.ndarray:
    """The cluster (0 or 1) of each row of ``points`` by 2-means (Lloyd's algorithm from a k-means++ start,
    the best of ``n_init`` starts by inertia): eatkit's one 2-means (the clustering metric, Double-Hard
    Debias' choice of the frequency direction).

    >>> two_means(np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]]), np.random.default_rng(0)).tolist()
    [1, 1, 0, 0]
    """
    best: tuple[float, np.ndarray] | None = None
    for _ in range(n_init):
        first = points[generator.integers(len(points))]
        d2 = ((points - first) ** 2).sum(axis=1)
        second = points[generator.choice(len(points), p=d2 / d2.sum())] if d2.sum() > 0 else first
        labels, inertia = _lloyd(points, np.stack([first, second]), iterations)
        if best is None or inertia < best[0]:
            best = (inertia, labels)
    assert best is not None
    return best[1]


def _lloyd(points: np.ndarray, centres: np.ndarray, iterations: int) -> tuple[np.ndarray, float]:
    """Lloyd's iterations of 2-means from ``centres``: each row's cluster and the inertia."""
    for _ in range(iterations):
        labels = ((points[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
        new = np.stack([points[labels == j].mean(axis=0) if np.any(labels == j) else centres[j] for j in (0, 1)])
        # np.allclose(new, centres) for finite centres (means of finite rows), without its checks and
        # broadcasting: a fifth of the clustering metric's CPU on tiny sets, which it runs 10 x 2,000 times
        if (np.abs(new - centres) <= 1e-8 + 1e-5 * np.abs(centres)).all():
            break
        centres = new
    return labels, float(((points - centres[labels]) ** 2).sum())


def _cluster_accuracy(X: np.ndarray, Y: np.ndarray, generator: np.random.Generator) -> tuple[float, np.ndarray]:
    """Gonen & Goldberg's clustering accuracy: 2-means of the unit vectors of X ∪ Y, the share of stimuli
    whose cluster matches their set under the better of the two matchings (at least 0.5); and the clusters."""
    labels = two_means(unit_rows(np.concatenate([X, Y])), generator)
    agree = float(np.mean(labels == np.r_[np.zeros(len(X), int), np.ones(len(Y), int)]))
    return max(agree, 1.0 - agree), labels


def _clustering_p(labels: np.ndarray, k: int, observed: float) -> dict[str, Any]:
    """The exact p of a clustering accuracy conditional on the clusters: under the null the k stimuli of X
    are a uniformly random k-subset of X ∪ Y, so the number j of X in cluster 0 is hypergeometric and the
    accuracy is max(a, n - a) / n with a = 2j + (n - k) - c (c: the size of cluster 0); p = P(accuracy ≥
    the observed one), counted in integers (no rounding)."""
    from scipy.stats import hypergeom

    n, c = len(labels), int(np.count_nonzero(labels == 0))
    j = np.arange(max(0, k + c - n), min(k, c) + 1)
    a = 2 * j + (n - k) - c
    hits = np.maximum(a, n - a) >= round(observed * n)
    p = float(min(1.0, hypergeom.pmf(j[hits], n, k, c).sum()))
    return dict(p_value=p, p_values={"greater": p}, alternative="greater", exact=True,
                n_permutations=math.comb(n, k), n_partitions=math.comb(n, k))


def clustering(X: Any, Y: Any, *, n_bootstrap: int = 0, confidence_level: float = 0.95,
               rng: Any = None) -> MetricResult:
    """Clustering accuracy (Gonen & Goldberg 2019, NAACL, §4 "Clustering"): the targets X ∪ Y (unit vectors)
    are split by 2-means (:func:`two_means`, seeded), and the value is the share of targets whose cluster
    matches their set, under the better matching: 0.5 (chance) when the embedding does not separate the
    sets, 1 when it separates them perfectly (bias that debiasing left behind). Reads the targets only.
    p: exact, conditional on the clusters (:func:`_clustering_p`: X ∪ Y re-partitioned at their sizes,
    the clusters fixed; "greater"). The bootstrap resamples X and Y and clusters again.

    >>> X = [[1.0, 0.1], [1.0, 0.0], [0.9, 0.1]]; Y = [[0.1, 1.0], [0.0, 1.0], [0.1, 0.9]]
    >>> r = clustering(X, Y, rng=0)
    >>> r.value, round(r.p_value, 4), r.n_partitions   # 2 of the 20 splits match the clusters
    (1.0, 0.1, 20)
    """
    sets = _check({"X": X, "Y": Y}, {"X": 1, "Y": 1})
    X, Y = sets["X"], sets["Y"]
    _check_common("greater", n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    value, labels = _cluster_accuracy(X, Y, generator)
    p = _clustering_p(labels, len(X), value)
    ci = percentile_bootstrap(lambda s: _cluster_accuracy(s[0], s[1], generator)[0], [X, Y], n_bootstrap,
                              confidence_level, generator)
    return MetricResult(metric="clustering", value=value, parts={"clusters": labels}, ci=ci,
                        confidence_level=confidence_level, n_bootstrap=n_bootstrap, seed=seed, **p)


def _named_sets(prefix: str, sets: Sequence[Any]) -> dict[str, Any]:
    if isinstance(sets, np.ndarray) or not isinstance(sets, Sequence) or len(sets) == 0:
        raise EatkitError(f"the {'target' if prefix == 'T' else 'attribute'} sets must be a non-empty list of "
                          "(n, d) arrays")
    return {f"{prefix}{i + 1}": s for i, s in enumerate(sets)}


def _seed(seed: int | None, p: dict[str, Any], n_bootstrap: int) -> int | None:
    """The seed to record: only when something was drawn (Monte Carlo permutations or resamples)."""
    return seed if (not p["exact"] or n_bootstrap) else None


# --- rankings of models ---------------------------------------------------------------------------------

def bias_magnitude(values: Any, chance: float = 0.0) -> np.ndarray:
    """How biased each value is: its distance from ``chance``, the value of no bias that each kind declares
    (:class:`eatkit.kinds.Ranking`; 0 for the EAT's d, RND, RIPA, RNSB and direct bias; 1 for ECT's
    coherence and MAC as WEFE reads it; 0.5 for a clustering accuracy): |v - chance|, 0 no bias, larger more
    (WEFE's rankings study ranks models by these).

    >>> bias_magnitude([1.0, 0.25], chance=1).tolist(), bias_magnitude([-1.5]).tolist()
    ([0.0, 0.75], [1.5])
    """
    return np.abs(np.asarray(values, dtype=np.float64) - float(chance))


@dataclass(frozen=True, kw_only=True)
class ModelRanking:
    """Models ranked by each measure and overall (WEFE's rankings, Badilla et al. 2020, §5).

    ``ranks[i, j]``: the rank of model i by measure j (1: least biased; ties share their average rank);
    ``mean_rank``: each model's mean rank over the measures; ``overall``: the rank of that mean;
    ``spearman[j, k]`` and ``spearman_p[j, k]``: the rank correlation of measures j and k over the models
    and its two-sided p-value (exact over all orderings of the models up to
    :data:`eatkit.stats.geometry.SPEARMAN_EXACT_MAX` models, the t approximation beyond:
    :func:`eatkit.stats.geometry.spearman_by_group`; NaN with fewer than 3 models or a measure that ties every
    model)."""

    ranks: np.ndarray
    mean_rank: np.ndarray
    overall: np.ndarray
    spearman: np.ndarray
    spearman_p: np.ndarray


def rank_models(magnitudes: Any) -> ModelRanking:
    """Rank models (rows) by bias magnitudes (columns: measures, from :func:`bias_magnitude`).

    >>> r = rank_models([[0.1, 0.5], [0.3, 0.2], [0.2, 0.9]])
    >>> r.ranks[:, 0].tolist(), r.overall.tolist(), round(float(r.spearman[0, 1]), 2)
    ([1.0, 3.0, 2.0], [1.0, 2.0, 3.0], -0.5)
    """
    from scipy.stats import rankdata  # (here: scipy.stats costs about 0.3 s of CPU to import)

    from eatkit.stats.geometry import spearman_by_group

    table = np.asarray(magnitudes, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 1:
        raise EatkitError(f"rank_models needs a (models, measures) table with at least 2 models, got shape {table.shape}")
    if not np.isfinite(table).all():
        raise EatkitError("rank_models: every model needs a finite value of every measure")
    ranks = rankdata(table, axis=0)
    mean_rank = ranks.mean(axis=1)
    q = table.shape[1]
    rho, p = np.eye(q), np.zeros((q, q))
    if table.shape[0] >= 3:
        models = [str(i) for i in range(table.shape[0])]
        for j, k in combinations(range(q), 2):  # p exact over all orderings of a few models, else t-approximation
            (result,) = spearman_by_group(dict(zip(models, ranks[:, j])), dict(zip(models, ranks[:, k])))
            rho[j, k] = rho[k, j] = result.rho
            p[j, k] = p[k, j] = result.p_value
    else:
        rho[~np.eye(q, dtype=bool)], p[:] = np.nan, np.nan
    return ModelRanking(ranks=ranks, mean_rank=mean_rank, overall=rankdata(mean_rank), spearman=rho, spearman_p=p)
