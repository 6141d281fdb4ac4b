"""Specificity (false-positive) analysis of the EAT (iEAT seed, §6 "Specificity").

The stimuli of all four sets are pooled and randomly re-partitioned into four sets of the original sizes
|X|, |Y|, |A|, |B|, many times; each random test has no real target/attribute structure, so the share of
random tests significant at level α estimates the false-positive rate, which a valid test keeps near α.
(The seed reports 10.3% at α = 0.1 and 1.2% at α = 0.01 for the Insect-Flower stimuli.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_count, check_sets
from eatkit.stats.options import check_choice, check_permutations
from eatkit.stats.association import differential_association, rounding_error, unit_rows
from eatkit.stats.effect_size import cohens_d
from eatkit.stats._random import resolve_rng
from eatkit.stats.cost import check_cost
from eatkit.stats.permutation import group_permutation_test
from eatkit.progress import progress


@dataclass(frozen=True, kw_only=True)
class SpecificityResult:
    """False-positive rates of the EAT on ``n_splits`` random re-splits of the pooled stimuli into four
    sets (each split is one random test; its own p-value used ``permutations``)."""

    false_positive_rates: dict[float, float]
    p_values: np.ndarray = field(repr=False)
    effect_sizes: np.ndarray = field(repr=False)
    n_splits: int
    permutations: str | int
    alternative: str
    seed: int | None


def specificity(
    X: Any,
    Y: Any,
    A: Any,
    B: Any,
    *,
    n_splits: int = 1000,
    alphas: tuple[float, ...] = (0.1, 0.05, 0.01),
    permutations: str | int = 10_000,
    alternative: str = "greater",
    rng: Any = None,
) -> SpecificityResult:
    """False-positive rate of the EAT at each ``alpha`` over ``n_splits`` random re-splits.

    Each random test's p-value uses ``permutations`` (see :func:`eatkit.stats.differential.eat`).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> r = specificity(*(g.normal(size=(4, 5)) for _ in range(4)), n_splits=50, permutations="exact", rng=1)
    >>> sorted(r.false_positive_rates)
    [0.01, 0.05, 0.1]
    """
    sets = check_sets({"A": 1, "B": 1}, X=X, Y=Y, A=A, B=B)
    check_choice("alternative", alternative)
    n_splits = check_count("n_splits", n_splits)
    if n_splits < 2:
        raise EatkitError("n_splits=1: a false-positive rate from one split is 0 or 1 (use 1000 or more)")
    sizes = [len(sets[k]) for k in "XYAB"]
    permutations = check_permutations(permutations)
    draws = 10_000 if permutations in ("auto", "exact") else permutations  # (exact counts at most as many)
    check_cost(f"{n_splits:.3g} specificity splits of {sizes[0]} + {sizes[1]} targets x {draws} permutations",
               float(n_splits) * draws * (sizes[0] + sizes[1]) * 2, "use fewer splits (1000 give the rate of a "
               "5% test to about 1.4 points)")
    if not isinstance(alphas, (tuple, list)) or not all(0 < a < 1 for a in alphas):
        raise EatkitError(f"alphas must lie strictly between 0 and 1, got {alphas}")
    generator, seed = resolve_rng(rng)
    pooled = unit_rows(np.concatenate([sets[k] for k in "XYAB"]))
    cos = pooled @ pooled.T
    bounds = np.cumsum([0] + sizes)
    atol = rounding_error(pooled.shape[1])
    p_values = np.empty(n_splits)
    effects = np.empty(n_splits)
    for i in progress(range(p_values.size), desc="specificity", unit="splits"):
        order = generator.permutation(len(pooled))
        x, y, a, b = (order[bounds[j] : bounds[j + 1]] for j in range(4))
        targets = np.concatenate([x, y])
        # s(w, A_i, B_i) for the random targets, from the pooled cosine matrix
        s = differential_association(cos[np.ix_(targets, a)], cos[np.ix_(targets, b)])
        sx, sy = s[: x.size], s[x.size :]
        effects[i] = cohens_d(sx, sy, atol=atol)
        outcome = group_permutation_test(sx, sy, permutations=permutations, rng=generator, atol=atol)
        p_values[i] = outcome.p_values[alternative]
    rates = {float(a): float(np.mean(p_values < a)) for a in alphas}
    return SpecificityResult(false_positive_rates=rates, p_values=p_values, effect_sizes=effects, n_splits=p_values.size,
                             permutations=permutations, alternative=alternative, seed=seed)
