"""Monte Carlo counts of a two-group permutation test (:mod:`eatkit.stats.permutation`): random partitions
drawn reproducibly on any number of threads.

Monte Carlo draws partitions uniformly, without replacement within a draw (a partial Fisher-Yates
shuffle of the indices; draw d's random numbers are a counter-based hash, splitmix64, of the run's key
and d, so blocks of draws run on any number of threads with identical results, and the numpy fallback
reproduces the compiled counts), and reports ``(count + 1) / (draws + 1)`` (the observed partition
counted as a draw; Phipson & Smyth 2010) with its Monte Carlo standard error. Each index is drawn as
``i + ⌊u (n - i) / 2^32⌋`` from a 32-bit u: a bias below n / 2^32 (1.5e-8 for n = 64) per index.
Cost: for 25 + 25 about 70 ns a draw on one core of the development machine (35 ns on two), most of it
the 25 dependent swaps and the 13 hashes; with one column the compiled kernel shuffles the values
themselves rather than indices into them.
"""

from __future__ import annotations

import numpy as np

from eatkit.errors import EatkitError
from eatkit.progress import activity
from eatkit.stats.cost import duration
from eatkit.stats.exact_counts import IntThresholds, compiled, compiled_kernels, stored_count

#: draws per Monte Carlo block (scheduling only: a draw's random numbers depend on its index alone)
MC_BATCH = 1 << 12
#: Monte Carlo cost per shuffled position and column (seconds of one core; 25 + 25, one column: about 70 ns
#: a draw) and per position of the numpy fallback; :func:`check_monte_carlo_feasible` refuses more than
#: ``MC_MAX_SECONDS`` of estimated time before any draw, as :func:`check_exact_feasible` does for counting
MC_SECONDS_PER_STEP = 1.5e-9
NUMPY_MC_SECONDS_PER_STEP = 15e-9
MC_MAX_SECONDS = 3600.0
#: shuffled positions per call of the compiled kernel (about a tenth of a second): between calls Python
#: sees a Ctrl-C, so a long Monte Carlo test stops promptly; the counts do not depend on the chunking
MC_CHUNK_STEPS = 1 << 26
#: Monte Carlo tests of at most this many shuffled positions (draws x positions x (1 + columns)) are drawn
#: by numpy (under a second: the default 10^5 draws of a WEAT-sized test), so that a run never waits for the
#: compiled Monte Carlo kernel's first compilation (about a minute on the 2-core machine) for them; the
#: draws and counts are the same either way
NUMPY_MC_FIRST_STEPS = 1 << 23


def check_monte_carlo_feasible(k: int, m: int, draws: int, columns: int = 1) -> float:
    """The estimated seconds of ``draws`` random partitions of ``k`` + ``m`` values (``columns`` statistics
    at once); an :class:`EatkitError` saying the estimate when it exceeds ``MC_MAX_SECONDS``. Called
    before any draw (a number of draws at least the number of partitions is counted exactly instead).

    Examples
    --------
    >>> check_monte_carlo_feasible(8, 8, 10_000) < 1
    True
    >>> check_monte_carlo_feasible(25, 25, 10**12)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: 1e+12 Monte Carlo permutations of 25 + 25 values would take about ...
    """
    steps = float(draws) * min(k, m) * (1 + columns)
    if steps > NUMPY_MC_FIRST_STEPS and compiled():
        seconds = steps * MC_SECONDS_PER_STEP / compiled_kernels().threads()
    else:
        seconds = steps * NUMPY_MC_SECONDS_PER_STEP
    if seconds > MC_MAX_SECONDS:
        raise EatkitError(
            f"{draws:.3g} Monte Carlo permutations of {k} + {m} values would take about {duration(seconds)} "
            f"(limit {duration(MC_MAX_SECONDS)}); pass fewer permutations (10^5 to 10^6 give p to about "
            "three digits)"
        )
    return seconds


def random_subsets(n: int, r: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` uniformly random size-``r`` subsets of ``range(n)``, as a (draws, r) index array.

    Vectorised partial Fisher-Yates: for position i = 0..r-1, swap column i with a uniform column in
    [i, n) (each draw is without replacement).
    """
    perm = np.tile(np.arange(n, dtype=np.int8 if n < 2**7 else np.int16 if n < 2**15 else np.int64), (draws, 1))
    rows = np.arange(draws)
    for i in range(r):
        j = rng.integers(i, n, size=draws)
        swapped = perm[rows, j]
        perm[rows, j] = perm[:, i]
        perm[:, i] = swapped
    return perm[:, :r]


def monte_carlo_counts(
    ints: np.ndarray, k: int, draws: int, key: int, thresholds: list[IntThresholds]
) -> list[dict[str, int]]:
    """Counts, per column of ``ints`` (n, q) int64, of ``draws`` uniformly random size-k row subsets
    (each drawn without replacement) reaching the column's thresholds. Only r = min(k, n - k) positions
    are shuffled; when the complement is the smaller side its sum is subtracted from the total."""
    n = ints.shape[0]
    r = min(k, n - k)
    lower = np.array([t.bounds()[0] for t in thresholds], dtype=np.int64).reshape(-1, 3)
    upper = np.array([t.bounds()[1] for t in thresholds], dtype=np.int64).reshape(-1, 3)
    values = np.ascontiguousarray(ints, dtype=np.int64)
    with activity(f"{draws} random partitions of {k} + {n - k} values"):
        table = stored_count("monte-carlo", [values, lower, upper], [k, draws, key],
                        lambda: _monte_carlo_table(values, k, r, draws, key, lower, upper))
    return [dict(zip(("greater", "less", "two-sided"), row)) for row in table]


def _monte_carlo_table(values: np.ndarray, k: int, r: int, draws: int, key: int, lower: np.ndarray,
                       upper: np.ndarray) -> list[list[int]]:
    """The counts of :func:`monte_carlo_counts` as rows of ints (the compiled kernel, or numpy for at most
    ``NUMPY_MC_FIRST_STEPS`` shuffled positions: the same counts)."""
    if draws * r * (1 + values.shape[1]) > NUMPY_MC_FIRST_STEPS and compiled():
        # in chunks of draws, each with the key shifted to its first draw (draw d's numbers are a hash
        # of key + d * ceil(r / 2)): the same counts as one call, and Ctrl-C is seen between chunks
        per = (r + 1) // 2
        chunk = max(MC_BATCH, MC_CHUNK_STEPS // max(r * max(values.shape[1], 1), 1) // MC_BATCH * MC_BATCH)
        counts = np.zeros(lower.shape, dtype=np.int64)
        for start in range(0, draws, chunk):
            shifted = (key + start * per + 2**63) % 2**64 - 2**63  # as int64: the kernel's uint64 wraps
            counts += compiled_kernels().monte_carlo(values, r, r != k, shifted, min(chunk, draws - start), MC_BATCH,
                                           lower, upper)
    else:
        counts = _monte_carlo_numpy(values, r, r != k, key, draws, lower, upper)
    return [[int(c) for c in row] for row in counts]


def _splitmix(x: np.ndarray) -> np.ndarray:
    """splitmix64's output function of ``x`` times the golden ratio (uint64 arrays; wraps like the kernel)."""
    z = x * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _monte_carlo_numpy(
    values: np.ndarray, r: int, complement: bool, key: int, draws: int, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """The numpy version of :func:`eatkit.stats._kernels.monte_carlo` (same draws, same counts),
    vectorised over blocks of draws."""
    n = values.shape[0]
    counts = np.zeros(lower.shape, dtype=np.int64)
    totals = values.sum(axis=0)
    halves = np.arange(1, (r + 1) // 2 + 1, dtype=np.uint64)
    spans = (n - np.arange(r)).astype(np.uint64)
    for start in range(0, draws, MC_BATCH):
        d = np.arange(start, min(draws, start + MC_BATCH), dtype=np.uint64)
        u = _splitmix(np.uint64(key) + d[:, np.newaxis] * np.uint64(halves.size) + halves)
        # position i takes the high (even i) or low (odd i) 32 bits of hash i // 2
        bits = np.stack([u >> np.uint64(32), u & np.uint64(0xFFFFFFFF)], axis=2).reshape(d.size, -1)[:, :r]
        js = np.arange(r) + ((bits * spans) >> np.uint64(32)).astype(np.int64)
        # the draws' positions as an (n, m) table, flat: position i of every draw is one contiguous row
        m = d.size
        perm = np.repeat(np.arange(n), m)
        flat = js.T * m + np.arange(m)
        for i in range(r):
            swapped = perm[flat[i]]
            perm[flat[i]] = perm[i * m:(i + 1) * m]
            perm[i * m:(i + 1) * m] = swapped
        sums = values[perm[: r * m].reshape(r, m)].sum(axis=0)  # (draws, q)
        if complement:
            sums = totals - sums
        counts += ((sums[:, :, None] >= lower) | (sums[:, :, None] <= upper)).sum(axis=0)
    return counts
