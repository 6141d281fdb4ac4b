"""Hierarchical clustering of bias profiles: which models measure alike across a battery of tests.

A model's *profile* is its row of effect sizes over the tests of an audit (a sweep: models x tests), with
NaN where a test was not run. The distance between two models is the root-mean-square difference of their
effect sizes over the tests both have (pairwise-complete; no imputation):

    d(i, j) = sqrt( mean_{t in T_i ∩ T_j} (x_it - x_jt)^2 )

(Euclidean distance scaled by the number of shared tests, so that models with more missing tests are not
closer for it). Agglomerative clustering (``scipy.cluster.hierarchy.linkage``, average linkage by default)
of these distances orders the models with the optimal leaf ordering (Bar-Joseph et al. 2001), so neighbours
in a report's table have similar profiles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from eatkit.errors import EatkitError

LINKAGES: tuple[str, ...] = ("average", "complete", "single", "weighted")


@dataclass(frozen=True)
class ProfileClustering:
    """The clustering of :func:`cluster_profiles`: ``order`` (row indices, leaves left to right),
    ``linkage`` (scipy's ``(n - 1, 4)`` matrix), the pairwise ``distances`` (square), and how they were
    computed: ``method`` (linkage), ``metric`` and ``missing`` (how NaN entries were treated)."""

    order: np.ndarray
    linkage: np.ndarray
    distances: np.ndarray
    method: str
    metric: str = "rms difference over shared tests"
    missing: str = "pairwise complete (no imputation)"


def profile_distances(profiles: ArrayLike) -> np.ndarray:
    """The square matrix of RMS differences between rows over their shared finite columns (module docstring).

    >>> profile_distances([[0.0, 1.0], [1.0, 1.0], [np.nan, 3.0]]).round(3).tolist()
    [[0.0, 0.707, 2.0], [0.707, 0.0, 2.0], [2.0, 2.0, 0.0]]
    """
    x = _profiles(profiles)
    finite = np.isfinite(x)
    values = np.where(finite, x, 0.0)
    mask = finite.astype(float)
    shared = mask @ mask.T
    # sum over shared columns of (a - b)^2 = sum a^2 m_b + sum b^2 m_a - 2 sum a b
    squares = (values**2) @ mask.T
    sums = squares + squares.T - 2.0 * values @ values.T
    if np.any(shared == 0):
        i, j = map(int, np.argwhere(shared == 0)[0])
        raise EatkitError(f"profiles {i} and {j} share no test with a finite value: they cannot be compared")
    distances = np.sqrt(np.maximum(sums, 0.0) / shared)
    np.fill_diagonal(distances, 0.0)
    return distances


def cluster_profiles(profiles: ArrayLike, *, method: str = "average") -> ProfileClustering:
    """Cluster the rows of ``profiles`` (models x tests, NaN where missing) hierarchically and order them.

    >>> d = [[0.1, 0.2], [1.5, 1.4], [0.0, 0.3], [1.6, np.nan]]
    >>> cluster_profiles(d).order.tolist()
    [3, 1, 0, 2]
    """
    if method not in LINKAGES:
        raise EatkitError(f"unknown linkage method '{method}' (known: {', '.join(LINKAGES)})")
    from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
    from scipy.spatial.distance import squareform

    distances = profile_distances(profiles)
    if len(distances) < 3:
        order = np.arange(len(distances))
        return ProfileClustering(order, np.empty((max(len(distances) - 1, 0), 4)), distances, method)
    condensed = squareform(distances, checks=False)
    tree = optimal_leaf_ordering(linkage(condensed, method=method), condensed)
    return ProfileClustering(leaves_list(tree), tree, distances, method)


def _profiles(profiles: ArrayLike) -> np.ndarray:
    """Validate profiles: a 2-D float array with at least one row and one finite value per row."""
    x = np.asarray(profiles, dtype=float)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise EatkitError(f"profiles must be a 2-D array of models x tests, got shape {x.shape}")
    empty = np.flatnonzero(~np.isfinite(x).any(axis=1))
    if empty.size:
        raise EatkitError(f"profile {int(empty[0])} has no finite value")
    return x
