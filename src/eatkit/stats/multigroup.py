"""Tests of more than two groups: the SAME score (Schröder et al. 2021; its multi-class form) and the
generalised WEAT (Swinger et al., AIES 2019), with a permutation p and a percentile bootstrap CI.

Both follow the definitions of HammerLabML/EmbeddingBiasScores (commit 5e72d36, ``geometrical_bias/``):

* attribute centres ``c_j = mean_{a in A_j} a / |a|``;
* SAME's bias components ``d_1 = c_1 - c_2`` and, for j >= 3, ``c_1 - c_j`` with its projections on the
  earlier (normalised) components removed in turn (Gram-Schmidt); the bias of a target word
  ``b(t) = |cos(t, d_1)| + Σ_{j>=2} |cos(t, d_j)| |d_j|`` (later components weighted by their length, as
  that code does); ``SAME(T) = mean_t b(t)``; with two attribute sets also the signed skew
  ``mean_t cos(t, d_1)`` and the stereotype ``SD_t cos(t, d_1)`` (ddof 0);
* generalised WEAT over n target sets X_i and n attribute sets A_i (unit vectors):
  ``GW = Σ_i <xbar_i - xbar, c_i - cbar>``, xbar_i the mean of X_i, xbar and cbar the means of the group
  means; since Σ_i (c_i - cbar) = 0 this is ``Σ_i mean_{x in X_i} <x, c_i - cbar>``.

The permutation null re-assigns the exchangeable units among their groups, sizes kept: target words for
the generalised WEAT, attribute words for SAME (its target set is fixed). ``permutations="exact"`` counts
every distinct assignment (the multiset permutations of the group labels, N! / prod n_i! of them), or
refuses before any work with the time it would take (:func:`eatkit.stats.cost.check_cost`); a number counts
every assignment when there are at most that many (exact), else draws that many random ones and
p = (count + 1) / (permutations + 1). Sets go through the degeneracy rules
(:mod:`eatkit.stats.degeneracy`): two attribute sets (or, for the generalised WEAT, two target sets) that
coincide are an error, sharing some vectors a warning.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_embeddings
from eatkit.stats.cost import check_cost
from eatkit.stats.degeneracy import check_degenerate
from eatkit.stats.metrics import percentile_bootstrap
from eatkit.stats.options import check_choice, check_option

ALTERNATIVES = ("greater", "two-sided")
#: assignments per chunk of the permutation null (bounds memory)
_CHUNK = 2048


@dataclass(frozen=True)
class MultiGroupResult:
    """A multi-group score with its permutation p and bootstrap CI, and how they were computed.

    Attributes
    ----------
    statistic : str
        ``"same"`` or ``"generalized-weat"``.
    value : float
        The score on the observed groups.
    per_target : tuple of float
        SAME: b(t) of every target word; generalised WEAT: <x, c_i - cbar> of every target word with its
        own group's direction (their group means sum to ``value``).
    skew, stereotype : float
        SAME with two attribute sets: mean and SD (ddof 0) of the signed cos(t, d_1); NaN otherwise.
    p_value : float
    alternative : str
        ``"greater"`` (score at least the observed) or ``"two-sided"`` (|score| at least |observed|).
    p_value_exact : bool
        Whether every distinct assignment was counted (``permutations="exact"``, or a number at least their
        number).
    permutations : int
        Assignments counted (exact) or drawn (Monte Carlo).
    ci : tuple of float
        Percentile bootstrap CI at ``confidence_level`` (target words resampled within each target set,
        attribute sets fixed); (NaN, NaN) with ``n_bootstrap=0``.
    n_bootstrap, confidence_level : int, float
    seed : int or None
        The seed of the random draws (None when a Generator was passed).
    group_sizes : tuple of int
        Sizes of the permuted groups.
    """

    statistic: str
    value: float
    per_target: tuple[float, ...]
    skew: float
    stereotype: float
    p_value: float
    alternative: str
    p_value_exact: bool
    permutations: int
    ci: tuple[float, float]
    n_bootstrap: int
    confidence_level: float
    seed: int | None
    group_sizes: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (tuples become lists)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self.__dict__.items()}


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def _sets(name: str, sets: Sequence[Any], minimum: int) -> list[np.ndarray]:
    if isinstance(sets, np.ndarray) or len(sets) < minimum:
        raise EatkitError(f"{name} must be a list of at least {minimum} sets of vectors")
    checked = [check_embeddings(f"{name}[{i}]", s) for i, s in enumerate(sets)]
    dims = {s.shape[1] for s in checked}
    if len(dims) != 1:
        raise EatkitError(f"all sets must have one dimension, got {sorted(dims)}")
    return checked


def _degeneracy(targets: list[np.ndarray], attributes: list[np.ndarray], compare_targets: bool) -> None:
    """The degeneracy rules on the sets, named as a test's roles (T or T1..Tn, A1..Am): every pair of attribute
    sets (and, ``compare_targets``, of target sets) is compared."""
    tnames = [f"T{i + 1}" for i in range(len(targets))] if len(targets) > 1 else ["T"]
    anames = [f"A{i + 1}" for i in range(len(attributes))]
    pairs = list(itertools.combinations(anames, 2)) + (list(itertools.combinations(tnames, 2)) if compare_targets else [])
    check_degenerate(dict(zip(tnames + anames, targets + attributes)), compared=pairs)


def n_assignments(sizes: Sequence[int]) -> int:
    """The distinct assignments of sum(sizes) units to groups of these sizes: N! / prod n_i!.

    >>> n_assignments([2, 2]), n_assignments([3, 3, 2])
    (6, 560)
    """
    total = math.factorial(sum(sizes))
    for size in sizes:
        total //= math.factorial(size)
    return total


def plan_permutations(sizes: Sequence[int], permutations: int | str, steps_each: float) -> tuple[bool, int]:
    """(exact, assignments counted or drawn) of a multi-group permutation null over groups of ``sizes``, each
    assignment costing ``steps_each`` units of work; ``"exact"`` beyond an hour's work is refused with the
    estimate (:func:`eatkit.stats.cost.check_cost`), before any work.

    >>> plan_permutations([2, 2], "exact", 10), plan_permutations([10, 10], 1000, 10)
    ((True, 6), (False, 1000))
    >>> plan_permutations([30, 30, 30], "exact", 10)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: an exact permutation test over every assignment of groups of 30, 30, 30 ...
    """
    total = n_assignments(sizes)
    if permutations == "exact":
        check_cost(f"an exact permutation test over every assignment of groups of {', '.join(map(str, sizes))} "
                   f"({total:.3g} assignments)", float(total) * (steps_each + 2 * sum(sizes)),
                   "pass a number of random permutations instead (10000 give p to about two digits)")
        return True, total
    return (True, total) if total <= permutations else (False, int(permutations))


def _components(centres: np.ndarray) -> np.ndarray:
    """SAME's bias components from attribute centres (..., groups, dim): (..., groups - 1, dim)."""
    components = [centres[..., 0, :] - centres[..., 1, :]]
    for j in range(2, centres.shape[-2]):
        new = centres[..., 0, :] - centres[..., j, :]
        for earlier in components:  # Gram-Schmidt against the earlier components, in turn
            unit = _unit(earlier)
            new = new - np.sum(new * unit, axis=-1, keepdims=True) * unit
        components.append(new)
    return np.stack(components, axis=-2)


def _same_cosines(targets: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos(t, d_j) of every target (..., n, groups - 1) and the lengths |d_j| (..., groups - 1)."""
    components = _components(centres)
    lengths = np.linalg.norm(components, axis=-1)
    cosines = np.einsum("nd,...jd->...nj", targets, components / lengths[..., None])
    return cosines, lengths


def _same_bias(cosines: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    weights = np.concatenate([np.ones_like(lengths[..., :1]), lengths[..., 1:]], axis=-1)
    return np.sum(np.abs(cosines) * weights[..., None, :], axis=-1)


def _centres(unit_attributes: np.ndarray, labels: np.ndarray, groups: int) -> np.ndarray:
    """Attribute centres for label rows (R, N): (R, groups, dim)."""
    onehot = (labels[..., None] == np.arange(groups)).astype(np.float64)
    return np.einsum("rng,nd->rgd", onehot, unit_attributes) / onehot.sum(axis=-2)[..., None]


def _assignments(sizes: Sequence[int]) -> Iterator[np.ndarray]:
    """Every distinct assignment of sum(sizes) units to groups of these sizes, as blocks of label rows: the
    first group's units at each combination of positions, the other units labelled by every assignment of the
    remaining groups (recursively), placed in order."""
    n = sum(sizes)
    if len(sizes) == 1:
        yield np.zeros((1, n), dtype=np.int64)
        return
    rest = np.concatenate(list(_assignments(sizes[1:]))) + 1
    combos = itertools.combinations(range(n), sizes[0])
    per_block = max(1, _CHUNK // len(rest))
    while chunk := list(itertools.islice(combos, per_block)):
        first = np.zeros((len(chunk), n), dtype=bool)
        first[np.arange(len(chunk))[:, None], np.array(chunk)] = True
        order = np.argsort(~first, axis=1, kind="stable")  # the first group's positions, then the others in order
        ordered = np.concatenate([np.zeros((len(chunk), len(rest), sizes[0]), dtype=np.int64),
                                  np.broadcast_to(rest, (len(chunk), *rest.shape))], axis=2)
        labels = np.empty_like(ordered)
        np.put_along_axis(labels, np.broadcast_to(order[:, None, :], ordered.shape), ordered, axis=2)
        yield labels.reshape(-1, n)


def _label_batches(sizes: Sequence[int], plan: tuple[bool, int], rng: np.random.Generator) -> Iterator[np.ndarray]:
    """The label rows of the permutation null: every assignment (``plan`` exact) or that many random ones."""
    exact, count = plan
    if exact:
        yield from _assignments(sizes)
        return
    n = sum(sizes)
    observed = np.repeat(np.arange(len(sizes)), sizes)
    left = count
    while left:
        r = min(left, _CHUNK)
        yield rng.permuted(np.broadcast_to(observed, (r, n)), axis=1)
        left -= r


def _permutation_p(statistic: Callable[[np.ndarray], np.ndarray], sizes: Sequence[int], observed: float,
                   alternative: str, plan: tuple[bool, int], rng: np.random.Generator) -> tuple[float, bool, int]:
    exact, count = plan
    batches = _label_batches(sizes, plan, rng)
    tolerance = 1e-12 * max(1.0, abs(observed))  # ties with the observed value, up to rounding
    reached = 0
    for labels in batches:
        values = statistic(labels)
        if alternative == "greater":
            reached += int(np.sum(values >= observed - tolerance))
        else:
            reached += int(np.sum(np.abs(values) >= abs(observed) - tolerance))
    return (reached / count if exact else (reached + 1) / (count + 1)), exact, count


def _bootstrap_ci(statistic: Callable[[list[np.ndarray]], float], sets: list[np.ndarray], n_bootstrap: int,
                  level: float, rng: np.random.Generator) -> tuple[float, float]:
    return percentile_bootstrap(statistic, sets, n_bootstrap, level, rng) or (math.nan, math.nan)


def _check_options(alternative: str, permutations: int | str, n_bootstrap: int, confidence_level: float) -> float:
    check_choice("alternative", alternative, ALTERNATIVES)  # one message per rule (eatkit.stats.options)
    if permutations != "exact":
        check_count("permutations", permutations)
    if n_bootstrap != 0:
        check_count("n_bootstrap", n_bootstrap)
    return float(check_option("confidence_level", confidence_level))


def same(targets: Any, attribute_sets: Sequence[Any], *, alternative: str = "greater", permutations: int | str = 10_000,
         n_bootstrap: int = 1_000, confidence_level: float = 0.95, rng: Any = None) -> MultiGroupResult:
    """SAME score of the target words ``targets`` for two or more attribute sets (multi-class SAME), with
    a permutation p (attribute words re-assigned among the attribute sets) and a bootstrap CI.

    >>> A = [[1.0, 0.0], [1.0, 0.1]]; B = [[0.0, 1.0], [0.1, 1.0]]
    >>> r = same([[1.0, 0.2], [0.9, 0.0]], [A, B], permutations=100, n_bootstrap=0, rng=0)
    >>> round(r.value, 4), round(r.skew, 4), r.p_value_exact, r.permutations, round(r.p_value, 4)
    (0.6309, 0.6309, True, 6, 1.0)
    """
    level = _check_options(alternative, permutations, n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    (t,) = _sets("targets", [targets], 1)
    attributes = _sets("attribute_sets", list(attribute_sets), 2)
    if t.shape[1] != attributes[0].shape[1]:
        raise EatkitError(f"targets have dimension {t.shape[1]}, attributes {attributes[0].shape[1]}")
    _degeneracy([t], attributes, compare_targets=False)
    unit_t = _unit(t)
    pooled = _unit(np.concatenate(attributes))
    sizes = tuple(len(a) for a in attributes)
    groups = len(sizes)
    plan = plan_permutations(sizes, permutations, (len(pooled) + len(t)) * groups * t.shape[1])
    labels = np.repeat(np.arange(groups), sizes)
    cosines, lengths = _same_cosines(unit_t, _centres(pooled, labels[None], groups)[0])
    bias = _same_bias(cosines, lengths)
    value = float(bias.mean())

    def null(label_rows: np.ndarray) -> np.ndarray:
        cos, lens = _same_cosines(unit_t, _centres(pooled, label_rows, groups))
        return _same_bias(cos, lens).mean(axis=-1)

    def resampled(sets: list[np.ndarray]) -> float:
        return float(bias_of(sets[0]).mean())

    def bias_of(rows: np.ndarray) -> np.ndarray:
        return _same_bias(*_same_cosines(rows, _centres(pooled, labels[None], groups)[0]))

    p, exact, count = _permutation_p(null, sizes, value, alternative, plan, generator)
    signed = cosines[:, 0]
    two = groups == 2
    return MultiGroupResult(
        statistic="same", value=value, per_target=tuple(float(b) for b in bias),
        skew=float(signed.mean()) if two else math.nan, stereotype=float(signed.std()) if two else math.nan,
        p_value=p, alternative=alternative, p_value_exact=exact, permutations=count,
        ci=_bootstrap_ci(resampled, [unit_t], n_bootstrap, level, generator), n_bootstrap=n_bootstrap,
        confidence_level=level, seed=seed, group_sizes=sizes)


def generalized_weat(target_sets: Sequence[Any], attribute_sets: Sequence[Any], *, alternative: str = "greater",
                     permutations: int | str = 10_000, n_bootstrap: int = 1_000, confidence_level: float = 0.95,
                     rng: Any = None) -> MultiGroupResult:
    """Generalised WEAT of n target sets against n attribute sets (Swinger et al. 2019), with a
    permutation p (target words re-assigned among the target sets) and a bootstrap CI.

    >>> X = [[[1.0, 0.1], [0.9, 0.0]], [[0.0, 1.0], [0.2, 1.0]]]
    >>> A = [[[1.0, 0.0], [1.0, 0.2]], [[0.1, 1.0], [0.0, 1.0]]]
    >>> r = generalized_weat(X, A, n_bootstrap=0, rng=0)
    >>> round(r.value, 4), r.p_value_exact, r.permutations, round(r.p_value, 4)
    (0.846, True, 6, 0.1667)
    """
    level = _check_options(alternative, permutations, n_bootstrap, confidence_level)
    generator, seed = resolve_rng(rng)
    targets = _sets("target_sets", list(target_sets), 2)
    attributes = _sets("attribute_sets", list(attribute_sets), 2)
    if len(targets) != len(attributes):
        raise EatkitError(f"the generalised WEAT pairs target and attribute sets: got {len(targets)} target "
                          f"sets and {len(attributes)} attribute sets")
    if targets[0].shape[1] != attributes[0].shape[1]:
        raise EatkitError(f"targets have dimension {targets[0].shape[1]}, attributes {attributes[0].shape[1]}")
    _degeneracy(targets, attributes, compare_targets=True)
    centres = np.stack([_unit(a).mean(axis=0) for a in attributes])
    directions = centres - centres.mean(axis=0)
    groups = len(targets)

    def scores(sets: list[np.ndarray]) -> list[np.ndarray]:
        return [_unit(s) @ directions[i] for i, s in enumerate(sets)]

    def value_of(sets: list[np.ndarray]) -> float:
        return float(sum(s.mean() for s in scores(sets)))

    own = scores(targets)
    value = float(sum(s.mean() for s in own))
    projections = _unit(np.concatenate(targets)) @ directions.T  # (N, groups): <x, c_i - cbar>
    sizes = tuple(len(x) for x in targets)
    plan = plan_permutations(sizes, permutations, sum(sizes) * groups)

    def null(label_rows: np.ndarray) -> np.ndarray:
        onehot = label_rows[..., None] == np.arange(groups)
        return (np.einsum("rng,ng->rg", onehot, projections) / np.array(sizes)).sum(axis=-1)

    p, exact, count = _permutation_p(null, sizes, value, alternative, plan, generator)
    return MultiGroupResult(
        statistic="generalized-weat", value=value, per_target=tuple(float(v) for s in own for v in s),
        skew=math.nan, stereotype=math.nan, p_value=p, alternative=alternative, p_value_exact=exact, permutations=count,
        ci=_bootstrap_ci(value_of, targets, n_bootstrap, level, generator), n_bootstrap=n_bootstrap,
        confidence_level=level, seed=seed, group_sizes=sizes)
