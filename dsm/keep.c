/* dsm/keep.c - pages kept writable across barriers (OMPDSM_KEEP_WRITABLE):
 * per page, the write history that decides whether a page written at a
 * barrier stays writable instead of being write-protected and faulted
 * again; the node's list of kept pages and what each mode of release does
 * with them; and the guess the fault handler's write-ahead asks of it
 * (dsm_keep_recent).  release.c sends the kept pages' diffs and notices;
 * this file decides which pages stay kept. */
#include "dsm_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* On this machine a write fault costs two mprotects whose TLB flushes are
 * the largest single cost of the protocol (docs/performance.md).  A page
 * homed elsewhere that this node wrote in two intervals in a row is
 * likely written in the next one too: at a barrier, where no thread of the
 * node writes shared memory, its diff goes home, its twin takes the
 * diff's bytes and the page stays PG_DIRTY and writable (dsm_g.kept).
 *
 * The modes of a release (enum rel_mode, dsm_int.h):
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
 *   and the first lock operation after a barrier ends all keeping.
 *   Except a lock release (not a flush) on a node with one thread
 *   (dsm_solo_writer): nobody writes beside it, so it keeps pages as a
 *   barrier does: each kept page is compared with its twin; a changed one
 *   joins the batch (release.c sends its diff and keeps it writable, as
 *   it keeps every page the release finds written); an unchanged one stays
 *   kept, up to LOCK_IDLE_MAX releases in a row that wrote other pages,
 *   and is then write-protected, its twin freed.  (A flush keeps nothing:
 *   docs/design.md, "Pages kept writable across lock releases".) */

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
 * next interval starts another (a program that rewrites its pages every
 * few barriers, as NPB IS does, otherwise loses time to keepings that end
 * just before the write).  The gap is what a saved fault buys: an
 * unwritten kept page costs a scan per barrier (more out of cache, where
 * the scans of large arrays run) and a write fault costs several such
 * scans (docs/design.md, "Pages kept writable", has the figures), so the
 * gap is the node's measured average write-fault time over its measured
 * average scan of an unwritten kept page, between 1 and KEEP_LEFT (both averages move by an eighth of
 * each new sample; the gap starts at KEEP_GAP0). */
enum {
    KEEP_LEFT = 0x0f, KEEP_HIT = 0x10, KEEP_SHARED = 0x20, KEEP_LISTED = 0x40,
    KEEP_WRITTEN = 0x80, KEEP_EPOCH_SHIFT = 8, KEEP_MISS = 0x10000,
    KEEP_GOOD = 0x20000,
};
enum { KEEP_GAP0 = 4, KEEP_FIRST = 4 };
/* Solo lock releases in a row that wrote something, but not this kept
 * page, in the bits at KEEP_IDLE_SHIFT; at LOCK_IDLE_MAX the keeping ends
 * (take_solo).  A lock handed back and forth writes its pages at every
 * turn and never reaches it; a spin on a flag writes nothing and counts
 * for no page. */
enum { KEEP_IDLE_SHIFT = 18, KEEP_IDLE_MASK = 0xfu << KEEP_IDLE_SHIFT };
/* A solo lock release found the page written in this barrier interval:
 * the barrier counts it as written (dsm_keep_count), though its own diff,
 * against the twin that release brought up to date, may be empty. */
enum { KEEP_LOCKW = 1u << 22 };
enum { LOCK_IDLE_MAX = 15 };
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

void dsm_keep_scan_ns(uint64_t ns)
{
    avg_add(&scan_avg_ns, ns);
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
int dsm_keep_ok(uint32_t pg)
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
    return dsm_g.keep_on && dsm_keep_ok(pg);
}

/* A write to kept page pg that a release found: home migration counts
 * the write fault keeping saved (policy faults) and, at the home, a whole
 * page (policy diffs, as at a home's write fault); a diff counts its own
 * bytes. */
static void count_saved_fault(uint32_t pg)
{
    dsm_mig_fault(pg, 1);
    if (dsm_home(pg) == dsm_g.rank)
        dsm_mig_bytes(pg, dsm_g.page_size);
}

int dsm_keep_count(uint32_t pg, int written, int was_kept)
{
    uint32_t h = dsm_g.keep[pg];
    if (written && was_kept && (h & KEEP_LOCKW))
        count_saved_fault(pg); /* (since the solo lock release that kept it) */
    written |= (h & KEEP_LOCKW) != 0; /* (dropped below) */
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

void dsm_keep_list(uint32_t pg)
{
    pthread_mutex_lock(&dsm_g.dirty_lock);
    if (!(dsm_g.keep[pg] & KEEP_LISTED)) {
        dsm_g.keep[pg] |= KEEP_LISTED;
        dsm_page_list_push(&dsm_g.kept, &dsm_g.nkept, &dsm_g.kept_cap, pg);
    }
    pthread_mutex_unlock(&dsm_g.dirty_lock);
}

int dsm_keep_unlist(uint32_t pg)
{
    pthread_mutex_lock(&dsm_g.dirty_lock);
    int was_kept = (dsm_g.keep[pg] & KEEP_LISTED) != 0;
    dsm_g.keep[pg] &= (uint32_t)~KEEP_LISTED;
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    return was_kept;
}

void dsm_keep_interval_end(void)
{
    keep_epoch++;
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

void dsm_keep_lock_written(uint32_t pg)
{
    dsm_g.keep[pg] = (dsm_g.keep[pg] & ~(uint32_t)KEEP_IDLE_MASK) | KEEP_LOCKW;
}

/* A solo lock release's part (see the top): kv[0..nk) are the kept pages
 * taken from the list; the changed ones join the batch (v), still marked
 * listed (release_batch unlists them and lists them again when they stay
 * kept); the unchanged ones go back to the list or, after LOCK_IDLE_MAX
 * releases without a write, stop being kept.  A release that finds
 * nothing written at all (no changed kept page homed elsewhere, *nv == 0:
 * no page faulted) counts for no page: it is a spin on a flag or a poll
 * of a lock, between the writes of a loop that keeps writing these
 * pages. */
static void take_solo(uint32_t *kv, size_t nk, uint32_t **v, size_t *nv, size_t *cap)
{
    dsm_page_list_sort_unique(kv, &nk);
    size_t back = 0, changed = 0, faulted = *nv;
    for (size_t i = 0; i < nk; i++) {
        uint32_t p = kv[i];
        pthread_mutex_lock(page_lock(p));
        if (dsm_g.state[p] != PG_DIRTY || !dsm_g.twin[p]) {
            /* (an acquire or a move took it) */
            dsm_g.keep[p] &= (uint32_t)~(KEEP_LISTED | KEEP_IDLE_MASK);
        } else if (memcmp(dsm_g.twin[p], page_sys(p), dsm_g.page_size)) {
            dsm_page_list_push(v, nv, cap, p);
            /* (a page homed here also changes when another node's diff
             * lands: no sign that this node wrote) */
            changed += dsm_home(p) != dsm_g.rank;
            count_saved_fault(p);
        } else {
            kv[back++] = p;
        }
        pthread_mutex_unlock(page_lock(p));
    }
    size_t stay = 0;
    for (size_t i = 0; i < back; i++) {
        uint32_t p = kv[i];
        if (!faulted && !changed) {
            kv[stay++] = p;
            continue;
        }
        pthread_mutex_lock(page_lock(p));
        uint32_t idle = ((dsm_g.keep[p] & KEEP_IDLE_MASK) >> KEEP_IDLE_SHIFT) + 1;
        if (idle >= LOCK_IDLE_MAX) {
            dsm_protect(p, 1, PROT_READ);
            dsm_g.state[p] = PG_RO;
            dsm_twin_free(dsm_g.twin[p]);
            dsm_g.twin[p] = NULL;
            dsm_g.keep[p] &= (uint32_t)~(KEEP_LISTED | KEEP_IDLE_MASK);
        } else {
            dsm_g.keep[p] = (dsm_g.keep[p] & ~(uint32_t)KEEP_IDLE_MASK) |
                            idle << KEEP_IDLE_SHIFT;
            kv[stay++] = p;
        }
        pthread_mutex_unlock(page_lock(p));
    }
    pthread_mutex_lock(&dsm_g.dirty_lock);
    for (size_t i = 0; i < stay; i++)
        dsm_page_list_push(&dsm_g.kept, &dsm_g.nkept, &dsm_g.kept_cap, kv[i]);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    free(kv);
}

void dsm_keep_take(enum rel_mode mode, int solo, uint32_t **v, size_t *nv,
                   size_t *cap)
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
    if (mode == REL_LOCK && solo) {
        pthread_mutex_unlock(&dsm_g.dirty_lock);
        free(wv);
        take_solo(kv, nk, v, nv, cap);
        return;
    }
    for (size_t i = 0; i < nk; i++) {
        /* Under REL_BARRIER, a page still kept stays marked listed so that
         * release_batch knows it was kept; it unmarks it (dsm_keep_unlist).  One an acquire
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
    dsm_page_list_sort_unique(kv, &nk);
    uint8_t mark[DSM_PLOCK_STRIPES];
    for (size_t i = 0; i < nk;) {
        uint32_t pg = kv[i], len = page_run_len(kv, nk, i);
        i += len;
        page_run_lock(pg, len);
        for (uint32_t k = 0; k < len; k++)
            mark[k] = dsm_g.state[pg + k] == PG_DIRTY && dsm_g.twin[pg + k];
        dsm_protect_marked(pg, len, mark);
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
        page_run_unlock(pg, len);
    }
    free(kv);
}

void dsm_keep_shared(uint32_t pg, uint32_t n)
{
    int me = dsm_g.rank, solo = dsm_solo_writer();
    for (uint32_t p = pg; p < pg + n; p++) {
        if (dsm_home_known(p) != me)
            continue;
        pthread_mutex_lock(page_lock(p));
        dsm_g.keep[p] |= KEEP_SHARED;
        if (dsm_g.state[p] == PG_DIRTY && dsm_g.twin[p] && solo) {
            /* One thread a node: the page stays kept, its twin takes the
             * other writers' bytes (which landed here, the home) so that
             * the next release does not take them for ours.  Every caller
             * released just before, with no write of this node since (an
             * acquire releases first, a barrier's release comes before its
             * notices, a fork's receiver wrote nothing since its last
             * release), so no byte of ours is left unpublished in them. */
            memcpy(dsm_g.twin[p], page_sys(p), dsm_g.page_size);
        } else if (dsm_g.state[p] == PG_DIRTY && dsm_g.twin[p]) {
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
