/* dsm/release.c - releases, and the public release, acquire and flush.
 * A release takes the node's batch (its dirty list, the exclusive home
 * pages another node fetched since their last notice, and the kept pages
 * its mode must see: keep.c), sends the diffs of the pages homed
 * elsewhere to their homes and write-protects the pages.  Its notices
 * reach the other nodes in a barrier's or fork's message (barrier.c) or
 * through the node's notice log (noticelog.c: lock releases, flushes, a
 * fork's receiver).  An acquire releases and then applies what the logs
 * name (noticelog.c, invalidate.c); a flush is both.  Also here: the
 * early diff of a single page (dsm_release_page). */
#include "dsm_int.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>

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

void dsm_diff_put(uint32_t pg, int home, const struct comm_run *runs, size_t n)
{
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
}

/* Sends the diff of one dirty non-home page to its home (page lock held,
 * page already write-protected or no thread of the node writing).  Returns
 * the number of changed runs.  keep: the twin is brought up to date and
 * stays (the caller frees it if the page does not stay writable after
 * all); otherwise it is freed. */
static size_t dsm_send_diff(uint32_t pg, int home, int keep)
{
    struct comm_run *runs;
    size_t n = page_diff(pg, &runs);
    if (dsm_g.wd == WD_CHECK)
        dsm_wd_check(pg, runs, n);
    dsm_diff_put(pg, home, runs, n);
    void *twin = dsm_g.twin[pg];
    if (keep) {
        diff_apply(twin, page_sys(pg), runs, n);
        return n;
    }
    dsm_g.twin[pg] = NULL;
    dsm_twin_free(twin);
    return n;
}

/* The diff of a dirty non-home page sent ahead of a release, its notice
 * queued with the next release's extra notices; keep as dsm_send_diff.
 * Returns whether it changed (a kept page may not have). */
static int diff_early(uint32_t pg, int keep)
{
    if (!dsm_send_diff(pg, dsm_home(pg), keep))
        return 0;
    pthread_mutex_lock(&dsm_g.dirty_lock);
    notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    return 1;
}

int dsm_flush_dirty(uint32_t pg)
{
    dsm_protect(pg, 1, PROT_READ);
    dsm_g.state[pg] = PG_RO;
    return diff_early(pg, 0);
}

int dsm_rebase_diff(uint32_t pg)
{
    return diff_early(pg, 1);
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
        int pushed = (dsm_push_subs(pg) & ~(1ull << me)) != 0;
        if (pushed) /* (wd_release_batch takes its marks) */
            dsm_page_list_push(&v, &nv, &cap, pg);
        if (dsm_g.excl_on && !fetched_since_notice(pg)) {
            excl++;
            dsm_snap_home_kept(pg, pushed);
            continue;
        }
        /* A release through the log copies what it wrote into a
         * snapshot that readers apply to their copies (snap.c); such a
         * copy stays valid without fetching the page again, so later
         * writes here must be noticed too: the page stays marked as
         * fetched (only a notice of the whole page makes every copy fetch
         * again, or drop itself). */
        uint64_t snap = dsm_snap_home(pg, mode != REL_BARRIER && !pushed, pushed,
                                      concurrent);
        if (snap) {
            notice_push_snap(extra, pg, me, snap);
            __atomic_store_n(fetch_mark(pg), 0, __ATOMIC_SEQ_CST);
        } else {
            notice_push(extra, pg, 1, me);
        }
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
            dsm_diff_put(pg, home, runs, nr);
            dsm_push_defer(pg, runs, nr);
            if (out)
                notice_push(out, pg, 1, dsm_g.rank);
            sent = 1;
        }
        pthread_mutex_unlock(page_lock(pg));
    }
    /* Pushes only once the homes have the bytes (dsm/push.c); on 2 nodes
     * that push their positions, the one peer is the home and every later
     * message to it comes after the diffs (dsm_log_diffs_ordered). */
    if (sent && !dsm_log_diffs_ordered() && comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
    return dsm_push_flush() | sent;
}

/* Takes the node's dirty list and extra notices (sorted pages) for a
 * release, with the kept pages the mode wants (dsm_keep_take).  Home pages
 * no other node fetched since our last notice for them need no notice and
 * no protection: they join the exclusive list and stay writable.  Exclusive
 * pages another node fetched meanwhile join the batch, to be protected and
 * noticed like any page written here.  Callers hold release_lock, except
 * the barrier root's hook release. */
static void take_batch(uint32_t **pages, size_t *n, struct notice_list *extra,
                       enum rel_mode mode, int solo)
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
        dsm_keep_take(mode, solo, &v, &nv, &cap);
        dsm_page_list_sort_unique(v, &nv);
    }
    pthread_mutex_lock(&dsm_g.dirty_lock);
    *extra = dsm_g.extra_notices;
    memset(&dsm_g.extra_notices, 0, sizeof dsm_g.extra_notices);
    pthread_mutex_unlock(&dsm_g.dirty_lock);

    if (dsm_g.excl_on) {
        size_t w = 0;
        for (size_t i = 0; i < nv; i++) {
            uint32_t pg = v[i];
            /* (A page with a twin is kept writable: keep.c.) */
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
        dsm_page_list_sort(*pages, *n);
}

/* Releases the pages of a batch that are still dirty: sends the diffs of
 * those not homed here, write-protects them (before the diffs under
 * REL_LOCK, where other threads may write; after, in one mprotect per
 * stretch, otherwise), and appends a notice for each page written (a diff
 * that is empty needs none) to out (may be NULL).  Under REL_BARRIER and
 * REL_QUIET, pages written in a row stay writable (dsm_g.kept), and
 * under a solo REL_LOCK (dsm_solo_writer) every page written does.
 * Returns whether diffs went out (they need a fence). */
static int release_batch(const uint32_t *pages, size_t n, struct notice_list *out,
                         enum rel_mode mode, int solo)
{
    if (dsm_g.wd == WD_ON)
        return wd_release_batch(pages, n, out, mode);
    int sent = 0;
    uint8_t mark[DSM_PLOCK_STRIPES];
    for (size_t i = 0; i < n;) {
        uint32_t pg = pages[i], len = page_run_len(pages, n, i);
        i += len;
        page_run_lock(pg, len);
        /* One mprotect per stretch of still-dirty pages (an acquire on
         * another thread may have cleaned or invalidated some meanwhile);
         * then no thread of this node can write them until we are done. */
        for (uint32_t k = 0; k < len; k++)
            mark[k] = dsm_g.state[pg + k] == PG_DIRTY;
        if (mode == REL_LOCK && !solo)
            dsm_protect_marked(pg, len, mark);
        for (uint32_t k = 0; k < len; k++) {
            uint32_t p = pg + k;
            if (!mark[k])
                continue;
            /* A page homed here has a twin only while kept: without one,
             * being dirty is all we know, and it counts as written. */
            int home = dsm_home(p), written = 1, was_kept = 0;
            if (mode == REL_BARRIER || solo)
                was_kept = dsm_keep_unlist(p);
            int keep = solo || (mode != REL_LOCK && dsm_g.keep_on &&
                                (was_kept || dsm_keep_ok(p)));
            uint64_t t0 = was_kept ? ompdsm_now_ns() : 0;
            if (home != dsm_g.rank) {
                written = dsm_send_diff(p, home, keep) > 0;
                sent |= written;
            } else if (dsm_g.twin[p]) {
                written = home_changed(p);
            }
            if (was_kept && !written)
                dsm_keep_scan_ns(ompdsm_now_ns() - t0);
            int stays = 0;
            if (mode == REL_BARRIER) {
                stays = dsm_keep_count(p, written, was_kept) && keep;
            } else if (mode == REL_QUIET && written) {
                /* (dsm_keep_take left unchanged kept pages out; this is
                 * not an interval's end) */
                stays = keep;
            } else if (solo) {
                /* Every page written stays: one that faulted since the
                 * last release was written even where its diff is empty
                 * (the same value stored again, as a loop's `last = i`);
                 * a kept one is here because it changed. */
                stays = keep;
            }
            if (stays) {
                if (!dsm_g.twin[p])
                    dsm_g.twin[p] = dsm_twin_copy(p);
                mark[k] = 0; /* stays writable */
                if (solo) {
                    DSM_STAT(lock_kept, 1);
                    dsm_keep_lock_written(p);
                } else {
                    DSM_STAT(kept, 1);
                }
                dsm_keep_list(p);
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
        if (mode != REL_LOCK || solo)
            dsm_protect_marked(pg, len, mark);
        page_run_unlock(pg, len);
    }
    return sent;
}

static void release_pages_mode(struct notice_list *out, enum rel_mode mode)
{
    uint32_t *pages;
    size_t n;
    struct notice_list at;
    take_batch(&pages, &n, &at, mode, 0);
    int sent = release_batch(pages, n, out, mode, 0);
    if (mode == REL_BARRIER)
        dsm_keep_interval_end();
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

void dsm_release_page(uint32_t pg)
{
    pthread_mutex_lock(page_lock(pg));
    if (dsm_g.wd == WD_ON && dsm_home(pg) != dsm_g.rank) {
        int valid = dsm_g.state[pg] == PG_RO;
        if (dsm_wd_flush(pg) && comm_fence(dsm_home(pg)) < 0)
            ompdsm_fatal("completing the diff of page %u failed", pg);
        /* (with several threads a node, the flush protected the page) */
        if (valid && dsm_g.tpn > 1)
            dsm_protect(pg, 1, PROT_READ | PROT_WRITE);
        pthread_mutex_unlock(page_lock(pg));
        return;
    }
    if (dsm_g.state[pg] == PG_DIRTY && dsm_home(pg) != dsm_g.rank &&
        dsm_flush_dirty(pg) && comm_fence(dsm_home(pg)) < 0)
        ompdsm_fatal("completing the diff of page %u failed", pg);
    pthread_mutex_unlock(page_lock(pg));
}

/* ---- the public release/acquire/flush ---- */

int dsm_solo_writer(void)
{
    return dsm_g.keep_on && dsm_g.lock_keep && dsm_g.wd == WD_OFF && dsm_g.tpn <= 1 &&
           !dsm_lazy_on_helper();
}

/* A release published through the log (locks, flushes, forks).  keep: a
 * lock release (not a flush), which keeps pages written on a node of one
 * thread (dsm_solo_writer). */
static void release_logged(enum rel_mode mode, int keep)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    DSM_STAT(releases, 1);
    pthread_mutex_lock(&dsm_g.release_lock);
    uint32_t skips = 0;
    if (mode == REL_LOCK) /* (takes every dirty and kept page: keep.c) */
        skips = dsm_lazy_covering();
    int solo = mode == REL_LOCK && keep && dsm_solo_writer();
    uint32_t *pages;
    size_t n;
    struct notice_list pre = {0};
    take_batch(&pages, &n, &pre, mode, solo);
    if (!n && !pre.n) {
        free(pages);
        if (mode == REL_LOCK)
            dsm_lazy_covered(skips);
        pthread_mutex_unlock(&dsm_g.release_lock);
        if (mode == REL_LOCK)
            dsm_lazy_after_cover();
        return;
    }
    /* Notices first, from the dirty list (a superset if another thread
     * cleans a page meanwhile), and their log entries written before any
     * diff goes out.  A node that is home of a page written here (a flag)
     * sees the new bytes the moment the diff lands, before it acquired; an
     * acquire it then does finds the entries written and waits until they
     * are complete, that is, until every diff of this release has landed
     * (noticelog.c, acquire_all). */
    for (size_t i = 0; i < n; i++)
        notice_push(&pre, pages[i], 1, dsm_g.rank);
    notice_normalize(&pre);
    uint64_t tail = dsm_log_append(pre.v, pre.n);
    /* (the fence also lands the count written that the append pushed to
     * its tcp peers on 3 nodes or more: noticelog.c) */
    int sent = release_batch(pages, n, NULL, mode, solo);
    if (((sent && !dsm_log_diffs_ordered()) || dsm_log_fence_alone()) &&
        comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
    free(pages);
    DSM_STAT(notices_sent, pre.n);
    /* (recorded before the tail moves: a barrier that finds an entry below
     * a tail it carries finds its notices in the interval, dsm_barrier) */
    record_released(&pre);
    dsm_log_complete(tail);
    if (mode == REL_LOCK)
        dsm_lazy_covered(skips);
    pthread_mutex_unlock(&dsm_g.release_lock);
    notice_free(&pre);
    if (mode == REL_LOCK)
        dsm_lazy_after_cover();
}

void dsm_release(void)
{
    release_logged(REL_LOCK, 1);
}

void dsm_release_quiet(void)
{
    release_logged(REL_QUIET, 0);
}

void dsm_acquire(void)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    dsm_acquire_from(-1, 0);
}

void dsm_acquire_from(int from, int pushed)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    DSM_STAT(acquires, 1);
    /* Pages about to be invalidated must not hold unreleased writes. */
    dsm_release();
    dsm_log_acquire(from, pushed);
}

void dsm_release_push(int to)
{
    if (dsm_g.solo || !dsm_g.started || to == dsm_g.rank)
        return;
    dsm_push_positions(to);
}

void dsm_acquire_pushed(int from)
{
    dsm_acquire_from(from, 1);
}

/* Whether a REL_LOCK release would publish nothing now: nothing dirty,
 * kept or noticed early, no lazily skipped unlock left uncovered, and no
 * exclusive home page fetched by another node since its last notice (the
 * same fence and mark loads as take_batch, without clearing a mark).  A
 * thread that writes after this snapshot writes after the flush. */
static int release_idle(void)
{
    if (dsm_lazy_owed())
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

/* Flushes in a row of this thread that applied nothing new (reset by
 * one that did): a spin on a flag yields at once, a loop that flushes
 * every iteration with nothing to wait for (the suites' tasks) only at
 * the 1st, 2nd, 4th ... 64th such flush, then every 64th (FLUSH_YIELD_EVERY). */
enum { FLUSH_YIELD_EVERY = 64 };
static __thread uint32_t flush_stale;

static int flush_should_yield(void)
{
    uint32_t k = ++flush_stale;
    return k <= FLUSH_YIELD_EVERY ? !(k & (k - 1)) : !(k % FLUSH_YIELD_EVERY);
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
        release_logged(REL_LOCK, 0);
    uint64_t before = __atomic_load_n(&dsm_g.log_applied, __ATOMIC_RELAXED);
    dsm_log_acquire(-1, 0);
    /* A spin loop of flushes (NPB LU's pipeline) must let the node it waits
     * for run when there are more nodes than cores; a yield that finds
     * another process to run costs a context switch (most of the suites'
     * tasks' time, one per flush), hence the backoff. */
    if (__atomic_load_n(&dsm_g.log_applied, __ATOMIC_RELAXED) == before) {
        if (idle)
            DSM_STAT(flush_idle, 1);
        if (flush_should_yield()) {
            DSM_STAT(flush_yields, 1);
            sched_yield();
        }
    } else {
        flush_stale = 0;
    }
}

void dsm_flush_range(const void *p, size_t len)
{
    (void)p;
    (void)len;
    dsm_flush();
}
