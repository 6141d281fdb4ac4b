"""Diagnostics of a test's stimulus sets as vectors: near-duplicates and sets that act as one stimulus.

Two stimuli whose embeddings are nearly the same count twice in every mean (a word and its spelling
variant, a photo and its resized copy), and a set whose stimuli vary along essentially one direction
makes the test rest on that direction rather than on the concept (Antoniak & Mimno 2021, "Bad Seeds",
ACL, §5 on seed sets that are near-synonyms or dominated by one frequent word).

* near-duplicates: pairs in one set with cosine ≥ ``threshold`` (0.95 by default);
* ``mean_similarity``: the mean cosine of the set's distinct pairs;
* ``effective_size``: the participation ratio (Σλ)² / Σλ² of the eigenvalues λ of the Gram matrix of the
  set's unit vectors after subtracting the mean unit vector of all the test's stimuli (so the direction
  every embedding shares, anisotropy, does not count): n for n equally spread stimuli, 1 when one
  direction (or one stimulus far from the rest) carries all the set's variation. ``concentrated``:
  ``effective_size < 2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_sets
from eatkit.stats.association import unit_rows

#: cosine at or above which two stimuli of one set are reported as near-duplicates
NEAR_DUPLICATE_COSINE = 0.95
#: effective size below which a set is reported as concentrated on one direction
CONCENTRATED_BELOW = 2.0


@dataclass(frozen=True, kw_only=True)
class VectorSetDiagnostics:
    """One set's diagnostics (module docstring); pairs are (i, j, cosine) by input position, i < j."""

    size: int
    near_duplicates: tuple[tuple[int, int, float], ...]
    mean_similarity: float
    effective_size: float
    concentrated: bool


def vector_set_diagnostics(threshold: float = NEAR_DUPLICATE_COSINE, **sets: Any) -> dict[str, VectorSetDiagnostics]:
    """Diagnostics of each named set of embeddings (all sets of one test, so that their common mean can
    be removed for ``effective_size``).

    >>> d = vector_set_diagnostics(X=[[1.0, 0.0], [0.999, 0.01], [0.0, 1.0]], Y=[[0.0, 1.0], [1.0, 1.0]])
    >>> d["X"].near_duplicates[0][:2], d["X"].size, d["Y"].near_duplicates
    ((0, 1), 3, ())
    """
    if not -1 <= threshold <= 1:
        raise EatkitError(f"the near-duplicate threshold is a cosine between -1 and 1, got {threshold!r}")
    if not sets:
        raise EatkitError("vector_set_diagnostics needs at least one set")
    arrays = check_sets(1, rules=False, **sets)  # the diagnostics report the duplicates the rules refuse
    units = {name: unit_rows(v) for name, v in arrays.items()}
    centre = np.vstack(list(units.values())).mean(axis=0)
    out = {}
    for name, u in units.items():
        n = len(u)
        cos = u @ u.T
        i, j = np.triu_indices(n, k=1)
        close = cos[i, j] >= threshold
        eig = np.clip(np.linalg.eigvalsh((u - centre) @ (u - centre).T), 0.0, None)
        effective = float(eig.sum() ** 2 / (eig**2).sum()) if eig.sum() > 0 else 1.0
        out[name] = VectorSetDiagnostics(
            size=n,
            near_duplicates=tuple((int(a), int(b), float(c)) for a, b, c in zip(i[close], j[close], cos[i, j][close])),
            mean_similarity=float(cos[i, j].mean()) if n > 1 else float("nan"),
            effective_size=effective,
            concentrated=effective < CONCENTRATED_BELOW,
        )
    return out
