"""Compiled (numba) kernels of :mod:`eatkit.stats.permutation`: exact subset-sum counting and Monte Carlo.

Optional: importing this module without numba installed sets ``AVAILABLE = False`` and the callers use
their pure-numpy reference implementations, which give identical counts (every kernel here works on
int64 sums, so neither the summation order nor the number of threads changes a result).

The algorithm and its cost are described in :mod:`eatkit.stats.permutation`.
"""

from __future__ import annotations

import numpy as np

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover - exercised on installs without the "fast" extra
    AVAILABLE = False
else:
    AVAILABLE = True

#: sums of one side per parallel task (a range of one stratum)
WINDOW = 1 << 21
#: sums of one side per window inside a task (fits the per-core cache with its bucket index)
SUB = 1 << 14
#: a bucket of the window index holding more sums than this (tied inputs) is sorted and binary-searched
_SCAN = 16


def threads() -> int:
    """Threads the kernels use (numba's setting; 1 without numba)."""
    return numba.get_num_threads() if AVAILABLE else 1


if AVAILABLE:

    @njit(cache=True, nogil=True)
    def subset_sums_by_size(values, kmax):
        """Sorted sums of the subsets of ``values`` (int64) of each size 0..kmax, concatenated by size:
        (sums, offsets) with the sums of size x in ``sums[offsets[x]:offsets[x + 1]]``.

        Built one value at a time: a subset of size x either skips the value or adds it to one of size
        x - 1; both lists are sorted, so the new list is their linear merge (2^(n+1) steps in all)."""
        n = values.size
        top = min(n, kmax)
        lists = [np.zeros(1, dtype=np.int64)]
        for i in range(n):
            v = values[i]
            grown = [lists[0]]
            for x in range(1, min(len(lists), top) + 1):
                added = lists[x - 1]
                if x == len(lists):
                    grown.append(added + v)
                    continue
                kept = lists[x]
                na, nb = kept.size, added.size
                out = np.empty(na + nb, dtype=np.int64)
                a = b = o = 0
                while a < na and b < nb:  # branch-free step: the smaller head moves (a select, not a jump)
                    head, other = kept[a], added[b] + v
                    take = head <= other
                    out[o] = head if take else other
                    a += take
                    b += 1 - take
                    o += 1
                out[o:o + na - a] = kept[a:]
                out[o + na - a:] = added[b:] + v
                grown.append(out)
            lists = grown
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        for x in range(len(lists)):
            offsets[x + 1] = offsets[x] + lists[x].size
        sums = np.empty(offsets[-1], dtype=np.int64)
        for x in range(len(lists)):
            sums[offsets[x]:offsets[x + 1]] = lists[x]
        return sums, offsets

    @njit(cache=True, nogil=True)
    def _seek(run, idx, bound):
        """The number of elements of the sorted ``run`` below ``bound``, walking from ``idx`` (a nearby
        answer): linear in the distance, so consecutive windows cost their own elements only."""
        while idx < run.size and run[idx] < bound:
            idx += 1
        while idx > 0 and run[idx - 1] >= bound:
            idx -= 1
        return idx

    @njit(cache=True, nogil=True)
    def _bucket_index(base, offsets, shifts, sizes, r0, starts, ends, nruns, lo, width, count):
        """The elements ``starts[r]:ends[r]`` of runs r0.. (all in [lo, lo + width)) grouped by bucket
        ``(v - lo) >> shift``, one to two buckets per element: (values - lo, first, shift) with bucket k's
        elements in ``values[first[k]:first[k + 1]]`` (a counting sort: a histogram pass and a scatter pass;
        int32 bucket bounds keep the index in the core's cache).
        A bucket holding more than ``_SCAN`` elements (tied inputs) is sorted, for binary search."""
        bits = 1  # about two buckets per element: most hold at most two
        while (1 << bits) <= count:
            bits += 1
        wbits = 0
        while wbits < 62 and (np.int64(1) << wbits) < width:
            wbits += 1
        shift = max(0, wbits - bits)
        nb = ((width - 1) >> shift) + 1
        first = np.zeros(nb + 1, dtype=np.int32)
        for r in range(nruns):
            run = base[offsets[sizes[r0 + r]]:offsets[sizes[r0 + r] + 1]]
            s = shifts[r0 + r] - lo
            for i in range(starts[r], ends[r]):
                first[((run[i] + s) >> shift) + 1] += 1
        fullest = 0
        for b in range(1, nb + 1):
            fullest = max(fullest, first[b])
            first[b] += first[b - 1]
        fill = first[:nb].copy()
        values = np.empty(count + 2, dtype=np.int64)  # two spare slots: a bucket is read two at a time
        values[count:] = 0
        for r in range(nruns):
            run = base[offsets[sizes[r0 + r]]:offsets[sizes[r0 + r] + 1]]
            s = shifts[r0 + r] - lo
            for i in range(starts[r], ends[r]):
                v = run[i] + s
                key = v >> shift
                values[fill[key]] = v
                fill[key] += 1
        if fullest > _SCAN:
            for b in range(nb):
                if first[b + 1] - first[b] > _SCAN:
                    values[first[b]:first[b + 1]].sort()
        return values, first, shift

    @njit(cache=True, nogil=True, inline="always")
    def _below(values, first, shift, x):
        """#{v in the bucket index : v < x}, for 0 <= x < width (relative to the index's lo)."""
        key = x >> shift
        a, e = first[key], first[key + 1]
        if e - a > _SCAN:
            return a + np.searchsorted(values[a:e], x)
        c = a
        for i in range(a, e):
            c += values[i] < x
        return c

    @njit(cache=True, nogil=True, parallel=True)
    def count_windows(lbase, loff, lshift, lsize, lrun, rbase, roff, rshift, rsize, rrun, tstratum, tlo, thi, ts):
        """Pairs (left sum a, right sum b) of each task's stratum with a + b < t, for every threshold t
        in ``ts`` (ascending, close together), and a in the task's range [tlo, thi).

        Stratum s pairs the left runs lrun[s]..lrun[s+1]-1 with the right runs rrun[s]..rrun[s+1]-1. The
        task's range is cut into windows [u, w) of about ``SUB`` sums (cache-sized); the right sums
        b < ts[0] - w + 1 pair with every a of the window, and those in [ts[0] - w + 1, ts[-1] - u) are
        grouped by value into buckets of about one sum (:func:`_bucket_index`), so that each left sum a
        of the window, read in place from its run, counts the right sums below t - a by one bucket
        look-up and a scan of that bucket. Each run's slice bounds are walked on from the previous
        window's."""
        ntasks, nt = tstratum.size, ts.size  # one or two thresholds (more are not counted)
        t0, t1 = ts[0], ts[nt - 1]
        counts = np.zeros((ntasks, nt), dtype=np.int64)
        for task in prange(ntasks):
            s = tstratum[task]
            ulo, uhi = tlo[task], thi[task]
            l0, l1, r0, r1 = lrun[s], lrun[s + 1], rrun[s], rrun[s + 1]
            lstart = np.empty(l1 - l0, dtype=np.int64)
            lend = np.empty(l1 - l0, dtype=np.int64)
            rstart = np.empty(r1 - r0, dtype=np.int64)
            rend = np.empty(r1 - r0, dtype=np.int64)
            nl = nr = 0
            for r in range(l0, l1):
                run = lbase[loff[lsize[r]]:loff[lsize[r] + 1]]
                lstart[r - l0] = np.searchsorted(run, ulo - lshift[r])
                nl += np.searchsorted(run, uhi - lshift[r]) - lstart[r - l0]
            for r in range(r0, r1):
                run = rbase[roff[rsize[r]]:roff[rsize[r] + 1]]
                rend[r - r0] = np.searchsorted(run, t1 - ulo - rshift[r])
                nr += rend[r - r0] - np.searchsorted(run, t0 - uhi + 1 - rshift[r])
            pieces = min(max(nl, nr) // SUB + 1, uhi - ulo)
            step = (uhi - ulo) // pieces
            acc = np.zeros(nt, dtype=np.int64)
            for piece in range(pieces):
                u = ulo + step * piece
                w = uhi if piece == pieces - 1 else u + step
                wl = 0
                for r in range(l0, l1):
                    run = lbase[loff[lsize[r]]:loff[lsize[r] + 1]]
                    lend[r - l0] = _seek(run, lstart[r - l0], w - lshift[r])
                    wl += lend[r - l0] - lstart[r - l0]
                wr = below = 0
                for r in range(r0, r1):
                    run = rbase[roff[rsize[r]]:roff[rsize[r] + 1]]
                    rstart[r - r0] = _seek(run, rend[r - r0], t0 - w + 1 - rshift[r])
                    wr += rend[r - r0] - rstart[r - r0]
                    below += rstart[r - r0]
                acc += wl * below
                if wl > 0 and wr > 0 and l1 - l0 == 1 and r1 - r0 == 1:
                    # one run a side (a half of at most 20 values): both slices are sorted, two pointers
                    lr = lbase[loff[lsize[l0]]:loff[lsize[l0] + 1]]
                    rr = rbase[roff[rsize[r0]]:roff[rsize[r0] + 1]]
                    d0, d1 = t0 - lshift[l0] - rshift[r0], t1 - lshift[l0] - rshift[r0]
                    p0 = p1 = rend[0]
                    c0 = c1 = 0
                    for i in range(lstart[0], lend[0]):
                        while p0 > rstart[0] and rr[p0 - 1] >= d0 - lr[i]:
                            p0 -= 1
                        while p1 > rstart[0] and rr[p1 - 1] >= d1 - lr[i]:
                            p1 -= 1
                        c0 += p0 - rstart[0]
                        c1 += p1 - rstart[0]
                    acc[0] += c0
                    if nt > 1:
                        acc[1] += c1
                elif wl > 0 and wr > 0:
                    rlo = t0 - w + 1
                    values, first, shift = _bucket_index(rbase, roff, rshift, rsize, r0, rstart, rend, r1 - r0,
                                                         rlo, t1 - u - rlo + 1, wr)
                    c0 = c1 = 0
                    for r in range(l0, l1):
                        run = lbase[loff[lsize[r]]:loff[lsize[r] + 1]]
                        d0, d1 = t0 - lshift[r] - rlo, t1 - lshift[r] - rlo  # queries relative to rlo
                        for i in range(lstart[r - l0], lend[r - l0]):
                            x0, x1 = d0 - run[i], d1 - run[i]
                            key = x0 >> shift
                            a, e = first[key], first[key + 1]
                            if e - a <= 2 and (x1 >> shift) == key:  # the common case, without branches
                                v0, v1 = values[a], values[a + 1]
                                m0, m1 = a < e, a + 1 < e
                                c0 += a + ((m0) & (v0 < x0)) + ((m1) & (v1 < x0))
                                c1 += a + ((m0) & (v0 < x1)) + ((m1) & (v1 < x1))
                            else:
                                c0 += _below(values, first, shift, x0)
                                c1 += _below(values, first, shift, x1)
                    acc[0] += c0
                    if nt > 1:
                        acc[1] += c1
                for r in range(l0, l1):
                    lstart[r - l0] = lend[r - l0]
                for r in range(r0, r1):
                    run = rbase[roff[rsize[r]]:roff[rsize[r] + 1]]
                    rend[r - r0] = _seek(run, rstart[r - r0], t1 - w - rshift[r])
            counts[task, :] = acc
        return counts

    @njit(cache=True, nogil=True)
    def plan_windows(lbase, loff, lshift, lsize, l0, l1, rbase, roff, rshift, rsize, r0, r1, t0, step, window):
        """Window bounds for one stratum such that each window holds about ``window`` sums of each side:
        every ``step``-th sum of every run (the right ones mapped to the left axis as t0 + 1 - b) is
        sorted, and a bound is cut whenever either side's sampled count reaches the window."""
        lo = np.int64(2**62)
        hi = -lo
        nsamples = 0
        for r in range(l0, l1):
            run = lbase[loff[lsize[r]]:loff[lsize[r] + 1]]
            lo = min(lo, run[0] + lshift[r])
            hi = max(hi, run[-1] + lshift[r])
            nsamples += (run.size + step - 1) // step
        for r in range(r0, r1):
            run = rbase[roff[rsize[r]]:roff[rsize[r] + 1]]
            nsamples += (run.size + step - 1) // step
        points = np.empty(nsamples, dtype=np.int64)
        side = np.empty(nsamples, dtype=np.int8)
        o = 0
        for r in range(l0, l1):
            run = lbase[loff[lsize[r]]:loff[lsize[r] + 1]]
            for i in range(0, run.size, step):
                points[o], side[o] = run[i] + lshift[r], 0
                o += 1
        for r in range(r0, r1):
            run = rbase[roff[rsize[r]]:roff[rsize[r] + 1]]
            for i in range(0, run.size, step):
                points[o], side[o] = t0 + 1 - (run[i] + rshift[r]), 1
                o += 1
        order = np.argsort(points)
        bounds = [lo]
        seen = np.zeros(2, dtype=np.int64)
        for i in order:
            seen[side[i]] += step
            if seen[0] >= window or seen[1] >= window:
                if bounds[-1] < points[i] <= hi:
                    bounds.append(points[i])
                seen[:] = 0
        bounds.append(hi + 1)
        return np.array(bounds, dtype=np.int64)

    @njit(cache=True, nogil=True)
    def _splitmix(x):
        """splitmix64's output function (Steele, Lea & Flood 2014) of the counter x times the golden ratio."""
        z = x * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    @njit(cache=True, nogil=True, inline="always")
    def _position(bits, i, n):
        """Fisher-Yates step i's partner: i + floor(bits (n - i) / 2^32) for 32 random bits."""
        return i + np.int64((bits * np.uint64(n - i)) >> np.uint64(32))

    @njit(cache=True, nogil=True, parallel=True)
    def monte_carlo(values, r, complement, key, draws, block, lower, upper):
        """Counts of random size-r row subsets (or their complements) of ``values`` (n, q) int64 whose
        column sums are >= ``lower[c, i]`` or <= ``upper[c, i]`` (one count per column c and test i).

        Draw d is a partial Fisher-Yates shuffle of 0..n-1 from the identity, position i swapped with
        i + floor(u (n - i) / 2^32), u the 32-bit halves (high first) of splitmix64(key + d * ceil(r / 2)
        + h + 1) for steps 2h and 2h + 1: a function of (key, d) alone, so blocks of draws run on any
        thread in any order. Position i is final after step i and never read again, so it is not written;
        with one column the shuffled array holds the values themselves (no index look-up)."""
        n, q = values.shape
        nl = lower.shape[1]
        nblocks = (draws + block - 1) // block
        totals = values.sum(axis=0)
        counts = np.zeros((nblocks, q, nl), dtype=np.int64)
        per = np.uint64((r + 1) // 2)
        low = np.uint64(0xFFFFFFFF)
        column = np.ascontiguousarray(values[:, 0]) if q else np.zeros(n, dtype=np.int64)  # one-column path
        for bi in prange(nblocks):
            perm = np.empty(n, dtype=np.int64)
            sums = np.empty(q, dtype=np.int64)
            hits = np.zeros((q, nl), dtype=np.int64)
            for d in range(bi * block, min(draws, (bi + 1) * block)):
                base = np.uint64(key) + np.uint64(d) * per
                if q == 1:
                    for i in range(n):
                        perm[i] = column[i]
                    s0 = np.int64(0)
                    for h in range(r // 2):
                        u = _splitmix(base + np.uint64(h + 1))
                        j = _position(u >> np.uint64(32), 2 * h, n)
                        s0 += perm[j]
                        perm[j] = perm[2 * h]
                        j = _position(u & low, 2 * h + 1, n)
                        s0 += perm[j]
                        perm[j] = perm[2 * h + 1]
                    if r % 2:
                        s0 += perm[_position(_splitmix(base + per) >> np.uint64(32), r - 1, n)]
                    sums[0] = s0
                else:
                    for i in range(n):
                        perm[i] = i
                    sums[:] = 0
                    u = np.uint64(0)
                    for i in range(r):
                        if i % 2 == 0:
                            u = _splitmix(base + np.uint64(i // 2 + 1))
                        j = _position(u >> np.uint64(32) if i % 2 == 0 else u & low, i, n)
                        pick = perm[j]
                        perm[j] = perm[i]
                        for c in range(q):
                            sums[c] += values[pick, c]
                for c in range(q):
                    s = totals[c] - sums[c] if complement else sums[c]
                    for i in range(nl):
                        hits[c, i] += (s >= lower[c, i]) | (s <= upper[c, i])
            counts[bi] = hits
        return counts.sum(axis=0)
