"""The multilevel EAT (ML-EAT seed, "Approach"): three levels and the nine EAT patterns.

* Level 1: the EAT of X vs Y with A vs B (eq. 1-4).
* Level 2: the SC-EAT of X with A vs B, and of Y with A vs B (eq. 5-8).
* Level 3: mean and SD (ddof = 1) of the cosine similarities of (X, A), (X, B), (Y, A), (Y, B) (eq. 10-11).

A target is *associated* with A when its level-2 effect size is >= ``effect_threshold`` (0.2, Cohen's
"small") and its one-sided p-value towards A is < ``alpha`` (0.05); with B when d <= -0.2 and the
one-sided p towards B is < 0.05. (The seed's "p-value > 0.05" in the EAT-Map paragraph is a typo for
"< 0.05": its pattern definitions require a significant p.) The pair of associations names the pattern.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.stats._validation import check_sets
from eatkit.stats.association import cosine_matrix
from eatkit.stats.differential import EATResult, eat, sc_eats
from eatkit.stats._random import resolve_rng
from eatkit.stats.options import OBSERVED, check_choice

#: (association of X, association of Y) -> pattern name; None = associated with neither attribute
PATTERNS: dict[tuple[str | None, str | None], str] = {
    ("A", "B"): "AB-Divergent",
    ("B", "A"): "BA-Divergent",
    ("A", "A"): "A-Uniform",
    ("B", "B"): "B-Uniform",
    ("A", None): "AX-Singular",
    ("B", None): "BX-Singular",
    (None, "A"): "AY-Singular",
    (None, "B"): "BY-Singular",
    (None, None): "Non-Directional",
}


@dataclass(frozen=True, kw_only=True)
class Level3:
    """Mean and SD (ddof = 1) of the cosine similarities between one target and one attribute set."""

    mean: float
    sd: float
    similarities: np.ndarray = field(repr=False)  # all pairwise cosines, flattened (target-major)


@dataclass(frozen=True, kw_only=True)
class MLEATResult:
    """All three ML-EAT levels and the EAT pattern.

    ``level2_x`` and ``level2_y`` report the one-sided p-value in the direction of their effect size
    (towards A when d >= 0, towards B otherwise: ``alternative`` is "greater" or "less"); both tails are
    in their ``p_values``.
    """

    level1: EATResult
    level2_x: EATResult
    level2_y: EATResult
    level3: dict[str, Level3] = field(repr=False)  # keys "xa", "xb", "ya", "yb"
    association_x: str | None
    association_y: str | None
    pattern: str
    effect_threshold: float
    alpha: float
    seed: int | None


def associated_attribute(result: EATResult, effect_threshold: float = 0.2, alpha: float = 0.05) -> str | None:
    """"A", "B" or None: the attribute a level-2 result associates its target with (module docstring)."""
    if result.effect_size >= effect_threshold and result.p_values["greater"] < alpha:
        return "A"
    if result.effect_size <= -effect_threshold and result.p_values["less"] < alpha:
        return "B"
    return None


def eat_pattern(association_x: str | None, association_y: str | None) -> str:
    """The pattern name for the attributes X and Y are associated with.

    >>> eat_pattern("A", None)
    'AX-Singular'
    """
    return PATTERNS[(association_x, association_y)]


def ml_eat(X: Any, Y: Any, A: Any, B: Any, *, alternative: str = "greater", permutations: str | int = "auto",
           rng: Any = None, ddof: int = 1, sd: str = "caliskan", p_method: str = "permutation",
           effect_threshold: float = 0.2, alpha: float = 0.05) -> MLEATResult:
    """Run the ML-EAT: level 1 (``alternative`` applies), level 2 for X and Y, level 3, the pattern.

    ``alternative="observed"`` reports level 1's one-sided p on the side of its effect size, as level 2
    always is (the authors star significant negative Level-1 values, e.g. GPT-2 Mental/Physical -1.20*);
    ``level1.p_values`` keeps the p of all three alternatives whichever is reported.

    Level 1 and level 2 draw from independent streams spawned from one seed, recorded in ``seed``, so
    a run is repeated exactly by passing ``rng=result.seed`` (the levels' own ``seed`` fields are None:
    they draw from the spawned streams). The level-2 tests of X and Y share their random partitions
    of A ∪ B (each p-value is valid on its own).

    Examples
    --------
    >>> X = [[1.0, 0.1], [0.9, 0.2], [1.0, 0.0]]; Y = [[0.1, 1.0], [0.2, 0.9], [0.0, 1.0]]
    >>> A = [[1.0, 0.0], [0.8, 0.1], [0.9, 0.05]]; B = [[0.0, 1.0], [0.1, 0.8], [0.05, 0.9]]
    >>> ml_eat(X, Y, A, B, permutations="exact").pattern
    'Non-Directional'
    >>> ml_eat(Y, X, A, B, permutations="exact", alternative="observed").level1.alternative
    'less'
    """
    observed = alternative == OBSERVED
    if not observed:
        check_choice("alternative", alternative)
    sets = check_sets(X=X, Y=Y, A=A, B=B)
    generator, seed = resolve_rng(rng)
    streams = generator.spawn(2)
    options = dict(permutations=permutations, ddof=ddof, sd=sd, p_method=p_method)
    level1 = eat(sets["X"], sets["Y"], sets["A"], sets["B"], alternative="greater" if observed else alternative,
                 rng=streams[0], **options)
    level1 = level1.observed_side() if observed else level1
    # X and Y re-partition the same A ∪ B: one set of Monte Carlo draws serves both
    level2 = [r.observed_side() for r in sc_eats([sets["X"], sets["Y"]], sets["A"], sets["B"], rng=streams[1], **options)]
    level3 = {}
    for t in ("X", "Y"):
        for a in ("A", "B"):
            cos = cosine_matrix(sets[t], sets[a]).ravel()
            sd3 = float(cos.std(ddof=1)) if cos.size > 1 else float("nan")
            level3[(t + a).lower()] = Level3(mean=float(cos.mean()), sd=sd3, similarities=cos)
    assoc_x = associated_attribute(level2[0], effect_threshold, alpha)
    assoc_y = associated_attribute(level2[1], effect_threshold, alpha)
    return MLEATResult(
        level1=level1,
        level2_x=level2[0],
        level2_y=level2[1],
        level3=level3,
        association_x=assoc_x,
        association_y=assoc_y,
        pattern=eat_pattern(assoc_x, assoc_y),
        effect_threshold=effect_threshold,
        alpha=alpha,
        seed=seed,
    )
