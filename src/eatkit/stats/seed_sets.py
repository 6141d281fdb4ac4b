"""Seed-set sensitivity ("Bad Seeds", Antoniak & Mimno, ACL 2021): one EAT re-run with alternative
attribute (seed) sets, and the spread of its effect size and of its verdict across them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_share
from eatkit.stats.differential import eat


@dataclass(frozen=True)
class SeedSetSensitivity:
    """The EAT of one target pair X, Y with each of several attribute-set pairs (A, B).

    Attributes
    ----------
    effect_sizes, p_values : dict
        d and p of each variant (in the order given; the first is the reference, e.g. the suite's own sets).
    significant : dict
        Whether each variant's p is below ``alpha``.
    d_min, d_max, d_sd : float
        The range and the SD (ddof 1; NaN for one variant) of d across the variants.
    share_significant : float
        Share of variants with p < alpha.
    share_same_sign : float
        Share of variants whose d has the sign of the first variant's.
    verdicts_agree : bool
        Whether every variant gives the first variant's verdict (significant or not, and, when significant,
        in the same direction).
    alpha : float
    alternative : str
    permutations : str or int
    seed : int or None
    """

    effect_sizes: dict[str, float]
    p_values: dict[str, float]
    significant: dict[str, bool]
    d_min: float
    d_max: float
    d_sd: float
    share_significant: float
    share_same_sign: float
    verdicts_agree: bool
    alpha: float
    alternative: str
    permutations: str | int
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return dict(self.__dict__)


def seed_set_sensitivity(X: Any, Y: Any, variants: Mapping[str, tuple[Any, Any]], *, alpha: float = 0.05,
                         alternative: str = "greater", permutations: str | int = "auto", rng: Any = None,
                         sd: str = "caliskan", ddof: int = 1) -> SeedSetSensitivity:
    """Run the EAT of X vs Y with each variant's attribute sets ``(A, B)``; the spread of d and of the
    verdict (p < ``alpha``) across the variants. Each variant's p uses its own draws from ``rng``.

    >>> X = [[1.0, 0.1], [0.9, 0.2]]; Y = [[0.1, 1.0], [0.2, 0.9]]
    >>> variants = {"suite": ([[1.0, 0.0]], [[0.0, 1.0]]), "swapped": ([[0.0, 1.0]], [[1.0, 0.0]])}
    >>> r = seed_set_sensitivity(X, Y, variants, permutations="exact")
    >>> {k: round(v, 3) for k, v in r.effect_sizes.items()}, r.share_same_sign, r.verdicts_agree
    ({'suite': 1.726, 'swapped': -1.726}, 0.5, True)
    """
    level = check_share("alpha", alpha)
    if not isinstance(variants, Mapping) or len(variants) < 2:
        raise EatkitError("seed-set sensitivity needs at least two variants of the attribute sets (name -> (A, B))")
    generator, seed = resolve_rng(rng)
    results = {}
    for name, pair in variants.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise EatkitError(f"variant {name!r} must be a pair of attribute sets (A, B)")
        results[name] = eat(X, Y, pair[0], pair[1], alternative=alternative, permutations=permutations,
                            rng=generator, sd=sd, ddof=ddof)
    d = np.array([r.effect_size for r in results.values()])
    significant = {name: bool(r.p_value < level) for name, r in results.items()}
    reference_sign = np.sign(d[0])

    def verdict(name: str, value: float) -> tuple[bool, float]:
        return (significant[name], float(np.sign(value)) if significant[name] else 0.0)

    verdicts = [verdict(name, value) for name, value in zip(results, d)]
    return SeedSetSensitivity(
        effect_sizes={n: float(r.effect_size) for n, r in results.items()},
        p_values={n: float(r.p_value) for n, r in results.items()}, significant=significant,
        d_min=float(d.min()), d_max=float(d.max()), d_sd=float(d.std(ddof=1)) if d.size > 1 else math.nan,
        share_significant=float(np.mean(list(significant.values()))),
        share_same_sign=float(np.mean(np.sign(d) == reference_sign)),
        verdicts_agree=all(v == verdicts[0] for v in verdicts), alpha=level, alternative=alternative,
        permutations=permutations, seed=seed)
