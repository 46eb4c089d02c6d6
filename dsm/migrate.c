/* dsm/migrate.c - home migration: a page's home moves to the node that
 * uses it most, decided at barriers of all nodes from counts every node
 * keeps in the interval before (OMPDSM_MIGRATION).
 *
 * Counting costs nothing on an access that does not fault: the counts are
 * taken in the fault path (remote fetches, write faults) and where a diff
 * is sent.  At a barrier of every node each node sends its counts up with
 * its write notices; the root decides once every write of the interval is
 * at its home, copies each moving page from its old home's memory to its
 * new home's while every node still waits inside the barrier (their
 * transports serve the gets and puts), and the release carries the moves.
 * Each node applies them before the barrier's notices and before it leaves,
 * so no node ever sends a diff or a fetch for a moved page to its old home:
 * every diff of the interval reached the old home before the barrier's
 * gather, and every later one looks up the new home.
 *
 * Exclusive home pages and fetch marks: the old home write-protects the
 * page and drops it from its exclusive list (no other node holds a valid
 * copy of an exclusive page, so the new home's copy is the only other one
 * and is current); the new home's mark starts at 0, "another node may
 * have a copy", so its first release of the page publishes a notice. */
#include "dsm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum {
    /* Records one node sends at one barrier: beyond them, counts are
     * dropped (the pages can still move at a later barrier). */
    MIG_MAX_RECS = 1 << 16,
    /* Pages per get/put when the root copies a run of moving pages. */
    MIG_COPY_BATCH = 64,
    /* Barriers of all nodes a page stays put after it moved: with the
     * dominance rule below, what keeps a page shared by two busy nodes
     * from moving back and forth. */
    MIG_COOLDOWN = 4,
    /* Each move of a page doubles its cooldown, up to MIG_COOLDOWN <<
     * MIG_BACKOFF_MAX barriers: a page whose writer changes with the
     * program's phase (NPB SP's x, y and z sweeps split different
     * dimensions) would otherwise move back and forth every few barriers
     * (docs/design.md, "Home migration", has the figures for SP W),
     * paying a page copy each time for diffs it saves only until the next
     * phase. */
    MIG_BACKOFF_MAX = 10,
    /* A winner needs this multiple of every other node's count. */
    MIG_DOMINANCE = 2,
};

static struct {
    uint32_t min;          /* OMPDSM_MIGRATION_MIN */
    uint32_t streak_min;   /* OMPDSM_MIGRATION_STREAK */
    uint32_t force;        /* OMPDSM_MIGRATION_FORCE (tests) */
    uint32_t *cnt;         /* per page: this node's count this interval */
    pthread_mutex_t lock;  /* guards touched */
    uint32_t *touched;     /* pages whose count is not 0 */
    size_t nt, cap;
    uint32_t *moved_at;    /* root, per page: epoch of its last move */
    uint8_t *moves;        /* root, per page: its moves (up to 255) */
    uint16_t *cand;        /* root, per page: 1 + the node that was its
                              sole user in its last intervals, or 0 */
    uint8_t *streak;       /* root, per page: those intervals in a row */
    uint32_t epoch;        /* root: barriers of all nodes with records */
} M = {.lock = PTHREAD_MUTEX_INITIALIZER};

void dsm_mig_init(void)
{
    static const char *const policies[] = {"off", "faults", "diffs"};
    int p = ompdsm_env_choice("OMPDSM_MIGRATION", policies, 3, MIG_OFF);
    M.min = (uint32_t)ompdsm_env_u64("OMPDSM_MIGRATION_MIN", 2, 1, UINT32_MAX, 0);
    M.force = (uint32_t)ompdsm_env_u64("OMPDSM_MIGRATION_FORCE", 0, 0, 1u << 20, 0);
    M.streak_min = (uint32_t)ompdsm_env_u64("OMPDSM_MIGRATION_STREAK", 1, 1, 255, 0);
    if (M.force && p == MIG_OFF)
        p = MIG_FAULTS;
    dsm_g.mig_policy = dsm_g.solo ? MIG_OFF : p;
    if (dsm_g.mig_policy == MIG_OFF)
        return;
    M.cnt = dsm_table((size_t)dsm_g.npages * sizeof *M.cnt, "migration count");
    if (dsm_g.rank == 0) {
        M.moved_at = dsm_table((size_t)dsm_g.npages * sizeof *M.moved_at,
                               "migration epoch");
        M.moves = dsm_table((size_t)dsm_g.npages * sizeof *M.moves, "migration moves");
        if (M.streak_min > 1) {
            M.cand = dsm_table((size_t)dsm_g.npages * sizeof *M.cand,
                               "migration candidates");
            M.streak = dsm_table((size_t)dsm_g.npages * sizeof *M.streak,
                                 "migration streaks");
        }
    }
}

void dsm_mig_note_(uint32_t pg, uint32_t n, uint32_t amount)
{
    for (uint32_t k = 0; k < n; k++) {
        if (__atomic_fetch_add(&M.cnt[pg + k], amount, __ATOMIC_RELAXED))
            continue;
        pthread_mutex_lock(&M.lock);
        dsm_page_list_push(&M.touched, &M.nt, &M.cap, pg + k);
        pthread_mutex_unlock(&M.lock);
    }
}

int dsm_mig_report(struct comm_buf *up, int world)
{
    uint64_t n = 0;
    if (dsm_g.mig_policy == MIG_OFF || !world)
        return comm_buf_append(up, &n, 8);
    /* Only this node's barrier thread runs now: the others have met. */
    pthread_mutex_lock(&M.lock);
    size_t at = up->len;
    int rc = comm_buf_append(up, &n, 8);
    if (!rc)
        rc = comm_buf_reserve(up, up->len + (M.nt < MIG_MAX_RECS ? M.nt : MIG_MAX_RECS) *
                                                 sizeof(struct mig_rec));
    for (size_t i = 0; i < M.nt; i++) {
        uint32_t pg = M.touched[i];
        uint32_t c = __atomic_exchange_n(&M.cnt[pg], 0, __ATOMIC_RELAXED);
        int home = dsm_home_known(pg);
        if (rc || n >= MIG_MAX_RECS || !c || home < 0)
            continue;
        struct mig_rec r = {pg, (uint16_t)dsm_g.rank, (uint16_t)home, c, 0};
        rc = comm_buf_append(up, &r, sizeof r);
        n++;
    }
    M.nt = 0;
    pthread_mutex_unlock(&M.lock);
    if (!rc)
        memcpy((char *)up->data + at, &n, 8);
    return rc;
}

void dsm_mig_forget(void)
{
    if (dsm_g.mig_policy == MIG_OFF)
        return;
    pthread_mutex_lock(&M.lock);
    for (size_t i = 0; i < M.nt; i++)
        __atomic_store_n(&M.cnt[M.touched[i]], 0, __ATOMIC_RELAXED);
    M.nt = 0;
    pthread_mutex_unlock(&M.lock);
}

static int cmp_rec(const void *a, const void *b)
{
    const struct mig_rec *x = a, *y = b;
    if (x->page != y->page)
        return x->page < y->page ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* Under policy diffs, what the home wrote: its write faults counted a
 * whole page each (it keeps no twin, so it cannot count bytes); the bytes
 * the other nodes' diffs brought into the page in the same interval were
 * not the home's, so they come off (at least 0).  A page the home wrote
 * all over keeps about a page per fault; one where the home wrote a few
 * bytes and another node most of the page keeps about what the other
 * node left.  (Counting half a page, as before, kept a page at a home
 * that wrote a few bytes of it an interval while another node sent most
 * of a page of diffs to it: NPB-style CG's vector pages, docs/design.md,
 * "Home migration".) */
static uint64_t home_bytes(const struct mig_rec *r, size_t n, int home)
{
    uint64_t own = 0, others = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].node == home)
            own += r[i].count;
        else
            others += r[i].count;
    }
    return own > others ? own - others : 0;
}

/* Page pg had no sole user other than its home this interval: its
 * streak (mig_streak) starts again.  Returns -1 (no move). */
static int streak_reset(uint32_t pg)
{
    if (M.cand) {
        M.cand[pg] = 0;
        M.streak[pg] = 0;
    }
    return -1;
}

/* OMPDSM_MIGRATION_STREAK: whether `node`, the winner of page pg's counts
 * in this interval (sole: no other node counted anything, the home's own
 * writes under diffs less what others' diffs brought), has been its sole
 * user in the last OMPDSM_MIGRATION_STREAK intervals in which the page
 * was used.  Under a profiled split that moves, the pages at the boundary
 * are written by both nodes in turn; moving them to this interval's
 * winner makes the other node's next writes remote (issue 39). */
static int mig_streak(uint32_t pg, int node, int sole)
{
    if (!sole) {
        streak_reset(pg);
        return 0;
    }
    if (M.cand[pg] != node + 1) {
        M.cand[pg] = (uint16_t)(node + 1);
        M.streak[pg] = 0;
    }
    if (M.streak[pg] < UINT8_MAX)
        M.streak[pg]++;
    return M.streak[pg] >= M.streak_min;
}

/* The node a page moves to, or -1: the node (other than the home) with
 * the largest count, if it reaches the minimum, has at least
 * MIG_DOMINANCE times every other node's count (the home's too, under
 * diffs home_bytes), and the page did not move in the last MIG_COOLDOWN
 * barriers, doubled for each move it made before its last (at most
 * MIG_COOLDOWN << MIG_BACKOFF_MAX), and with OMPDSM_MIGRATION_STREAK above
 * 1, instead of the minimum, it was the page's sole user that many
 * intervals in a row (mig_streak).
 * Forced (tests): a node picked from
 * the page and the barrier, never the home. */
static int decide_one(const struct mig_rec *r, size_t n, uint32_t epoch)
{
    uint32_t pg = r[0].page;
    int home = r[0].home;
    if (M.force && epoch % M.force == 0) {
        uint64_t x = ((uint64_t)pg * 0x9e3779b97f4a7c15ull) ^ epoch;
        x ^= x >> 29;
        int to = (int)(x % (uint64_t)dsm_g.size);
        return to == home ? (home + 1) % dsm_g.size : to;
    }
    if (M.force)
        return -1;
    size_t best = n;
    for (size_t i = 0; i < n; i++)
        if (r[i].node != home && (best == n || r[i].count > r[best].count))
            best = i;
    if (best == n)
        return streak_reset(pg);
    uint64_t hb = dsm_g.mig_policy == MIG_DIFFS ? home_bytes(r, n, home) : 0;
    int sole = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t c = dsm_g.mig_policy == MIG_DIFFS && r[i].node == home ? hb : r[i].count;
        if (i != best && c * MIG_DOMINANCE > r[best].count)
            return streak_reset(pg);
        sole &= i == best || c == 0;
    }
    /* With a streak, its intervals are the evidence that the minimum is
     * in one interval (a page kept writable takes fewer faults after its
     * first interval). */
    if (M.streak_min > 1) {
        if (!mig_streak(pg, r[best].node, sole))
            return -1;
    } else if (r[best].count < (dsm_g.mig_policy == MIG_DIFFS ? (uint64_t)M.min * 1024
                                                               : M.min)) {
        return -1;
    }
    unsigned k = M.moves[pg] ? M.moves[pg] - 1u : 0;
    uint32_t cool = (uint32_t)MIG_COOLDOWN << (k < MIG_BACKOFF_MAX ? k : MIG_BACKOFF_MAX);
    if (M.moved_at[pg] && epoch - M.moved_at[pg] < cool)
        return -1;
    return r[best].node;
}

/* Copies the moving pages from their old homes to their new ones, runs of
 * consecutive pages with the same two homes in one get and one put. */
static void copy_pages(const struct mig_move *m, size_t n)
{
    int me = dsm_g.rank;
    char *buf = NULL;
    for (size_t i = 0; i < n;) {
        size_t k = 1;
        while (i + k < n && k < MIG_COPY_BATCH && m[i + k].page == m[i].page + k &&
               m[i + k].from == m[i].from && m[i + k].to == m[i].to)
            k++;
        uint32_t pg = m[i].page;
        size_t len = k << dsm_g.page_shift;
        int from = m[i].from, to = m[i].to;
        int rc;
        if (from == me) {
            rc = comm_put(to, DSM_REG_HEAP, page_off(pg), page_sys(pg), len);
        } else if (to == me) {
            rc = comm_get(from, DSM_REG_HEAP, page_off(pg), page_sys(pg), len);
        } else {
            if (!buf && !(buf = malloc((size_t)MIG_COPY_BATCH << dsm_g.page_shift)))
                ompdsm_fatal("out of memory copying migrating pages");
            rc = comm_get(from, DSM_REG_HEAP, page_off(pg), buf, len);
            if (!rc)
                rc = comm_put(to, DSM_REG_HEAP, page_off(pg), buf, len);
        }
        if (rc < 0)
            ompdsm_fatal("moving pages %u-%u (%p) from node %d to node %d "
                         "failed", pg, pg + (uint32_t)k - 1,
                         (void *)page_app(pg), from, to);
        i += k;
    }
    free(buf);
    if (comm_fence(-1) < 0)
        ompdsm_fatal("completing the copies of migrating pages failed");
}

int dsm_mig_decide(const struct mig_rec *r, size_t n, struct comm_buf *out)
{
    uint64_t nm = 0;
    size_t at = out->len;
    int rc = comm_buf_append(out, &nm, 8);
    if (rc || dsm_g.mig_policy == MIG_OFF || !n)
        return rc;
    uint32_t epoch = ++M.epoch;
    struct mig_rec *s = malloc(n * sizeof *s);
    if (!s)
        ompdsm_fatal("out of memory sorting %zu migration counts", n);
    memcpy(s, r, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_rec);
    for (size_t i = 0; i < n && !rc;) {
        size_t k = 1;
        while (i + k < n && s[i + k].page == s[i].page)
            k++;
        int to = decide_one(s + i, k, epoch);
        if (to >= 0) {
            struct mig_move mv = {s[i].page, s[i].home, (uint16_t)to};
            M.moved_at[mv.page] = epoch;
            streak_reset(mv.page);
            if (M.moves[mv.page] < UINT8_MAX)
                M.moves[mv.page]++;
            rc = comm_buf_append(out, &mv, sizeof mv);
            nm++;
        }
        i += k;
    }
    free(s);
    if (rc || !nm)
        return rc;
    memcpy((char *)out->data + at, &nm, 8);
    copy_pages((const struct mig_move *)((char *)out->data + at + 8), nm);
    DSM_STAT(migrate_barriers, 1);
    OMPDSM_TRACE(OMPDSM_TR_DSM, "barrier %u: %llu pages change home", epoch,
                 (unsigned long long)nm);
    return 0;
}

void dsm_mig_apply(const struct mig_move *m, size_t n)
{
    int me = dsm_g.rank, left = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t pg = m[i].page;
        pthread_mutex_lock(page_lock(pg));
        uint8_t st = dsm_g.state[pg];
        if (m[i].to == me) {
            /* Until our first notice for it, other nodes may hold copies. */
            __atomic_store_n((uint8_t *)dsm_g.area + dsm_off_fetched + pg, 0,
                             __ATOMIC_SEQ_CST);
            if (st == PG_DIRTY && dsm_g.twin[pg] && dsm_g.keep_on) {
                /* Kept writable at this barrier's release, so nothing is
                 * unreleased: the copy below replaces it. */
                dsm_twin_free(dsm_g.twin[pg]);
                dsm_g.twin[pg] = NULL;
                st = PG_INVALID;
            } else if (st == PG_DIRTY || dsm_g.twin[pg]) {
                ompdsm_fatal("internal: page %u moves here with unreleased "
                             "writes", pg);
            }
            if (st != PG_RO) {
                /* The root put the current contents into our memory. */
                dsm_g.state[pg] = PG_RO;
                dsm_protect(pg, 1, dsm_g.wd == WD_ON ? PROT_READ | PROT_WRITE
                                                     : PROT_READ);
                if (dsm_g.wd == WD_ON)
                    dsm_wd_valid(pg, 1);
            }
            if (dsm_g.wd == WD_ON)
                dsm_wd_clear(pg); /* (released at this barrier) */
            DSM_STAT(migrations, 1);
            DSM_STAT(migrate_bytes, dsm_g.page_size);
        } else if (m[i].from == me) {
            /* Marks on a page homed here are never sent (the master copy
             * had the bytes); as a copy, only later writes may be. */
            if (dsm_g.wd == WD_ON)
                dsm_wd_clear(pg);
            if (st == PG_DIRTY) {
                /* An exclusive page, or one kept writable (with a twin,
                 * released at this barrier): our copy stays valid, and the
                 * next write must fault and make a twin. */
                dsm_protect(pg, 1, PROT_READ);
                dsm_g.state[pg] = PG_RO;
                if (dsm_g.twin[pg]) {
                    dsm_twin_free(dsm_g.twin[pg]);
                    dsm_g.twin[pg] = NULL;
                }
            }
            left = 1;
        }
        dsm_home_move(pg, m[i].to);
        pthread_mutex_unlock(page_lock(pg));
        OMPDSM_TRACE(OMPDSM_TR_DSM, "page %u: home %d -> %d", pg, m[i].from,
                     m[i].to);
    }
    if (!left)
        return;
    pthread_mutex_lock(&dsm_g.dirty_lock);
    size_t w = 0;
    for (size_t i = 0; i < dsm_g.nexcl; i++)
        if (dsm_home_known(dsm_g.excl[i]) == me)
            dsm_g.excl[w++] = dsm_g.excl[i];
    dsm_g.nexcl = w;
    pthread_mutex_unlock(&dsm_g.dirty_lock);
}
