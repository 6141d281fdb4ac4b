"""Stimulus influence: the EAT's effect size (and p-value) with each stimulus left out (a jackknife).

An EAT's verdict rests on a few dozen hand-picked stimuli, and single words can move it: seed lists
change results (Antoniak & Mimno 2021, "Bad Seeds: Evaluating Lexical Methods for Bias Measurement",
ACL), and WEAT's effect size is driven by a few words whose cosines dominate (Ethayarajh, Duvenaud &
Hirst 2019, "Understanding Undesirable Word Embedding Associations", ACL, §3). For every stimulus of
every set (X, Y, A, B) :func:`stimulus_influence` reports d with that stimulus removed, and which
removals move d most or change whether the test is significant at ``alpha``.

Cost: nothing is recomputed from the embeddings. From the four cosine matrices, leaving out target i
only drops its s(i, A, B); leaving out attribute a_j re-weights the mean over A (weights 1/(|A| - 1)
on the others, 0 on a_j) in :func:`~eatkit.stats.association.differential_association`, so all |A|
leave-outs are one matrix product. The effect sizes of all leave-outs of a role are one vectorised
:func:`~eatkit.stats.effect_size.cohens_d`, and their p-values one call of the permutation test with one
column per leave-out (the columns share their random partitions; each p is valid on its own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_sets, check_share
from eatkit.stats.association import cosine_matrix, differential_association, rounding_error, target_associations
from eatkit.stats.differential import EATResult, eat, welch_p_values
from eatkit.stats.effect_size import cohens_d
from eatkit.stats.options import TestOptions
from eatkit.stats.permutation import exact_cost, permutation_tests

ROLES: tuple[str, ...] = ("X", "Y", "A", "B")
#: Monte Carlo partitions per leave-one-out p-value (exact when there are no more partitions than this, or
#: when the exact count lists at most ``LOO_EXACT_MAX_SUMS`` subset sums: up to 15 + 15 values, a few ms a test)
LOO_PERMUTATIONS = 9_999
LOO_EXACT_MAX_SUMS = 2**16


class Influential(NamedTuple):
    """One left-out stimulus: its role and position in the input, d without it and the change from d."""

    role: str
    index: int
    effect_size: float
    change: float
    p_value: float


@dataclass(frozen=True, kw_only=True)
class StimulusInfluence:
    """The leave-one-out (jackknife) effect sizes and p-values of an EAT.

    Attributes
    ----------
    effect_size, p_value : float
        d and p of the full test (as :func:`~eatkit.stats.eat` computes them).
    leave_one_out : dict
        ``leave_one_out[role][i]``: d with stimulus i of ``role`` ("X", "Y", "A", "B") removed, in input order.
    leave_one_out_p : dict
        The p-values of the same tests (``p_method`` "permutation": exact when the partitions number at
        most ``loo_permutations`` or the exact count is cheap (``LOO_EXACT_MAX_SUMS``), else that many Monte
        Carlo partitions, Phipson & Smyth's (c + 1) / (N + 1)).
    loo_p_value_exact : bool
        True when every leave-one-out p-value was counted exactly.
    alpha : float
        Significance level of "flips": a removal whose p is on the other side of ``alpha`` than the full p.
    """

    effect_size: float
    p_value: float
    alternative: str
    alpha: float
    sd: str
    ddof: int
    p_method: str
    loo_permutations: int
    loo_p_value_exact: bool
    seed: int | None
    leave_one_out: dict[str, np.ndarray] = field(repr=False)
    leave_one_out_p: dict[str, np.ndarray] = field(repr=False)

    def ranked(self) -> list[Influential]:
        """Every left-out stimulus, the largest |change of d| first (ties in role and input order)."""
        rows = [Influential(role, i, float(d), float(d - self.effect_size), float(self.leave_one_out_p[role][i]))
                for role in ROLES for i, d in enumerate(self.leave_one_out[role])]
        return sorted(rows, key=lambda r: -abs(r.change) if math.isfinite(r.change) else -math.inf)

    def flips(self) -> list[Influential]:
        """The removals that change significance at ``alpha`` (in ranked order)."""
        significant = self.p_value < self.alpha
        return [r for r in self.ranked() if (r.p_value < self.alpha) != significant]


def full_test(sets: dict[str, np.ndarray], options: TestOptions, rng: Any,
              reference: EATResult | None) -> EATResult:
    """The EAT of ``sets`` (X, Y, A, B) under validated ``options``: ``reference`` when given (an
    :class:`~eatkit.stats.EATResult` of the same sets and options, so it is not computed twice; checked),
    else computed with ``rng``."""
    if reference is None:
        return eat(*(sets[r] for r in ROLES), rng=rng, **options.test_fields())
    d = cohens_d(*(target_associations(sets[t], sets["A"], sets["B"]) for t in "XY"), sd=options.sd,
                 ddof=options.ddof, atol=rounding_error(sets["X"].shape[1]))
    same = (reference.groups, reference.alternative, reference.sd, reference.ddof, reference.p_method) == (
        ("X", "Y"), options.alternative, options.sd, options.ddof, options.p_method)
    if not same or not abs(float(d) - reference.effect_size) <= 1e-9 * max(1.0, abs(float(d))):
        raise EatkitError("reference must be the EAT of the same sets with the same alternative, sd, ddof and "
                          "p_method")
    return reference


def stimulus_influence(X: Any, Y: Any, A: Any, B: Any, *, alternative: str = "greater",
                       permutations: str | int = "auto", loo_permutations: int = LOO_PERMUTATIONS,
                       alpha: float = 0.05, rng: Any = None, ddof: int = 1, sd: str = "caliskan",
                       p_method: str = "permutation", reference: EATResult | None = None) -> StimulusInfluence:
    """The EAT with each stimulus of each set left out in turn.

    Parameters
    ----------
    X, Y, A, B : array_like, shape (n, d)
        Embeddings as for :func:`~eatkit.stats.eat`; X and Y need at least 3 stimuli, A and B at least 2
        (so that every leave-one-out test is defined).
    permutations : "auto", "exact" or int
        The full test's p-value (as in :func:`~eatkit.stats.eat`).
    loo_permutations : int
        Partitions per leave-one-out p-value (exact when there are at most that many, or up to 15 + 15 values).
    alpha : float
        Level at which a removal "flips" significance.
    alternative, rng, ddof, sd, p_method
        As in :func:`~eatkit.stats.eat`.
    reference : EATResult, optional
        The full test, when already computed with these options (e.g. ML-EAT's level 1): not computed again.

    Examples
    --------
    >>> X = [[1.0, 0.1], [0.9, 0.2], [1.0, 0.3]]; Y = [[0.1, 1.0], [0.2, 0.9], [0.4, 1.0]]
    >>> A = [[1.0, 0.0], [0.8, 0.1]]; B = [[0.0, 1.0], [0.1, 0.8]]
    >>> r = stimulus_influence(X, Y, A, B, rng=0)
    >>> [len(r.leave_one_out[role]) for role in "XYAB"], r.loo_p_value_exact
    ([3, 3, 2, 2], True)
    >>> round(float(r.leave_one_out["X"][0]), 3) == round(eat(X[1:], Y, A, B).effect_size, 3)
    True
    """
    options = TestOptions(alternative=alternative, permutations=permutations, ddof=ddof, sd=sd,
                          p_method=p_method).validated()
    loo_permutations = check_count("loo_permutations", loo_permutations)
    alpha = check_share("alpha", alpha)
    sets = check_sets({"X": 3, "Y": 3, "A": 2, "B": 2}, X=X, Y=Y, A=A, B=B)
    generator, seed = resolve_rng(rng)
    full = full_test(sets, options, generator if seed is None else seed, reference)
    atol = rounding_error(sets["X"].shape[1])
    cos = {t + a: cosine_matrix(sets[t], sets[a]) for t in "XY" for a in "AB"}
    s = {t: differential_association(cos[t + "A"], cos[t + "B"]) for t in "XY"}
    groups: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # role -> (first, second), one row per leave-out
    for t, other in (("X", "Y"), ("Y", "X")):
        n = s[t].size
        kept = s[t][_without_each(n)]  # (n, n - 1)
        rest = np.broadcast_to(s[other], (n, s[other].size))
        groups[t] = (kept, rest) if t == "X" else (rest, kept)
    for a, b in (("A", "B"), ("B", "A")):
        n = len(sets[a])
        drop = (1.0 - np.eye(n)) / (n - 1)  # row j: the mean over the attribute set without stimulus j
        keep = np.full((n, len(sets[b])), 1.0 / len(sets[b]))
        w = {a: drop, b: keep}
        first, second = (differential_association(cos[t + "A"], cos[t + "B"], w["A"], w["B"]) for t in "XY")
        groups[a] = (first, second)
    loo = {role: np.asarray(cohens_d(*groups[role], sd=sd, ddof=options.ddof, atol=atol), dtype=np.float64)
           for role in ROLES}
    loo_p, exact = {}, True
    for role in ROLES:
        first, second = groups[role]
        if options.p_method == "welch":
            loo_p[role] = np.array([welch_p_values(f, g, options.ddof)[alternative] for f, g in zip(first, second)])
            continue
        k, m = first.shape[1], second.shape[1]
        cheap = math.comb(k + m, k) <= loo_permutations or exact_cost(k + m, k) <= LOO_EXACT_MAX_SUMS
        count = "exact" if cheap else loo_permutations
        exact &= count == "exact"
        outs = permutation_tests(np.ascontiguousarray(first.T), np.ascontiguousarray(second.T),
                                 permutations=count, rng=generator, atol=atol)
        loo_p[role] = np.array([o.p_values[alternative] for o in outs])
    return StimulusInfluence(
        effect_size=full.effect_size, p_value=full.p_value, alternative=alternative, alpha=alpha, sd=sd,
        ddof=options.ddof, p_method=options.p_method, loo_permutations=loo_permutations,
        loo_p_value_exact=exact and options.p_method == "permutation", seed=seed, leave_one_out=loo,
        leave_one_out_p=loo_p,
    )


def _without_each(n: int) -> np.ndarray:
    """Row i: the indices 0..n-1 without i, shape (n, n - 1).

    >>> _without_each(3).tolist()
    [[1, 2], [0, 2], [0, 1]]
    """
    j = np.arange(n - 1)
    return j[np.newaxis, :] + (j[np.newaxis, :] >= np.arange(n)[:, np.newaxis])
