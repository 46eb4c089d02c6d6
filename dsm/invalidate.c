/* dsm/invalidate.c - applying write notices: every copy here of a page
 * another node wrote is made stale, by invalidating it or by refetching it
 * from its home (the update protocol, or a page that earned update credit
 * by being faulted back right after its last invalidation); a dirty copy
 * first sends its diff.  Pages kept writable that another node wrote stop
 * being kept (keep.c). */
#include "dsm_int.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

/* Invalidate or update, per page.  A page invalidated by a notice and
 * faulted back before the next notice arrives (a page two nodes write
 * between every barrier, a flag page) pays a fault, two mprotects and a
 * whole-page get per interval; refetching it at the acquire costs the same
 * get with no fault.  So such a page earns DSM_UPDATE_CREDIT updates; each
 * update spends one, and once they are spent the page is invalidated
 * again, which costs nothing more if the page has fallen out of use and
 * earns new credit if it is faulted back at once: twice as much each time
 * in a row (up to DSM_UPDATE_CREDIT_MAX; a page read in every interval, a
 * critical section's data between barriers, paid a fault cycle every
 * 8 intervals), the first amount again after a fault that came later.  A
 * page that is not used again is refetched at most DSM_UPDATE_CREDIT_MAX
 * times for nothing.
 * OMPDSM_ADAPTIVE_UPDATE=off invalidates always (under
 * OMPDSM_PROTOCOL=update every copy is refetched anyway). */
enum { DSM_UPDATE_CREDIT = 8, DSM_UPDATE_CREDIT_MAX = 64 };
static uint8_t *upd_credit;      /* per page: updates left */
static uint8_t *upd_earn;        /* per page: what the next earning gives */
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
    upd_earn = dsm_table(dsm_g.npages, "update credit earned");
    upd_stale_gen = dsm_table((size_t)dsm_g.npages * sizeof *upd_stale_gen,
                              "invalidation generation");
}

void dsm_refetched(uint32_t pg)
{
    pthread_once(&upd_once, upd_init);
    if (!upd_on)
        return;
    uint32_t g = __atomic_load_n(&upd_stale_gen[pg], __ATOMIC_RELAXED);
    uint8_t e = __atomic_load_n(&upd_earn[pg], __ATOMIC_RELAXED);
    if (g && g == __atomic_load_n(&apply_gen, __ATOMIC_RELAXED)) {
        e = e ? e : DSM_UPDATE_CREDIT;
        __atomic_store_n(&upd_credit[pg], e, __ATOMIC_RELAXED);
        __atomic_store_n(&upd_earn[pg],
                         (uint8_t)(e < DSM_UPDATE_CREDIT_MAX ? 2 * e : e),
                         __ATOMIC_RELAXED);
    } else if (g) {
        __atomic_store_n(&upd_earn[pg], DSM_UPDATE_CREDIT, __ATOMIC_RELAXED);
    }
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

/* What an acquire does to one copy (stale_run); ST_MERGE: a refetch into
 * a copy that pushes may land in (dsm_push_refetch); ST_REBASE: a kept
 * page of a node with one thread, refetched into the copy and its twin. */
enum { ST_KEEP, ST_REFETCH, ST_INVAL, ST_MERGE, ST_REBASE };

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

/* Makes the valid copies among pages [pg, pg+n) stale: none is homed here,
 * all lie within one stripe block (DSM_PLOCK_STRIPES).  Under the page locks: a dirty
 * page (another thread wrote it since this acquire released) first sends
 * its diff, its notice going out with the next release; invalid pages are
 * left alone; the rest are kept (pushed to: dsm/push.c), invalidated with
 * one mprotect per stretch, or refetched with one get per stretch with one
 * home (stale_decide); force: the notice was forced (NOTICE_FORCE).  Under
 * write detection a page's marks go out first (dsm_wd_flush).  On a node
 * with one thread (dsm_solo_writer) a page kept writable (dirty, with a
 * twin) is rebased instead: its diff goes home (empty after the acquire's
 * release), then the home's copy is fetched into the page and its twin,
 * and it stays writable and kept.  Such a page is one this node writes
 * again and again; invalidating it would cost its next write a fault,
 * a fetch, a twin and two protection changes.  (Two nodes writing
 * different parts of one page between the same synchronizations, NPB
 * LU's a, b, c, d at its threads' boundary, paid that at every flush.) */
static void stale_run(uint32_t pg, uint32_t n, int force)
{
    page_run_lock(pg, n);
    int sent = 0, solo = dsm_solo_writer(); /* (page protection only) */
    uint8_t what[DSM_PLOCK_STRIPES];
    for (uint32_t k = 0; k < n; k++) {
        uint32_t p = pg + k;
        if (dsm_g.wd == WD_ON) {
            what[k] = dsm_g.state[p] == PG_RO ? stale_decide(p, force) : ST_KEEP;
            if (what[k] != ST_KEEP)
                sent |= dsm_wd_flush(p);
            continue;
        }
        if (dsm_g.state[p] == PG_DIRTY && solo && dsm_g.twin[p]) {
            sent |= dsm_rebase_diff(p);
            what[k] = ST_REBASE;
            continue;
        }
        if (dsm_g.state[p] == PG_DIRTY)
            sent |= dsm_flush_dirty(p);
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
        if (what[k] == ST_REBASE) {
            int home = dsm_home(s0);
            if (dsm_fetch_pages(s0, 1, home, page_sys(s0)) < 0)
                ompdsm_fatal("update of page %u from node %d failed", s0, home);
            memcpy(dsm_g.twin[s0], page_sys(s0), dsm_g.page_size);
            DSM_STAT(pages_fetched, 1);
            DSM_STAT(rebased, 1);
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
            if (dsm_fetch_pages(s0, h, home, page_sys(s0)) < 0)
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
    page_run_unlock(pg, n);
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
            dsm_keep_shared(v[i].page, v[i].npages);
    }
    /* A fault from here to the next application follows this one's
     * invalidations at once (dsm_refetched). */
    __atomic_fetch_add(&apply_gen, 1, __ATOMIC_RELAXED);
}

void dsm_apply_logged(struct notice *v, size_t n)
{
    /* Snapshots first (where dsm_snap_peer says: one thread a node, so no
     * other thread writes the copy meanwhile); a notice whose snapshot was
     * applied is dropped, one whose snapshot cannot be is applied as a
     * notice.  (A page with a snapshot has no other notice here: a merge
     * drops the snapshot.) */
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        struct notice *x = &v[i];
        if (x->snap && x->writer >= 0 && x->writer != dsm_g.rank &&
            dsm_snap_peer(x->writer) &&
            dsm_home(x->page) == x->writer && !dsm_push_subscribed(x->page) &&
            dsm_snap_apply(x->writer, x->page, x->snap))
            continue;
        v[w++] = *x;
    }
    dsm_apply_notices(v, w);
}

void dsm_invalidate_all(void)
{
    stale_range(0, dsm_g.npages, 1);
}
