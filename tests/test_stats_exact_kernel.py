"""The exact counter on integer sums (compiled kernels and numpy reference) and the Monte Carlo stream:
counts equal to enumeration, to the previous floating-point counter and to each other; independent of
threads and windows; the feasibility limits."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from stats_reference import enumerated_counts

from eatkit.errors import EatkitError
from eatkit.stats import _kernels, group_permutation_test
from eatkit.stats import permutation as perm
from eatkit.stats import exact_counts, monte_carlo

needs_numba = pytest.mark.skipif(not _kernels.AVAILABLE, reason="numba (the 'fast' extra) is not installed")
needs_ccount = pytest.mark.skipif(exact_counts._c_counter() is None, reason="the C counter (eatkit.stats._ccount) was not built")
KINDS = ("real", "tied", "integer")


def _values(kind: str, k: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    if kind == "real":
        return g.normal(0.3, 1.0, size=k), g.normal(0.0, 1.0, size=m)
    if kind == "tied":  # decimal sums that tie only up to rounding
        grid = np.array([0.1, 0.2, 0.3, 0.6])
        return g.choice(grid, size=k), g.choice(grid, size=m)
    return g.integers(0, 4, size=k).astype(float), g.integers(0, 4, size=m).astype(float)


def _numpy_counts(x: np.ndarray, y: np.ndarray, monkeypatch) -> dict[str, int]:
    with monkeypatch.context() as patch:
        patch.setattr(_kernels, "AVAILABLE", False)
        patch.setattr(exact_counts, "_c_counter", lambda: None)
        return group_permutation_test(x, y, permutations="exact").counts


@pytest.fixture(params=["numpy", pytest.param("ccount", marks=needs_ccount), pytest.param("compiled", marks=needs_numba)])
def counter(request, monkeypatch) -> str:
    """Which counter counts small tests: the numpy reference (the C counter not built), the C counter (the
    default where built) or the numba kernels (forced)."""
    if request.param == "numpy":
        monkeypatch.setattr(exact_counts, "_c_counter", lambda: None)
    if request.param == "compiled":
        monkeypatch.setattr(exact_counts, "CCOUNT_MAX_SUMS", 0)
        monkeypatch.setattr(exact_counts, "NUMPY_FIRST_MAX", 0)
    return request.param


@pytest.mark.parametrize("kind", KINDS)
def test_counts_equal_enumeration_on_every_size_up_to_12_plus_12(kind: str, counter: str) -> None:
    for k in range(1, 13):
        for m in range(1, 13):
            x, y = _values(kind, k, m, seed=100 * k + m)
            out = group_permutation_test(x, y, permutations="exact")
            assert out.counts == enumerated_counts(x, y), (kind, k, m, counter)
            assert out.n_partitions == math.comb(k + m, k)


def test_small_tests_are_counted_without_the_compiled_kernels(monkeypatch) -> None:
    # a process whose exact counts are all small never loads numba's compiler (its first call costs ~0.25 s)
    def refuse(*args):
        raise AssertionError("the compiled counter was used for a small test")

    monkeypatch.setattr(exact_counts, "_count_below_compiled", refuse)
    x, y = _values("real", 20, 20, seed=3)
    assert group_permutation_test(x, y, permutations="exact").counts == exact_counts._count_exact_reference(x, y)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("k", "m"), [(21, 19), (12, 25), (23, 22)])
def test_compiled_and_numpy_counters_agree_with_the_previous_counter(kind: str, k: int, m: int, monkeypatch) -> None:
    # (23, 22): both halves have a head of runs (more than 20 values); (12, 25): k < m, few strata
    x, y = _values(kind, k, m, seed=k * m)
    with monkeypatch.context() as patch:
        patch.setattr(exact_counts, "NUMPY_FIRST_MAX", 0)  # the numba kernels, where installed, at every size
        patch.setattr(exact_counts, "CCOUNT_MAX_SUMS", 0)
        new = group_permutation_test(x, y, permutations="exact").counts
    assert new == exact_counts._count_exact_reference(x, y)
    assert group_permutation_test(x, y, permutations="exact").counts == new  # the C counter, where built
    if k + m <= 40:  # the numpy reference lists every sum: keep it small here
        assert new == _numpy_counts(x, y, monkeypatch)


def test_integer_scaling_keeps_the_tolerance_rule() -> None:
    # 0.1 + 0.2 and 0.3 + 0.0 tie within rounding; 1e-300 next to 1.0 rounds to 0 but the tie rule holds
    assert group_permutation_test([0.1, 0.2], [0.3, 0.0], permutations="exact").counts["greater"] == 4
    x, y = np.array([1.0, 1e-300, 2.0]), np.array([3.0, 1e-300, 0.5])
    assert group_permutation_test(x, y, permutations="exact").counts == enumerated_counts(x, y)
    q, tol = exact_counts.scaled_integers(np.array([0.75, -1.5, 3.0]), 1e-15)
    assert q.dtype == np.int64 and int(np.abs(q).sum()) < 2**exact_counts.SUM_BITS
    assert list(q / q[0]) == [1.0, -2.0, 4.0]  # powers of two scale exactly
    assert tol == math.floor(math.ldexp(1e-15, exact_counts.SUM_BITS - math.frexp(5.25)[1]))


@needs_numba
def test_count_independent_of_threads_and_windows(monkeypatch) -> None:
    import numba

    x, y = _values("real", 22, 21, seed=5)
    reference = group_permutation_test(x, y, permutations="exact").counts
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert group_permutation_test(x, y, permutations="exact").counts == reference
    finally:
        numba.set_num_threads(threads)
    monkeypatch.setattr(_kernels, "WINDOW", 1 << 14)  # many more, smaller parallel tasks
    assert group_permutation_test(x, y, permutations="exact").counts == reference


@needs_numba
@pytest.mark.parametrize(("k", "m"), [(25, 25), (3, 40), (40, 3), (17, 6)])
def test_monte_carlo_stream_is_the_same_compiled_numpy_and_any_thread_count(k: int, m: int, monkeypatch) -> None:
    import numba

    monkeypatch.setattr(monte_carlo, "NUMPY_MC_FIRST_STEPS", 0)  # the compiled kernel also for these few draws
    x, y = _values("real", k, m, seed=k + m)
    compiled = group_permutation_test(x, y, permutations=30_000, rng=42)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert group_permutation_test(x, y, permutations=30_000, rng=42).counts == compiled.counts
    finally:
        numba.set_num_threads(threads)
    monkeypatch.setattr(_kernels, "AVAILABLE", False)
    assert group_permutation_test(x, y, permutations=30_000, rng=42).counts == compiled.counts


@needs_numba
@pytest.mark.parametrize("r", [5, 6])
def test_monte_carlo_kernel_is_the_numpy_stream_on_one_and_several_columns(r: int) -> None:
    # the compiled kernel's one-column path (values shuffled in place) and its several-column path (an
    # index shuffled) against the numpy reference, odd and even subset sizes, subsets and complements
    rng = np.random.default_rng(r)
    values = rng.integers(-1000, 1000, (13, 3))
    lower = rng.integers(-2000, 2000, (3, 2))
    upper = lower - 700
    for columns in (slice(0, 1), slice(0, 3)):
        v, lo, up = np.ascontiguousarray(values[:, columns]), lower[columns], upper[columns]
        for complement in (False, True):
            compiled = _kernels.monte_carlo(v, r, complement, 12345, 5_000, 700, lo, up)
            reference = monte_carlo._monte_carlo_numpy(v, r, complement, 12345, 5_000, lo, up)
            assert compiled.shape == (v.shape[1], 2) and (compiled == reference).all()
            assert 0 < compiled.sum() < 5_000 * compiled.size  # the thresholds cut the draws


def test_exact_limits_and_their_message(monkeypatch) -> None:
    perm.check_exact_feasible(3, 300)  # few partitions although many values
    with pytest.raises(EatkitError, match=r"^an exact permutation test for 300 \+ 300 values would take about"):
        perm.check_exact_feasible(300, 300)
    monkeypatch.setattr(_kernels, "AVAILABLE", False)
    perm.check_exact_feasible(26, 26)
    with pytest.raises(EatkitError, match=r"27 \+ 27 values would take about .* GB .*eatkit\[fast\]") as err:
        perm.check_exact_feasible(27, 27)
    assert "\n" not in str(err.value)
    with pytest.raises(EatkitError, match="27 \\+ 27"):
        group_permutation_test(np.zeros(27), np.ones(27), permutations="exact")


@needs_numba
def test_compiled_limit_is_weat_3() -> None:
    perm.check_exact_feasible(32, 32)
    perm.check_exact_feasible(31, 33)
    with pytest.raises(EatkitError, match=r"33 \+ 33 values would take about [\d.]+ (s|minutes) and [\d.]+ MB"):
        perm.check_exact_feasible(33, 33)


@pytest.mark.slow
def test_agrees_with_the_previous_counter_at_24_plus_25() -> None:
    # heads of runs on both sides, unequal sizes (a far-tail pass), near-ties; 26 + 26: bench/bench_stats.py
    x, y = _values("tied", 24, 25, seed=2425)
    assert group_permutation_test(x, y, permutations="exact").counts == exact_counts._count_exact_reference(x, y)


@pytest.mark.parametrize("kind", ("tied", "integer"))
@pytest.mark.parametrize(("k", "m"), [(21, 19), (23, 22), (12, 25)])
def test_tied_dynamic_programme_equals_both_listing_counters(kind: str, k: int, m: int) -> None:
    # heavily tied inputs take the dynamic programme over distinct values; the listing counters (compiled
    # windows, numpy binary search) must give the same counts on them, at several thresholds
    x, y = _values(kind, k, m, seed=k + 2 * m)
    q, tol = exact_counts.scaled_integers(np.concatenate([x, y]), 1e-12)
    r, n, observed = min(k, m), k + m, int(q[:min(k, m)].sum())
    sums, counts = exact_counts._tied_sums(q, r, budget=perm.exact_cost(n, r) // (4 * n))  # the dispatcher's budget
    assert int(counts.sum()) == math.comb(n, r) and np.all(np.diff(sums) > 0)
    for ts in ([observed - tol, observed + tol + 1], [int(q.sum()) // 2]):  # the kernels take close pairs
        tied = [int(counts[sums < t].sum()) for t in ts]
        assert tied == exact_counts._count_below_numpy(q, r, ts)
        if _kernels.AVAILABLE:
            assert tied == exact_counts._count_below_compiled(q, r, ts)
        if exact_counts._c_counter() is not None:
            assert tied == exact_counts._count_below_c(q, r, ts)


@needs_numba
@pytest.mark.parametrize("kind", KINDS)
def test_thresholds_in_different_buckets_and_full_buckets_take_the_exact_way(kind: str) -> None:
    # 21 + 21: two runs a stratum, so windows with bucket indexes; the second threshold lies several
    # buckets above the first (every block counted again query by query) or a few units above (rarely)
    x, y = _values(kind, 21, 21, seed=2121)
    q, _ = exact_counts.scaled_integers(np.concatenate([x, y]), 0.0)
    observed = int(q[:21].sum())
    for gap in (1, 3, int(np.abs(q).sum()) // 10_000):
        ts = [observed, observed + gap]
        assert exact_counts._count_below_compiled(q, 21, ts) == exact_counts._count_below_numpy(q, 21, ts), (kind, gap)


def test_tied_path_gives_way_to_listing() -> None:
    x, y = _values("real", 20, 20, seed=3)
    q, _ = exact_counts.scaled_integers(np.concatenate([x, y]), 1e-12)
    assert exact_counts._tied_sums(q, 20, budget=2**40) is None  # every value distinct
    ints = np.concatenate(_values("integer", 20, 20, seed=3)).astype(np.int64)
    assert exact_counts._tied_sums(ints, 20, budget=10) is None  # more live sums than the budget
    sums, counts = exact_counts._tied_sums(ints, 20, budget=10**6)
    assert sums[0] == np.sort(ints)[:20].sum() and sums[-1] == np.sort(ints)[-20:].sum()


def test_default_monte_carlo_of_a_weat_sized_test_is_drawn_without_the_compiled_kernel(monkeypatch) -> None:
    # 10^5 draws of 32 + 32 (WEAT 3): numpy, so that no run waits for the kernel's first compilation
    def refuse(*args):
        raise AssertionError("the compiled Monte Carlo kernel was used for a small test")

    monkeypatch.setattr(_kernels, "monte_carlo", refuse, raising=False)
    x, y = _values("real", 32, 32, seed=5)
    out = group_permutation_test(x, y, rng=1)
    assert not out.p_value_exact and out.n_permutations == perm.DEFAULT_MONTE_CARLO


@pytest.mark.parametrize("kind", ["exact", "monte-carlo"])
def test_count_store_gives_the_counts_made_and_keys_every_input(kind: str, tmp_path) -> None:
    x, y = _values("real", 21, 21, seed=9)  # 42 values: counted once, then read from the store

    def run(first: np.ndarray) -> perm.PermutationOutcome:
        if kind == "exact":
            return group_permutation_test(first, y, permutations="exact")
        return group_permutation_test(first, y, permutations=3_000, rng=7)

    made, other = run(x), run(x + 1e-3)
    with perm.count_store(tmp_path):
        assert run(x) == made
        (entry,) = (tmp_path / kind).glob("*.json")
        # the entry is what is read: a changed entry shows in the counts
        stored = json.loads(entry.read_text())
        entry.write_text(json.dumps(np.add(stored, 1).tolist()))
        assert run(x).counts != made.counts
        assert run(x + 1e-3) == other  # other values: another entry, counted afresh
        assert len(list((tmp_path / kind).glob("*.json"))) == 2
        entry.write_text("not json")  # an unreadable entry is counted again
        assert run(x) == made
    assert exact_counts._STORE[0] is None
