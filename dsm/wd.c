/* dsm/wd.c - software write detection (OMPDSM_WD): ompcc's compiler pass
 * (translator/wdpass) marks every store that may reach the shared heap in
 * a shadow map, a bit per heap byte, and a byte per page; with it, valid
 * pages stay writable and a release sends exactly the bytes marked since
 * the last one: no write fault, no twin, no protection change in the
 * steady state (docs/design.md, "Software write detection").
 *
 * This file: the ABI the pass targets (the shadow's globals, marks,
 * registration of instrumented modules), the mode's decision at start, a
 * release's scan of the marks into runs, the guard around calls into code
 * the pass did not see (memory protection keys: a write there faults and
 * is turned into marks at the guard's end), and the check mode, which runs
 * the page-protection protocol and fails the job where a twin shows a
 * change that no mark announced. */
#include "dsm_int.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "runtime/ompdsm_abi.h"

/* ---- the ABI (runtime/ompdsm_abi.h documents it) ---- */
#define WD_API __attribute__((visibility("default")))
WD_API unsigned long OMPDSM_wd_base, OMPDSM_wd_size;
WD_API unsigned char *OMPDSM_wd_shadow, *OMPDSM_wd_pages;
WD_API unsigned int OMPDSM_wd_page_shift;

static struct {
    int asked;            /* OMPDSM_WD: enum wd_mode, or -1 for auto */
    const void **fns;     /* functions of instrumented modules */
    size_t nfns, cap;
    unsigned modules;     /* OMPDSM_wd_register calls */
    unsigned units;       /* ompcc units (dsm_wd_units) */
    int pkey;             /* the heap's protection key, or -1 */
    uint32_t hi;          /* pages [0, hi) may be valid (WD_ON) */
    pthread_mutex_t guard_lock;
    uint32_t *gpages;     /* pages a guarded call wrote (twins in wd.gtwin) */
    size_t ngpages, gcap;
    void **gtwin;         /* per page: its twin while a guard wrote it */
} wd = {.asked = -1, .pkey = -1, .guard_lock = PTHREAD_MUTEX_INITIALIZER};

static __thread unsigned guard_depth;

WD_API void OMPDSM_wd_register(unsigned abi, const void *const *fns, unsigned n)
{
    /* 1: without OMPDSM_wd_mark_strided; 2: with it */
    if (abi != 1 && abi != 2) {
        fprintf(stderr, "ompdsm: a module was compiled by an ompcc whose write "
                        "detection has ABI %u, but this libompdsm has 1 and 2; "
                        "recompile it with this ompcc\n", abi);
        exit(1);
    }
    if (wd.nfns + n > wd.cap) {
        size_t c = wd.cap ? wd.cap : 256;
        while (c < wd.nfns + n)
            c *= 2;
        const void **v = realloc(wd.fns, c * sizeof *v);
        if (!v) {
            fprintf(stderr, "ompdsm: out of memory registering functions\n");
            exit(1);
        }
        wd.fns = v;
        wd.cap = c;
    }
    memcpy(wd.fns + wd.nfns, fns, n * sizeof *fns);
    wd.nfns += n;
    wd.modules++;
}

/* Sets the bits of heap offsets [d, d + len) (d + len <= heap size). */
static void mark_off(uint64_t d, uint64_t len)
{
    unsigned char *sh = OMPDSM_wd_shadow;
    uint64_t end = d + len;
    uint64_t a = d >> 2, b = (end - 1) >> 2;
    if (a == b) {
        unsigned m = ((1u << (end - d)) - 1) << (d & 3);
        __atomic_fetch_or(&sh[a], (unsigned char)m, __ATOMIC_RELAXED);
    } else {
        if (d & 3) {
            __atomic_fetch_or(&sh[a], (unsigned char)(0x0f & (0x0f << (d & 3))),
                              __ATOMIC_RELAXED);
            a++;
        }
        if (end & 3) {
            __atomic_fetch_or(&sh[b], (unsigned char)((1u << (end & 3)) - 1),
                              __ATOMIC_RELAXED);
        } else {
            b++;
        }
        if (b > a)
            memset(sh + a, 0x0f, b - a);
    }
    unsigned s = OMPDSM_wd_page_shift;
    uint64_t p0 = d >> s, p1 = (end - 1) >> s;
    if (p0 == p1)
        __atomic_store_n(&OMPDSM_wd_pages[p0], 1, __ATOMIC_RELAXED);
    else
        memset(OMPDSM_wd_pages + p0, 1, p1 - p0 + 1);
}

void dsm_wd_mark(const void *p, size_t len)
{
    OMPDSM_wd_mark(p, len);
}

void dsm_wd_wrote(const void *p, size_t len)
{
    OMPDSM_wd_mark(p, len);
}

WD_API void OMPDSM_wd_mark(const void *p, unsigned long len)
{
    uint64_t d = (uint64_t)(uintptr_t)p - OMPDSM_wd_base;
    uint64_t size = OMPDSM_wd_size;
    if (d >= size || !len)
        return;
    if (len > size - d)
        len = size - d;
    mark_off(d, len);
}

WD_API void OMPDSM_wd_mark_strided(const void *p, unsigned long width,
                                   unsigned long stride, unsigned long count)
{
    uint64_t d = (uint64_t)(uintptr_t)p - OMPDSM_wd_base;
    uint64_t size = OMPDSM_wd_size;
    if (!width || !count)
        return;
    /* blocks below the heap (d wrapped around) first */
    if (d >= size) {
        uint64_t below = -d; /* bytes from p up to the heap */
        if (below > (count - 1) * stride + width - 1)
            return;
        uint64_t skip = below <= width - 1 ? 0 : (below - width + stride) / stride;
        d += skip * stride;
        count -= skip;
        if (d >= size) { /* the first block left starts below the heap */
            uint64_t in = width - -d;
            mark_off(0, in < size ? in : size);
            d += stride;
            count--;
        }
    }
    unsigned char *sh = OMPDSM_wd_shadow, *pb = OMPDSM_wd_pages;
    unsigned s = OMPDSM_wd_page_shift;
    if (!count || d >= size)
        return;
    /* the blocks that lie wholly in the heap */
    uint64_t fit = (size - d) >= width ? (size - d - width) / stride + 1 : 0;
    if (fit > count)
        fit = count;
    if (fit && !(d & 3) && !(width & 3) && !(stride & 3) && width <= 64) {
        /* the loops' usual case (SP's 24 bytes every 40): a few stores a
         * block, no call; this runs before and after every such loop */
        const uint64_t f8 = 0x0f0f0f0f0f0f0f0full;
        const uint32_t f4 = 0x0f0f0f0fu;
        size_t n = width >> 2, st = stride >> 2;
        unsigned char *q = sh + (d >> 2);
        for (uint64_t i = 0; i < fit; i++, q += st) {
            if (n >= 8) { /* (n <= 16: two stores that may overlap) */
                memcpy(q, &f8, 8);
                memcpy(q + n - 8, &f8, 8);
            } else if (n >= 4) {
                memcpy(q, &f4, 4);
                memcpy(q + n - 4, &f4, 4);
            } else {
                q[0] = 0x0f;
                q[n - 1] = 0x0f;
                q[n >> 1] = 0x0f;
            }
        }
        uint64_t end = d + (fit - 1) * stride + width;
        uint64_t p0 = d >> s, p1 = (end - 1) >> s;
        if (p0 == p1) /* (most loops: no call) */
            pb[p0] = 1;
        else if (stride <= (1ull << s)) /* every page between has a block */
            memset(pb + p0, 1, p1 - p0 + 1);
        else
            for (uint64_t i = 0, e = d; i < fit; i++, e += stride) {
                pb[e >> s] = 1;
                pb[(e + width - 1) >> s] = 1;
            }
        d += fit * stride;
        count -= fit;
    }
    for (; count && d < size; count--, d += stride)
        mark_off(d, width < size - d ? width : size - d);
}

/* Whether fn is a function of a module the pass instrumented (its writes
 * are marked). */
static int instrumented(const void *fn)
{
    size_t lo = 0, hi = wd.nfns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (wd.fns[mid] == fn)
            return 1;
        if ((uintptr_t)wd.fns[mid] < (uintptr_t)fn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

WD_API unsigned long OMPDSM_wd_guard(void *callee, unsigned n, ...)
{
    if (!OMPDSM_wd_size || wd.pkey < 0 || instrumented(callee))
        return 0;
    va_list ap;
    va_start(ap, n);
    int any = 0;
    for (unsigned i = 0; i < n; i++)
        any |= dsm_in_heap(va_arg(ap, void *));
    va_end(ap);
    if (!any)
        return 0;
    if (guard_depth++ == 0)
        pkey_set(wd.pkey, PKEY_DISABLE_WRITE);
    return 1;
}

/* Turns the writes guarded calls made into marks: each page such a call
 * wrote goes back under the heap's key first (a write after that faults
 * again and takes a new twin), then its changes since its twin are
 * marked. */
static void guard_settle(void)
{
    pthread_mutex_lock(&wd.guard_lock);
    uint32_t *v = wd.gpages;
    size_t n = wd.ngpages;
    wd.gpages = NULL;
    wd.ngpages = wd.gcap = 0;
    pthread_mutex_unlock(&wd.guard_lock);
    static __thread struct comm_run *runs;
    if (!runs && !(runs = malloc((dsm_g.page_size / 2 + 1) * sizeof *runs)))
        ompdsm_fatal("out of memory for a guard's diff");
    for (size_t i = 0; i < n; i++) {
        uint32_t pg = v[i];
        pthread_mutex_lock(page_lock(pg));
        void *t = wd.gtwin[pg];
        wd.gtwin[pg] = NULL;
        uint8_t st = dsm_g.state[pg];
        int prot = st == PG_INVALID ? PROT_NONE
                   : dsm_g.wd == WD_ON || st == PG_DIRTY ? PROT_READ | PROT_WRITE
                                                         : PROT_READ;
        DSM_STAT(protects, 1);
        if (pkey_mprotect(page_app(pg), dsm_g.page_size, prot, wd.pkey) < 0)
            ompdsm_fatal("pkey_mprotect of page %u: %s", pg, strerror(errno));
        if (t && dsm_g.state[pg] != PG_INVALID) {
            size_t nr = diff_page(t, page_sys(pg), dsm_g.page_size, runs);
            for (size_t k = 0; k < nr; k++)
                mark_off(page_off(pg) + runs[k].off, runs[k].len);
        }
        pthread_mutex_unlock(page_lock(pg));
        if (t)
            dsm_twin_free(t);
    }
    free(v);
}

WD_API void OMPDSM_wd_unguard(unsigned long tok)
{
    if (!tok)
        return;
    if (--guard_depth == 0) {
        pkey_set(wd.pkey, 0);
        guard_settle();
    }
}

int dsm_wd_guard_fault(const void *addr)
{
    if (wd.pkey < 0 || !dsm_in_heap(addr) || !guard_depth)
        return 0;
    uint32_t pg = page_of(addr);
    /* Check mode: the page-protection protocol sees the write first (a
     * write to a read-only page with its key write-disabled faults as a
     * key fault). */
    if (dsm_g.wd == WD_CHECK && dsm_g.state[pg] != PG_DIRTY)
        dsm_page_access(pg, 1);
    /* The kernel reports a key fault before the page's own protection:
     * an invalid page is fetched first, or the twin would hold stale
     * bytes. */
    while (dsm_g.wd == WD_ON && __atomic_load_n(&dsm_g.state[pg], __ATOMIC_ACQUIRE) !=
                                    PG_RO)
        dsm_page_access(pg, 0);
    pthread_mutex_lock(page_lock(pg));
    if (!wd.gtwin[pg]) {
        wd.gtwin[pg] = dsm_twin_copy(pg);
        pthread_mutex_lock(&wd.guard_lock);
        dsm_page_list_push(&wd.gpages, &wd.ngpages, &wd.gcap, pg);
        pthread_mutex_unlock(&wd.guard_lock);
        DSM_STAT(twins, 1);
    }
    /* Writable for every thread until the guard settles (key 0). */
    DSM_STAT(protects, 1);
    if (pkey_mprotect(page_app(pg), dsm_g.page_size, PROT_READ | PROT_WRITE, 0) < 0)
        ompdsm_fatal("pkey_mprotect of page %u: %s", pg, strerror(errno));
    pthread_mutex_unlock(page_lock(pg));
    return 1;
}

/* ---- the mode ---- */

void dsm_wd_units(unsigned units)
{
    wd.units = units;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const void *const *)a;
    uintptr_t y = (uintptr_t)*(const void *const *)b;
    return x < y ? -1 : x > y;
}

void dsm_wd_init(void)
{
    static const char *const modes[] = {"off", "on", "check", "auto"};
    int m = ompdsm_env_choice("OMPDSM_WD", modes, 4, 3);
    wd.asked = m == 3 ? -1 : m;
}

const char *dsm_wd_mode_name(void)
{
    static const char *const names[] = {"off", "on", "check"};
    return names[dsm_g.wd];
}

void dsm_wd_start(void)
{
    dsm_g.wd = WD_OFF;
    if (dsm_g.solo || wd.asked == WD_OFF)
        return;
    /* (No ompcc unit: a program of the dsm layer's own, which marks its
     * writes itself or was compiled with the pass directly.) */
    int complete = wd.units ? wd.modules >= wd.units
                            : wd.modules > 0 || wd.asked == WD_ON ||
                                  wd.asked == WD_CHECK;
    if (!complete) {
        if (wd.asked == WD_ON || wd.asked == WD_CHECK)
            fprintf(stderr, "ompdsm: node %d: OMPDSM_WD=%s, but %u of the "
                            "program's %u ompcc units were compiled without "
                            "write detection (a gcc backend, or ompcc "
                            "--no-write-detection); using page protection\n",
                    dsm_g.rank, wd.asked == WD_ON ? "on" : "check",
                    wd.units - (wd.modules < wd.units ? wd.modules : wd.units),
                    wd.units);
        return;
    }
    /* auto with several threads a node: page protection.  A volatile
     * object that sibling threads write in turn while other nodes wait for
     * it loses a write under write detection over tcp
     * (tests/omp/volatile_spin.c on 4 nodes x 2 threads: 15 of 30 runs
     * hung, none with OMPDSM_WD=off; docs/design.md, "Software write
     * detection"); OMPDSM_WD=on still asks for it. */
    if (wd.asked < 0 && dsm_g.tpn > 1)
        return;
    int mode = wd.asked < 0 ? WD_ON : wd.asked;
    if ((wd.pkey = pkey_alloc(0, 0)) < 0 && mode == WD_ON) {
        /* The guard around calls into code the pass did not see needs
         * protection keys (x86 PKU): without them, page protection. */
        if (wd.asked == WD_ON)
            fprintf(stderr, "ompdsm: node %d: OMPDSM_WD=on, but this machine "
                            "has no memory protection keys (%s); using page "
                            "protection\n", dsm_g.rank, strerror(errno));
        return;
    }
    dsm_g.wd = mode;
    qsort(wd.fns, wd.nfns, sizeof *wd.fns, cmp_ptr);
    size_t shsize = dsm_g.heap_size >> 2;
    void *sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (sh == MAP_FAILED)
        ompdsm_fatal("cannot map the write-detection shadow (%zu bytes): %s",
                     shsize, strerror(errno));
    OMPDSM_wd_shadow = sh;
    OMPDSM_wd_pages = dsm_table(dsm_g.npages, "written pages");
    OMPDSM_wd_page_shift = dsm_g.page_shift;
    OMPDSM_wd_base = (unsigned long)(uintptr_t)dsm_g.app;
    wd.gtwin = dsm_table((size_t)dsm_g.npages * sizeof *wd.gtwin, "guard twin");
    if (dsm_g.wd == WD_ON) {
        wd.hi = (uint32_t)((uint64_t)dsm_g.global_chunks
                           << (dsm_g.chunk_shift - dsm_g.page_shift));
        /* Globals (every node wrote the same initial values) are valid and
         * writable; the rest of the heap is invalid until first used, so
         * that the pages a release scans are those below the highest page
         * this node ever made valid (wd.hi). */
        size_t gbytes = (size_t)wd.hi << dsm_g.page_shift;
        if (pkey_mprotect(dsm_g.app, gbytes, PROT_READ | PROT_WRITE, wd.pkey) < 0 ||
            pkey_mprotect(dsm_g.app + gbytes, dsm_g.heap_size - gbytes, PROT_NONE,
                          wd.pkey) < 0)
            ompdsm_fatal("protecting the shared heap: %s", strerror(errno));
        for (uint32_t pg = wd.hi; pg < dsm_g.npages; pg++)
            dsm_g.state[pg] = PG_INVALID;
        dsm_push_init();
        /* Pages kept writable, written ahead and exclusive home pages
         * are the page-protection protocol's ways to take fewer faults;
         * here there are none to take. */
        dsm_g.keep_on = 0;
    } else {
        /* Check mode: the page-protection protocol, every write faulting
         * and checked against its twin; keeping pages writable would skip
         * the faults of the pages kept. */
        dsm_g.keep_on = 0;
        wd.hi = dsm_g.npages;
        /* The guard works as under WD_ON where there are protection keys;
         * without them a guarded call's writes are reported as missed. */
        if (wd.pkey >= 0 &&
            pkey_mprotect(dsm_g.app, dsm_g.heap_size, PROT_READ, wd.pkey) < 0)
            ompdsm_fatal("protecting the shared heap: %s", strerror(errno));
    }
    OMPDSM_wd_size = (unsigned long)dsm_g.heap_size;
    OMPDSM_TRACE(OMPDSM_TR_DSM, "write detection %s (%u modules, %zu functions, "
                 "pkey %d)", dsm_wd_mode_name(), wd.modules, wd.nfns, wd.pkey);
}

void dsm_wd_valid(uint32_t pg, uint32_t n)
{
    uint32_t end = pg + n, hi = __atomic_load_n(&wd.hi, __ATOMIC_RELAXED);
    while (end > hi &&
           !__atomic_compare_exchange_n(&wd.hi, &hi, end, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

/* ---- marks of a page ---- */

static inline unsigned char *page_shadow(uint32_t pg)
{
    return OMPDSM_wd_shadow + ((size_t)pg << (dsm_g.page_shift - 2));
}

void dsm_wd_clear(uint32_t pg)
{
    __atomic_store_n(&OMPDSM_wd_pages[pg], 0, __ATOMIC_RELAXED);
    memset(page_shadow(pg), 0, dsm_g.page_size >> 2);
}

/* Appends bytes [off, off + len) of a page to the runs v[0..*n), merging
 * with the last run when they touch. */
static inline void run_add(struct comm_run *v, size_t *n, uint32_t off, uint32_t len)
{
    if (*n && v[*n - 1].off + v[*n - 1].len == off) {
        v[*n - 1].len += len;
    } else {
        v[*n].off = off;
        v[*n].len = len;
        (*n)++;
    }
}

/* Whether the 32 shadow words at w (256 bytes, aligned) are all zero.
 * Plain loads: a mark a store makes meanwhile sets its page's byte again
 * (the next release's); SSE2 is x86-64's baseline. */
static inline int zero32(const uint64_t *w)
{
#ifdef __SSE2__
    const __m128i *p = (const __m128i *)w;
    __m128i x = _mm_load_si128(p);
    for (int k = 1; k < 16; k++)
        x = _mm_or_si128(x, _mm_load_si128(p + k));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())) == 0xffff;
#else
    uint64_t x = 0;
    for (int k = 0; k < 32; k++)
        x |= __atomic_load_n(&w[k], __ATOMIC_RELAXED);
    return !x;
#endif
}

/* Shadow words (each covers 32 bytes) in [i, nw): the first that is not
 * zero (nw: none), 32 words at a time where they are aligned. */
static size_t first_marked(const uint64_t *w, size_t i, size_t nw)
{
    for (; i < nw && (i & 31); i++)
        if (__atomic_load_n(&w[i], __ATOMIC_RELAXED))
            return i;
    while (i + 32 <= nw && zero32(w + i))
        i += 32;
    for (; i < nw; i++)
        if (__atomic_load_n(&w[i], __ATOMIC_RELAXED))
            return i;
    return nw;
}

/* The same from the end: one past the last word that is not zero in
 * [lo, nw) (lo: none). */
static size_t last_marked(const uint64_t *w, size_t lo, size_t nw)
{
    size_t i = nw;
    for (; i > lo && (i & 31); i--)
        if (__atomic_load_n(&w[i - 1], __ATOMIC_RELAXED))
            return i;
    while (i >= lo + 32 && zero32(w + i - 32))
        i -= 32;
    for (; i > lo; i--)
        if (__atomic_load_n(&w[i - 1], __ATOMIC_RELAXED))
            return i;
    return lo;
}

int dsm_wd_extent(uint32_t pg, uint32_t *lo, uint32_t *hi)
{
    const uint64_t *w = (const uint64_t *)page_shadow(pg);
    size_t nw = dsm_g.page_size >> 5;
    size_t a = first_marked(w, 0, nw);
    if (a == nw)
        return 0;
    *lo = (uint32_t)(a << 5);
    *hi = (uint32_t)(last_marked(w, a, nw) << 5);
    return 1;
}

/* The marks of shadow words [i, nw) of page pg as runs, cleared. */
static size_t take_words(uint32_t pg, struct comm_run *runs, int concurrent,
                         size_t i, size_t nw)
{
    uint64_t *w = (uint64_t *)page_shadow(pg);
    size_t n = 0;
    const uint64_t full = 0x0f0f0f0f0f0f0f0full;
    for (; i < nw; i++) {
        uint64_t x;
        if (!(i & 31) && i + 32 <= nw && zero32(w + i)) {
            i += 31; /* (no mark in these 32 words) */
            continue;
        }
        if (concurrent) {
            if (!__atomic_load_n(&w[i], __ATOMIC_RELAXED))
                continue;
            /* Cleared before the data is read: a store marked after this
             * goes out with the next release. */
            x = __atomic_exchange_n(&w[i], 0, __ATOMIC_SEQ_CST);
        } else {
            x = w[i];
            if (!x)
                continue;
            w[i] = 0;
        }
        uint32_t base = (uint32_t)(i << 5);
        if (x == full) {
            run_add(runs, &n, base, 32);
            continue;
        }
        for (unsigned b = 0; b < 8; b++) {
            unsigned m = (unsigned)(x >> (8 * b)) & 0x0f;
            if (!m)
                continue;
            if (m == 0x0f) {
                run_add(runs, &n, base + 4 * b, 4);
                continue;
            }
            for (unsigned j = 0; j < 4; j++)
                if (m & (1u << j))
                    run_add(runs, &n, base + 4 * b + j, 1);
        }
    }
    return n;
}

size_t dsm_wd_take(uint32_t pg, struct comm_run *runs, int concurrent)
{
    __atomic_store_n(&OMPDSM_wd_pages[pg], 0, __ATOMIC_SEQ_CST);
    return take_words(pg, runs, concurrent, 0, dsm_g.page_size >> 5);
}

size_t dsm_wd_take_in(uint32_t pg, struct comm_run *runs, int concurrent,
                      uint32_t lo, uint32_t hi)
{
    return take_words(pg, runs, concurrent, lo >> 5, hi >> 5);
}

void dsm_wd_clear_in(uint32_t pg, uint32_t lo, uint32_t hi)
{
    memset(page_shadow(pg) + (lo >> 2), 0, (hi - lo) >> 2);
}

/* ---- the release's scan ---- */

uint32_t dsm_wd_next(uint32_t pg, int concurrent)
{
    uint32_t hi = __atomic_load_n(&wd.hi, __ATOMIC_RELAXED);
    unsigned char *pb = OMPDSM_wd_pages;
    while (pg < hi) {
        if (!(pg & 7) && pg + 8 <= hi) {
            uint64_t x;
            memcpy(&x, pb + pg, 8);
            if (!x) {
                pg += 8;
                continue;
            }
        }
        if (pb[pg]) {
            if (concurrent)
                __atomic_store_n(&pb[pg], 0, __ATOMIC_SEQ_CST);
            else
                pb[pg] = 0;
            return pg;
        }
        pg++;
    }
    return UINT32_MAX;
}

int dsm_wd_any(void)
{
    uint32_t hi = __atomic_load_n(&wd.hi, __ATOMIC_RELAXED);
    const unsigned char *pb = OMPDSM_wd_pages;
    for (uint32_t pg = 0; pg < hi; pg++)
        if (__atomic_load_n(&pb[pg], __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* WD_ON: sends the marks of valid page pg (page lock held) before an
 * acquire makes it stale.  With several threads a node the page is
 * protected first, so that a store of another thread either is marked
 * already (the pass marks before and after each store) or faults and
 * waits for the page lock; the caller then invalidates it (or, in
 * dsm_release_page, makes it writable again).  Returns whether a diff
 * went out. */
int dsm_wd_flush(uint32_t pg)
{
    static __thread struct comm_run *runs;
    if (dsm_g.state[pg] != PG_RO)
        return 0;
    int concurrent = dsm_g.tpn > 1;
    if (concurrent)
        dsm_protect(pg, 1, PROT_NONE);
    else if (!__atomic_load_n(&OMPDSM_wd_pages[pg], __ATOMIC_RELAXED))
        /* One thread a node: the page's byte is set after every mark but
         * the pass's mark before a store, and no runtime code runs
         * between that and the store's own marks after it; so a page
         * whose byte is clear has no mark (this used to scan its 16 KiB
         * of shadow, at every acquire that made it stale: 42% of an
         * atomic loop's time) */
        return 0;
    if (!runs && !(runs = malloc((dsm_g.page_size / 2 + 1) * sizeof *runs)))
        ompdsm_fatal("out of memory for a diff");
    size_t n = dsm_wd_take(pg, runs, concurrent);
    if (!n)
        return 0;
    int home = dsm_home(pg);
    dsm_diff_put(pg, home, runs, n);
    if (dsm_push_subs(pg) && comm_fence(home) < 0)
        ompdsm_fatal("diff of page %u to node %d failed", pg, home);
    dsm_push_send(pg, runs, n); /* (after the home has them: dsm/push.c) */
    pthread_mutex_lock(&dsm_g.dirty_lock);
    notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    return 1;
}

/* ---- check mode ---- */

static dsm_namer_fn namer;

void dsm_set_namer(dsm_namer_fn fn)
{
    namer = fn;
}

void dsm_wd_check(uint32_t pg, const struct comm_run *runs, size_t n)
{
    const unsigned char *sh = page_shadow(pg);
    size_t missed = 0;
    uint32_t first = 0;
    for (size_t k = 0; k < n; k++)
        for (uint32_t b = runs[k].off; b < runs[k].off + runs[k].len; b++)
            if (!(sh[b >> 2] & (1u << (b & 3)))) {
                if (!missed++)
                    first = b;
            }
    if (missed) {
        char what[200] = "";
        if (namer)
            namer(page_app(pg) + first, what, sizeof what);
        ompdsm_fatal("OMPDSM_WD=check: %zu byte(s) of page %u changed without "
                     "a write-detection mark, the first at %p%s%s: a write the "
                     "compiler pass did not see (code not compiled by ompcc, "
                     "or a runtime write that does not mark)",
                     missed, pg, (void *)(page_app(pg) + first),
                     what[0] ? ", " : "", what);
    }
}

void dsm_wd_check_twin(uint32_t pg)
{
    /* A new twin: the marks start again with it (a store that faulted
     * here marks again after it completes; with the page read-only no
     * other store could have landed).  Cleared only here, so that a
     * release on another thread (the lazy release helper) never drops the
     * marks of a page dirtied after it took its batch. */
    memset(page_shadow(pg), 0, dsm_g.page_size >> 2);
}

void dsm_wd_unmark(uint32_t pg, size_t off, size_t n)
{
    unsigned char *sh = page_shadow(pg);
    for (size_t b = off; b < off + n; b++)
        __atomic_fetch_and(&sh[b >> 2], (unsigned char)~(1u << (b & 3)),
                           __ATOMIC_RELAXED);
}

int dsm_wd_byte_marked(uint32_t pg, size_t off)
{
    return (__atomic_load_n(&page_shadow(pg)[off >> 2], __ATOMIC_RELAXED) >>
            (off & 3)) & 1;
}
