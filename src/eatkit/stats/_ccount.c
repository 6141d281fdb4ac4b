/* eatkit.stats._ccount: the exact meet-in-the-middle count of eatkit.stats.permutation, compiled.
 *
 * count_below(q, k, ts, threads) -> list of int
 *     q: int64 buffer of n values (|sum| < 2^58), k <= n - k; ts: int64 buffer of sorted distinct
 *     thresholds (|t| <= 2^62). Returns #{size-k subsets S of q : sum(S) < t} for each t, exactly.
 *
 * The values are split into halves (q[:n/2], q[n/2:]); each half's subset sums are listed by size and
 * sorted by merges (adding value v: L_j <- merge(L_j, L_(j-1) + v), from the back, in place), one half a
 * thread. A size-k subset is a size-j subset of the left half plus a size-(k - j) subset of the right
 * one, so the count is, per stratum j, #{(a, b) in L_j x R_(k-j) : a + b < t}: a walk over L_j ascending
 * with a pointer into R_(k-j) that only moves down (p = #{b < t - a}), in independent chains (ranges of
 * L_j, each started by a binary search) interleaved in one loop so that their dependent loads overlap.
 * Every sum is an exact int64 (|a + b| < 2^58, |t - a| < 2^63); counts are at most C(n, k) < 2^63.
 * Plain C and the CPython API (no numpy headers); the GIL is released while counting.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHAINS 3
#define MAX_VALUES 64
#define MAX_THREADS 64
/* sentinels: beyond every sum plus a value (|sum| < 2^58) and every threshold minus a sum (|t| <= 2^62) */
#define BIG ((int64_t)5 << 60)

typedef struct {
    const int64_t *values; /* the half's values */
    int h;                 /* how many */
    int top;               /* largest subset size listed, min(h, k) */
    int64_t *sums;         /* sums of size j at sums[offset[j]], room for C(h, j) and the sentinels around */
    int64_t *spare;        /* as large: the merges' other buffer */
    int64_t offset[MAX_VALUES + 2];
    int64_t length[MAX_VALUES + 1];
} half_t;

static int64_t choose(int n, int r) {
    if (r < 0 || r > n) return 0;
    int64_t c = 1;
    for (int i = 1; i <= r; i++) c = c * (n - r + i) / i; /* exact: C(n - r + i, i) at each step */
    return c;
}

/* out[0 : na + nb] = the sorted union of a[0 : na] and b[0 : nb] + v (both ascending, with sentinels), by two
 * branch-free chains at once: one from the front takes the smaller (a on ties), one from the back the larger
 * (b + v on ties), each half of the places; the sentinels (-BIG before a list, +BIG twice after it) stand in
 * for an exhausted list, so a step has no other test */
static void merge(const int64_t *a, int64_t na, const int64_t *b, int64_t nb, int64_t v, int64_t *out) {
    int64_t n = na + nb, i = 0, j = 0, ia = na - 1, ib = nb - 1;
    for (int64_t s = 0; s < n / 2; s++) {
        int64_t x = a[i], y = b[j] + v;
        int front = x <= y;
        out[s] = front ? x : y;
        i += front;
        j += !front;
        int64_t xb = a[ia], yb = b[ib] + v;
        int back = xb > yb;
        out[n - 1 - s] = back ? xb : yb;
        ia -= back;
        ib -= !back;
    }
    if (n & 1) out[n / 2] = a[ia] > b[ib] + v ? a[ia] : b[ib] + v;
    out[n] = out[n + 1] = BIG;
}

static void *build_half(void *arg) {
    half_t *half = (half_t *)arg;
    for (int j = 0; j <= half->top; j++) { /* empty lists between their sentinels */
        half->length[j] = 0;
        for (int64_t *list = half->sums; list; list = list == half->sums ? half->spare : NULL) {
            list[half->offset[j] - 1] = -BIG;
            list[half->offset[j]] = list[half->offset[j] + 1] = BIG;
        }
    }
    half->sums[half->offset[0]] = half->spare[half->offset[0]] = 0; /* the empty subset */
    half->sums[half->offset[0] + 1] = half->spare[half->offset[0] + 1] = BIG;
    half->length[0] = 1;
    for (int i = 0; i < half->h; i++) {
        int64_t v = half->values[i], *old = half->sums, *grown = half->spare;
        int hi = i + 1 < half->top ? i + 1 : half->top;
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

/* #{b in B : b < x}, B ascending */
static int64_t below(const int64_t *b, int64_t nb, int64_t x) {
    int64_t lo = 0, hi = nb;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (b[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Σ_{a in A[lo:hi]} #{b in B : a + b < t} for t = t0 and t = t1 >= t0 (counts[0], counts[1]), by CHAINS walks
 * over consecutive ranges of A, interleaved. p = #{b < t0 - a} only moves down as a grows; the count at t1
 * adds b[p] < t1 - a, exact unless b[p + 1] < t1 - a too (a wide gap between t0 and t1, or ties): then
 * the return value is 1 and counts[1] must be made by a walk of its own. */
static int count_pairs(const int64_t *a, int64_t lo, int64_t hi, const int64_t *b, int64_t nb, int64_t t0,
                       int64_t t1, int64_t *counts) {
    int64_t i[CHAINS], end[CHAINS], p[CHAINS], total = 0, extra = 0, wide = 0;
    for (int c = 0; c < CHAINS; c++) {
        i[c] = lo + (hi - lo) * c / CHAINS;
        end[c] = lo + (hi - lo) * (c + 1) / CHAINS;
        p[c] = i[c] < end[c] ? below(b, nb, t0 - a[i[c]]) : 0;
    }
    for (;;) {
        int active = 1;
        for (int c = 0; c < CHAINS; c++) active &= i[c] < end[c];
        if (!active) break;
        for (int c = 0; c < CHAINS; c++) {
            /* step the pointer down while b[p - 1] >= t0 - a, else count the pairs of a and move on */
            int64_t x = a[i[c]], pc = p[c]; /* b[-1], b[nb] and b[nb + 1] are sentinels */
            int down = b[pc - 1] >= t0 - x;
            int one = b[pc] < t1 - x, two = b[pc + 1] < t1 - x;
            total += down ? 0 : pc;
            extra += down ? 0 : one;
            wide |= (!down) & two;
            p[c] = pc - down;
            i[c] += !down;
        }
    }
    for (int c = 0; c < CHAINS; c++) {
        for (int64_t pc = p[c]; i[c] < end[c]; i[c]++) {
            int64_t x = a[i[c]];
            while (pc > 0 && b[pc - 1] >= t0 - x) pc--;
            total += pc;
            for (int64_t e = pc; e < nb && b[e] < t1 - x; e++) extra++;
        }
    }
    counts[0] += total;
    counts[1] += total + extra;
    return (int)wide;
}

typedef struct {
    const half_t *left, *right;
    int k, first, last; /* strata: left sizes first..last */
    const int64_t *ts;
    int nt, tid, threads;
    int64_t counts[]; /* per threshold */
} job_t;

/* the pairs of one stratum's share of A at thresholds t0 <= t1 (one walk, or two where t1 is far off) */
static void count_stratum(const int64_t *a, int64_t lo, int64_t hi, const int64_t *b, int64_t nb, int64_t t0,
                          int64_t t1, int64_t *counts) {
    int64_t pair[2] = {0, 0}, alone[2] = {0, 0};
    if (a[hi - 1] + b[nb - 1] < t0) { /* every pair below both */
        counts[0] += (hi - lo) * nb;
        counts[1] += (hi - lo) * nb;
    } else if (a[lo] + b[0] < t1) {
        if (count_pairs(a, lo, hi, b, nb, t0, t1, pair)) {
            count_pairs(a, lo, hi, b, nb, t1, t1, alone);
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
        const int64_t *a = job->left->sums + job->left->offset[j];
        const int64_t *b = job->right->sums + job->right->offset[job->k - j];
        int64_t na = job->left->length[j], nb = job->right->length[job->k - j];
        int64_t lo = na * job->tid / job->threads, hi = na * (job->tid + 1) / job->threads;
        if (lo >= hi || nb == 0) continue;
        const int64_t *ts = job->ts;
        for (int s = 0, nt = job->nt; s < nt;) { /* one walk for a threshold and the next, where that is nearer than the one after */
            int pair = s + 1 < nt && (s + 2 >= nt || ts[s + 1] - ts[s] <= ts[s + 2] - ts[s + 1]);
            int64_t two[2] = {0, 0};
            count_stratum(a, lo, hi, b, nb, ts[s], ts[s + pair], two);
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

static void free_half(half_t *half) {
    free(half->sums);
    free(half->spare);
}

static int setup_half(half_t *half, const int64_t *values, int h, int k) {
    half->values = values;
    half->h = h;
    half->top = h < k ? h : k;
    half->offset[0] = 1;
    for (int j = 0; j <= half->top; j++) half->offset[j + 1] = half->offset[j] + choose(h, j) + 3;
    half->sums = huge_alloc(sizeof(int64_t) * (size_t)half->offset[half->top + 1]);
    half->spare = huge_alloc(sizeof(int64_t) * (size_t)half->offset[half->top + 1]);
    return half->sums != NULL && half->spare != NULL;
}

static PyObject *count_below(PyObject *self, PyObject *args) {
    Py_buffer qbuf, tbuf;
    int k, threads;
    if (!PyArg_ParseTuple(args, "y*iy*i", &qbuf, &k, &tbuf, &threads)) return NULL;
    PyObject *result = NULL;
    int64_t n = qbuf.len / (Py_ssize_t)sizeof(int64_t), nt = tbuf.len / (Py_ssize_t)sizeof(int64_t);
    int sorted = qbuf.len % (Py_ssize_t)sizeof(int64_t) == 0 && tbuf.len % (Py_ssize_t)sizeof(int64_t) == 0;
    for (int64_t s = 1; sorted && s < nt; s++) sorted = ((const int64_t *)tbuf.buf)[s - 1] < ((const int64_t *)tbuf.buf)[s];
    if (n > MAX_VALUES || k < 0 || 2 * k > n || nt < 1 || !sorted) {
        PyErr_SetString(PyExc_ValueError, "count_below: need int64 values (at most 64), 0 <= k <= n / 2 and "
                        "ascending int64 thresholds");
        goto release;
    }
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    const int64_t *q = (const int64_t *)qbuf.buf, *ts = (const int64_t *)tbuf.buf;
    half_t left, right;
    int h = (int)n / 2;
    left.sums = right.sums = left.spare = right.spare = NULL;
    if (!setup_half(&left, q, h, k) || !setup_half(&right, q + h, (int)n - h, k)) {
        free_half(&left);
        free_half(&right);
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
        free_half(&left);
        free_half(&right);
        PyErr_NoMemory();
        goto release;
    }
    int64_t totals[256];
    int64_t *total = nt <= 256 ? totals : calloc((size_t)nt, sizeof(int64_t));
    if (!total) {
        for (int c = 0; c < threads; c++) free(jobs[c]);
        free_half(&left);
        free_half(&right);
        PyErr_NoMemory();
        goto release;
    }
    Py_BEGIN_ALLOW_THREADS
    pthread_t other;
    int forked = threads > 1 && pthread_create(&other, NULL, build_half, &right) == 0;
    build_half(&left);
    if (forked) pthread_join(other, NULL); else build_half(&right);
    int first = k - right.top > 0 ? k - right.top : 0, last = left.top < k ? left.top : k;
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
    free_half(&left);
    free_half(&right);
    result = PyList_New(nt);
    for (int s = 0; result && s < nt; s++) {
        PyObject *item = PyLong_FromLongLong(total[s]);
        if (!item) { Py_CLEAR(result); break; }
        PyList_SET_ITEM(result, s, item);
    }
    if (total != totals) free(total);
release:
    PyBuffer_Release(&qbuf);
    PyBuffer_Release(&tbuf);
    return result;
}

static PyMethodDef methods[] = {
    {"count_below", count_below, METH_VARARGS,
     "count_below(q, k, ts, threads): #{size-k subsets of the int64 values q with sum < t} for each of the "
     "sorted int64 thresholds ts (k <= len(q) / 2), counted with `threads` threads."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ccount", "Exact subset-sum counts (C).", -1, methods};

PyMODINIT_FUNC PyInit__ccount(void) { return PyModule_Create(&module); }
