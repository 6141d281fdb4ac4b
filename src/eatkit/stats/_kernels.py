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
#: sums of a bucket that a query compares without a branch (a fuller bucket sends its block the slow way);
#: ``_block`` reads exactly this many
SLOTS = 4
#: queries answered per branch-free block
BLOCK = 8


def threads() -> int:
    """Threads the kernels use (numba's setting; 1 without numba)."""
    return numba.get_num_threads() if AVAILABLE else 1


if AVAILABLE:

    @njit(cache=True, nogil=True)
    def subset_sums_by_size(values, kmax):
        """Sorted sums of the subsets of ``values`` (int64) of each size 0..kmax, concatenated by size:
        (sums, offsets) with the sums of size x in ``sums[offsets[x]:offsets[x + 1]]``.

        Built one value at a time: a subset of size x either skips the value or adds it to one of size
        x - 1; both lists are sorted, so the new list is their linear merge (2^(n+1) steps in all). Each
        size's list grows in place in its final slot of ``sums``, merged from the back, sizes taken
        downwards (so size x - 1 is still the old list): no other memory, none allocated per step."""
        n = values.size
        top = min(n, kmax)
        offsets = np.zeros(top + 2, dtype=np.int64)
        size = 1  # C(n, x), by the recurrence C(n, x + 1) = C(n, x) (n - x) / (x + 1)
        for x in range(top + 1):
            offsets[x + 1] = offsets[x] + size
            size = size * (n - x) // (x + 1)
        sums = np.empty(offsets[-1], dtype=np.int64)
        sums[0] = 0
        lengths = np.zeros(top + 1, dtype=np.int64)
        lengths[0] = 1
        for i in range(n):
            v = values[i]
            for x in range(min(i + 1, top), 0, -1):  # downwards: size x - 1 is still the old list
                lo, la, lb = offsets[x], lengths[x], lengths[x - 1]
                added = sums[offsets[x - 1]:offsets[x - 1] + lb]
                a, b, o = la - 1, lb - 1, lo + la + lb - 1
                while b >= 0:  # merged from the back, in place: once b is done the rest is where it was
                    other, head = added[b] + v, sums[lo + max(a, 0)]
                    take = a >= 0 and head > other
                    sums[o] = head if take else other
                    a -= take
                    b -= 1 - take
                    o -= 1
                lengths[x] = la + lb
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
    def _bucket_index(base, offsets, shifts, sizes, r0, starts, ends, nruns, lo, width, count, vbuf, fbuf):
        """The elements ``starts[r]:ends[r]`` of runs r0.. (all in [lo, lo + width)) grouped by bucket
        ``(v - lo) >> shift``, half a sum to two sums a bucket, by a counting sort (a histogram pass and a
        scatter pass; int32 bucket bounds keep the index in the core's cache).

        Returns (values, first, shift, vbuf, fbuf): bucket k's elements (minus lo) are
        ``values[first[k]:first[k + 1]]``, followed by ``SLOTS`` slots holding the largest int64, so that
        the ``SLOTS`` values read from a bucket's start are that bucket's values and then only values above
        every query of that bucket. ``values`` and ``first`` are the starts of the buffers ``vbuf`` and
        ``fbuf``, grown when too small: a task reuses them from window to window (at 32 + 32 about a tenth
        faster than allocating each window's). A bucket of more than ``_SCAN`` elements (tied inputs) is
        sorted, for binary search.

        Both passes load four elements before they store: on the development machine's CPU a load waits
        for every earlier store whose address is not yet known, so a store whose address comes from the
        load just before it costs about 3 ns, and about 1 ns when four addresses are known at once."""
        bits = 1
        while (1 << bits) <= count:
            bits += 1
        wbits = 0
        while wbits < 62 and (np.int64(1) << wbits) < width:
            wbits += 1
        shift = max(0, wbits - bits)
        nb = ((width - 1) >> shift) + 1
        # bucket k is counted in first[k + 2]; after the running sums first[k + 1] is its start, the
        # scatter's cursor, which leaves it at the bucket's end: first[k] is then bucket k's start
        if fbuf.size < nb + 2:
            fbuf = np.empty(2 * (nb + 2), dtype=np.int32)
        if vbuf.size < count + SLOTS:
            vbuf = np.empty(2 * (count + SLOTS), dtype=np.int64)
        first = fbuf[:nb + 2]
        first[:] = 0
        ush, one, two = np.uint64(shift), np.uint64(1), np.uint64(2)  # unsigned: no wrap-around test
        for r in range(nruns):
            run = base[offsets[sizes[r0 + r]]:offsets[sizes[r0 + r] + 1]]
            s = shifts[r0 + r] - lo
            i, e = starts[r], ends[r]
            while i + 4 <= e:
                k0, k1 = (np.uint64(run[i] + s) >> ush) + two, (np.uint64(run[i + 1] + s) >> ush) + two
                k2, k3 = (np.uint64(run[i + 2] + s) >> ush) + two, (np.uint64(run[i + 3] + s) >> ush) + two
                first[k0] += 1
                first[k1] += 1
                first[k2] += 1
                first[k3] += 1
                i += 4
            for j in range(i, e):
                first[((run[j] + s) >> shift) + 2] += 1
        fullest = np.int32(0)
        for b in range(2, nb + 2):  # apart from the running sums, so that this loop is vectorised
            fullest = max(fullest, first[b])
        total = np.int32(0)
        for b in range(np.uint64(2), np.uint64(nb + 2)):
            total += first[b]
            first[b] = total
        fill = first[1:]
        values = vbuf[:count + SLOTS]
        values[count:] = np.iinfo(np.int64).max
        for r in range(nruns):
            run = base[offsets[sizes[r0 + r]]:offsets[sizes[r0 + r] + 1]]
            s = shifts[r0 + r] - lo
            i, e = starts[r], ends[r]
            while i + 4 <= e:  # four at once; equal keys among the four take consecutive places
                v0, v1, v2, v3 = run[i] + s, run[i + 1] + s, run[i + 2] + s, run[i + 3] + s
                k0, k1 = np.uint64(v0) >> ush, np.uint64(v1) >> ush
                k2, k3 = np.uint64(v2) >> ush, np.uint64(v3) >> ush
                p0, p1 = np.uint64(fill[k0]), np.uint64(fill[k1])
                p2, p3 = np.uint64(fill[k2]), np.uint64(fill[k3])
                p1 += np.uint64(k1 == k0)
                p2 += np.uint64((k2 == k0) + (k2 == k1))
                p3 += np.uint64((k3 == k0) + (k3 == k1) + (k3 == k2))
                values[p0] = v0
                values[p1] = v1
                values[p2] = v2
                values[p3] = v3
                fill[k0] = p0 + one  # in order: the last of equal keys leaves the largest place
                fill[k1] = p1 + one
                fill[k2] = p2 + one
                fill[k3] = p3 + one
                i += 4
            for j in range(i, e):
                v = run[j] + s
                key = v >> shift
                values[fill[key]] = v
                fill[key] += 1
        if fullest > _SCAN:
            for b in range(nb):
                if first[b + 1] - first[b] > _SCAN:
                    values[first[b]:first[b + 1]].sort()
        return values, first, shift, vbuf, fbuf

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

    @njit(cache=True, nogil=True, inline="always")
    def _block(run, i, stop, values, first, sh, d0, d1):
        """#{v < x0} and #{v < x1} in the bucket index summed over x0 = d0 - run[j], x1 = d1 - run[j],
        j in [i, stop), with the number of queries these sums may miss (0: they are exact).

        Each query reads its bucket's bound and the ``SLOTS`` values from there (values past the bucket
        are above the query, see :func:`_bucket_index`); a query whose bucket holds more, or whose x1
        lies in a later bucket, is counted as missed. No branch and no store: the loop is vectorised.
        Indices are unsigned, which spares the negative-index wrap-around (0 <= x0 <= x1 < width)."""
        b0 = b1 = missed = 0
        one, two, three = np.uint64(1), np.uint64(2), np.uint64(3)
        for j in range(np.uint64(i), np.uint64(stop)):
            x0, x1 = d0 - run[j], d1 - run[j]
            key = np.uint64(x0) >> sh
            a, e = first[key], first[key + one]
            u = np.uint64(a)
            v0, v1, v2, v3 = values[u], values[u + one], values[u + two], values[u + three]
            b0 += a + (v0 < x0) + (v1 < x0) + (v2 < x0) + (v3 < x0)
            b1 += a + (v0 < x1) + (v1 < x1) + (v2 < x1) + (v3 < x1)
            missed += (e - a > SLOTS) + ((np.uint64(x1) >> sh) != key)
        return b0, b1, missed

    @njit(cache=True, nogil=True, inline="always")
    def _two_pointers(lr, rr, lo, hi, rlo, rhi, d0, d1):
        """Pairs (lr[i], b) with lo <= i < hi and b among rr[rlo:rhi] (both sorted) with lr[i] + b < d0, and
        < d1: a pointer into the right run that only moves down as the left sums grow."""
        p0 = p1 = rhi
        c0 = c1 = 0
        for i in range(lo, hi):
            while p0 > rlo and rr[p0 - 1] >= d0 - lr[i]:
                p0 -= 1
            while p1 > rlo and rr[p1 - 1] >= d1 - lr[i]:
                p1 -= 1
            c0 += p0 - rlo
            c1 += p1 - rlo
        return c0, c1

    @njit(cache=True, nogil=True, inline="always")
    def _run_counts(run, i, stop, values, first, shift, d0, d1):
        """The bucketed right sums below d0 - a and d1 - a for each left sum a of run[i:stop], in blocks of
        ``BLOCK`` queries (:func:`_block`), a block with a query in a fuller bucket again query by query."""
        sh = np.uint64(shift)
        c0 = c1 = 0
        while i < stop:
            j = min(stop, i + BLOCK)
            b0, b1, missed = _block(run, i, j, values, first, sh, d0, d1)
            if missed:  # the block again, query by query
                b0 = b1 = 0
                for q in range(i, j):
                    b0 += _below(values, first, shift, d0 - run[q])
                    b1 += _below(values, first, shift, d1 - run[q])
            c0 += b0
            c1 += b1
            i = j
        return c0, c1

    @njit(cache=True, nogil=True, parallel=True)
    def count_windows(lbase, loff, lshift, lsize, lrun, rbase, roff, rshift, rsize, rrun, tstratum, tlo, thi, ts):
        """Pairs (left sum a, right sum b) of each task's stratum with a + b < t, for every threshold t
        in ``ts`` (ascending, close together), and a in the task's range [tlo, thi).

        Stratum s pairs the left runs lrun[s]..lrun[s+1]-1 with the right runs rrun[s]..rrun[s+1]-1. The
        task's range is cut into windows [u, w) of about ``SUB`` sums (cache-sized); the right sums
        b < ts[0] - w + 1 pair with every a of the window, and those in [ts[0] - w + 1, ts[-1] - u) are
        grouped by value into buckets of about one sum (:func:`_bucket_index`), so that each left sum a
        of the window, read in place from its run, counts the right sums below t - a by one bucket
        look-up and ``SLOTS`` comparisons, in branch-free blocks of ``BLOCK`` queries (:func:`_block`); a
        block with a query in a fuller bucket is counted again query by query (:func:`_below`). Each run's
        slice bounds are walked on from the previous window's."""
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
            vbuf = np.empty(0, dtype=np.int64)
            fbuf = np.empty(0, dtype=np.int32)
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
                    c0, c1 = _two_pointers(lr, rr, lstart[0], lend[0], rstart[0], rend[0], d0, d1)
                    acc[0] += c0
                    if nt > 1:
                        acc[1] += c1
                elif wl > 0 and wr > 0:
                    rlo = t0 - w + 1
                    values, first, shift, vbuf, fbuf = _bucket_index(
                        rbase, roff, rshift, rsize, r0, rstart, rend, r1 - r0, rlo, t1 - u - rlo + 1, wr, vbuf, fbuf)
                    c0 = c1 = 0
                    for r in range(l0, l1):
                        run = lbase[loff[lsize[r]]:loff[lsize[r] + 1]]
                        d0, d1 = t0 - lshift[r] - rlo, t1 - lshift[r] - rlo  # queries relative to rlo
                        b0, b1 = _run_counts(run, lstart[r - l0], lend[r - l0], values, first, shift, d0, d1)
                        c0 += b0
                        c1 += b1
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
