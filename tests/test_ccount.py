"""The C counter (eatkit.stats._ccount) against the numpy reference and against enumeration: the same
integers on random inputs (ties, zeros, negative values, sums near 2^58, every k, thresholds at ±2^62);
its argument checks; it is loaded only by the first exact count."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eatkit.stats import permutation as perm
from eatkit.stats import exact_counts

pytestmark = pytest.mark.skipif(exact_counts._c_counter() is None, reason="the C counter (eatkit.stats._ccount) was not built")
NEVER = 2**62


def _enumerated(q: list[int], k: int, ts: list[int]) -> list[int]:
    sums = [sum(c) for c in itertools.combinations(q, k)]
    return [sum(s < t for s in sums) for t in ts]


@st.composite
def _inputs(draw, max_n: int = 40) -> tuple[np.ndarray, int, list[int]]:
    n = draw(st.integers(0, max_n))
    bits = draw(st.sampled_from([2, 8, 40, 58 - max(1, n).bit_length()]))  # ties ... sums near 2^58
    values = draw(st.lists(st.integers(-(2**bits) + 1, 2**bits - 1), min_size=n, max_size=n))
    k = draw(st.integers(0, n // 2))
    q = np.array(values, dtype=np.int64)
    around = int(q[:k].sum())
    near = st.integers(around - 2**bits, around + 2**bits)
    special = st.sampled_from([-NEVER, NEVER, 0, around, around + 1])
    ts = draw(st.lists(st.one_of(near, special), min_size=1, max_size=4))
    return q, k, sorted(set(ts))


@settings(max_examples=150, deadline=None)
@given(_inputs(max_n=22))
def test_equals_the_numpy_reference_on_small_inputs(case) -> None:
    q, k, ts = case
    assert int(np.abs(q).sum()) < 2**exact_counts.SUM_BITS
    assert exact_counts._count_below_c(q, k, ts) == exact_counts._count_below_numpy(q, k, ts)


@settings(max_examples=12, deadline=None)
@given(_inputs(max_n=40))
def test_equals_the_numpy_reference_up_to_40_values(case) -> None:
    q, k, ts = case
    assert exact_counts._count_below_c(q, k, ts) == exact_counts._count_below_numpy(q, k, ts)


def test_equals_enumeration_with_threads_and_nearby_thresholds() -> None:
    # thresholds one apart around many tied sums (the second threshold's one-comparison shortcut must give
    # way to its own walk), and far apart; 1, 2 and 5 threads
    rng = np.random.default_rng(34)
    for n in (7, 12, 15):
        q = rng.integers(-3, 4, n).astype(np.int64)
        for k in range(n // 2 + 1):
            observed = int(q[:k].sum())
            for ts in ([observed - 1, observed, observed + 1], [observed, observed + 5], [-NEVER, 0, NEVER],
                       [observed - 9, observed, observed + 1]):
                expected = _enumerated(q.tolist(), k, ts)
                for threads in (1, 2, 5):
                    got = exact_counts._c_counter().count_below(q, k, np.array(ts, dtype=np.int64), threads)
                    assert got == expected, (n, k, ts, threads)


def test_thresholds_in_the_tails_equal_enumeration() -> None:
    # in the tails most sums of a stratum pair with all or none of the other list's sums: only the sums
    # between are walked, split between the threads (thread 0 adds the whole pairs)
    rng = np.random.default_rng(341)
    for n, k in ((16, 8), (17, 6), (14, 7)):
        q = rng.integers(-1000, 1001, n).astype(np.int64)
        sums = np.sort([sum(c) for c in itertools.combinations(q.tolist(), k)])
        ts = sorted({int(sums[int(f * (sums.size - 1))]) + d for f in (0, 0.001, 0.02, 0.5, 0.98, 0.999, 1)
                     for d in (0, 1)})
        expected = [int(np.searchsorted(sums, t)) for t in ts]
        for threads in (1, 2, 5):
            assert exact_counts._c_counter().count_below(q, k, np.array(ts, dtype=np.int64), threads) == expected


@pytest.mark.parametrize("spread", [3, 50, 2**40])
def test_blocks_of_the_walk_equal_the_numpy_reference(spread: int) -> None:
    # 36 values, strata of up to C(18, 9) = 48620 sums: most sums are counted in blocks against a window of
    # the other side, some one at a time; many ties (spread 3) put several sums between nearby thresholds
    rng = np.random.default_rng(spread)
    q = rng.integers(-spread, spread + 1, 36).astype(np.int64)
    for k in (18, 11):
        observed = int(q[:k].sum())
        for ts in ([observed - 1, observed, observed + 2], [observed - spread, observed + spread],
                   [observed - 2**45, observed + 2**45]):
            assert exact_counts._count_below_c(q, k, ts) == exact_counts._count_below_numpy(q, k, ts), (spread, k, ts)


def test_a_45_value_count_is_the_numpy_count() -> None:
    # odd n (halves of 22 and 23), two threads, real-valued association values scaled as the permutation
    # test does; k = 22 and a k below the strata's middle
    rng = np.random.default_rng(45)
    q, tol = exact_counts.scaled_integers(rng.normal(size=45), 1e-12)
    for k in (22, 9):
        observed = int(q[:k].sum())
        ts = [observed - tol, observed + tol + 1]
        counts = exact_counts._count_below_c(q, k, ts)
        assert counts == exact_counts._count_below_numpy(q, k, ts)
        assert 0 < counts[0] <= counts[1] < math.comb(45, k)


def test_buffers_kept_within_a_run_give_the_same_counts_in_any_thread() -> None:
    # within count_store the buffers are kept from count to count (sizes growing and shrinking); a count in
    # another thread meanwhile takes its own; the block's end frees them (release() again is harmless)
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(7)
    cases = []
    for n in (36, 20, 40, 36):
        q = rng.integers(-2**40, 2**40, n).astype(np.int64)
        cases.append((q, n // 2, [int(q[: n // 2].sum()), int(q[: n // 2].sum()) + 3]))
    expected = [exact_counts._count_below_numpy(*case) for case in cases]
    with perm.count_store(None):
        assert [exact_counts._count_below_c(*case) for case in cases] == expected
        with ThreadPoolExecutor(3) as pool:
            assert list(pool.map(lambda case: exact_counts._count_below_c(*case), cases * 2)) == expected * 2
    exact_counts._c_counter().release()
    assert exact_counts._RUNS == [0]


def test_bad_arguments_are_a_value_error() -> None:
    count = exact_counts._c_counter().count_below
    q, ts = np.arange(6, dtype=np.int64), np.array([3], dtype=np.int64)
    for args in ((q, 4, ts, 1), (q, -1, ts, 1), (q, 2, np.array([3, 2], dtype=np.int64), 1),
                 (q, 2, np.zeros(0, dtype=np.int64), 1), (np.arange(140, dtype=np.int64), 65, ts, 1),
                 (b"1234567", 1, ts, 1)):
        with pytest.raises(ValueError, match="count_below: need int64 values"):
            count(*args)


def test_few_of_many_values() -> None:
    # 3 of 83 values (few sums although many values): counted, and equal to enumeration
    rng = np.random.default_rng(83)
    q = rng.integers(-1000, 1000, 83).astype(np.int64)
    ts = [int(q[:3].sum()), int(q[:3].sum()) + 7]
    assert exact_counts._count_below_c(q, 3, ts) == _enumerated(q.tolist(), 3, ts)
    assert exact_counts._exact_counter(83, 3) is exact_counts._count_below_c


def test_loaded_only_by_the_first_exact_count() -> None:
    code = ("import sys, eatkit, eatkit.stats.permutation as p; assert 'eatkit.stats._ccount' not in sys.modules; "
            "p.group_permutation_test([1.0, 2.0, 3.0], [0.0, 0.5], permutations='exact'); "
            "assert 'eatkit.stats._ccount' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
