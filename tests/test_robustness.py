"""Issue 26: never hang, never lose a file, never answer a meaningless question with a number.

Each test names the finding of the issue it covers (#1 ... #11) or the general mechanism.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats import permutation as perm


# -- #2: more draws than partitions, long Monte Carlo, Ctrl-C between chunks ---------------------------


def test_more_draws_than_partitions_counts_them_exactly() -> None:
    first, second = [3.0, 4.0, 5.0], [0.0, 1.0, 2.5]
    asked = perm.group_permutation_test(first, second, permutations=10**10, rng=0)
    exact = perm.group_permutation_test(first, second, permutations="exact")
    assert asked.exact and asked.n_permutations == asked.n_partitions == math.comb(6, 3) == 20
    assert asked.p_values == exact.p_values and asked.p_values["greater"] == 1 / 20
    # one draw fewer than the partitions is still Monte Carlo
    assert not perm.group_permutation_test(first, second, permutations=19, rng=0).exact


def test_a_monte_carlo_test_too_long_is_refused_before_any_draw_with_its_estimate() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(EatkitError, match=r"1e\+12 Monte Carlo permutations of 25 \+ 25 values would take about"):
        perm.group_permutation_test(rng.normal(size=25), rng.normal(size=25), permutations=10**12)
    assert perm.check_monte_carlo_feasible(25, 25, 10**6) < perm.MC_MAX_SECONDS


@pytest.mark.skipif(not perm.compiled(), reason="the compiled kernels (numba) are not installed")
def test_the_compiled_monte_carlo_runs_in_chunks_with_the_same_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    ints = rng.integers(-1000, 1000, size=(30, 2)).astype(np.int64)
    thresholds = [perm._IntThresholds.of(ints[:, i].copy(), 15, 0) for i in range(2)]
    for key in (5, 2**63 - 3):  # the second wraps the uint64 hash input within the run
        whole = perm._monte_carlo_counts(ints, 15, 50_000, key, thresholds)
        monkeypatch.setattr(perm, "MC_CHUNK_STEPS", 1 << 14)
        assert perm._monte_carlo_counts(ints, 15, 50_000, key, thresholds) == whole
        monkeypatch.undo()
    # Ctrl-C arrives between two chunks: the test stops there instead of running all the draws
    calls = []
    kernel = perm._kernels.monte_carlo

    def interrupted(*args):
        calls.append(args[4])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return kernel(*args)

    monkeypatch.setattr(perm, "MC_CHUNK_STEPS", 1 << 14)
    monkeypatch.setattr(perm._kernels, "monte_carlo", interrupted)
    with pytest.raises(KeyboardInterrupt):
        perm._monte_carlo_counts(ints, 15, 10**7, 5, thresholds)
    assert len(calls) == 2 and max(calls) < 10**5
