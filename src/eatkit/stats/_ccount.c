/* eatkit.stats._ccount: the exact meet-in-the-middle count of eatkit.stats.permutation, compiled.
 *
 * count_below(q, k, ts, threads, keep=False) -> list of int
 *     q: int64 buffer of n values (|sum| < 2^58), k <= n - k; ts: int64 buffer of ascending thresholds
 *     (|t| <= 2^62). Returns #{size-k subsets S of q : sum(S) < t} for each t, exactly. keep: the buffers
 *     stay allocated for the next count until release().
 *
 * The values are split into halves (q[:n/2], q[n/2:]); each half's subset sums of each size j are listed
 * and sorted by merges, one value at a time (adding v: L_j <- merge(L_j, L_(j-1) + v), out of place, in four
 * branch-free chains: see merge()), one half a thread. Only sizes j <= h/2 of a half of h values are built: the sums of size h - j are the half's
 * total minus those of size j, read in reverse. A size-k subset is a size-j subset of the left half plus a
 * size-(k - j) subset of the right one, so the count is, per stratum j, #{(a, b) in L_j x R_(k-j) : a + b < t}
 * (symmetric in the two lists): a walk over the longer list ascending with a pointer into the other that only
 * moves down (p = #{b < t - a}), over only the sums of the longer list whose pairs are neither all below
 * both thresholds nor all above (binary searches against the other list's ends), that range split between
 * threads, in blocks of sums counted against a window of the other list (see walk()); a nearby second
 * threshold is counted in the same walk. Every sum is an exact int64 (|a + b| < 2^58, |t - a| < 2^63); counts are at most
 * C(n, k) < 2^63.
 * Plain C and the CPython API (no numpy headers); the GIL is released while counting.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_SIZE 64 /* subset sizes listed (the memory allows far fewer sums) */
#define MAX_THREADS 64
/* sentinels: beyond every sum plus a value (|sum| < 2^58) and every threshold minus a sum (|t| <= 2^62),
 * also as a half's total minus a sentinel */
#define BIG ((int64_t)5 << 60)

typedef struct {
    const int64_t *values; /* the half's values */
    int h;                 /* how many */
    int built;             /* sizes 0..built are listed: min(k, h / 2) */
    int64_t total;         /* their sum */
    int64_t *sums;         /* sums of size j at sums[offset[j]], between two -BIG before and two +BIG after */
    int64_t *spare;        /* as large: the merges' other buffer */
    int64_t offset[MAX_SIZE + 2];
    int64_t length[MAX_SIZE + 1];
} half_t;

/* a sorted list of sums: s[i], or total - s[n - 1 - i] (flip: the sums of the complementary size); the
 * sentinels make at(l, -1) < every threshold minus a sum < at(l, n) and at(l, n + 1) */
typedef struct {
    const int64_t *s;
    int64_t n, total;
    int flip;
} list_t;

static inline int64_t at(list_t l, int64_t i) { return l.flip ? l.total - l.s[l.n - 1 - i] : l.s[i]; }

static list_t stratum(const half_t *half, int j) {
    int flip = j > half->built, r = flip ? half->h - j : j;
    list_t l = {half->sums + half->offset[r], half->length[r], half->total, flip};
    return l;
}

static int64_t choose(int n, int r) {
    if (r < 0 || r > n) return 0;
    int64_t c = 1;
    for (int i = 1; i <= r; i++) c = c * (n - r + i) / i; /* exact: C(n - r + i, i) at each step */
    return c;
}

/* branch-free merge steps: from the front the smaller (a on ties), from the back the larger (b + v on ties) */
#define FRONT(i, j, place)                      \
    do {                                        \
        int64_t x_ = a[i], y_ = b[j] + v;       \
        int take_ = x_ <= y_;                   \
        out[place] = take_ ? x_ : y_;           \
        i += take_;                             \
        j += !take_;                            \
    } while (0)
#define BACK(i, j, place)                       \
    do {                                        \
        int64_t x_ = a[i], y_ = b[j] + v;       \
        int take_ = x_ > y_;                    \
        out[place] = take_ ? x_ : y_;           \
        i -= take_;                             \
        j -= !take_;                            \
    } while (0)

/* out[0 : na + nb] = the sorted union of a[0 : na] and b[0 : nb] + v (both ascending, with sentinels). The
 * first n/2 places hold a[:ia] and b[:ib] (ia + ib = n/2, found by a binary search on the merge path), the
 * others the rest; each part is filled by two chains, one from its front and one from its back, each half of
 * its places: four independent chains in one loop. A chain that runs out of one list reads past its part:
 * a sentinel, or a sum of the other part, which never comes first (every sum of the first part comes before
 * every sum of the second), so a step has no other test */
static void merge(const int64_t *a, int64_t na, const int64_t *b, int64_t nb, int64_t v, int64_t *out) {
    int64_t n = na + nb, half = n / 2, lo = half > nb ? half - nb : 0, hi = half < na ? half : na;
    while (lo < hi) { /* ia = #{a among the first half places} */
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= b[half - mid - 1] + v) lo = mid + 1; else hi = mid;
    }
    int64_t ia = lo, ib = half - lo;
    int64_t i1 = 0, j1 = 0, k1 = ia - 1, l1 = ib - 1; /* first part: front, back */
    int64_t i2 = ia, j2 = ib, k2 = na - 1, l2 = nb - 1; /* second part */
    int64_t steps = half / 2, rest = n - half;
    for (int64_t s = 0; s < steps; s++) {
        FRONT(i1, j1, s);
        BACK(k1, l1, half - 1 - s);
        FRONT(i2, j2, half + s);
        BACK(k2, l2, n - 1 - s);
    }
    if (half & 1) out[steps] = a[k1] > b[l1] + v ? a[k1] : b[l1] + v;
    if (rest / 2 > steps) {
        FRONT(i2, j2, half + steps);
        BACK(k2, l2, n - 1 - steps);
    }
    if (rest & 1) out[half + rest / 2] = a[k2] > b[l2] + v ? a[k2] : b[l2] + v;
    out[n] = out[n + 1] = BIG;
}

static void *build_half(void *arg) {
    half_t *half = (half_t *)arg;
    for (int j = 0; j <= half->built; j++) { /* empty lists between their sentinels */
        half->length[j] = 0;
        for (int64_t *list = half->sums; list; list = list == half->sums ? half->spare : NULL) {
            list[half->offset[j] - 2] = list[half->offset[j] - 1] = -BIG;
            list[half->offset[j]] = list[half->offset[j] + 1] = BIG;
        }
    }
    half->sums[half->offset[0]] = half->spare[half->offset[0]] = 0; /* the empty subset */
    half->sums[half->offset[0] + 1] = half->spare[half->offset[0] + 1] = BIG;
    half->length[0] = 1;
    for (int i = 0; i < half->h; i++) {
        int64_t v = half->values[i], *old = half->sums, *grown = half->spare;
        int hi = i + 1 < half->built ? i + 1 : half->built;
        for (int j = hi; j >= 1; j--) { /* descending: L_(j-1) is still the old length when L_j reads it */
            merge(old + half->offset[j], half->length[j], old + half->offset[j - 1], half->length[j - 1], v,
                  grown + half->offset[j]);
            half->length[j] += half->length[j - 1];
        }
        half->sums = grown;
        half->spare = old;
    }
    return NULL;
}

/* #{b in B : b < x} */
static int64_t below(list_t b, int64_t x) {
    int64_t lo = 0, hi = b.n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (at(b, mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Σ_{a in A[lo:hi]} #{b in B : a + b < t} for t = t0 and t = t1 >= t0 (counts[0], counts[1]). A pointer p >=
 * #{b < t0 - a} only moves down as a grows. Blocks of BLOCK consecutive a whose pointers all lie in a window of
 * WINDOW sums of B are counted by comparing each a with the whole window (branch-free, vectorised: about half
 * the instructions of a pointer walk); other a one at a time. One at a time, the count at t1 adds b[p] < t1 - a,
 * exact unless b[p + 1] < t1 - a too (a wide gap between t0 and t1, or ties): then the return value is 1
 * and counts[1] must be made by a walk of its own. */
#define BLOCK 8
#define WINDOW 8
static inline int walk(list_t a, int64_t lo, int64_t hi, list_t b, int64_t t0, int64_t t1, int64_t *counts) {
    int64_t total = 0, extra = 0, i = lo, p = below(b, t0 - at(a, lo));
    int wide = 0;
    while (i < hi) {
        if (i + BLOCK <= hi && p >= WINDOW && p + WINDOW <= b.n) {
            int64_t first = at(a, i), last = at(a, i + BLOCK - 1), w[WINDOW], ge = 0;
            if (at(b, p - WINDOW - 1) < t0 - last) { /* #{b < t0 - last} >= p - WINDOW */
                for (int e = 0; e < WINDOW; e++) ge += at(b, p - WINDOW + e) >= t0 - last;
                int64_t base = p - ge; /* #{b < t0 - last}: below every pointer of the block */
                for (int e = 0; e < WINDOW; e++) w[e] = at(b, base + e);
                if (w[WINDOW - 1] >= t1 - first) { /* every b < t1 - a of the block is in the window */
                    for (int r = 0; r < BLOCK; r++) {
                        int64_t x = at(a, i + r), c0 = 0, c1 = 0;
                        for (int e = 0; e < WINDOW; e++) {
                            c0 += w[e] < t0 - x;
                            c1 += w[e] < t1 - x;
                        }
                        total += base + c0;
                        extra += c1 - c0;
                    }
                    i += BLOCK;
                    p = base;
                    continue;
                }
            }
        }
        int64_t x = at(a, i); /* b[-1], b[nb] and b[nb + 1] are sentinels */
        while (at(b, p - 1) >= t0 - x) p--;
        total += p;
        extra += at(b, p) < t1 - x;
        wide |= at(b, p + 1) < t1 - x;
        i++;
    }
    counts[0] += total;
    counts[1] += total + extra;
    return wide;
}

/* walk() with the lists' orientation fixed at compile time, so that the loop tests no flag (and, with GCC
 * on x86-64, compiled twice: for AVX2, chosen at load time where the CPU has it, and for any x86-64) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static int count_pairs(list_t a, int64_t lo, int64_t hi, list_t b, int64_t t0, int64_t t1, int64_t *counts) {
    if (a.flip) {
        a.flip = 1;
        if (b.flip) { b.flip = 1; return walk(a, lo, hi, b, t0, t1, counts); }
        b.flip = 0;
        return walk(a, lo, hi, b, t0, t1, counts);
    }
    a.flip = 0;
    if (b.flip) { b.flip = 1; return walk(a, lo, hi, b, t0, t1, counts); }
    b.flip = 0;
    return walk(a, lo, hi, b, t0, t1, counts);
}

typedef struct {
    const half_t *left, *right;
    int k, first, last; /* strata: left sizes first..last */
    const int64_t *ts;
    int nt, tid, threads;
    int64_t counts[]; /* per threshold */
} job_t;

/* thread `tid` of `threads`: its share of the pairs of one stratum at thresholds t0 <= t1 (one walk, or two
 * where t1 is far off). a < t0 - max(B): every pair below both thresholds (counted by thread 0); a >= t1 -
 * min(B): none below either; only the a between are walked (in the tails, a part of A), split evenly */
static void count_stratum(list_t a, list_t b, int tid, int threads, int64_t t0, int64_t t1, int64_t *counts) {
    int64_t pair[2] = {0, 0}, alone[2] = {0, 0};
    int64_t all = below(a, t0 - at(b, b.n - 1)), none = below(a, t1 - at(b, 0));
    if (tid == 0) {
        counts[0] += all * b.n;
        counts[1] += all * b.n;
    }
    int64_t lo = all + (none - all) * tid / threads, hi = all + (none - all) * (tid + 1) / threads;
    if (lo < hi) {
        if (count_pairs(a, lo, hi, b, t0, t1, pair)) {
            count_pairs(a, lo, hi, b, t1, t1, alone);
            pair[1] = alone[0];
        }
        counts[0] += pair[0];
        counts[1] += pair[1];
    }
}

static void *count_job(void *arg) {
    job_t *job = (job_t *)arg;
    for (int s = 0; s < job->nt; s++) job->counts[s] = 0;
    for (int j = job->first; j <= job->last; j++) {
        list_t a = stratum(job->left, j), b = stratum(job->right, job->k - j);
        if (a.n < b.n) { /* a + b < t is symmetric: the walk goes over the longer list (the other moves slower) */
            list_t shorter = a;
            a = b;
            b = shorter;
        }
        if (b.n == 0) continue;
        const int64_t *ts = job->ts;
        /* one walk for a threshold and the next, where that is nearer than the one after */
        for (int s = 0, nt = job->nt; s < nt;) {
            int pair = s + 1 < nt && (s + 2 >= nt || ts[s + 1] - ts[s] <= ts[s + 2] - ts[s + 1]);
            int64_t two[2] = {0, 0};
            count_stratum(a, b, job->tid, job->threads, ts[s], ts[s + pair], two);
            job->counts[s] += two[0];
            if (pair) job->counts[s + 1] += two[1];
            s += 1 + pair;
        }
    }
    return NULL;
}

/* memory for a half's sums, in 2 MB pages where the system gives them (a first touch of 4 kB pages costs
 * about as much as the merges that fill them) */
static void *huge_alloc(size_t bytes) {
    void *p = NULL;
    size_t align = (size_t)1 << 21;
    if (bytes < align) return malloc(bytes);
    if (posix_memalign(&p, align, (bytes + align - 1) / align * align)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);
#endif
    return p;
}

/* Buffers kept between the counts of a run (count_below(..., keep=1); release() frees them): a fresh buffer
 * costs its first touch, about a fifth of a 25 + 25 count. One caller at a time uses them (others, in other
 * threads, allocate their own). */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t *pool[4];
static size_t pool_bytes[4];

static void release_pool(void) {
    for (int slot = 0; slot < 4; slot++) {
        free(pool[slot]);
        pool[slot] = NULL;
        pool_bytes[slot] = 0;
    }
}

/* a buffer of at least `bytes`: pool slot `slot` when pooled (grown where too small), else a fresh one */
static int64_t *take(int slot, size_t bytes, int pooled) {
    if (!pooled) return huge_alloc(bytes);
    if (pool_bytes[slot] < bytes) {
        free(pool[slot]);
        pool[slot] = huge_alloc(bytes);
        pool_bytes[slot] = pool[slot] ? bytes : 0;
    }
    return pool[slot];
}

static void free_half(half_t *half, int pooled) {
    if (pooled) return;
    free(half->sums);
    free(half->spare);
}

static int setup_half(half_t *half, const int64_t *values, int h, int k, int slot, int pooled) {
    half->values = values;
    half->h = h;
    half->built = h / 2 < k ? h / 2 : k;
    half->total = 0;
    for (int i = 0; i < h; i++) half->total += values[i];
    half->offset[0] = 2;
    for (int j = 0; j <= half->built; j++) half->offset[j + 1] = half->offset[j] + choose(h, j) + 4;
    half->sums = take(slot, sizeof(int64_t) * (size_t)half->offset[half->built + 1], pooled);
    half->spare = take(slot + 1, sizeof(int64_t) * (size_t)half->offset[half->built + 1], pooled);
    return half->sums != NULL && half->spare != NULL;
}

static PyObject *count_below(PyObject *self, PyObject *args) {
    Py_buffer qbuf, tbuf;
    int k, threads, keep = 0;
    if (!PyArg_ParseTuple(args, "y*iy*i|p", &qbuf, &k, &tbuf, &threads, &keep)) return NULL;
    PyObject *result = NULL;
    int pooled = 0;
    int64_t n = qbuf.len / (Py_ssize_t)sizeof(int64_t), nt = tbuf.len / (Py_ssize_t)sizeof(int64_t);
    int sorted = qbuf.len % (Py_ssize_t)sizeof(int64_t) == 0 && tbuf.len % (Py_ssize_t)sizeof(int64_t) == 0;
    const int64_t *given = (const int64_t *)tbuf.buf;
    for (int64_t s = 1; sorted && s < nt; s++) sorted = given[s - 1] < given[s];
    if (k > MAX_SIZE || k < 0 || 2 * k > n || nt < 1 || !sorted) {
        PyErr_SetString(PyExc_ValueError, "count_below: need int64 values, 0 <= k <= min(n / 2, 64) and "
                        "ascending int64 thresholds");
        goto release;
    }
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    const int64_t *q = (const int64_t *)qbuf.buf, *ts = (const int64_t *)tbuf.buf;
    half_t left, right;
    int h = (int)n / 2;
    left.sums = right.sums = left.spare = right.spare = NULL;
    pooled = keep && pthread_mutex_trylock(&pool_lock) == 0;
    if (!setup_half(&left, q, h, k, 0, pooled) || !setup_half(&right, q + h, (int)n - h, k, 2, pooled)) {
        free_half(&left, pooled);
        free_half(&right, pooled);
        PyErr_NoMemory();
        goto release;
    }
    job_t *jobs[MAX_THREADS];
    int made = 0;
    for (; made < threads; made++) {
        jobs[made] = malloc(sizeof(job_t) + sizeof(int64_t) * (size_t)nt);
        if (!jobs[made]) break;
    }
    if (made < threads) {
        while (made > 0) free(jobs[--made]);
        free_half(&left, pooled);
        free_half(&right, pooled);
        PyErr_NoMemory();
        goto release;
    }
    int64_t totals[256];
    int64_t *total = nt <= 256 ? totals : calloc((size_t)nt, sizeof(int64_t));
    if (!total) {
        for (int c = 0; c < threads; c++) free(jobs[c]);
        free_half(&left, pooled);
        free_half(&right, pooled);
        PyErr_NoMemory();
        goto release;
    }
    Py_BEGIN_ALLOW_THREADS
    pthread_t other;
    int forked = threads > 1 && pthread_create(&other, NULL, build_half, &right) == 0;
    build_half(&left);
    if (forked) pthread_join(other, NULL); else build_half(&right);
    int first = k - right.h > 0 ? k - right.h : 0, last = left.h < k ? left.h : k;
    pthread_t workers[MAX_THREADS];
    int started[MAX_THREADS];
    for (int c = 0; c < threads; c++) {
        job_t *job = jobs[c];
        job->left = &left; job->right = &right; job->k = k; job->first = first; job->last = last;
        job->ts = ts; job->nt = (int)nt; job->tid = c; job->threads = threads;
        started[c] = c > 0 && pthread_create(&workers[c], NULL, count_job, job) == 0;
    }
    count_job(jobs[0]);
    for (int c = 1; c < threads; c++) {
        if (started[c]) pthread_join(workers[c], NULL); else count_job(jobs[c]);
    }
    for (int s = 0; s < nt; s++) {
        total[s] = 0;
        for (int c = 0; c < threads; c++) total[s] += jobs[c]->counts[s];
    }
    Py_END_ALLOW_THREADS
    for (int c = 0; c < threads; c++) free(jobs[c]);
    free_half(&left, pooled);
    free_half(&right, pooled);
    result = PyList_New(nt);
    for (int s = 0; result && s < nt; s++) {
        PyObject *item = PyLong_FromLongLong(total[s]);
        if (!item) { Py_CLEAR(result); break; }
        PyList_SET_ITEM(result, s, item);
    }
    if (total != totals) free(total);
release:
    if (pooled) {
        if (!keep || !result) release_pool();
        pthread_mutex_unlock(&pool_lock);
    }
    PyBuffer_Release(&qbuf);
    PyBuffer_Release(&tbuf);
    return result;
}

static PyObject *release(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS /* a count in another thread may hold the pool */
    pthread_mutex_lock(&pool_lock);
    release_pool();
    pthread_mutex_unlock(&pool_lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"count_below", count_below, METH_VARARGS,
     "count_below(q, k, ts, threads): #{size-k subsets of the int64 values q with sum < t} for each of the "
     "sorted int64 thresholds ts (k <= len(q) / 2), counted with `threads` threads; keep=True keeps the "
     "buffers for the next count (release() frees them)."},
    {"release", release, METH_NOARGS, "release(): free the buffers kept by count_below(..., keep=True)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ccount", "Exact subset-sum counts (C).", -1, methods};

PyMODINIT_FUNC PyInit__ccount(void) { return PyModule_Create(&module); }
