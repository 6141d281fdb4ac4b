"""Clustering of bias profiles (eatkit.stats.clustering): distances against a brute-force loop, the order of
planted clusters, and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats.clustering import cluster_profiles, profile_distances


def test_distances_equal_a_brute_force_loop_over_shared_tests():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 9))
    x[rng.random(x.shape) < 0.3] = np.nan
    x[:, 0] = rng.normal(size=12)  # every pair shares a test
    got = profile_distances(x)
    for i in range(12):
        for j in range(12):
            shared = np.isfinite(x[i]) & np.isfinite(x[j])
            assert got[i, j] == pytest.approx(np.sqrt(np.mean((x[i, shared] - x[j, shared]) ** 2)), abs=1e-12)


def test_planted_clusters_are_contiguous_in_the_order():
    rng = np.random.default_rng(1)
    centres = np.array([[1.5] * 6, [-1.0] * 6, [0.0, 1, 0, 1, 0, 1]])
    labels = rng.permutation(np.repeat([0, 1, 2], 20))
    x = centres[labels] + rng.normal(scale=0.05, size=(60, 6))
    result = cluster_profiles(x)
    assert sorted(result.order.tolist()) == list(range(60))
    runs = [labels[i] for i in result.order]
    assert sum(a != b for a, b in zip(runs, runs[1:])) == 2  # three blocks
    assert result.linkage.shape == (59, 4) and result.method == "average"


def test_bad_profiles_are_one_line_errors():
    with pytest.raises(EatkitError, match=r"^profiles 0 and 1 share no test with a finite value"):
        profile_distances([[1.0, np.nan], [np.nan, 2.0]])
    with pytest.raises(EatkitError, match=r"^profile 1 has no finite value$"):
        cluster_profiles([[1.0], [np.nan]])
    with pytest.raises(EatkitError, match=r"^profiles must be a 2-D array"):
        cluster_profiles([1.0, 2.0])
    with pytest.raises(EatkitError, match=r"^unknown linkage method 'ward'"):
        cluster_profiles([[1.0], [2.0]], method="ward")
