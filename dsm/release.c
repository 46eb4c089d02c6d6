/* dsm/release.c - release and acquire outside barriers: diffs of dirty
 * pages go to their homes, write notices go into a global log at node 0
 * that every acquire (lock, flush) reads from where it last stopped.  A
 * totally ordered log makes acquires transitive: whoever acquires after a
 * release sees every write released before, whichever lock was used.
 * Barriers carry their notices themselves (barrier.c) and move every
 * node's log position to the log's end. */
#include "dsm_int.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sends the diff of one dirty non-home page to its home (page lock held,
 * page already write-protected). */
static void send_diff(uint32_t pg, int home)
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
    void *twin = dsm_g.twin[pg];
    size_t n = diff_page_g(twin, page_sys(pg), dsm_g.page_size, runs,
                           dsm_g.granule[pg]);
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
    dsm_g.twin[pg] = NULL;
    dsm_twin_free(twin);
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

/* Takes the node's dirty list and extra notices (sorted pages) for a
 * release.  Home pages no other node fetched since our last notice for
 * them need no notice and no protection: they join the exclusive list and
 * stay writable.  Exclusive pages another node fetched meanwhile join the
 * batch, to be protected and noticed like any page written here.  Callers
 * hold release_lock, except the barrier root's hook release. */
static void take_batch(uint32_t **pages, size_t *n, struct notice_list *extra)
{
    pthread_mutex_lock(&dsm_g.dirty_lock);
    uint32_t *v = dsm_g.dirty, *ex = dsm_g.excl;
    size_t nv = dsm_g.ndirty, cap = dsm_g.dirty_cap, nex = dsm_g.nexcl;
    size_t excap = dsm_g.excl_cap;
    *extra = dsm_g.extra_notices;
    dsm_g.dirty = NULL;
    dsm_g.ndirty = dsm_g.dirty_cap = 0;
    dsm_g.excl = NULL;
    dsm_g.nexcl = dsm_g.excl_cap = 0;
    memset(&dsm_g.extra_notices, 0, sizeof dsm_g.extra_notices);
    pthread_mutex_unlock(&dsm_g.dirty_lock);

    if (dsm_g.excl_on) {
        size_t w = 0;
        for (size_t i = 0; i < nv; i++) {
            uint32_t pg = v[i];
            if (dsm_home(pg) == dsm_g.rank && dsm_g.state[pg] == PG_DIRTY &&
                !fetched_since_notice(pg)) {
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

/* Write-protects the pages of a batch that are still dirty, sends the diffs
 * of those not homed here, and appends a notice for each to out (may be
 * NULL).  Returns whether diffs went out (they need a fence). */
static int release_batch(const uint32_t *pages, size_t n, struct notice_list *out)
{
    int sent = 0;
    for (size_t i = 0; i < n;) {
        uint32_t pg = pages[i], len = run_end(pages, n, i);
        i += len;
        lock_run(pg, len);
        /* One mprotect per stretch of still-dirty pages (an acquire on
         * another thread may have cleaned or invalidated some meanwhile);
         * then no thread of this node can write them until we are done. */
        for (uint32_t k = 0; k < len;) {
            uint32_t m = 0;
            while (k + m < len && dsm_g.state[pg + k + m] == PG_DIRTY)
                m++;
            if (m)
                dsm_protect(pg + k, m, PROT_READ);
            k += m ? m : 1;
        }
        for (uint32_t k = 0; k < len; k++) {
            uint32_t p = pg + k;
            if (dsm_g.state[p] != PG_DIRTY)
                continue;
            int home = dsm_home(p);
            if (home != dsm_g.rank) {
                send_diff(p, home);
                sent = 1;
            }
            dsm_g.state[p] = PG_RO;
            if (out)
                notice_push(out, p, 1, dsm_g.rank);
            OMPDSM_TRACE(OMPDSM_TR_DSM, "release page %u (home %d)", p, home);
        }
        unlock_run(pg, len);
    }
    return sent;
}

void dsm_release_pages(struct notice_list *out)
{
    uint32_t *pages;
    size_t n;
    struct notice_list at;
    take_batch(&pages, &n, &at);
    int sent = release_batch(pages, n, out);
    free(pages);
    for (size_t i = 0; i < at.n; i++)
        notice_push(out, at.v[i].page, at.v[i].npages, at.v[i].writer);
    notice_free(&at);
    notice_normalize(out);
    DSM_STAT(notices_sent, out->n);
    if (sent && comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
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
    dsm_release_pages(&rel);
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
static void stale_run(uint32_t pg, uint32_t n)
{
    lock_run(pg, n);
    int sent = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t p = pg + k;
        if (dsm_g.state[p] != PG_DIRTY)
            continue;
        dsm_protect(p, 1, PROT_READ);
        send_diff(p, dsm_home(p));
        dsm_g.state[p] = PG_RO;
        pthread_mutex_lock(&dsm_g.dirty_lock);
        notice_push(&dsm_g.extra_notices, p, 1, dsm_g.rank);
        pthread_mutex_unlock(&dsm_g.dirty_lock);
        sent = 1;
    }
    if (sent && comm_fence(-1) < 0)
        ompdsm_fatal("completing early diffs failed");
    for (uint32_t k = 0; k < n;) {
        if (dsm_g.state[pg + k] != PG_RO) {
            k++;
            continue;
        }
        uint32_t m = 1;
        while (k + m < n && dsm_g.state[pg + k + m] == PG_RO)
            m++;
        uint32_t s0 = pg + k;
        /* Split the stretch into runs refetched (one get per home) and
         * runs invalidated (one mprotect). */
        for (uint32_t j = 0; j < m;) {
            int upd = upd_take(s0 + j);
            uint32_t h = 1;
            int home = upd ? dsm_home(s0 + j) : -1;
            while (j + h < m && (upd ? dsm_home(s0 + j + h) == home &&
                                           upd_take(s0 + j + h)
                                     : !(upd_on && upd_credit[s0 + j + h])))
                h++;
            if (upd) {
                dsm_mark_fetch(s0 + j, h, home);
                int rc = comm_get(home, DSM_REG_HEAP, page_off(s0 + j),
                                  page_sys(s0 + j), (size_t)h << dsm_g.page_shift);
                if (rc < 0)
                    ompdsm_fatal("update of pages %u-%u from node %d failed",
                                 s0 + j, s0 + j + h - 1, home);
                DSM_STAT(pages_fetched, h);
                DSM_STAT(updates, h);
            } else {
                uint32_t gen = __atomic_load_n(&apply_gen, __ATOMIC_RELAXED) + 1;
                for (uint32_t q = 0; q < h; q++) {
                    dsm_g.state[s0 + j + q] = PG_INVALID;
                    if (upd_on)
                        __atomic_store_n(&upd_stale_gen[s0 + j + q], gen,
                                         __ATOMIC_RELAXED);
                }
                dsm_protect(s0 + j, h, PROT_NONE);
                DSM_STAT(invalidations, h);
            }
            j += h;
        }
        k += m;
    }
    unlock_run(pg, n);
}

void dsm_release_page(uint32_t pg)
{
    pthread_mutex_lock(page_lock(pg));
    if (dsm_g.state[pg] == PG_DIRTY && dsm_home(pg) != dsm_g.rank) {
        dsm_protect(pg, 1, PROT_READ);
        send_diff(pg, dsm_home(pg));
        dsm_g.state[pg] = PG_RO;
        pthread_mutex_lock(&dsm_g.dirty_lock);
        notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
        pthread_mutex_unlock(&dsm_g.dirty_lock);
        if (comm_fence(dsm_home(pg)) < 0)
            ompdsm_fatal("completing the diff of page %u failed", pg);
    }
    pthread_mutex_unlock(page_lock(pg));
}

/* Collects the pages of [pg, pg+n) that may hold a copy (valid, dirty or
 * being fetched) and are not homed here, and hands them to stale_run in
 * batches.  The unlocked state check is safe: a page read as INVALID has
 * no fetch in flight that started before our notices' data was at home. */
static void stale_range(uint32_t pg, uint32_t n)
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
            stale_run(start, len);
            len = 0;
        }
        if (want) {
            if (!len)
                start = p;
            len++;
        } else if (len) {
            stale_run(start, len);
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
        stale_range(v[i].page, v[i].npages);
    }
    /* A fault from here to the next application follows this one's
     * invalidations at once (dsm_refetched). */
    __atomic_fetch_add(&apply_gen, 1, __ATOMIC_RELAXED);
}

void dsm_invalidate_all(void)
{
    stale_range(0, dsm_g.npages);
}

/* ---- the global notice log at node 0 ---- */

/* Reserves n entries of the log; readers that see the new tail wait for
 * the entries' sequence words, so reserving first makes them wait for this
 * release's diffs too (see dsm_release). */
static uint64_t log_reserve(size_t n)
{
    uint64_t start;
    COMM_CHECK(comm_fetch_add(0, DSM_REG_AREA,
                              offsetof(struct dsm_area_hdr, log_tail), n, &start));
    return start;
}

/* Writes reserved entries: contents first, then (after a fence) the
 * sequence words that mark them complete; split where the ring wraps. */
static void log_write(uint64_t start, const struct notice *v, size_t n)
{
    struct dsm_log_entry *e = malloc(n * sizeof *e);
    uint64_t *seq = malloc(n * sizeof *seq);
    if (!e || !seq)
        ompdsm_fatal("out of memory publishing %zu notices", n);
    for (size_t i = 0; i < n; i++) {
        e[i] = (struct dsm_log_entry){0, v[i].page, v[i].npages, v[i].writer,
                                      0, 0};
        seq[i] = start + i + 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t done = 0;
        while (done < n) {
            uint64_t idx = (start + done) % DSM_LOG_CAP;
            size_t cnt = n - done;
            if (idx + cnt > DSM_LOG_CAP)
                cnt = DSM_LOG_CAP - idx;
            if (pass == 0)
                COMM_CHECK(comm_put(0, DSM_REG_AREA,
                                    dsm_off_log + idx * sizeof *e, e + done,
                                    cnt * sizeof *e));
            else
                COMM_CHECK(comm_put(0, DSM_REG_AREA, dsm_off_logseq + idx * 8,
                                    seq + done, cnt * 8));
            done += cnt;
        }
        COMM_CHECK(comm_fence(0));
    }
    free(e);
    free(seq);
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

void dsm_log_acquire(void)
{
    pthread_mutex_lock(&dsm_g.acquire_lock);
    uint64_t tail;
    COMM_CHECK(comm_get(0, DSM_REG_AREA, offsetof(struct dsm_area_hdr, log_tail),
                        &tail, 8));
    uint64_t pos = dsm_g.log_pos;
    if (tail <= pos) {
        pthread_mutex_unlock(&dsm_g.acquire_lock);
        return;
    }
    if (tail - pos > DSM_LOG_CAP) {
        /* We fell a whole ring behind: some notices are gone. */
        dsm_invalidate_all();
        dsm_g.log_pos = tail;
        pthread_mutex_unlock(&dsm_g.acquire_lock);
        return;
    }
    size_t n = (size_t)(tail - pos);
    struct dsm_log_entry *e = malloc(n * sizeof *e);
    uint64_t *seq = malloc(n * sizeof *seq);
    if (!e || !seq)
        ompdsm_fatal("out of memory reading %zu notices", n);
    size_t done = 0;
    while (done < n) {
        uint64_t idx = (pos + done) % DSM_LOG_CAP;
        size_t cnt = n - done;
        if (idx + cnt > DSM_LOG_CAP)
            cnt = DSM_LOG_CAP - idx;
        /* A releaser may still be writing an entry it reserved: wait for its
         * sequence word, briefly spinning, then yielding. */
        for (int tries = 0;; tries++) {
            COMM_CHECK(comm_get(0, DSM_REG_AREA, dsm_off_logseq + idx * 8,
                                seq + done, cnt * 8));
            size_t ok = 0;
            while (ok < cnt && seq[done + ok] == pos + done + ok + 1)
                ok++;
            if (ok == cnt)
                break;
            if (seq[done + ok] > pos + done + ok + 1) {
                /* Overwritten by a later lap: notices lost. */
                free(e);
                free(seq);
                dsm_invalidate_all();
                dsm_g.log_pos = tail;
                pthread_mutex_unlock(&dsm_g.acquire_lock);
                return;
            }
            if (tries > 100)
                sched_yield();
        }
        COMM_CHECK(comm_get(0, DSM_REG_AREA, dsm_off_log + idx * sizeof *e,
                            e + done, cnt * sizeof *e));
        done += cnt;
    }
    struct notice_list l = {0};
    for (size_t i = 0; i < n; i++)
        notice_push(&l, e[i].page, e[i].npages, e[i].writer);
    free(e);
    free(seq);
    notice_normalize(&l);
    dsm_apply_notices(l.v, l.n);
    notice_free(&l);
    dsm_g.log_pos = tail;
    pthread_mutex_unlock(&dsm_g.acquire_lock);
}

/* ---- the public release/acquire/flush ---- */

void dsm_release(void)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    DSM_STAT(releases, 1);
    pthread_mutex_lock(&dsm_g.release_lock);
    uint32_t *pages;
    size_t n;
    struct notice_list pre = {0};
    take_batch(&pages, &n, &pre);
    if (!n && !pre.n) {
        free(pages);
        pthread_mutex_unlock(&dsm_g.release_lock);
        return;
    }
    /* Notices first, from the dirty list (a superset if another thread
     * cleans a page meanwhile), and their log entries reserved before any
     * diff goes out.  A node that is home of a page written here (a flag)
     * sees the new bytes the moment the diff lands, before it acquired; an
     * acquire it then does sees the reserved entries and waits until they
     * are complete, that is, until every diff of this release has landed. */
    for (size_t i = 0; i < n; i++)
        notice_push(&pre, pages[i], 1, dsm_g.rank);
    notice_normalize(&pre);
    struct notice all;
    size_t cnt = pre.n;
    const struct notice *v = log_shape(pre.v, &cnt, &all);
    uint64_t start = log_reserve(cnt);
    if (release_batch(pages, n, NULL) && comm_fence(-1) < 0)
        ompdsm_fatal("completing diffs failed");
    free(pages);
    DSM_STAT(notices_sent, pre.n);
    record_released(&pre);
    log_write(start, v, cnt);
    pthread_mutex_unlock(&dsm_g.release_lock);
    notice_free(&pre);
}

void dsm_acquire(void)
{
    if (dsm_g.solo || !dsm_g.started)
        return;
    DSM_STAT(acquires, 1);
    /* Pages about to be invalidated must not hold unreleased writes. */
    dsm_release();
    dsm_log_acquire();
}

void dsm_flush(void)
{
    if (dsm_g.solo || !dsm_g.started) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return;
    }
    DSM_STAT(flushes, 1);
    uint64_t before = dsm_g.log_pos;
    dsm_acquire();
    /* A spin loop of flushes (NPB LU's pipeline) must let the node it waits
     * for run when there are more nodes than cores. */
    if (dsm_g.log_pos == before)
        sched_yield();
}

void dsm_flush_range(const void *p, size_t len)
{
    (void)p;
    (void)len;
    dsm_flush();
}

/* ---- volatile objects ---- */

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
 * does not take the home's value for a write of ours.  An invalid copy is
 * fetched whole (the read would fault anyway). */
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
            memcpy(page_sys(pg) + off, b, n);
            if (st == PG_DIRTY && dsm_g.twin[pg])
                memcpy((char *)dsm_g.twin[pg] + off, b, n);
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
    if (dsm_g.state[pg] == PG_DIRTY && dsm_g.twin[pg])
        memcpy((char *)dsm_g.twin[pg] + off, page_sys(pg) + off, n);
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
