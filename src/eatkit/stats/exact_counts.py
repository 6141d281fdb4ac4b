"""Exact counts of a two-group permutation test (:mod:`eatkit.stats.permutation`): the partitions whose
subset sum reaches the observed one, counted without listing them, and the store of counts already made.

Exact counting never enumerates partitions ("meet in the middle"): the values are split into two halves;
a size-k subset is a size-j subset of the left half plus a size-(k - j) subset of the right half, so the
number of subsets with sum below t is Σ_j #{(a, b) ∈ L_j × R_(k-j) : a + b < t}, L_j (R_j) being the
size-j subset sums of the left (right) half. (For k > m the complement, of size m, is counted.)

* Heavily tied inputs (at most half the values distinct: small integers, a few repeated scores): a
  dynamic programme over the distinct values (``_tied_sums``) keeps, per subset size, the distinct
  subset sums and how many subsets reach each; its cost is the number of distinct (size, sum) pairs, not
  2^(n/2) (32 + 32 integers in 0..3: 1.6e3 pairs, about 0.02 s). It gives way to the listing counters
  below as soon as more than ``exact_cost / (4 n)`` pairs are live, so it never costs more than a
  fraction of what it replaces. Same integer sums, same thresholds, same counts.
Which counter runs (``_exact_counter``; all give the same integers): the C counter wherever it was built
(``pip install`` compiles it where a C compiler is present) for up to ``CCOUNT_MAX_SUMS`` listed sums
(26 + 26); beyond that the numba kernels (the ``fast`` extra) where installed; otherwise the numpy reference
(which is also the reference of the tests). Without the C counter, tests of at most ``NUMPY_FIRST_MAX``
values are counted by numpy even where numba is installed.

* C (:mod:`eatkit.stats._ccount`, an optional extension built by ``setup.py``; loaded on the first exact
  count): each half's L_j are built sorted by merges, one value at a time (adding v: L_j <- merge(L_j,
  L_(j-1) + v), out of place into a second buffer, by four branch-free chains: a binary search on the
  merge path splits the output in two parts, each filled from its front and its back at once), the two
  halves in two threads; only sizes j up to h/2 of a half of h values are built (L_(h-j) is the half's
  total minus L_j, read in reverse), about 2^h moves a half. Each stratum is then counted by a walk over
  its longer list ascending with a pointer into the other that only moves down, over only the sums whose
  pairs are neither all below both thresholds nor all above (a < t0 - max B count whole, a >= t1 - min B
  count nothing; found by binary search), that range split evenly between the threads: blocks of 8
  consecutive sums whose pointers all lie within 8 sums of the other list are
  counted by comparing each with those 8 (branch-free and vectorised; compiled for AVX2 too, chosen at
  load time, with GCC on x86-64 Linux), other sums one at a time; a second, nearby threshold is counted in
  the same walk (a second walk where it is far off); strata entirely below a threshold count without a
  walk. Memory: about 8 bytes a listed sum (25 + 25: 0.54 GB; 26 + 26: 1.2 GB); time about
  ``CCOUNT_SECONDS_PER_SUM`` a sum and core (25 + 25: about 0.23 s of CPU time on the shared 2-core
  development machine, half of it the merges; with two chains a merge step cost about 2.5 ns even in
  cache there, as each waits on its load: four chains cut the merges by about 40%, and the walk's
  restriction to the mixed range cut it by about 30% on the README job's counts, whose thresholds lie
  in the tails). Up to 26 + 26 it beats the numba kernels' first call (their compilation, or loading them
  from the cache); warm, numba's windowed kernels are about as fast at 25 + 25 (0.4 s of CPU) and faster
  beyond (26 + 26: 1.0 against the C counter's 1.8 s; 28 + 28: 2.9 against 5.9 s, and 4 GB), so they keep
  the larger sizes (measured before the C counter kept its buffers within a run, and before its
  four-chain merges and restricted walk). The
  GIL is released while it counts; within a :func:`count_store` block (a run) its buffers are kept from
  count to count.
* Reference (pure numpy, and the fallback without the C counter): every L_j and R_j is listed and sorted,
  and the pairs are counted with binary search. Time and memory grow as 2^(n/2) sums per half (25 + 25:
  2 x 3.4e7 sums, about 0.8 GB, 3 to 4 s); ``permutations="exact"`` refuses more than
  ``NUMPY_EXACT_MAX_SUMS``.
* Compiled (numba, the ``fast`` extra; :mod:`eatkit.stats._kernels`): each half of h values is split into
  a head and a base of 20 to 24 values (``_base_size``: the head has 4 values where the base can take
  the rest, 8 at 32 + 32); the base's sums are listed once per size and sorted (2^20 int64, 8 MB, to 2^24,
  128 MB), and each stratum L_j is the union of "runs" ``s_A + base_(j-|A|)`` over the head's
  subsets A: sorted lists that are never merged in memory. The pairs of a stratum are counted in parallel
  tasks (ranges of the left axis holding about 2^21 sums of each side, cut from a sample of every run),
  each walked in cache-sized windows [u, w) of about 2^14 sums: each run's slice bounds are walked on from
  the previous window's; the right sums below ``t - w + 1`` pair with every left sum of the window; the
  right sums in ``[t - w + 1, t - u)`` are grouped by value into buckets of about one sum each (a
  counting sort: a histogram pass and a scatter pass; a bucket of more than 16 tied sums is sorted), and
  each left sum a, read in place from its run, counts the right sums below ``t - a`` with one bucket
  look-up and a comparison with the four values from its bucket's start, both thresholds of a group at
  once, in branch-free blocks of 8 queries; a block with a query whose bucket holds more than four sums,
  or whose two thresholds fall in different buckets, is counted again query by query (exactly; the
  block's first answer is discarded). Neither side is merged or sorted; a
  stratum of one run a side (halves of at most 20 values) is counted by two pointers in place. Memory
  stays at the two halves' base sums (at most 2 x 128 MB, built in place) plus a few MB
  per thread. Time is linear in the number of sums
  listed, ``exact_cost`` = about 2 x 2^(n/2) (25 + 25: 6.7e7 sums; 32 + 32, WEAT 3: 8.6e9 sums), at most
  about ``SECONDS_PER_SUM`` per sum and core; windows whose right range holds no sums (a p far in a tail)
  cost much less (``bench/bench_stats.py`` prints the times by size).
  Where the time goes (a middling p, the 2-core development machine, 32 + 32: 256 runs a stratum, about
  50 s): about 36 s build the windows' bucket indexes and walk the runs' slice bounds, 15 s answer the
  queries. Two properties of that CPU shaped the kernels. A load waits for every earlier store whose
  address is not yet known, so a store whose address comes from the load just before it (a histogram
  or scatter step) costs about 3 ns; loading four elements before their four stores brings it to about
  1 ns. And the query loop is bound by its instruction count, not by the cache: a branch-free block of
  queries, which the compiler vectorises, comparing each query with a fixed ``SLOTS`` values of its
  bucket (values past the bucket's end are larger than the query, so no mask is needed), with blocks
  that hold a fuller bucket counted again query by query, answers a query in about half the time of a
  loop that branches on each bucket's size.
  ``permutations="exact"`` refuses more than ``EXACT_MAX_SUMS`` (beyond 32 + 32), and ``"auto"`` counts
  exactly up to ``AUTO_EXACT_MAX_SUMS`` (25 + 25, about a second).

Counts of more than ``NUMPY_FIRST_MAX`` values and Monte Carlo counts can be kept (:func:`count_store`, which
``run_suite`` opens in the cache folder): an entry is named by the SHA-256 of the integer values, group size
and thresholds (and draws and key) and holds the integers, so a run repeated on the same embeddings reads
its counts (the same integers) instead of recounting them. Monte Carlo draws of at most
``NUMPY_MC_FIRST_STEPS`` shuffled positions (the default 10^5 draws of a WEAT-sized test) are made by numpy
even where the compiled kernel is installed (the same draws), so that no run waits for its compilation.

"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.io import atomic_write_bytes, read_json
from eatkit.progress import activity
from eatkit.stats.cost import duration

#: ``permutations="exact"`` refuses inputs that would list more subset sums than this: 32 + 32 values
#: (WEAT 3: under a minute on two cores) with the numba kernels; without them 26 + 26 (the C counter: about
#: 1.2 GB; numpy: 1.5 GB).
EXACT_MAX_SUMS = 2 * 2**32
NUMPY_EXACT_MAX_SUMS = 2 * 2**26
#: the C counter (:mod:`eatkit.stats._ccount`) counts up to this many listed sums (26 + 26; beyond, the
#: numba kernels count in bounded memory); its time per listed sum (seconds of one core, middling p: 25 + 25
#: took about 0.4 s of CPU time on the shared 2-core development machine, 2^26 sums) and memory per sum
#: (bytes: each half's sums of sizes up to h/2 and the merges' second buffer; 26 + 26: 1.2 GB)
CCOUNT_MAX_SUMS = NUMPY_EXACT_MAX_SUMS
CCOUNT_SECONDS_PER_SUM = 4.5e-9
CCOUNT_BYTES_PER_SUM = 9.5
#: cost per listed subset sum (seconds of one core, for a middling p: 25 + 25 took 0.79 s and 28 + 28 5.5 s
#: of CPU time on the shared 2-core machine, 12 and 10 ns a sum; a p far in a tail costs less) and memory
#: per sum of the numpy reference (bytes), for ``check_exact_feasible``
SECONDS_PER_SUM = 13e-9
NUMPY_SECONDS_PER_SUM = 60e-9
NUMPY_BYTES_PER_SUM = 11.5
#: subset sums are scaled to integers with |Σ| < 2^SUM_BITS (headroom in int64 for thresholds)
SUM_BITS = 58
_NEVER = 2**62  # an integer threshold no subset sum reaches


def exact_cost(n: int, k: int) -> int:
    """Number of subset sums the exact count lists for ``k`` of ``n`` values (its time; the numpy
    reference's memory)."""
    k = min(k, n - k)
    left = n // 2
    return _sums_up_to(left, k) + _sums_up_to(n - left, k)


def compiled() -> bool:
    """True when the compiled kernels (numba, the ``fast`` extra) are installed and used."""
    return compiled_kernels().AVAILABLE


def compiled_kernels() -> Any:
    """:mod:`eatkit.stats._kernels`, imported on first use (numba takes a while to load)."""
    from eatkit.stats import _kernels

    return _kernels

#: without the C counter, tests of at most this many values are counted exactly by the numpy reference (at
#: most a few tens of milliseconds), so that a process whose exact counts are all small never pays numba's
#: start-up (about 0.25 s for its first compiled call, even with the kernels cached); exact counts of more
#: values are kept in the count store. The counts are the same either way
NUMPY_FIRST_MAX = 40

def check_exact_feasible(k: int, m: int) -> None:
    """Raise EatkitError (one line, saying the time and memory it would need) when ``permutations="exact"``
    refuses groups of ``k`` and ``m`` values; called before any computing.

    Examples
    --------
    >>> check_exact_feasible(32, 32)   # WEAT 3: allowed
    >>> check_exact_feasible(40, 40)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: an exact permutation test for 40 + 40 values would take about ...
    """
    n = k + m
    cost = exact_cost(n, k)
    if n <= NUMPY_FIRST_MAX:
        return
    counter = _exact_counter(n, k)
    if counter is _count_below_c:
        limit, seconds = CCOUNT_MAX_SUMS, cost * CCOUNT_SECONDS_PER_SUM / min(2, _threads())
        memory, hint = cost * CCOUNT_BYTES_PER_SUM, ""
    elif counter is _count_below_compiled:
        kernels = compiled_kernels()
        limit, seconds = EXACT_MAX_SUMS, cost * SECONDS_PER_SUM / kernels.threads()
        memory = 2 * 8 * 2 ** _base_size((n + 1) // 2) + kernels.threads() * 64 * kernels.SUB + 32e6
        hint = ""
    else:
        limit, seconds = NUMPY_EXACT_MAX_SUMS, cost * NUMPY_SECONDS_PER_SUM
        memory = cost * NUMPY_BYTES_PER_SUM
        hint = " (install eatkit[fast] for larger exact tests)"
    if cost > limit or math.comb(n, k) >= 2**63:
        raise EatkitError(
            f"an exact permutation test for {k} + {m} values would take about {duration(seconds)} and "
            f"{_size(memory)} ({cost:.3g} subset sums, limit {limit:.3g}){hint}; "
            "pass a number of Monte Carlo permutations instead"
        )


def _size(nbytes: float) -> str:
    """A memory size for a message, in MB or GB."""
    return f"{nbytes / 1e9:.3g} GB" if nbytes >= 1e9 else f"{nbytes / 1e6:.3g} MB"


# --- a store of counts already made ----------------------------------------------------------------

#: the folder of :func:`count_store` (None: counts are always made)
_STORE: list[Path | None] = [None]
#: open :func:`count_store` blocks: within one (a run), the C counter keeps its buffers from count to count
#: (a fresh buffer costs its first touch, about a fifth of a 25 + 25 count) and frees them at its end
_RUNS = [0]


@contextmanager
def count_store(folder: str | os.PathLike[str] | None) -> Iterator[None]:
    """Within the block, counts that take a while (exact counts of more than ``NUMPY_FIRST_MAX`` values,
    Monte Carlo counts) are read from ``folder`` when made before and written there when made now.

    An entry is named by the SHA-256 of everything its count depends on (the integer-scaled values, the
    group size, the thresholds; for Monte Carlo also the draws and the stream's key), and holds the
    integers the count gave: a repeated run on the same embeddings reads its counts instead of
    recounting them (an exact 25 + 25 count takes seconds without the compiled kernels) and reports the
    same digits. An unreadable entry is counted again and rewritten; ``None`` turns the store off. Within
    the block the C counter keeps its buffers from count to count, and frees them at its end.

    >>> import tempfile
    >>> from eatkit.stats.permutation import permutation_tests
    >>> with tempfile.TemporaryDirectory() as folder, count_store(folder):
    ...     x, y = np.arange(8.0)[:, None], np.arange(8.0)[:, None] / 2
    ...     first = permutation_tests(x, y, permutations=1000, rng=0)[0].counts
    ...     again = permutation_tests(x, y, permutations=1000, rng=0)[0].counts
    ...     stored = len(list(Path(folder).glob("*/*.json")))
    >>> first == again, stored
    (True, 1)
    """
    previous = _STORE[0]
    _STORE[0] = None if folder is None else Path(folder)
    _RUNS[0] += 1
    try:
        yield
    finally:
        _STORE[0] = previous
        _RUNS[0] -= 1
        if not _RUNS[0] and "eatkit.stats._ccount" in sys.modules:  # the C counter's kept buffers
            sys.modules["eatkit.stats._ccount"].release()


def stored_count(kind: str, arrays: list[np.ndarray], params: list[int], count: Callable[[], list[Any]]) -> list[Any]:
    """``count()`` (a JSON list of ints or lists of ints), read from or written to the :func:`count_store`."""
    folder = _STORE[0]
    if folder is None:
        return count()
    digest = hashlib.sha256(f"eatkit-{kind}-1 {params}".encode())
    for array in arrays:
        digest.update(f"{array.shape}".encode())
        digest.update(np.ascontiguousarray(array, dtype="<i8").tobytes())
    path = folder / kind / f"{digest.hexdigest()}.json"
    try:
        return read_json(path, "stored count")  # (absent, unreadable or corrupt: counted again)
    except EatkitError:
        pass
    result = count()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, json.dumps(result).encode())
    except (OSError, EatkitError):
        pass  # a store that cannot be written costs time, never a result
    return result


# --- integer sums and thresholds --------------------------------------------------------------------


def scaled_integers(col: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """The column as int64 multiples of a power of two δ with Σ|q| < 2^SUM_BITS, and ⌊tol / δ⌋."""
    total = float(np.abs(col).sum())
    if total == 0.0:
        return np.zeros(col.size, dtype=np.int64), 0
    exponent = SUM_BITS - math.frexp(total)[1]  # total < 2^frexp exponent, so Σ|v| 2^exponent < 2^SUM_BITS
    q = np.rint(np.ldexp(col, exponent)).astype(np.int64)
    return q, min(_NEVER, math.floor(math.ldexp(tol, exponent)))


@dataclass(frozen=True)
class IntThresholds:
    """The alternatives as integer thresholds on the scaled subset sum Q_S (see the module docstring).

    greater: Q_S ≥ ``ge``; less: Q_S ≤ ``le``; two-sided: Q_S ≥ ``upper`` or Q_S ≤ ``lower`` (disjoint
    tails), or every partition when ``everything``. ``equal_sizes``: for k = m the complement map
    S -> S^c (Q -> Q_total - Q) maps one two-sided tail onto the other, so both have the near tail's count.
    """

    ge: int
    le: int
    upper: int
    lower: int
    everything: bool
    equal_sizes: bool
    above: bool

    @classmethod
    def of(cls, q: np.ndarray, k: int, tol: int) -> "IntThresholds":
        n = q.size
        observed, total = int(q[:k].sum()), int(q.sum())
        # |D(S)| ≥ |D_obs| - tol (1/k + 1/m)  <=>  |Z_S| ≥ |Z_obs| - n tol with Z_S = n Q_S - k Q_total
        z = n * observed - k * total
        reach = abs(z) - n * tol
        return cls(
            ge=observed - tol,
            le=observed + tol,
            upper=-((-(reach + k * total)) // n),  # ceil: Z_S ≥ reach
            lower=(k * total - reach) // n,  # floor: Z_S ≤ -reach
            everything=reach <= 0,
            equal_sizes=2 * k == n,
            above=z > 0,
        )

    def needed(self) -> list[list[int]]:
        """Groups of thresholds t at which to count #{S : Q_S < t}; each group's values are close
        together (counted in one pass)."""
        groups = [[self.ge, self.le + 1]]
        if not (self.everything or self.equal_sizes):
            groups.append([self.lower + 1] if self.above else [self.upper])
        return groups

    def counts(self, below: dict[int, int], total: int) -> dict[str, int]:
        """The three counts from #{S : Q_S < t} at the thresholds of :meth:`needed`."""
        greater, less = total - below[self.ge], below[self.le + 1]
        if self.everything:
            two = total
        elif self.equal_sizes:
            two = 2 * (greater if self.above else less)
        elif self.above:
            two = greater + below[self.lower + 1]
        else:
            two = less + total - below[self.upper]
        return {"greater": greater, "less": less, "two-sided": min(total, two)}

    def bounds(self) -> tuple[list[int], list[int]]:
        """Per alternative (greater, less, two-sided): a sum counts when ≥ lower[i] or ≤ upper[i]."""
        if self.everything:
            return [self.ge, _NEVER, -_NEVER], [-_NEVER, self.le, -_NEVER]
        return [self.ge, _NEVER, self.upper], [-_NEVER, self.le, self.lower]


# --- exact counting by meet in the middle -----------------------------------------------------------


def _sums_up_to(n: int, k: int) -> int:
    return sum(math.comb(n, j) for j in range(min(n, k) + 1))


def count_below(q: np.ndarray, k: int, groups: list[list[int]]) -> dict[int, int]:
    """#{size-k subsets S of q : Q_S < t} for every t in ``groups`` (compiled kernels when installed)."""
    n = q.size
    if k > n - k:  # count the complements: Q_S < t  <=>  Q_C > Q_total - t  <=>  not Q_C < Q_total - t + 1
        total, partitions = int(q.sum()), math.comb(n, k)
        mirrored = [[total - t + 1 for t in reversed(g)] for g in groups]
        below = count_below(q, n - k, mirrored)
        return {t: partitions - below[total - t + 1] for g in groups for t in g}
    tied = _tied_sums(q, k, budget=exact_cost(n, k) // (4 * n))
    if tied is not None:
        below = np.concatenate([[0], np.cumsum(tied[1])])
        return {t: int(below[np.searchsorted(tied[0], _clip(t))]) for g in groups for t in g}
    result: dict[int, int] = {}
    counter = _exact_counter(n, k)
    # the C counter takes every threshold in one call (it pairs nearby ones in one walk); the numba kernels
    # one group of nearby thresholds a call
    for group in [sorted({t for g in groups for t in g})] if counter is _count_below_c else groups:
        ts = sorted(set(map(_clip, group)))
        clipped = dict(zip(ts, _counted(counter, q, k, ts)))
        result.update({t: clipped[_clip(t)] for t in group})
    return result


def _clip(t: int) -> int:
    """A threshold within the integers no subset sum reaches, either way."""
    return max(-_NEVER, min(_NEVER, t))


def _counted(counter: Callable[[np.ndarray, int, list[int]], list[int]], q: np.ndarray, k: int,
             ts: list[int]) -> list[int]:
    """``counter(q, k, ts)``; counts of more than ``NUMPY_FIRST_MAX`` values take a while: shown as progress,
    kept in the count store (numba loads only to count)."""
    n = q.size
    if n <= NUMPY_FIRST_MAX:
        return counter(q, k, ts)
    with activity(f"exact count of {k} + {n - k} values"):
        return stored_count("exact", [q], [k, *ts], lambda: counter(q, k, ts))


def _tied_sums(q: np.ndarray, k: int, budget: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct sums of the size-k subsets of ``q`` (ascending) and how many subsets have each, for
    heavily tied inputs (e.g. small integers); None when more than half the values are distinct, or as soon
    as more than ``budget`` distinct (size, sum) pairs are live (then listing the sums is cheaper).

    A dynamic programme over the distinct values v with multiplicity c keeps, for each subset size j ≤ k,
    the distinct sums and their number of subsets; adding x of the c copies of v multiplies a count by
    C(c, x). Exact integer counts (each at most C(n, k) < 2^63), no subset listed."""
    values, multiplicities = np.unique(q, return_counts=True)
    if values.size > q.size // 2:
        return None
    sums = [np.zeros(1, dtype=np.int64)] + [np.zeros(0, dtype=np.int64)] * k
    counts = [np.ones(1, dtype=np.int64)] + [np.zeros(0, dtype=np.int64)] * k
    for v, c in zip(values.tolist(), multiplicities.tolist()):
        grown_sums, grown_counts = [], []
        for j in range(k + 1):
            parts = [(sums[j - x] + x * v, counts[j - x] * math.comb(c, x)) for x in range(min(c, j) + 1)]
            merged = np.concatenate([p[0] for p in parts])
            order = np.argsort(merged, kind="stable")
            merged = merged[order]
            starts = np.flatnonzero(np.r_[True, merged[1:] != merged[:-1]]) if merged.size else order
            grown_sums.append(merged[starts])
            grown_counts.append(np.add.reduceat(np.concatenate([p[1] for p in parts])[order], starts)
                                if merged.size else merged)
        sums, counts = grown_sums, grown_counts
        if sum(s.size for s in sums) > budget:
            return None
    return sums[k], counts[k]


def _subset_sums_by_size(values: np.ndarray, kmax: int) -> list[np.ndarray]:
    """Sorted sums of all subsets of ``values`` of each size 0..kmax (index = subset size).

    Built one value at a time: subsets of size j either skip the value or add it to a subset of size
    j - 1; both lists are sorted, and a stable sort of their concatenation is a linear merge (timsort).
    """
    sums = [np.zeros(1, dtype=values.dtype)]
    for v in values:
        top = min(len(sums), kmax)
        grown = [sums[0]]
        for j in range(1, top + 1):
            added = sums[j - 1] + v
            grown.append(np.sort(np.concatenate([sums[j], added]), kind="stable") if j < len(sums) else added)
        sums = grown
    return sums


def _exact_counter(n: int, k: int) -> Callable[[np.ndarray, int, list[int]], list[int]]:
    """The counter of size-k subsets of n values (see the module docstring): the C counter where it was built,
    up to ``CCOUNT_MAX_SUMS`` listed sums; beyond, numba's kernels where installed (more than
    ``NUMPY_FIRST_MAX`` values); else the numpy reference. All give the same integers."""
    if exact_cost(n, k) <= CCOUNT_MAX_SUMS and _c_counter() is not None:
        return _count_below_c
    if n > NUMPY_FIRST_MAX and compiled():
        return _count_below_compiled
    return _count_below_numpy


def _c_counter() -> Any:
    """:mod:`eatkit.stats._ccount` (the C counter, built by ``pip install``), imported on first use; None where
    it was not built (no C compiler at install time)."""
    try:
        from eatkit.stats import _ccount
    except ImportError:
        return None
    return _ccount


def _threads() -> int:
    """CPU cores this process may use (the C counter's threads)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _count_below_c(q: np.ndarray, k: int, ts: list[int]) -> list[int]:
    """The C count (:mod:`eatkit.stats._ccount`; see the module docstring), one thread below 32 values."""
    threads = _threads() if q.size >= 32 else 1
    return _c_counter().count_below(np.ascontiguousarray(q, dtype=np.int64), k, np.array(ts, dtype=np.int64), threads,
                                    _RUNS[0] > 0)


def _count_below_numpy(q: np.ndarray, k: int, ts: list[int]) -> list[int]:
    """The pure-numpy reference: every size-j sum of each half listed and sorted, pairs counted by
    binary search."""
    half = q.size // 2
    left, right = _subset_sums_by_size(q[:half], k), _subset_sums_by_size(q[half:], k)
    below = [0] * len(ts)
    for j, lsums in enumerate(left):
        if 0 <= k - j < len(right):
            for i, t in enumerate(ts):
                below[i] += int(np.searchsorted(right[k - j], t - lsums, side="left").sum())
    return below


#: values of each half whose subset sums are listed and sorted once: at least ``_BASE``, at most
#: ``_BASE_MAX`` (memory: 2^24 int64 sums are 128 MB), and all but ``_HEAD`` where that fits; the rest form
#: the runs' head (2^head runs a stratum: a window costs a little per run)
_BASE, _BASE_MAX, _HEAD = 20, 24, 4


def _base_size(h: int) -> int:
    """Values of a half of h values whose sums are listed (28 + 28: 24 of 28; 32 + 32: 24 of 32)."""
    return min(h, max(_BASE, min(h - _HEAD, _BASE_MAX)))


def _half(values: np.ndarray, kmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A half's sorted base sums by size (sums, offsets) and its head subsets (sums, sizes) with size ≤ kmax."""
    split = values.size - _base_size(values.size)
    base_sums, offsets = compiled_kernels().subset_sums_by_size(np.ascontiguousarray(values[split:]), kmax)
    head_sums, head_sizes = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    for v in values[:split]:
        head_sums = np.concatenate([head_sums, head_sums + v])
        head_sizes = np.concatenate([head_sizes, head_sizes + 1])
    keep = head_sizes <= kmax
    return base_sums, offsets, head_sums[keep], head_sizes[keep]


def _runs(head_sums: np.ndarray, head_sizes: np.ndarray, top: int, sizes: range) -> tuple[np.ndarray, ...]:
    """Runs (shift, base size) of each stratum size in ``sizes``: head subset A with base size
    ``size - |A|`` in 0..top; returns (shifts, base sizes, stratum offsets)."""
    shifts, bases, offsets = [], [], [0]
    for size in sizes:
        chosen = (head_sizes <= size) & (size - head_sizes <= top)
        shifts.append(head_sums[chosen])
        bases.append(size - head_sizes[chosen])
        offsets.append(offsets[-1] + int(chosen.sum()))
    return np.concatenate(shifts), np.concatenate(bases), np.array(offsets, dtype=np.int64)


def _count_below_compiled(q: np.ndarray, k: int, ts: list[int]) -> list[int]:
    """The compiled count (see the module docstring): strata of runs, counted in parallel windows."""
    if ts[-1] - ts[0] > 2**61:  # thresholds far apart (one of them clipped): a window spans both, one each
        return [_count_below_compiled(q, k, [t])[0] for t in ts]
    half = q.size // 2
    if q.size >= 32:  # the kernels release the GIL: both halves at once (for small halves threads cost more)
        with ThreadPoolExecutor(2) as pool:
            halves = list(pool.map(_half, (q[:half], q[half:]), (k, k)))
    else:
        halves = [_half(q[:half], k), _half(q[half:], k)]
    (lbase, loff, lhead, lhsize), (rbase, roff, rhead, rhsize) = halves
    _kernels = compiled_kernels()
    strata = range(max(0, k - (q.size - half)), min(k, half) + 1)  # left subset sizes j
    lshift, lsize, lrun = _runs(lhead, lhsize, loff.size - 2, strata)
    rshift, rsize, rrun = _runs(rhead, rhsize, roff.size - 2, range(k - strata.start, k - strata.stop, -1))
    step = max(1, _kernels.WINDOW // 512)
    tasks = []
    for s in range(len(strata)):
        if lrun[s] == lrun[s + 1] or rrun[s] == rrun[s + 1]:
            continue
        bounds = _kernels.plan_windows(
            lbase, loff, lshift, lsize, lrun[s], lrun[s + 1],
            rbase, roff, rshift, rsize, rrun[s], rrun[s + 1], ts[0], step, _kernels.WINDOW,
        )
        tasks.append(np.column_stack([np.full(bounds.size - 1, s), bounds[:-1], bounds[1:]]))
    if not tasks:
        return [0] * len(ts)
    # a fixed shuffle spreads large and small windows evenly over the threads (sums do not depend on it)
    plan = np.concatenate(tasks)[np.random.default_rng(0).permutation(sum(len(t) for t in tasks))]
    counts = _kernels.count_windows(
        lbase, loff, lshift, lsize, lrun, rbase, roff, rshift, rsize, rrun,
        np.ascontiguousarray(plan[:, 0]), np.ascontiguousarray(plan[:, 1]), np.ascontiguousarray(plan[:, 2]),
        np.array(ts, dtype=np.int64),
    )
    return [int(c) for c in counts.sum(axis=0, dtype=np.int64)]


# --- the algorithm before the compiled kernels, kept as a reference for tests and the benchmark ------


@dataclass(frozen=True)
class _Thresholds:
    """Floating-point subset-sum thresholds for the three alternatives, tolerance applied.

    ``greater`` counts Σ_S ≥ ge and ``less`` counts Σ_S ≤ le. The two-sided count is the near tail (the
    one-sided count on the observed side of the null centre) plus the far tail beyond the mirror image of
    the observed sum: Σ_S ≤ far when the observed sum lies above the centre (``far_is_upper`` False),
    Σ_S ≥ far when below. ``all_two_sided``: the observed |D| is within rounding of 0, so every
    partition is at least as extreme.
    """

    ge: float
    le: float
    far: float
    far_is_upper: bool
    all_two_sided: bool

    def mirrored(self, total: float) -> "_Thresholds":
        """Thresholds for the complement subsets: Σ_C = total - Σ_S."""
        far = total - self.far
        return _Thresholds(total - self.le, total - self.ge, far, not self.far_is_upper, self.all_two_sided)


def _thresholds(observed: float, total: float, k: int, m: int, tol: float) -> _Thresholds:
    # D(S) = Σ_S / k - (total - Σ_S) / m is 0 at the centre Σ_S = total k / (k + m); the partitions with
    # |D(S)| ≥ |D_obs| are those on the observed side beyond Σ_obs and those beyond its mirror image.
    centre = total * k / (k + m)
    mirror = 2.0 * centre - observed
    above = observed >= centre
    return _Thresholds(
        ge=observed - tol,
        le=observed + tol,
        far=mirror + tol if above else mirror - tol,
        far_is_upper=not above,
        all_two_sided=abs(observed - centre) <= tol,
    )


def _count_exact_reference(first: np.ndarray, second: np.ndarray, atol: float = 0.0) -> dict[str, int]:
    """The exact counts of :func:`group_permutation_test` by the previous algorithm (floating-point sums,
    binary search over fully listed halves), for comparisons and ``bench/bench_stats.py``."""
    values = np.concatenate([first, second]).astype(np.float64)
    k, n = len(first), values.size
    tol = 4.0 * n * np.finfo(np.float64).eps * float(np.abs(values).sum()) + 2.0 * n * atol
    return _count_exact(values, k, _thresholds(float(values[:k].sum()), float(values.sum()), k, n - k, tol))


def _count_exact(values: np.ndarray, k: int, t: _Thresholds) -> dict[str, int]:
    """Exact counts of size-k subsets reaching each threshold (meet in the middle, floating point)."""
    n = values.size
    if k > n - k:
        c = _count_exact(values, n - k, t.mirrored(float(values.sum())))
        return {"greater": c["less"], "less": c["greater"], "two-sided": c["two-sided"]}
    half = n // 2
    left = _subset_sums_by_size(values[:half], k)
    right = _subset_sums_by_size(values[half:], k)
    ge = le = far = pairs = 0
    for j, lsums in enumerate(left):
        if not 0 <= k - j < len(right):
            continue
        rsums = right[k - j]
        pairs += lsums.size * rsums.size
        ascending = lsums[::-1]  # queries in ascending order let numpy's binary search reuse its position
        ge += lsums.size * rsums.size - int(np.searchsorted(rsums, t.ge - ascending, side="left").sum())
        le += int(np.searchsorted(rsums, t.le - ascending, side="right").sum())
        if t.all_two_sided:
            continue
        if t.far_is_upper:
            far += lsums.size * rsums.size - int(np.searchsorted(rsums, t.far - ascending, side="left").sum())
        else:
            far += int(np.searchsorted(rsums, t.far - ascending, side="right").sum())
    near = le if t.far_is_upper else ge
    two = pairs if t.all_two_sided else min(pairs, near + far)
    return {"greater": ge, "less": le, "two-sided": two}
