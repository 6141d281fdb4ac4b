"""Anisotropy diagnostics: can cosine similarity discriminate in this embedding space?

An embedding space is *anisotropic* (directionally uniform) when its vectors share a dominant direction
(Ethayarajh 2019; Mu & Viswanath 2018). Cosine similarity then reflects that shared direction more than
meaning: GPT-2 base's level-3 cosines are all .97-.99 with SD <= .01 (ML-EAT seed, Table 3), and its
level-1 effect sizes are unreliable. Three measures, on the pooled stimuli of a test (X ∪ Y ∪ A ∪ B):

* **baseline**: the mean (and SD, ddof = 1) cosine of random pairs of distinct vectors (Ethayarajh 2019,
  section 3.3: the average cosine between random words). Every pair is used when there are at most
  ``n_pairs`` of them (exact, no randomness); otherwise ``n_pairs`` pairs are drawn uniformly with
  replacement from the distinct pairs, from a recorded seed.
* **first_pc_share**: the share of the total variance of the mean-centred vectors on their first
  principal component, s_1^2 / sum_k s_k^2 over the singular values s_k (Mu & Viswanath 2018).
* **cell offsets**: each level-3 cell's mean cosine (X,A), (X,B), (Y,A), (Y,B) minus the baseline.

**The warning rule.** Cosine is flagged as unable to discriminate in a test when both

1. the baseline is at least ``min_baseline`` (default 0.5): random pairs of the test's stimuli are, on
   average, closer than 60 degrees apart, i.e. a common direction dominates (isotropic spaces have a
   baseline near 0; GloVe and GPT-2 XL lie well below 0.5, GPT-2 base near 1); and
2. the *spread* of the level-3 similarities (SD, ddof = 1, of all four cells' cosines pooled) is below
   ``max_spread`` (default 0.05): the similarities are compressed into a narrow band, so that level 1's
   standardised differences can be driven by differences of a few thousandths (seed: "low variance in
   cosine similarity and inconsistent Level 1 measurements"). Static word embeddings and GPT-2 XL show
   spreads of .05 or more (Table 3).

Both thresholds are recorded with the result. Mean-centring or removing the top principal components
(:mod:`eatkit.sources.postprocess`) is the usual correction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_embeddings, check_values
from eatkit.stats.association import unit_rows
from eatkit.stats._random import resolve_rng

#: default thresholds of the warning rule (module docstring)
MIN_BASELINE = 0.5
MAX_SPREAD = 0.05
#: default number of random pairs behind the baseline (all pairs when there are fewer)
N_PAIRS = 10_000
#: the level-3 cells, in table order
CELLS = ("xa", "xb", "ya", "yb")


@dataclass(frozen=True)
class AnisotropyResult:
    """The random-pair cosine baseline and the first principal component's share of variance."""

    baseline_mean: float
    baseline_sd: float
    n_pairs: int
    exact: bool  # True: every distinct pair was used (no sampling)
    first_pc_share: float
    n_vectors: int
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline_mean": self.baseline_mean,
            "baseline_sd": self.baseline_sd,
            "n_pairs": self.n_pairs,
            "exact": self.exact,
            "first_pc_share": self.first_pc_share,
            "n_vectors": self.n_vectors,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class CosineDiagnostic:
    """Level-3 cells against the baseline, the spread of level-3 similarities, and the warning (or None)."""

    anisotropy: AnisotropyResult
    cell_means: dict[str, float]
    cell_offsets: dict[str, float]  # cell mean - baseline mean
    spread: float  # SD (ddof = 1) of the four cells' cosines pooled
    min_baseline: float
    max_spread: float
    warning: str | None

    @property
    def fires(self) -> bool:
        """Whether the warning rule fired."""
        return self.warning is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.anisotropy.to_dict(),
            "cell_means": dict(self.cell_means),
            "cell_offsets": dict(self.cell_offsets),
            "spread": self.spread,
            "min_baseline": self.min_baseline,
            "max_spread": self.max_spread,
            "warning": self.warning,
        }


def anisotropy(vectors: Any, *, n_pairs: int = N_PAIRS, rng: Any = None) -> AnisotropyResult:
    """The random-pair cosine baseline and the first-PC variance share of ``vectors`` (module docstring).

    Examples
    --------
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> r = anisotropy(v)
    >>> round(r.baseline_mean, 4), r.n_pairs, r.exact      # (0 + 0.7071 + 0.7071) / 3, all 3 pairs
    (0.4714, 3, True)
    """
    arr = check_embeddings("vectors", vectors, min_rows=2)
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs < 2:
        raise EatkitError(f"n_pairs must be an integer of at least 2, got {n_pairs!r}")
    n = arr.shape[0]
    unit = unit_rows(arr)
    total = n * (n - 1) // 2
    seed = None
    if total <= n_pairs:
        i, j = np.triu_indices(n, k=1)
        exact = True
    else:  # uniform over distinct pairs: draw i != j, order irrelevant
        generator, seed = resolve_rng(rng)
        i = generator.integers(0, n, size=n_pairs)
        j = (i + generator.integers(1, n, size=n_pairs)) % n
        exact = False
    cos = np.einsum("ij,ij->i", unit[i], unit[j])
    centred = arr - arr.mean(axis=0)
    s2 = np.linalg.svd(centred, compute_uv=False) ** 2
    share = float(s2[0] / s2.sum()) if s2.sum() > 0 else float("nan")
    return AnisotropyResult(
        baseline_mean=float(cos.mean()),
        baseline_sd=float(cos.std(ddof=1)) if cos.size > 1 else float("nan"),
        n_pairs=int(cos.size),
        exact=exact,
        first_pc_share=share,
        n_vectors=n,
        seed=seed,
    )


def cosine_diagnostic(
    level3: Mapping[str, Any],
    baseline: AnisotropyResult,
    *,
    min_baseline: float = MIN_BASELINE,
    max_spread: float = MAX_SPREAD,
) -> CosineDiagnostic:
    """Compare a test's level-3 cosine similarities (cell -> all cosines of that cell, keys ``CELLS``)
    with the random-pair ``baseline`` and apply the warning rule (module docstring).

    Examples
    --------
    >>> base = AnisotropyResult(0.98, 0.005, 100, True, 0.1, 20, None)
    >>> cells = {c: [0.97, 0.98, 0.99] for c in CELLS}
    >>> cosine_diagnostic(cells, base).fires
    True
    """
    if set(level3) != set(CELLS):
        raise EatkitError(f"level-3 similarities need the cells {', '.join(CELLS)}, got {', '.join(sorted(level3))}")
    if not 0 <= min_baseline <= 1 or not max_spread > 0:
        raise EatkitError(f"thresholds: min_baseline must lie in [0, 1] and max_spread be positive, got "
                          f"{min_baseline} and {max_spread}")
    cells = {c: check_values(f"level-3 cell {c}", level3[c]) for c in CELLS}
    pooled = np.concatenate([cells[c] for c in CELLS])
    spread = float(pooled.std(ddof=1)) if pooled.size > 1 else float("nan")
    means = {c: float(cells[c].mean()) for c in CELLS}
    offsets = {c: means[c] - baseline.baseline_mean for c in CELLS}
    warning = None
    if baseline.baseline_mean >= min_baseline and spread < max_spread:
        warning = (f"cosine may not discriminate here: random pairs of stimuli have mean cosine "
                   f"{baseline.baseline_mean:.2f} (>= {min_baseline:g}) and the level-3 similarities spread "
                   f"only SD {spread:.3f} (< {max_spread:g}); consider --postprocess center or abtt:D")
    return CosineDiagnostic(baseline, means, offsets, spread, float(min_baseline), float(max_spread), warning)
