/* dsm/release.c - release and acquire outside barriers: diffs of dirty
 * pages go to their homes, write notices go into the releasing node's own
 * log, and an acquire reads the logs of the nodes whose releases it must
 * see, up to the positions the releaser it acquires from had reached
 * ("notice logs, one per node" below).  Barriers carry their notices
 * themselves (barrier.c) and move every node's log positions to the
 * tails. */
#include "dsm_int.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <time.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The runs where page pg (dirty, with a twin) differs from its twin, in a
 * buffer of the calling thread's. */
static size_t page_diff(uint32_t pg, struct comm_run **out)
{
    /* Worst case: alternating changed and unchanged bytes. */
    size_t maxruns = dsm_g.page_size / 2 + 1;
    static __thread struct comm_run *runs;
    static __thread size_t runs_cap;
    if (runs_cap < maxruns) {
        free(runs);
        runs = malloc(maxruns * sizeof *runs);
        runs_cap = runs ? maxruns : 0;
    }
    if (!runs)
        ompdsm_fatal("out of memory for a diff");
    *out = runs;
    return diff_page_g(dsm_g.twin[pg], page_sys(pg), dsm_g.page_size, runs,
                       dsm_g.granule[pg]);
}

/* Sends the diff of one dirty non-home page to its home (page lock held,
 * page already write-protected or no thread of the node writing).  Returns
 * the number of changed runs.  keep: the twin is brought up to date and
 * stays (the caller frees it if the page does not stay writable after
 * all); otherwise it is freed. */
static size_t send_diff(uint32_t pg, int home, int keep)
{
    struct comm_run *runs;
    size_t n = page_diff(pg, &runs);
    if (dsm_g.wd == WD_CHECK)
        dsm_wd_check(pg, runs, n);
    uint64_t bytes = 0;
    for (size_t k = 0; k < n; k++)
        bytes += runs[k].len;
    if (n && comm_putv(home, DSM_REG_HEAP, page_off(pg), page_sys(pg), runs, n) < 0)
        ompdsm_fatal("diff of page %u to node %d failed", pg, home);
    DSM_STAT(diffs, 1);
    DSM_STAT(diff_runs, n);
    DSM_STAT(diff_bytes, bytes);
    dsm_mig_bytes(pg, bytes);
    dsm_pagestat_diff(pg, runs, n);
    void *twin = dsm_g.twin[pg];
    if (keep) {
        diff_apply(twin, page_sys(pg), runs, n);
        return n;
    }
    dsm_g.twin[pg] = NULL;
    dsm_twin_free(twin);
    return n;
}

/* For a page homed here and kept writable (it has a twin): whether it
 * changed since its twin was taken; the twin is brought up to date. */
static int home_changed(uint32_t pg)
{
    /* No diff goes anywhere: memcmp stops at the first change, and a whole
     * copy is cheaper than applying a many-run diff. */
    if (!memcmp(dsm_g.twin[pg], page_sys(pg), dsm_g.page_size))
        return 0;
    memcpy(dsm_g.twin[pg], page_sys(pg), dsm_g.page_size);
    return 1;
}

/* Page runs handled as one batch: contiguous pages that do not cross a
 * stripe block, so that their page locks are distinct and always taken in
 * increasing order (DSM_PLOCK_STRIPES). */
static uint32_t run_end(const uint32_t *pages, size_t n, size_t i)
{
    size_t j = i;
    while (j + 1 < n && pages[j + 1] == pages[j] + 1 &&
           !starts_stripe_block(pages[j + 1]))
        j++;
    return (uint32_t)(j - i + 1);
}

static void lock_run(uint32_t pg, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        pthread_mutex_lock(page_lock(pg + k));
}

static void unlock_run(uint32_t pg, uint32_t n)
{
    for (uint32_t k = n; k-- > 0;)
        pthread_mutex_unlock(page_lock(pg + k));
}

static inline uint8_t *fetch_mark(uint32_t pg)
{
    return (uint8_t *)dsm_g.area + dsm_off_fetched + pg;
}

/* Whether a home page written here has been fetched by another node since
 * our last notice for it; clears the mark either way (a notice is about to
 * cover the fetch, or nobody fetched).  A fetch that marks after this
 * exchange shows at the next release.  The exchange is a full fence: our
 * writes before it are visible to a get that follows a mark it missed. */
static int fetched_since_notice(uint32_t pg)
{
    return __atomic_exchange_n(fetch_mark(pg), 1, __ATOMIC_SEQ_CST) == 0;
}

void dsm_page_list_push(uint32_t **v, size_t *n, size_t *cap, uint32_t pg)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        uint32_t *d = realloc(*v, c * sizeof *d);
        if (!d)
            ompdsm_fatal("out of memory for a page list of %zu", c);
        *v = d;
        *cap = c;
    }
    (*v)[(*n)++] = pg;
}

/* ---- pages kept writable (OMPDSM_KEEP_WRITABLE) ----
 * On this machine a write fault costs two mprotects whose TLB flushes are
 * the largest single cost of the protocol (docs/performance.md).  A page
 * homed elsewhere that this node wrote in two intervals in a row is
 * likely written in the next one too: at a barrier, where no thread of the
 * node writes shared memory, its diff goes home, its twin takes the
 * diff's bytes and the page stays PG_DIRTY and writable (dsm_g.kept).
 *
 * The modes of a release:
 * - REL_BARRIER (barriers and forks, the node's threads all inside): kept
 *   pages join the batch; a diff that is empty ends the keeping (the page
 *   is protected, its twin freed, no notice); a non-empty one keeps it.
 * - REL_QUIET (the barrier root's hook release, a node receiving a
 *   fork): no thread of the node wrote a kept page since the node's last
 *   release except where dsm_wrote says so (a hook's reduction results),
 *   so only those kept pages join the batch; the release is not an
 *   interval's end, so it counts no idle interval.
 * - REL_LOCK (lock releases, flushes): other threads may be writing, and
 *   what happens next is fine-grained: every kept page is write-protected
 *   and compared with its twin; unchanged ones become read-only copies
 *   with no notice, changed ones join the batch as any dirty page.  So a
 *   kept page never makes a lock release publish a page it did not write,
 *   and the first lock operation after a barrier ends all keeping. */
enum rel_mode { REL_LOCK, REL_BARRIER, REL_QUIET };

/* An unlock skipped its release since the last REL_LOCK release, and
 * when the first one did (lazy release, at the end of the file). */
static int lazy_pending;
static uint64_t lazy_since_ns;
static uint32_t lazy_covering(void);
static volatile uint64_t *lazy_state(void);
static void lazy_covered(uint32_t skips);

/* dsm_g.keep[pg], per page:
 * - KEEP_LEFT: the barriers it may still stay kept without a write;
 * - KEEP_LISTED: in dsm_g.kept;
 * - KEEP_SHARED: homed here and written by another node too: never kept
 *   (the other node's diffs land in it, so its twin would take them for
 *   this node's writes, publishing and copying it at every barrier);
 * - KEEP_WRITTEN: a barrier release found it written, the last time in
 *   the interval (barrier releases so far, mod 256) at KEEP_EPOCH_SHIFT;
 * - KEEP_HIT: written while kept, in its current keeping;
 * - KEEP_GOOD: a keeping of it saved a fault (a write while kept) since
 *   its last keeping that saved none;
 * - KEEP_MISS: its last keeping ended with no write while kept (it saved
 *   nothing and cost scans and an mprotect of its own, out of the
 *   release's runs).
 * A page is kept at a barrier when it is written in this interval and
 * was written at most `gap` barrier intervals before (a page written once,
 * as in an initialization, never is), and stays kept until `gap` barriers
 * in a row found it unwritten.  A first keeping is a guess, made only
 * within KEEP_FIRST intervals; after a keeping that saved a fault the
 * whole gap applies, after one that saved none only a write in the very
 * next interval starts another (NPB IS rewrites its pages every 8-9
 * barriers and lost 15% to keepings that ended just before the write).  The gap is what a saved fault buys: an
 * unwritten kept page costs a scan per barrier (3 us for 64 KiB in cache,
 * 15-20 out of it, where the scans of large arrays run) and a write fault
 * costs 20-90 us on these machines, so the gap is the node's measured
 * average write-fault time over its measured average scan of an unwritten
 * kept page, between 1 and KEEP_LEFT (both averages move by an eighth of
 * each new sample; the gap starts at KEEP_GAP0). */
enum {
    KEEP_LEFT = 0x0f, KEEP_HIT = 0x10, KEEP_SHARED = 0x20, KEEP_LISTED = 0x40,
    KEEP_WRITTEN = 0x80, KEEP_EPOCH_SHIFT = 8, KEEP_MISS = 0x10000,
    KEEP_GOOD = 0x20000,
};
enum { KEEP_GAP0 = 4, KEEP_FIRST = 4 };
static uint8_t keep_epoch; /* barrier releases so far, mod 256 */
static uint64_t fault_avg_ns, scan_avg_ns; /* see above; 0: no sample yet */

static void avg_add(uint64_t *avg, uint64_t ns)
{
    uint64_t a = __atomic_load_n(avg, __ATOMIC_RELAXED);
    __atomic_store_n(avg, a ? a - a / 8 + ns / 8 : ns, __ATOMIC_RELAXED);
}

void dsm_keep_fault_ns(uint64_t ns)
{
    avg_add(&fault_avg_ns, ns);
}

static unsigned keep_gap(void)
{
    if (dsm_g.keep_gap)
        return dsm_g.keep_gap;
    uint64_t f = __atomic_load_n(&fault_avg_ns, __ATOMIC_RELAXED);
    uint64_t c = __atomic_load_n(&scan_avg_ns, __ATOMIC_RELAXED);
    if (!f || !c)
        return KEEP_GAP0;
    uint64_t g = f / c;
    return g < 1 ? 1 : g > KEEP_LEFT ? KEEP_LEFT : (unsigned)g;
}

/* Whether a page written now is worth keeping writable (see above); the
 * fault handler's write-ahead asks the same of the pages after a fault.
 * Read without locks: a stale answer costs a fault or a wasted twin. */
static int keep_ok(uint32_t pg)
{
    uint32_t h = __atomic_load_n(&dsm_g.keep[pg], __ATOMIC_RELAXED);
    uint8_t last = (uint8_t)(h >> KEEP_EPOCH_SHIFT);
    uint8_t ago = (uint8_t)(__atomic_load_n(&keep_epoch, __ATOMIC_RELAXED) - last);
    unsigned limit = keep_gap();
    if (h & KEEP_MISS)
        limit = 1;
    else if (!(h & KEEP_GOOD) && limit > KEEP_FIRST)
        limit = KEEP_FIRST;
    return (h & (KEEP_WRITTEN | KEEP_SHARED)) == KEEP_WRITTEN && ago <= limit;
}

int dsm_keep_recent(uint32_t pg)
{
    return dsm_g.keep_on && keep_ok(pg);
}

/* Counts a barrier release of pg; was_kept: it was kept (writable with no
 * fault) since the last release.  Returns whether it stays kept, if
 * keeping is allowed. */
static int keep_count(uint32_t pg, int written, int was_kept)
{
    uint32_t h = dsm_g.keep[pg];
    uint32_t flags = h & (KEEP_LISTED | KEEP_SHARED | KEEP_HIT | KEEP_MISS | KEEP_GOOD);
    if (written) {
        if (was_kept)
            flags = (flags | KEEP_HIT | KEEP_GOOD) & ~(uint32_t)KEEP_MISS;
        else
            flags &= ~(uint32_t)KEEP_HIT; /* a keeping may start here */
        dsm_g.keep[pg] = flags | KEEP_WRITTEN | keep_gap() |
                         ((uint32_t)keep_epoch << KEEP_EPOCH_SHIFT);
        return 1;
    }
    unsigned left = h & KEEP_LEFT;
    if (left)
        left--;
    if (!left && was_kept && !(h & KEEP_HIT))
        flags = (flags | KEEP_MISS) & ~(uint32_t)KEEP_GOOD;
    dsm_g.keep[pg] = (h & ~(uint32_t)(KEEP_LEFT | KEEP_HIT | KEEP_MISS | KEEP_GOOD)) |
                     flags | left;
    return left > 0;
}

/* Lists pg as kept (dirty_lock held), once. */
static void list_kept(uint32_t pg)
{
    if (dsm_g.keep[pg] & KEEP_LISTED)
        return;
    dsm_g.keep[pg] |= KEEP_LISTED;
    dsm_page_list_push(&dsm_g.kept, &dsm_g.nkept, &dsm_g.kept_cap, pg);
}

void dsm_wrote(const void *p, size_t len)
{
    uint32_t pg, end;
    if (dsm_g.wd != WD_OFF && dsm_g.started) {
        dsm_wd_mark(p, len);
        return;
    }
    if (dsm_g.solo || !dsm_g.started || !dsm_g.keep_on ||
        !dsm_heap_pages(p, len, &pg, &end))
        return;
    pthread_mutex_lock(&dsm_g.dirty_lock);
    for (; pg <= end; pg++)
        if (dsm_g.keep[pg] & KEEP_LISTED)
            dsm_page_list_push(&dsm_g.kept_wrote, &dsm_g.nkept_wrote,
                               &dsm_g.kept_wrote_cap, pg);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
}

/* Protects the pages of [pg, pg+n) marked in mark, one mprotect per
 * stretch. */
static void protect_marked(uint32_t pg, uint32_t n, const uint8_t *mark)
{
    for (uint32_t k = 0; k < n;) {
        uint32_t m = 0;
        while (k + m < n && mark[k + m])
            m++;
        if (m)
            dsm_protect(pg + k, m, PROT_READ);
        k += m ? m : 1;
    }
}

static void sort_unique(uint32_t *v, size_t *n)
{
    if (*n < 2)
        return;
    qsort(v, *n, sizeof *v, cmp_u32);
    size_t w = 1;
    for (size_t i = 1; i < *n; i++)
        if (v[i] != v[w - 1])
            v[w++] = v[i];
    *n = w;
}

/* Hands the kept pages that a release of this mode must see to the batch
 * (v, nv, cap), and keeps the rest kept (see the modes above).  Callers
 * hold release_lock, except the barrier root's hook release. */
static void take_kept(enum rel_mode mode, uint32_t **v, size_t *nv, size_t *cap)
{
    pthread_mutex_lock(&dsm_g.dirty_lock);
    uint32_t *kv = dsm_g.kept, *wv = dsm_g.kept_wrote;
    size_t nk = dsm_g.nkept, nw = dsm_g.nkept_wrote;
    dsm_g.kept_wrote = NULL;
    dsm_g.nkept_wrote = dsm_g.kept_wrote_cap = 0;
    if (mode == REL_QUIET) {
        /* Only what dsm_wrote declared can have changed. */
        for (size_t i = 0; i < nw; i++)
            dsm_page_list_push(v, nv, cap, wv[i]);
        pthread_mutex_unlock(&dsm_g.dirty_lock);
        free(wv);
        return;
    }
    dsm_g.kept = NULL;
    dsm_g.nkept = dsm_g.kept_cap = 0;
    for (size_t i = 0; i < nk; i++) {
        /* Under REL_BARRIER, a page still kept stays marked listed so that
         * release_batch knows it was kept; it unmarks it.  One an acquire
         * or a move took is read-only or invalid, or faulted again and in
         * the dirty list anyway. */
        uint32_t p = kv[i];
        if (mode == REL_BARRIER && dsm_g.state[p] == PG_DIRTY && dsm_g.twin[p])
            dsm_page_list_push(v, nv, cap, p);
        else
            dsm_g.keep[p] &= (uint32_t)~KEEP_LISTED;
    }
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    free(wv);
    if (mode == REL_BARRIER) {
        free(kv);
        return;
    }
    /* REL_LOCK: protect, compare, and hand on the changed ones. */
    sort_unique(kv, &nk);
    uint8_t mark[DSM_PLOCK_STRIPES];
    for (size_t i = 0; i < nk;) {
        uint32_t pg = kv[i], len = run_end(kv, nk, i);
        i += len;
        lock_run(pg, len);
        for (uint32_t k = 0; k < len; k++)
            mark[k] = dsm_g.state[pg + k] == PG_DIRTY && dsm_g.twin[pg + k];
        protect_marked(pg, len, mark);
        for (uint32_t k = 0; k < len; k++) {
            uint32_t p = pg + k;
            if (!mark[k])
                continue; /* no longer kept: an acquire or a move took it */
            if (memcmp(dsm_g.twin[p], page_sys(p), dsm_g.page_size)) {
                dsm_page_list_push(v, nv, cap, p);
            } else {
                dsm_g.state[p] = PG_RO;
                dsm_twin_free(dsm_g.twin[p]);
                dsm_g.twin[p] = NULL;
            }
        }
        unlock_run(pg, len);
    }
    free(kv);
}

/* Under software write detection (WD_ON), take_batch and release_batch
 * work on marks instead of the dirty list: the batch is every page homed
 * elsewhere with marks (its written byte cleared), and the notices of
 * pages homed here that another node fetched since our last notice for
 * them (as for exclusive pages) go with the extra notices: their marks
 * matter only to readers that get them pushed, the master copy has the
 * bytes.  No page changes protection.  A lock release or flush may run
 * beside the node's threads' stores (or on the lazy release helper):
 * marks are then cleared one word at a time before the data is read. */
static void wd_take_batch(uint32_t **pages, size_t *n, struct notice_list *extra,
                          enum rel_mode mode)
{
    pthread_mutex_lock(&dsm_g.dirty_lock);
    *extra = dsm_g.extra_notices;
    memset(&dsm_g.extra_notices, 0, sizeof dsm_g.extra_notices);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    int me = dsm_g.rank, concurrent = mode == REL_LOCK;
    uint32_t *v = NULL;
    size_t nv = 0, cap = 0;
    uint64_t excl = 0;
    for (uint32_t pg = 0; (pg = dsm_wd_next(pg, concurrent)) != UINT32_MAX; pg++) {
        if (dsm_home(pg) != me) {
            dsm_page_list_push(&v, &nv, &cap, pg);
            continue;
        }
        /* Home migration's count under policy diffs: the home's own
         * writes count a page a release (as a write fault did). */
        dsm_mig_bytes(pg, dsm_g.page_size);
        /* Subscribers get the marks pushed; a node that fetched the page
         * since our last notice for it (and did not subscribe before this
         * interval) needs the notice. */
        if (dsm_push_subs(pg) & ~(1ull << me))
            dsm_page_list_push(&v, &nv, &cap, pg);
        if (!dsm_g.excl_on || fetched_since_notice(pg))
            notice_push(extra, pg, 1, me);
        else
            excl++;
    }
    DSM_STAT(exclusive, excl);
    *pages = v;
    *n = nv;
}

static int wd_release_batch(const uint32_t *pages, size_t n, struct notice_list *out,
                            enum rel_mode mode)
{
    static __thread struct comm_run *runs;
    if (!runs && !(runs = malloc((dsm_g.page_size / 2 + 1) * sizeof *runs)))
        ompdsm_fatal("out of memory for a diff");
    int sent = 0, concurrent = mode == REL_LOCK;
    for (size_t i = 0; i < n; i++) {
        uint32_t pg = pages[i];
        pthread_mutex_lock(page_lock(pg));
        size_t nr = dsm_g.state[pg] == PG_INVALID ? 0 /* (sent when invalidated) */
                                                  : dsm_wd_take(pg, runs, concurrent);
        int home = dsm_home(pg);
        if (nr && home == dsm_g.rank) {
            dsm_push_defer(pg, runs, nr); /* (its notice: wd_take_batch) */
        } else if (nr) {
            uint64_t bytes = 0;
            for (size_t k = 0; k < nr; k++)
                bytes += runs[k].len;
            if (comm_putv(home, DSM_REG_HEAP, page_off(pg), page_sys(pg), runs, nr) < 0)
                ompdsm_fatal("diff of page %u to node %d failed", pg, home);
            DSM_STAT(diffs, 1);
            DSM_STAT(diff_runs, nr);
            DSM_STAT(diff_bytes, bytes);
            dsm_mig_bytes(pg, bytes);
            dsm_pagestat_diff(pg, runs, nr);
            dsm_push_defer(pg, runs, nr);
            if (out)
                notice_push(out, pg, 1, dsm_g.rank);
            sent = 1;
        }
        pthread_mutex_unlock(page_lock(pg));
    }
    /* Pushes only once the homes have the bytes (dsm/push.c). */
    if (sent && comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
    return dsm_push_flush() | sent;
}

/* Takes the node's dirty list and extra notices (sorted pages) for a
 * release, with the kept pages the mode wants (take_kept).  Home pages no
 * other node fetched since our last notice for them need no notice and no
 * protection: they join the exclusive list and stay writable.  Exclusive
 * pages another node fetched meanwhile join the batch, to be protected and
 * noticed like any page written here.  Callers hold release_lock, except
 * the barrier root's hook release. */
static void take_batch(uint32_t **pages, size_t *n, struct notice_list *extra,
                       enum rel_mode mode)
{
    if (dsm_g.wd == WD_ON) {
        wd_take_batch(pages, n, extra, mode);
        return;
    }
    pthread_mutex_lock(&dsm_g.dirty_lock);
    uint32_t *v = dsm_g.dirty, *ex = dsm_g.excl;
    size_t nv = dsm_g.ndirty, cap = dsm_g.dirty_cap, nex = dsm_g.nexcl;
    size_t excap = dsm_g.excl_cap;
    dsm_g.dirty = NULL;
    dsm_g.ndirty = dsm_g.dirty_cap = 0;
    dsm_g.excl = NULL;
    dsm_g.nexcl = dsm_g.excl_cap = 0;
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    if (dsm_g.keep_on) {
        /* A page that stopped being kept and was written again is in both
         * lists. */
        take_kept(mode, &v, &nv, &cap);
        sort_unique(v, &nv);
    }
    pthread_mutex_lock(&dsm_g.dirty_lock);
    *extra = dsm_g.extra_notices;
    memset(&dsm_g.extra_notices, 0, sizeof dsm_g.extra_notices);
    pthread_mutex_unlock(&dsm_g.dirty_lock);

    if (dsm_g.excl_on) {
        size_t w = 0;
        for (size_t i = 0; i < nv; i++) {
            uint32_t pg = v[i];
            /* (A page with a twin is kept writable: see the modes.) */
            if (dsm_home(pg) == dsm_g.rank && dsm_g.state[pg] == PG_DIRTY &&
                !dsm_g.twin[pg] && !fetched_since_notice(pg)) {
                dsm_page_list_push(&ex, &nex, &excap, pg);
            } else {
                v[w++] = pg;
            }
        }
        nv = w;
    }
    /* The pages kept at earlier releases (and the ones just added).  The
     * fence orders this node's earlier writes to them before the loads of
     * their marks (see fetched_since_notice). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    size_t keep = 0;
    for (size_t i = 0; i < nex; i++) {
        uint32_t pg = ex[i];
        if (__atomic_load_n(fetch_mark(pg), __ATOMIC_RELAXED) == 0 &&
            fetched_since_notice(pg))
            dsm_page_list_push(&v, &nv, &cap, pg);
        else
            ex[keep++] = pg;
    }
    nex = keep;
    DSM_STAT(exclusive, keep);
    pthread_mutex_lock(&dsm_g.dirty_lock);
    if (dsm_g.nexcl) {
        /* Another release ran meanwhile (not under release_lock): keep
         * both lists, or pages would stay writable with nobody checking
         * their marks. */
        for (size_t i = 0; i < dsm_g.nexcl; i++)
            dsm_page_list_push(&ex, &nex, &excap, dsm_g.excl[i]);
        free(dsm_g.excl);
    }
    dsm_g.excl = ex;
    dsm_g.nexcl = nex;
    dsm_g.excl_cap = excap;
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    *pages = v;
    *n = nv;
    if (nv > 1) /* (v is NULL when nothing is dirty: qsort wants a pointer) */
        qsort(*pages, *n, sizeof **pages, cmp_u32);
}

/* Releases the pages of a batch that are still dirty: sends the diffs of
 * those not homed here, write-protects them (before the diffs under
 * REL_LOCK, where other threads may write; after, in one mprotect per
 * stretch, otherwise), and appends a notice for each page written (a diff
 * that is empty needs none) to out (may be NULL).  Under REL_BARRIER and
 * REL_QUIET, pages written in a row stay writable (dsm_g.kept).  Returns
 * whether diffs went out (they need a fence). */
static int release_batch(const uint32_t *pages, size_t n, struct notice_list *out,
                         enum rel_mode mode)
{
    if (dsm_g.wd == WD_ON)
        return wd_release_batch(pages, n, out, mode);
    int sent = 0;
    uint8_t mark[DSM_PLOCK_STRIPES];
    for (size_t i = 0; i < n;) {
        uint32_t pg = pages[i], len = run_end(pages, n, i);
        i += len;
        lock_run(pg, len);
        /* One mprotect per stretch of still-dirty pages (an acquire on
         * another thread may have cleaned or invalidated some meanwhile);
         * then no thread of this node can write them until we are done. */
        for (uint32_t k = 0; k < len; k++)
            mark[k] = dsm_g.state[pg + k] == PG_DIRTY;
        if (mode == REL_LOCK)
            protect_marked(pg, len, mark);
        for (uint32_t k = 0; k < len; k++) {
            uint32_t p = pg + k;
            if (!mark[k])
                continue;
            /* A page homed here has a twin only while kept: without one,
             * being dirty is all we know, and it counts as written. */
            int home = dsm_home(p), written = 1, was_kept = 0;
            if (mode == REL_BARRIER) {
                pthread_mutex_lock(&dsm_g.dirty_lock);
                was_kept = (dsm_g.keep[p] & KEEP_LISTED) != 0;
                dsm_g.keep[p] &= (uint32_t)~KEEP_LISTED;
                pthread_mutex_unlock(&dsm_g.dirty_lock);
            }
            int keep = mode != REL_LOCK && dsm_g.keep_on &&
                       (was_kept || keep_ok(p));
            uint64_t t0 = was_kept ? ompdsm_now_ns() : 0;
            if (home != dsm_g.rank) {
                written = send_diff(p, home, keep) > 0;
                sent |= written;
            } else if (dsm_g.twin[p]) {
                written = home_changed(p);
            }
            if (was_kept && !written)
                avg_add(&scan_avg_ns, ompdsm_now_ns() - t0);
            int stays = 0;
            if (mode == REL_BARRIER) {
                stays = keep_count(p, written, was_kept) && keep;
            } else if (mode == REL_QUIET && written) {
                /* (take_kept left unchanged kept pages out; this is not an
                 * interval's end) */
                stays = keep;
            }
            if (stays) {
                if (!dsm_g.twin[p])
                    dsm_g.twin[p] = dsm_twin_copy(p);
                mark[k] = 0; /* stays writable */
                DSM_STAT(kept, 1);
                pthread_mutex_lock(&dsm_g.dirty_lock);
                list_kept(p);
                pthread_mutex_unlock(&dsm_g.dirty_lock);
            } else {
                if (dsm_g.twin[p]) {
                    dsm_twin_free(dsm_g.twin[p]);
                    dsm_g.twin[p] = NULL;
                }
                dsm_g.state[p] = PG_RO;
            }
            if (out && written)
                notice_push(out, p, 1, dsm_g.rank);
            OMPDSM_TRACE(OMPDSM_TR_DSM, "release page %u (home %d)%s", p, home,
                         mark[k] ? "" : " kept writable");
        }
        if (mode != REL_LOCK)
            protect_marked(pg, len, mark);
        unlock_run(pg, len);
    }
    return sent;
}

static void release_pages_mode(struct notice_list *out, enum rel_mode mode)
{
    uint32_t *pages;
    size_t n;
    struct notice_list at;
    take_batch(&pages, &n, &at, mode);
    int sent = release_batch(pages, n, out, mode);
    if (mode == REL_BARRIER)
        keep_epoch++;
    free(pages);
    for (size_t i = 0; i < at.n; i++)
        notice_push(out, at.v[i].page, at.v[i].npages, at.v[i].writer);
    notice_free(&at);
    notice_normalize(out);
    DSM_STAT(notices_sent, out->n);
    if (sent && comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
}

void dsm_release_pages(struct notice_list *out)
{
    release_pages_mode(out, REL_QUIET);
}

/* acc = acc merged with the normalized notices v[0..n). */
static void merge_into(struct notice_list *acc, const struct notice *v, size_t n)
{
    struct notice_list m = {0};
    notice_merge(acc->v, acc->n, v, n, &m);
    notice_free(acc);
    *acc = m;
}

/* Records notices this node released in the interval accumulator, and in
 * the since-fork one while a sub-team region tracks it. */
static void record_released(const struct notice_list *rel)
{
    if (!rel->n)
        return;
    pthread_mutex_lock(&dsm_g.interval_lock);
    merge_into(&dsm_g.interval, rel->v, rel->n);
    if (dsm_g.track_since_fork)
        merge_into(&dsm_g.since_fork, rel->v, rel->n);
    pthread_mutex_unlock(&dsm_g.interval_lock);
}

static void release_interval_locked(struct notice_list *published)
{
    struct notice_list rel = {0};
    release_pages_mode(&rel, REL_BARRIER);
    record_released(&rel);
    if (published) {
        notice_free(published);
        *published = rel;
    } else {
        notice_free(&rel);
    }
}

void dsm_release_interval(struct notice_list *published)
{
    /* Pages written under a lock still cached here with its release
     * skipped: a node that takes the lock over before this barrier's end
     * acquires through the log, so they go there first (lazy release). */
    dsm_lazy_flush();
    pthread_mutex_lock(&dsm_g.release_lock);
    release_interval_locked(published);
    pthread_mutex_unlock(&dsm_g.release_lock);
}

void dsm_track_since_fork(int on)
{
    pthread_mutex_lock(&dsm_g.interval_lock);
    if (!on && dsm_g.track_since_fork) {
        /* The join's barrier publishes the interval: it must carry every
         * write since the fork. */
        merge_into(&dsm_g.interval, dsm_g.since_fork.v, dsm_g.since_fork.n);
        notice_free(&dsm_g.since_fork);
    }
    dsm_g.track_since_fork = on;
    pthread_mutex_unlock(&dsm_g.interval_lock);
}

/* ---- per-page choice between invalidating and updating a copy ----
 * A page invalidated by a notice and faulted back before the next notice
 * arrives (a page two nodes write between every barrier, a flag page) pays
 * a fault, two mprotects and a whole-page get per interval; refetching it
 * at the acquire costs the same get with no fault.  So such a page earns
 * DSM_UPDATE_CREDIT updates; each update spends one, and once they are
 * spent the page is invalidated again, which costs nothing more if the page
 * has fallen out of use and earns new credit if it is faulted back at
 * once.  A page that is not used again is refetched at most
 * DSM_UPDATE_CREDIT times for nothing.  OMPDSM_ADAPTIVE_UPDATE=off
 * invalidates always (under OMPDSM_PROTOCOL=update every copy is
 * refetched anyway). */
enum { DSM_UPDATE_CREDIT = 8 };
static uint8_t *upd_credit;      /* per page: updates left */
static uint32_t *upd_stale_gen;  /* per page: apply_gen + 1 at invalidation */
static uint32_t apply_gen;       /* notice applications so far */
static int upd_on;
static pthread_once_t upd_once = PTHREAD_ONCE_INIT;

static void upd_init(void)
{
    static const char *const onoff[] = {"on", "off"};
    upd_on = ompdsm_env_choice("OMPDSM_ADAPTIVE_UPDATE", onoff, 2, 0) == 0 &&
             !dsm_g.update_protocol;
    if (!upd_on)
        return;
    upd_credit = dsm_table(dsm_g.npages, "update credit");
    upd_stale_gen = dsm_table((size_t)dsm_g.npages * sizeof *upd_stale_gen,
                              "invalidation generation");
}

void dsm_refetched(uint32_t pg)
{
    pthread_once(&upd_once, upd_init);
    if (!upd_on)
        return;
    uint32_t g = __atomic_load_n(&upd_stale_gen[pg], __ATOMIC_RELAXED);
    if (g && g == __atomic_load_n(&apply_gen, __ATOMIC_RELAXED))
        __atomic_store_n(&upd_credit[pg], DSM_UPDATE_CREDIT, __ATOMIC_RELAXED);
    __atomic_store_n(&upd_stale_gen[pg], 0, __ATOMIC_RELAXED);
}

/* Whether a stale valid copy of pg is refetched rather than invalidated;
 * spends a credit (page lock held). */
static int upd_take(uint32_t pg)
{
    if (dsm_g.update_protocol)
        return 1;
    if (!upd_on || !upd_credit[pg])
        return 0;
    upd_credit[pg]--;
    return 1;
}

/* Makes the valid copies among pages [pg, pg+n) stale: none is homed here,
 * all lie within one stripe block (DSM_PLOCK_STRIPES).  Under the page locks: a dirty
 * page (another thread wrote it since this acquire released) first sends
 * its diff, its notice going out with the next release; invalid pages are
 * left alone; the rest are invalidated with one mprotect per stretch, or
 * refetched (update protocol) with one get per stretch with one home. */
/* WD_ON: sends the marks of valid page pg (page lock held) before an
 * acquire makes it stale.  With several threads a node the page is
 * protected first, so that a store of another thread either is marked
 * already (the pass marks before and after each store) or faults and
 * waits for the page lock; the caller then invalidates it (or, in
 * dsm_release_page, makes it writable again).  Returns whether a diff
 * went out. */
static int wd_flush_page(uint32_t pg)
{
    static __thread struct comm_run *runs;
    if (dsm_g.state[pg] != PG_RO)
        return 0;
    int concurrent = dsm_g.tpn > 1;
    if (concurrent)
        dsm_protect(pg, 1, PROT_NONE);
    else if (!dsm_wd_marked(pg))
        return 0;
    if (!runs && !(runs = malloc((dsm_g.page_size / 2 + 1) * sizeof *runs)))
        ompdsm_fatal("out of memory for a diff");
    size_t n = dsm_wd_take(pg, runs, concurrent);
    if (!n)
        return 0;
    int home = dsm_home(pg);
    if (comm_putv(home, DSM_REG_HEAP, page_off(pg), page_sys(pg), runs, n) < 0 ||
        (dsm_push_subs(pg) && comm_fence(home) < 0))
        ompdsm_fatal("diff of page %u to node %d failed", pg, home);
    dsm_push_send(pg, runs, n); /* (after the home has them: dsm/push.c) */
    DSM_STAT(diffs, 1);
    DSM_STAT(diff_runs, n);
    pthread_mutex_lock(&dsm_g.dirty_lock);
    notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    return 1;
}

/* What an acquire does to one copy (stale_run); ST_MERGE: a refetch into
 * a copy that pushes may land in (dsm_push_refetch). */
enum { ST_KEEP, ST_REFETCH, ST_INVAL, ST_MERGE };

/* The decision for valid page p (page lock held): a copy that the
 * writers push to (WD_ON, subscribed) stays, unless the notice is forced
 * (atomics, which push nothing); a page being subscribed is refetched so
 * that it enters its subscription valid; otherwise the adaptive choice.
 * Under WD_ON with several threads a node nothing is refetched into a
 * page another thread may be writing: it is invalidated. */
static int stale_decide(uint32_t p, int force)
{
    int wd = dsm_g.wd == WD_ON;
    if (wd && dsm_push_subscribed(p) && !force)
        return ST_KEEP;
    if (wd && dsm_push_merge_needed(p))
        return ST_MERGE;
    if (wd && dsm_g.tpn > 1)
        return ST_INVAL;
    return upd_take(p) ? ST_REFETCH : ST_INVAL;
}

static void stale_run(uint32_t pg, uint32_t n, int force)
{
    lock_run(pg, n);
    int sent = 0;
    uint8_t what[DSM_PLOCK_STRIPES];
    for (uint32_t k = 0; k < n; k++) {
        uint32_t p = pg + k;
        if (dsm_g.wd == WD_ON) {
            what[k] = dsm_g.state[p] == PG_RO ? stale_decide(p, force) : ST_KEEP;
            if (what[k] != ST_KEEP)
                sent |= wd_flush_page(p);
            continue;
        }
        if (dsm_g.state[p] == PG_DIRTY) {
            dsm_protect(p, 1, PROT_READ);
            dsm_g.state[p] = PG_RO;
            if (send_diff(p, dsm_home(p), 0)) {
                pthread_mutex_lock(&dsm_g.dirty_lock);
                notice_push(&dsm_g.extra_notices, p, 1, dsm_g.rank);
                pthread_mutex_unlock(&dsm_g.dirty_lock);
                sent = 1;
            } /* (else a page kept writable and not written since) */
        }
        what[k] = dsm_g.state[p] == PG_RO ? stale_decide(p, force) : ST_KEEP;
    }
    if (sent && comm_fence(-1) < 0)
        ompdsm_fatal("completing early diffs failed");
    /* Runs of pages with one decision: one get per home for refetches,
     * one mprotect for invalidations. */
    for (uint32_t k = 0; k < n;) {
        uint32_t s0 = pg + k, h = 1;
        if (what[k] == ST_KEEP) {
            k++;
            continue;
        }
        if (what[k] == ST_MERGE) {
            /* (a page wd_flush_page protected for its flush is writable
             * again once merged) */
            dsm_push_refetch(s0, dsm_home(s0));
            if (dsm_g.tpn > 1)
                dsm_protect(s0, 1, PROT_READ | PROT_WRITE);
            k++;
            continue;
        }
        int home = what[k] == ST_REFETCH ? dsm_home(s0) : -1;
        while (k + h < n && what[k + h] == what[k] &&
               (what[k] != ST_REFETCH || dsm_home(s0 + h) == home))
            h++;
        if (what[k] == ST_REFETCH) {
            dsm_mark_fetch(s0, h, home);
            int rc = comm_get(home, DSM_REG_HEAP, page_off(s0), page_sys(s0),
                              (size_t)h << dsm_g.page_shift);
            if (rc < 0)
                ompdsm_fatal("update of pages %u-%u from node %d failed", s0,
                             s0 + h - 1, home);
            DSM_STAT(pages_fetched, h);
            DSM_STAT(updates, h);
        } else {
            uint32_t gen = __atomic_load_n(&apply_gen, __ATOMIC_RELAXED) + 1;
            for (uint32_t q = 0; q < h; q++) {
                dsm_g.state[s0 + q] = PG_INVALID;
                if (upd_on)
                    __atomic_store_n(&upd_stale_gen[s0 + q], gen, __ATOMIC_RELAXED);
            }
            dsm_protect(s0, h, PROT_NONE);
            DSM_STAT(invalidations, h);
        }
        k += h;
    }
    unlock_run(pg, n);
}

void dsm_release_page(uint32_t pg)
{
    pthread_mutex_lock(page_lock(pg));
    if (dsm_g.wd == WD_ON && dsm_home(pg) != dsm_g.rank) {
        if (wd_flush_page(pg)) {
            if (dsm_g.tpn > 1)
                dsm_protect(pg, 1, PROT_READ | PROT_WRITE);
            if (comm_fence(dsm_home(pg)) < 0)
                ompdsm_fatal("completing the diff of page %u failed", pg);
        }
        pthread_mutex_unlock(page_lock(pg));
        return;
    }
    if (dsm_g.state[pg] == PG_DIRTY && dsm_home(pg) != dsm_g.rank) {
        dsm_protect(pg, 1, PROT_READ);
        dsm_g.state[pg] = PG_RO;
        if (send_diff(pg, dsm_home(pg), 0)) {
            pthread_mutex_lock(&dsm_g.dirty_lock);
            notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
            pthread_mutex_unlock(&dsm_g.dirty_lock);
            if (comm_fence(dsm_home(pg)) < 0)
                ompdsm_fatal("completing the diff of page %u failed", pg);
        }
    }
    pthread_mutex_unlock(page_lock(pg));
}

/* Collects the pages of [pg, pg+n) that may hold a copy (valid, dirty or
 * being fetched) and are not homed here, and hands them to stale_run in
 * batches.  The unlocked state check is safe: a page read as INVALID has
 * no fetch in flight that started before our notices' data was at home. */
static void stale_range(uint32_t pg, uint32_t n, int force)
{
    int me = dsm_g.rank;
    uint32_t start = 0, len = 0;
    for (uint32_t k = 0; k <= n; k++) {
        uint32_t p = pg + k;
        /* A page whose home we never learned is not ours either: we
         * learn the homes of what we allocate at once. */
        int want = k < n &&
                   __atomic_load_n(&dsm_g.state[p], __ATOMIC_SEQ_CST) != PG_INVALID &&
                   dsm_home_known(p) != me;
        if (want && len && starts_stripe_block(p)) {
            stale_run(start, len, force);
            len = 0;
        }
        if (want) {
            if (!len)
                start = p;
            len++;
        } else if (len) {
            stale_run(start, len, force);
            len = 0;
        }
    }
}

/* Another node wrote pages [pg, pg+n): those homed here are never kept
 * (KEEP_SHARED), and one kept now stops being kept.  Called at a barrier
 * after its release, or at an acquire, which under lazy release need not
 * follow a release: a kept page that changed since its twin gets its
 * notice with the next release (an extra notice), as a dirty page that an
 * acquire invalidates does (stale_run). */
static void keep_shared(uint32_t pg, uint32_t n)
{
    int me = dsm_g.rank;
    for (uint32_t p = pg; p < pg + n; p++) {
        if (dsm_home_known(p) != me)
            continue;
        pthread_mutex_lock(page_lock(p));
        dsm_g.keep[p] |= KEEP_SHARED;
        if (dsm_g.state[p] == PG_DIRTY && dsm_g.twin[p]) {
            dsm_protect(p, 1, PROT_READ);
            dsm_g.state[p] = PG_RO;
            if (memcmp(dsm_g.twin[p], page_sys(p), dsm_g.page_size)) {
                pthread_mutex_lock(&dsm_g.dirty_lock);
                notice_push(&dsm_g.extra_notices, p, 1, me);
                pthread_mutex_unlock(&dsm_g.dirty_lock);
            }
            dsm_twin_free(dsm_g.twin[p]);
            dsm_g.twin[p] = NULL;
        }
        pthread_mutex_unlock(page_lock(p));
    }
}

void dsm_apply_notices(const struct notice *v, size_t n)
{
    int me = dsm_g.rank;
    pthread_once(&upd_once, upd_init);
    for (size_t i = 0; i < n; i++) {
        if (v[i].writer == me)
            continue; /* only we wrote it: our copy is what the home has */
        DSM_STAT(notices_applied, 1);
        stale_range(v[i].page, v[i].npages, v[i].writer == NOTICE_FORCE);
        if (dsm_g.keep_on)
            keep_shared(v[i].page, v[i].npages);
    }
    /* A fault from here to the next application follows this one's
     * invalidations at once (dsm_refetched). */
    __atomic_fetch_add(&apply_gen, 1, __ATOMIC_RELAXED);
}

void dsm_invalidate_all(void)
{
    stale_range(0, dsm_g.npages, 1);
}

/* ---- notice logs, one per node ----
 * A release outside a barrier writes its notices into its node's own log
 * (a ring in its DSM_REG_AREA: no message) and publishes how far the log
 * is complete in its positions (dsm_off_vpos: word 0 the entries written,
 * word 1 + j how far into node j's log the node acquired, its own tail
 * for j = itself).  An acquire that knows the releaser (a lock handed
 * over by a grant or taken over from a cached queue node) reads that
 * node's positions and then exactly the entries it has not applied of the
 * logs they name: everything the releaser wrote or had itself acquired
 * before it released, so happens-before is kept through any chain of
 * locks (a node's positions are the maximum of every acquire it made).
 * An acquire without a known releaser (a flush, dsm_acquire, a lock found
 * free in its queue) reads every node's positions and takes their
 * maximum.  Barriers carry each node's tail and move every position to
 * it.  (Before: one totally ordered log at node 0, read and written by
 * every lock operation of every node.) */

static inline uint64_t *vpos_local(void)
{
    return (uint64_t *)(dsm_g.area + dsm_off_vpos);
}

/* After the positions, a copy of the entries of the node's last release
 * when they are few (DSM_LOG_MIRROR), so that an acquire from a node whose
 * last release is all it lacks (a lock handed back and forth) reads the
 * positions and the entries in one get:
 *   mirror[0] = first index, mirror[1] = end index, then the entries as
 *   struct notice, then a check word equal to the end index.
 * The check word is cleared before the rest changes and set last; a
 * reader reads forward and trusts the copy only if the check word it
 * read last equals the end index it read first (a seqlock). */
static inline uint64_t *mirror_local(void)
{
    return vpos_local() + dsm_g.size + 1;
}

static inline size_t vpos_words(void)
{
    return DSM_VPOS_WORDS(dsm_g.size);
}

static inline struct dsm_log_entry *log_local(void)
{
    return (struct dsm_log_entry *)(dsm_g.area + dsm_off_log);
}

uint64_t dsm_log_tail(void)
{
    return __atomic_load_n(&vpos_local()[1 + dsm_g.rank], __ATOMIC_ACQUIRE);
}

/* Writes n entries into this node's ring after its tail (release_lock
 * held), each sequence word last, and publishes the count written (word
 * 0): a node that sees a diff of this release land (a flag at its home)
 * before the tail moves finds the entries written but incomplete and
 * waits (acquire_all).  Returns the tail the entries end at. */
static uint64_t log_append(const struct notice *v, size_t n)
{
    uint64_t *pos = vpos_local();
    uint64_t start = __atomic_load_n(&pos[1 + dsm_g.rank], __ATOMIC_RELAXED);
    struct dsm_log_entry *ring = log_local();
    for (size_t i = 0; i < n; i++) {
        struct dsm_log_entry *e = &ring[(start + i) % DSM_LOG_CAP];
        /* seq, read first, and pad2, read last, are cleared before the
         * contents change and set after: a reader that finds both equal
         * to the index it wants read the contents of that lap (log_read;
         * a seqlock, needed only when a reader lags by half the ring). */
        __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->pad2, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        e->page = v[i].page;
        e->npages = v[i].npages;
        e->writer = v[i].writer;
        __atomic_store_n(&e->pad2, start + i + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&e->seq, start + i + 1, __ATOMIC_RELEASE);
    }
    uint64_t *m = mirror_local();
    __atomic_store_n(&m[2 + 2 * DSM_LOG_MIRROR], 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (n <= DSM_LOG_MIRROR) {
        __atomic_store_n(&m[0], start, __ATOMIC_RELAXED);
        __atomic_store_n(&m[1], start + n, __ATOMIC_RELAXED);
        memcpy(&m[2], v, n * sizeof *v);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&m[2 + 2 * DSM_LOG_MIRROR], start + n, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&pos[0], start + n, __ATOMIC_SEQ_CST);
    return start + n;
}

/* After the diffs of the entries are at their homes: they are complete. */
static void log_complete(uint64_t tail)
{
    __atomic_store_n(&vpos_local()[1 + dsm_g.rank], tail, __ATOMIC_SEQ_CST);
}

/* More ranges than a quarter of the ring: publish one entry telling
 * everyone to drop every copy instead. */
static const struct notice *log_shape(const struct notice *v, size_t *n,
                                      struct notice *all)
{
    if (*n <= DSM_LOG_CAP / 4)
        return v;
    *all = (struct notice){0, dsm_g.npages, NOTICE_MULTI, 0};
    *n = 1;
    return all;
}

/* Reads entries [from, to) of node j's log into l; 0, or -1 if some were
 * overwritten by a later lap (the caller then drops every copy). */
static int log_read(int j, uint64_t from, uint64_t to, struct notice_list *l)
{
    if (to - from > DSM_LOG_CAP / 2)
        return -1; /* (the writer may lap what we read meanwhile) */
    size_t n = (size_t)(to - from);
    struct dsm_log_entry *e = malloc(n * sizeof *e);
    if (!e)
        ompdsm_fatal("out of memory reading %zu notices", n);
    size_t done = 0;
    while (done < n) {
        uint64_t idx = (from + done) % DSM_LOG_CAP;
        size_t cnt = n - done;
        if (idx + cnt > DSM_LOG_CAP)
            cnt = DSM_LOG_CAP - idx;
        COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_log + idx * sizeof *e,
                            e + done, cnt * sizeof *e));
        done += cnt;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].seq != from + i + 1 || e[i].pad2 != from + i + 1) {
            rc = -1;
            break;
        }
        notice_push(l, e[i].page, e[i].npages, e[i].writer);
    }
    free(e);
    return rc;
}

/* Node j's positions and mirror (vpos_words()) into w. */
static void vpos_get(int j, uint64_t *w)
{
    COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos, w, vpos_words() * 8));
}

/* Entries [from, to) of node j's log from the mirror in w (vpos_get), if
 * it holds them; 0 if it does. */
static int mirror_read(const uint64_t *w, uint64_t from, uint64_t to,
                       struct notice_list *l)
{
    const uint64_t *m = w + dsm_g.size + 1;
    if (m[2 + 2 * DSM_LOG_MIRROR] != m[1] || m[1] != to || m[0] > from)
        return -1;
    const struct notice *e = (const struct notice *)&m[2];
    for (uint64_t i = from; i < to; i++)
        notice_push(l, e[i - m[0]].page, e[i - m[0]].npages, e[i - m[0]].writer);
    return 0;
}

/* Applies the entries of every log j up to target[j] (acquire_lock
 * held), and publishes the new positions; node from's mirror is in w
 * (from < 0: none). */
static void acquire_to(const uint64_t *target, int from, const uint64_t *w)
{
    int me = dsm_g.rank;
    struct notice_list l = {0};
    int lost = 0;
    for (int j = 0; j < dsm_g.size && !lost; j++) {
        if (j == me || target[j] <= dsm_g.log_pos[j])
            continue;
        if (j == from && mirror_read(w, dsm_g.log_pos[j], target[j], &l) == 0) {
            DSM_STAT(log_mirrored, 1);
            continue;
        }
        DSM_STAT(log_reads, 1);
        if (log_read(j, dsm_g.log_pos[j], target[j], &l) < 0)
            lost = 1;
    }
    if (lost) {
        /* Some notices are gone: drop every copy. */
        dsm_invalidate_all();
    } else if (l.n) {
        __atomic_fetch_add(&dsm_g.log_applied, l.n, __ATOMIC_RELAXED);
        notice_normalize(&l);
        dsm_apply_notices(l.v, l.n);
    }
    notice_free(&l);
    uint64_t *pos = vpos_local();
    for (int j = 0; j < dsm_g.size; j++)
        if (j != me && target[j] > dsm_g.log_pos[j]) {
            dsm_g.log_pos[j] = target[j];
            __atomic_store_n(&pos[1 + j], target[j], __ATOMIC_RELEASE);
        }
}

/* An acquire from every node: the maximum of their positions, after
 * waiting for each node's written entries to be complete. */
static void acquire_all(uint64_t *target, uint64_t *w)
{
    int me = dsm_g.rank, n = dsm_g.size;
    for (int j = 0; j < n; j++)
        target[j] = dsm_g.log_pos[j];
    for (int j = 0; j < n; j++) {
        if (j == me)
            continue;
        /* (The positions only: the mirror serves acquires from one node.) */
        COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos, w,
                            ((size_t)n + 1) * 8));
        /* Entries written whose diffs may still be on their way: a node
         * that saw one of those diffs (a flag at its home) must not read
         * the data before them; wait briefly for the tail. */
        for (int tries = 0; w[1 + j] < w[0]; tries++) {
            if (tries > 100)
                sched_yield();
            uint64_t t;
            COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos + (1 + (size_t)j) * 8,
                                &t, 8));
            if (t >= w[0])
                w[1 + j] = t;
        }
        for (int k = 0; k < n; k++)
            if (k != me && w[1 + k] > target[k])
                target[k] = w[1 + k];
    }
}

/* Pushes are serialized, snapshot and put together, so that a node's
 * mailbox for us never goes back to an older snapshot (the transports
 * deliver one node's puts to another in the order they were issued). */
static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;

void dsm_push_positions(int to)
{
    size_t nw = vpos_words();
    uint64_t off = dsm_off_mbox + (uint64_t)dsm_g.rank * nw * 8;
    static const uint64_t zero;
    pthread_mutex_lock(&push_lock);
    /* The check word first, on its own: a reader that finds it cleared or
     * not matching ignores the copied entries (mirror_read). */
    COMM_CHECK(comm_put(to, DSM_REG_AREA, off + (nw - 1) * 8, &zero, 8));
    COMM_CHECK(comm_put(to, DSM_REG_AREA, off, vpos_local(), nw * 8));
    pthread_mutex_unlock(&push_lock);
}

/* Node from's positions as it pushed them to us (dsm_push_positions). */
static void mbox_read(int from, uint64_t *w)
{
    size_t nw = vpos_words();
    const uint64_t *m = (const uint64_t *)(dsm_g.area + dsm_off_mbox) +
                        (size_t)from * nw;
    for (size_t i = 0; i < nw; i++)
        w[i] = __atomic_load_n(&m[i], __ATOMIC_ACQUIRE);
}

/* The acquire of dsm_acquire_from after its release. */
static void acquire_core(int from, int pushed)
{
    if (from == dsm_g.rank)
        return; /* released here: nothing new (the node's positions are
                 * shared by its threads) */
    int n = dsm_g.size;
    uint64_t *target = malloc((size_t)n * sizeof *target);
    uint64_t *w = malloc(vpos_words() * sizeof *w);
    if (!target || !w)
        ompdsm_fatal("out of memory for log positions");
    pthread_mutex_lock(&dsm_g.acquire_lock);
    if (from < 0) {
        acquire_all(target, w);
    } else {
        if (pushed) {
            mbox_read(from, w);
            DSM_STAT(log_pushed, 1);
        } else {
            vpos_get(from, w);
        }
        for (int j = 0; j < n; j++)
            target[j] = w[1 + j] > dsm_g.log_pos[j] ? w[1 + j] : dsm_g.log_pos[j];
    }
    acquire_to(target, from, w);
    pthread_mutex_unlock(&dsm_g.acquire_lock);
    free(target);
    free(w);
}

void dsm_acquire_from(int from, int pushed)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    DSM_STAT(acquires, 1);
    /* Pages about to be invalidated must not hold unreleased writes. */
    dsm_release();
    acquire_core(from, pushed);
}

void dsm_log_advance(const uint64_t *tails)
{
    pthread_mutex_lock(&dsm_g.acquire_lock);
    uint64_t *pos = vpos_local();
    for (int j = 0; j < dsm_g.size; j++)
        if (j != dsm_g.rank && tails[j] > dsm_g.log_pos[j]) {
            dsm_g.log_pos[j] = tails[j];
            __atomic_store_n(&pos[1 + j], tails[j], __ATOMIC_RELEASE);
        }
    pthread_mutex_unlock(&dsm_g.acquire_lock);
}

/* ---- the public release/acquire/flush ---- */

/* A release published through the log (locks, flushes, forks). */
static void release_logged(enum rel_mode mode)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    DSM_STAT(releases, 1);
    pthread_mutex_lock(&dsm_g.release_lock);
    uint32_t skips = 0;
    if (mode == REL_LOCK) { /* (takes every dirty and kept page: see above) */
        __atomic_store_n(&lazy_pending, 0, __ATOMIC_RELAXED);
        skips = lazy_covering();
    }
    uint32_t *pages;
    size_t n;
    struct notice_list pre = {0};
    take_batch(&pages, &n, &pre, mode);
    if (!n && !pre.n) {
        free(pages);
        if (mode == REL_LOCK)
            lazy_covered(skips);
        pthread_mutex_unlock(&dsm_g.release_lock);
        return;
    }
    /* Notices first, from the dirty list (a superset if another thread
     * cleans a page meanwhile), and their log entries written before any
     * diff goes out.  A node that is home of a page written here (a flag)
     * sees the new bytes the moment the diff lands, before it acquired; an
     * acquire it then does finds the entries written and waits until they
     * are complete, that is, until every diff of this release has landed
     * (acquire_all). */
    for (size_t i = 0; i < n; i++)
        notice_push(&pre, pages[i], 1, dsm_g.rank);
    notice_normalize(&pre);
    struct notice all;
    size_t cnt = pre.n;
    const struct notice *v = log_shape(pre.v, &cnt, &all);
    uint64_t tail = log_append(v, cnt);
    if (release_batch(pages, n, NULL, mode) && comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
    free(pages);
    DSM_STAT(notices_sent, pre.n);
    /* (recorded before the tail moves: a barrier that finds an entry below
     * a tail it carries finds its notices in the interval, dsm_barrier) */
    record_released(&pre);
    log_complete(tail);
    if (mode == REL_LOCK)
        lazy_covered(skips);
    pthread_mutex_unlock(&dsm_g.release_lock);
    notice_free(&pre);
}

void dsm_release(void)
{
    release_logged(REL_LOCK);
}

void dsm_release_quiet(void)
{
    release_logged(REL_QUIET);
}

void dsm_acquire(void)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    dsm_acquire_from(-1, 0);
}

/* Whether a REL_LOCK release would publish nothing now: nothing dirty,
 * kept or noticed early, no lazily skipped unlock left uncovered, and no
 * exclusive home page fetched by another node since its last notice (the
 * same fence and mark loads as take_batch, without clearing a mark).  A
 * thread that writes after this snapshot writes after the flush. */
static int release_idle(void)
{
    if (__atomic_load_n(&lazy_pending, __ATOMIC_ACQUIRE))
        return 0;
    uint64_t lw = __atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE);
    if ((uint32_t)(lw >> 32) != (uint32_t)lw)
        return 0;
    pthread_mutex_lock(&dsm_g.dirty_lock);
    int idle = !dsm_g.ndirty && !dsm_g.nkept && !dsm_g.nkept_wrote &&
               !dsm_g.extra_notices.n && !(dsm_g.wd == WD_ON && dsm_wd_any());
    if (idle && dsm_g.nexcl) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        for (size_t i = 0; i < dsm_g.nexcl && idle; i++)
            if (__atomic_load_n(fetch_mark(dsm_g.excl[i]), __ATOMIC_RELAXED) == 0)
                idle = 0;
    }
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    return idle;
}

/* A flush is a release and an acquire from every node.  A flush with
 * nothing to publish (a spin on a flag: `while (!flag) flush`) makes no
 * release at all (no release_lock, no batch, no count in dsm_releases),
 * and its acquire reads each node's positions (one small get per node)
 * and walks no log when they did not move (dsm_flush_idle counts such
 * flushes). */
void dsm_flush(void)
{
    if (dsm_g.solo || !dsm_g.started) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return;
    }
    DSM_STAT(flushes, 1);
    DSM_STAT(acquires, 1);
    int idle = release_idle();
    if (!idle)
        dsm_release();
    uint64_t before = __atomic_load_n(&dsm_g.log_applied, __ATOMIC_RELAXED);
    acquire_core(-1, 0);
    /* A spin loop of flushes (NPB LU's pipeline) must let the node it waits
     * for run when there are more nodes than cores. */
    if (__atomic_load_n(&dsm_g.log_applied, __ATOMIC_RELAXED) == before) {
        if (idle)
            DSM_STAT(flush_idle, 1);
        sched_yield();
    }
}

void dsm_flush_range(const void *p, size_t len)
{
    (void)p;
    (void)len;
    dsm_flush();
}

/* ---- volatile objects ---- */

static int vol_hybrid; /* dsm_volatile_threads: several threads per node */

void dsm_volatile_threads(int threads_per_node)
{
    vol_hybrid = threads_per_node > 1;
    dsm_g.tpn = threads_per_node;
}

/* Calls fn on each piece of [p, p+len) that lies within one heap page. */
static void vol_pieces(const volatile void *p, size_t len,
                       void (*fn)(uint32_t pg, size_t off, size_t n))
{
    const char *a = (const char *)p, *end = a + len;
    while (a < end) {
        uint32_t pg = page_of(a);
        size_t off = (size_t)(a - page_app(pg));
        size_t n = dsm_g.page_size - off;
        if (n > (size_t)(end - a))
            n = (size_t)(end - a);
        fn(pg, off, n);
        a += n;
    }
}

/* Refetches bytes [off, off+n) of page pg from its home into this node's
 * copy, and into its twin when the page is dirty, so that the next diff
 * does not take the home's value for a write of ours; bytes of a dirty page
 * that another thread of this node stored and has not yet written through
 * are kept.  An invalid copy is fetched whole (the read would fault
 * anyway). */
static void vol_refetch(uint32_t pg, size_t off, size_t n)
{
    int home = dsm_home(pg);
    if (home == dsm_g.rank)
        return; /* the home's copy is the master: diffs land in it */
    for (;;) {
        uint8_t st = __atomic_load_n(&dsm_g.state[pg], __ATOMIC_ACQUIRE);
        if (st == PG_INVALID || st == PG_FETCHING) {
            dsm_page_access(pg, 0);
            continue;
        }
        pthread_mutex_lock(page_lock(pg));
        st = dsm_g.state[pg];
        if (st == PG_RO || st == PG_DIRTY) {
            char buf[256], *b = n <= sizeof buf ? buf : malloc(n);
            if (!b)
                ompdsm_fatal("out of memory refetching %zu volatile bytes", n);
            if (comm_get(home, DSM_REG_HEAP, page_off(pg) + off, b, n) < 0)
                ompdsm_fatal("refetch of a volatile object (page %u) from "
                             "node %d failed", pg, home);
            if (dsm_g.wd == WD_ON && vol_hybrid) {
                /* A marked byte was stored by a thread of this node whose
                 * write-through is still to come: it stays. */
                unsigned char *c = (unsigned char *)page_sys(pg) + off;
                for (size_t i = 0; i < n; i++)
                    if (!dsm_wd_byte_marked(pg, off + i))
                        c[i] = ((const unsigned char *)b)[i];
            } else if (st == PG_DIRTY && dsm_g.twin[pg] && vol_hybrid) {
                /* A byte that differs from the twin was stored by a thread
                 * of this node whose write-through is still to come (hybrid
                 * nodes): it stays.  The others take the home's value, each
                 * with a compare-swap from the twin's, so that such a store
                 * landing meanwhile wins too. */
                unsigned char *c = (unsigned char *)page_sys(pg) + off;
                unsigned char *tw = (unsigned char *)dsm_g.twin[pg] + off;
                const unsigned char *h = (const unsigned char *)b;
                for (size_t i = 0; i < n; i++) {
                    unsigned char exp = tw[i];
                    if (h[i] != exp &&
                        __atomic_compare_exchange_n(&c[i], &exp, h[i], 0,
                                                    __ATOMIC_SEQ_CST,
                                                    __ATOMIC_RELAXED))
                        tw[i] = h[i];
                }
            } else {
                memcpy(page_sys(pg) + off, b, n);
                if (st == PG_DIRTY && dsm_g.twin[pg])
                    memcpy((char *)dsm_g.twin[pg] + off, b, n);
            }
            if (b != buf)
                free(b);
            pthread_mutex_unlock(page_lock(pg));
            return;
        }
        pthread_mutex_unlock(page_lock(pg));
    }
}

/* Sends bytes [off, off+n) of page pg to its home now, and makes the twin
 * agree, so that a later diff does not send them again (over a newer
 * value another node wrote through meanwhile). */
static void vol_write_through(uint32_t pg, size_t off, size_t n)
{
    int home = dsm_home(pg);
    if (home == dsm_g.rank)
        return; /* written in place into the master copy */
    pthread_mutex_lock(page_lock(pg));
    if (dsm_g.state[pg] == PG_DIRTY && dsm_g.twin[pg]) {
        if (vol_hybrid &&
            !memcmp((char *)dsm_g.twin[pg] + off, page_sys(pg) + off, n)) {
            /* a sibling thread wrote these bytes through (or a release
             * sent them) after our store: the home has them, or a newer
             * value from another node that ours must not overwrite */
            pthread_mutex_unlock(page_lock(pg));
            return;
        }
        memcpy((char *)dsm_g.twin[pg] + off, page_sys(pg) + off, n);
    }
    if (dsm_g.wd == WD_ON)
        dsm_wd_unmark(pg, off, n); /* (sent now: a later diff must not) */
    if (comm_put(home, DSM_REG_HEAP, page_off(pg) + off, page_sys(pg) + off,
                 n) < 0 ||
        comm_fence(home) < 0)
        ompdsm_fatal("write-through of a volatile object (page %u) to node %d "
                     "failed", pg, home);
    pthread_mutex_unlock(page_lock(pg));
}

/* A spin loop on a volatile object must let the writer run when there are
 * more nodes than cores: after VOL_SPINS reads of one object that saw the
 * same bytes, each further such read yields. */
enum { VOL_SPINS = 64 };
static __thread const volatile void *vol_last;
static __thread uint64_t vol_last_val;
static __thread unsigned vol_same;

void dsm_volatile_read(const volatile void *p, size_t len)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (dsm_g.solo || !dsm_g.started || !dsm_in_heap((const void *)p) || !len)
        return;
    vol_pieces(p, len, vol_refetch);
    if (len <= 8) {
        uint64_t v = 0;
        memcpy(&v, (const void *)p, len);
        if (p == vol_last && v == vol_last_val) {
            if (++vol_same > VOL_SPINS)
                sched_yield();
        } else {
            vol_last = p;
            vol_last_val = v;
            vol_same = 0;
        }
    }
}

void dsm_volatile_write(const volatile void *p, size_t len)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (dsm_g.solo || !dsm_g.started || !dsm_in_heap((const void *)p) || !len)
        return;
    vol_pieces(p, len, vol_write_through);
    vol_last = NULL;
}

/* ---- lazy release (OMPDSM_LAZY_RELEASE, docs/design.md "Lazy release") ----
 * An unlock that leaves its lock cached here skips its release
 * (dsm_lazy_skip): the pages written under it stay dirty and writable.
 * Whoever takes such a lock over from another node (lock.c: the CACHED
 * word carries QN_LAZY) makes sure we released since (dsm_lazy_request):
 * - our lazy_state word counts skipped releases (high half) and, of them,
 *   the ones a completed release through the log covers (low half); the
 *   skip is counted before the unlock's compare-swap, so a taker that
 *   reads both halves equal knows the release it needs is done;
 * - otherwise it bumps its count in our dsm_off_lazy_ask table and waits
 *   for our ack of that count in its dsm_off_lazy_ack table.  A thread of
 *   ours that does a lock operation, or our release helper thread, which
 *   polls, takes a snapshot of the counts, releases everything dirty here
 *   through the log (the release any unlock did before), and only then
 *   acks each count it saw.
 * The taker then acquires as after any lock transfer: the log holds our
 * notices, their diffs are at their homes.  The helper is a thread of its
 * own because a release waits on other nodes (the log reservation,
 * fences), which the comm service thread must never do; it polls rather
 * than sleeping on the node's doorbell, where every notify to the node
 * would wake it. */
static pthread_t lazy_thread;
static int lazy_started, lazy_stop_flag;
static uint64_t *lazy_served; /* per requester: the count acked */

static volatile uint64_t *lazy_word(size_t base, int r)
{
    return (volatile uint64_t *)(dsm_g.area + base + (size_t)r * 8);
}

static volatile uint64_t *lazy_state(void)
{
    return &((struct dsm_area_hdr *)dsm_g.area)->lazy_state;
}

/* Under release_lock, before a REL_LOCK release takes its batch: the
 * skips it covers. */
static uint32_t lazy_covering(void)
{
    return (uint32_t)(__atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE) >> 32);
}

/* Under release_lock, after that release is in the log: publishes it. */
static void lazy_covered(uint32_t skips)
{
    uint64_t w = __atomic_load_n(lazy_state(), __ATOMIC_RELAXED), nw;
    do {
        nw = (w & ~(uint64_t)UINT32_MAX) | skips;
    } while (!__atomic_compare_exchange_n(lazy_state(), &w, nw, 0,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Writes under a lock released lazily become visible at most about this
 * long after the unlock, even to a node that never takes the lock: at the
 * node's next lazy unlock after this time, or at its helper's next poll. */
enum { LAZY_MAX_NS = 1000 * 1000 };

static int lazy_overdue(void)
{
    return __atomic_load_n(&lazy_pending, __ATOMIC_ACQUIRE) &&
           ompdsm_now_ns() - __atomic_load_n(&lazy_since_ns, __ATOMIC_RELAXED) >
               LAZY_MAX_NS;
}

/* Whether another node asked for a release not yet served. */
static int lazy_unserved(void)
{
    for (int r = 0; r < dsm_g.size; r++)
        if (__atomic_load_n(lazy_word(dsm_off_lazy_ask, r), __ATOMIC_ACQUIRE) >
            __atomic_load_n(&lazy_served[r], __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* Serves the requests there are: one release, then an ack of each count
 * seen before it (lazy_serve_lock held). */
static pthread_mutex_t lazy_serve_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *lazy_seen;

static void lazy_serve(void)
{
    for (int r = 0; r < dsm_g.size; r++)
        lazy_seen[r] = __atomic_load_n(lazy_word(dsm_off_lazy_ask, r),
                                       __ATOMIC_ACQUIRE);
    dsm_release(); /* (under release_lock: after any release in progress) */
    for (int r = 0; r < dsm_g.size; r++) {
        if (lazy_seen[r] <= lazy_served[r])
            continue;
        __atomic_store_n(&lazy_served[r], lazy_seen[r], __ATOMIC_RELAXED);
        DSM_STAT(lazy_served, 1);
        dsm_push_positions(r); /* (the ack follows it: comm_notify) */
        COMM_CHECK(comm_notify(r, DSM_REG_AREA,
                               dsm_off_lazy_ack + (size_t)dsm_g.rank * 8,
                               lazy_seen[r]));
    }
}

/* The helper polls every LAZY_POLL_MIN_NS while a skipped release is not
 * yet covered (a request may come), backing off to LAZY_POLL_MAX_NS while
 * everything is covered (a taker then needs nobody). */
enum { LAZY_POLL_MIN_NS = 100 * 1000, LAZY_POLL_MAX_NS = 20 * 1000 * 1000 };

static void *lazy_helper(void *arg)
{
    (void)arg;
    uint64_t period = LAZY_POLL_MIN_NS;
    while (!__atomic_load_n(&lazy_stop_flag, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, (long)period};
        nanosleep(&ts, NULL);
        if (lazy_unserved() || lazy_overdue()) {
            pthread_mutex_lock(&lazy_serve_lock);
            lazy_serve();
            pthread_mutex_unlock(&lazy_serve_lock);
        }
        uint64_t w = __atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE);
        if ((uint32_t)(w >> 32) != (uint32_t)w)
            period = LAZY_POLL_MIN_NS;
        else if (period < LAZY_POLL_MAX_NS)
            period *= 2;
    }
    return NULL;
}

/* A lock operation of this node's threads serves waiting requests itself:
 * a thread that is running answers sooner than the polling helper.  Only
 * where the scan is short. */
enum { LAZY_POLL_NODES = 16 };

void dsm_lazy_poll(void)
{
    if (!lazy_started || dsm_g.size > LAZY_POLL_NODES || !lazy_unserved() ||
        pthread_mutex_trylock(&lazy_serve_lock))
        return;
    lazy_serve();
    pthread_mutex_unlock(&lazy_serve_lock);
}

void dsm_lazy_start(void)
{
    lazy_served = calloc((size_t)dsm_g.size, sizeof *lazy_served);
    lazy_seen = calloc((size_t)dsm_g.size, sizeof *lazy_seen);
    if (!lazy_served || !lazy_seen)
        ompdsm_fatal("out of memory for the lazy release helper");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&lazy_thread, NULL, lazy_helper, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        ompdsm_fatal("cannot start the lazy release helper: %s", strerror(rc));
    lazy_started = 1;
}

void dsm_lazy_stop(void)
{
    if (!lazy_started)
        return;
    __atomic_store_n(&lazy_stop_flag, 1, __ATOMIC_RELEASE);
    pthread_join(lazy_thread, NULL);
    lazy_started = 0;
}

int dsm_lazy_request(int holder)
{
    uint64_t w;
    /* (an atomic read) */
    COMM_CHECK(comm_fetch_add(holder, DSM_REG_AREA,
                              offsetof(struct dsm_area_hdr, lazy_state), 0, &w));
    if ((uint32_t)(w >> 32) == (uint32_t)w) {
        DSM_STAT(lazy_covered, 1);
        return 0;
    }
    uint64_t old;
    COMM_CHECK(comm_fetch_add(holder, DSM_REG_AREA,
                              dsm_off_lazy_ask + (size_t)dsm_g.rank * 8, 1, &old));
    /* Wakes the holder's threads that wait (dsm_lazy_wait_ge), not its
     * helper. */
    COMM_CHECK(comm_notify(holder, DSM_REG_AREA,
                           offsetof(struct dsm_area_hdr, lazy_bell), old + 1));
    if (dsm_lazy_wait_ge(lazy_word(dsm_off_lazy_ack, holder), old + 1) < 0)
        ompdsm_fatal("waiting for node %d's lazy release: the job is failing",
                     holder);
    DSM_STAT(lazy_requests, 1);
    return 1;
}

struct lazy_wait {
    const volatile uint64_t *p;
    uint64_t target;
};

/* (No comm operation in a wait's predicate: the serving happens outside
 * the wait.) */
static int lazy_wait_pred(void *arg)
{
    const struct lazy_wait *w = arg;
    return __atomic_load_n(w->p, __ATOMIC_ACQUIRE) >= w->target ||
           lazy_unserved();
}

int dsm_lazy_wait_ge(const volatile uint64_t *p, uint64_t target)
{
    if (!lazy_started || dsm_g.size > LAZY_POLL_NODES)
        return comm_wait_ge(p, target);
    struct lazy_wait w = {p, target};
    for (;;) {
        int rc = comm_wait_until(lazy_wait_pred, &w);
        if (rc < 0 || __atomic_load_n(p, __ATOMIC_ACQUIRE) >= target)
            return rc;
        dsm_lazy_poll();
        sched_yield(); /* (the helper may be serving: no busy loop) */
    }
}

void dsm_lazy_skip(void)
{
    __atomic_fetch_add(lazy_state(), (uint64_t)1 << 32, __ATOMIC_ACQ_REL);
    if (!__atomic_load_n(&lazy_pending, __ATOMIC_RELAXED)) {
        __atomic_store_n(&lazy_since_ns, ompdsm_now_ns(), __ATOMIC_RELAXED);
        __atomic_store_n(&lazy_pending, 1, __ATOMIC_RELEASE);
    }
}

void dsm_lazy_skipped(void)
{
    if (lazy_overdue())
        dsm_release();
    else
        dsm_lazy_poll();
}

void dsm_lazy_flush(void)
{
    /* The counts, not lazy_pending: a release that has taken its batch
     * but not yet written its log entries covers nothing yet. */
    uint64_t w = lazy_started ? __atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE) : 0;
    if ((uint32_t)(w >> 32) != (uint32_t)w)
        dsm_release();
}
