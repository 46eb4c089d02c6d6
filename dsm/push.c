/* dsm/push.c - updates pushed to stable readers (OMPDSM_PUSH, with
 * software write detection).  A node that faults on a page homed
 * elsewhere subscribes to it; from the next barrier of all nodes on,
 * every writer of the page puts the bytes it marked into each
 * subscriber's copy at its release, beside its diff to the home, so the
 * subscriber's copy stays valid and mapped: notices for the page
 * invalidate nothing there, and no fault, no fetch and no protection
 * change follow (docs/design.md, "Updates pushed to stable readers").
 *
 * Subscriptions change only at barriers of all nodes, where the records
 * of joins and leaves ride the barrier's payload and every node applies
 * the same ones, so every writer knows the same subscribers during an
 * interval.  A subscription lasts a period of such barriers (4 to 64 at
 * first, from the machine's costs, doubling each time the page is joined
 * again, up to 1,024): then the node leaves
 * and invalidates its copy; a page still read faults again and joins for
 * longer, one that is not costs nothing more.  Jobs of more than 64 nodes
 * push nothing (the subscribers are a 64-bit mask per page). */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { PUSH_MAX_NODES = 64, PERIOD_MIN = 4, PERIOD0_MAX = 64, PERIOD_MAX = 1024 };
enum { SUB_NONE = 0, SUB_JOINING = 1, SUB_ON = 2 };

static struct {
    int on;
    uint64_t *subs;       /* per page: subscriber mask, the same everywhere */
    uint8_t *state;       /* per page: this node's SUB_* */
    uint16_t *left;       /* per page: barriers this node stays subscribed */
    uint16_t *period;     /* per page: the next subscription's length */
    uint16_t period0;     /* a first subscription's length */
    pthread_mutex_t lock; /* joining and mine */
    uint32_t *joining;    /* pages faulted on since the last world barrier */
    size_t njoining, joining_cap;
    uint32_t *mine;       /* pages this node subscribes to */
    size_t nmine, mine_cap;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

void dsm_push_init(void)
{
    static const char *const onoff[] = {"on", "off"};
    /* Off by default since a subscriber's copy missed a push (a join's
     * refetch beside the first pushes, now kept apart by dsm_barrier;
     * docs/design.md, "Updates pushed to stable readers"). */
    P.on = ompdsm_env_choice("OMPDSM_PUSH", onoff, 2, 1) == 0 &&
           dsm_g.size <= PUSH_MAX_NODES;
    if (!P.on)
        return;
    /* A node that leaves a page it still reads comes back with a fault,
     * two protection changes and a fetch; a subscription it no longer
     * needs costs a push (at most a page's copy) per barrier.  A first
     * subscription lasts about twice the first over the second, from this
     * machine's costs (dsm/probe.c), within [4, 64]. */
    struct dsm_costs c;
    dsm_machine_costs(&c);
    uint64_t back = c.fault_ns + 2 * c.prot_ns + c.copy_ns;
    uint64_t per = c.copy_ns ? 2 * back / c.copy_ns : 8;
    P.period0 = (uint16_t)(per < PERIOD_MIN ? PERIOD_MIN
                           : per > PERIOD0_MAX ? PERIOD0_MAX : per);
    P.subs = dsm_table((size_t)dsm_g.npages * sizeof *P.subs, "subscribers");
    P.state = dsm_table(dsm_g.npages, "subscriptions");
    P.left = dsm_table((size_t)dsm_g.npages * sizeof *P.left, "subscription left");
    P.period = dsm_table((size_t)dsm_g.npages * sizeof *P.period,
                         "subscription period");
}

uint64_t dsm_push_subs(uint32_t pg)
{
    return P.on ? P.subs[pg] : 0;
}

int dsm_push_subscribed(uint32_t pg)
{
    return P.on && P.state[pg] == SUB_ON;
}

void dsm_push_fetched(uint32_t pg, uint32_t n)
{
    if (!P.on)
        return;
    pthread_mutex_lock(&P.lock);
    for (uint32_t p = pg; p < pg + n; p++)
        if (P.state[p] == SUB_NONE) {
            P.state[p] = SUB_JOINING;
            dsm_page_list_push(&P.joining, &P.njoining, &P.joining_cap, p);
        }
    pthread_mutex_unlock(&P.lock);
}

int dsm_push_report(struct comm_buf *out, int world)
{
    uint64_t cnt = 0;
    size_t at = out->len;
    int rc = comm_buf_append(out, &cnt, 8);
    if (rc || !P.on || !world)
        return rc;
    pthread_mutex_lock(&P.lock);
    for (size_t i = 0; !rc && i < P.njoining; i++) {
        struct push_rec r = {P.joining[i], (uint16_t)dsm_g.rank, PUSH_JOIN, 0};
        rc = comm_buf_append(out, &r, sizeof r);
        cnt++;
    }
    P.njoining = 0;
    size_t w = 0;
    for (size_t i = 0; !rc && i < P.nmine; i++) {
        uint32_t pg = P.mine[i];
        if (P.state[pg] == SUB_ON && P.left[pg] && --P.left[pg] == 0) {
            struct push_rec r = {pg, (uint16_t)dsm_g.rank, PUSH_LEAVE, 0};
            rc = comm_buf_append(out, &r, sizeof r);
            cnt++;
        }
        P.mine[w++] = pg; /* (dropped when the leave is applied) */
    }
    P.nmine = w;
    pthread_mutex_unlock(&P.lock);
    memcpy((char *)out->data + at, &cnt, 8);
    return rc;
}

/* Drops this node's copy of pg, which writers stop pushing to (page lock
 * held). */
static void leave_copy(uint32_t pg)
{
    if (dsm_g.state[pg] != PG_RO || dsm_home(pg) == dsm_g.rank)
        return;
    dsm_g.state[pg] = PG_INVALID;
    dsm_protect(pg, 1, PROT_NONE);
    DSM_STAT(invalidations, 1);
}

void dsm_push_apply(const struct push_rec *r, size_t n)
{
    if (!P.on || !n)
        return;
    int me = dsm_g.rank;
    for (size_t i = 0; i < n; i++) {
        uint32_t pg = r[i].page;
        uint64_t bit = 1ull << r[i].node;
        pthread_mutex_lock(page_lock(pg));
        uint64_t before = P.subs[pg];
        if (r[i].op == PUSH_JOIN) {
            P.subs[pg] = before | bit;
            /* A home's marks of a page nobody subscribed to were never
             * sent: from now on they are pushed, so they start clean. */
            if (dsm_home(pg) == me && !(before & ~(1ull << me)))
                dsm_wd_clear(pg);
        } else {
            P.subs[pg] = before & ~bit;
        }
        if (r[i].node == me) {
            pthread_mutex_lock(&P.lock);
            if (r[i].op == PUSH_JOIN) {
                P.state[pg] = SUB_ON;
                uint16_t per = P.period[pg];
                per = !per ? P.period0 : per >= PERIOD_MAX / 2 ? PERIOD_MAX : per * 2;
                P.period[pg] = per;
                P.left[pg] = per;
                dsm_page_list_push(&P.mine, &P.nmine, &P.mine_cap, pg);
            } else {
                P.state[pg] = SUB_NONE;
                for (size_t k = 0; k < P.nmine; k++)
                    if (P.mine[k] == pg) {
                        P.mine[k] = P.mine[--P.nmine];
                        break;
                    }
            }
            pthread_mutex_unlock(&P.lock);
            if (r[i].op == PUSH_LEAVE)
                leave_copy(pg);
        }
        pthread_mutex_unlock(page_lock(pg));
    }
}

int dsm_push_join_stale(const struct push_rec *r, size_t n,
                        const struct notice *v, size_t nv)
{
    if (!P.on)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].op != PUSH_JOIN)
            continue;
        /* v is normalized: sorted, disjoint ranges. */
        size_t lo = 0, hi = nv;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid].page + v[mid].npages <= r[i].page)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nv && v[lo].page <= r[i].page && v[lo].writer != r[i].node)
            return 1;
    }
    return 0;
}

int dsm_push_send(uint32_t pg, const struct comm_run *runs, size_t n)
{
    uint64_t m = P.on ? P.subs[pg] : 0;
    int home = dsm_home(pg), me = dsm_g.rank, sent = 0;
    m &= ~(1ull << me);
    if (home >= 0 && home < PUSH_MAX_NODES)
        m &= ~(1ull << home);
    if (!m)
        return 0;
    uint64_t bytes = 0;
    for (size_t k = 0; k < n; k++)
        bytes += runs[k].len;
    while (m) {
        int s = __builtin_ctzll(m);
        m &= m - 1;
        if (comm_putv(s, DSM_REG_HEAP, page_off(pg), page_sys(pg), runs, n) < 0)
            ompdsm_fatal("push of page %u to node %d failed", pg, s);
        DSM_STAT(pushes, 1);
        DSM_STAT(push_bytes, bytes);
        sent = 1;
    }
    return sent;
}

/* ---- pushes after the diffs ----
 * A push lands in a subscriber's copy only once the home has the same
 * bytes (the releaser fences its diffs first): a subscriber that fetches
 * the page from its home (a join, a forced notice) then never gets bytes
 * older than a push it already has, whatever the order in which a get's
 * reply and another node's put arrive. */
static __thread struct {
    uint32_t *pg;          /* pages, each with its runs in run[] */
    size_t *first, *count;
    size_t n, cap;
    struct comm_run *run;
    size_t nrun, runcap;
} Q;

void dsm_push_defer(uint32_t pg, const struct comm_run *runs, size_t n)
{
    if (!P.on || !n || !(P.subs[pg] & ~(1ull << dsm_g.rank)))
        return;
    if (Q.n == Q.cap) {
        size_t c = Q.cap ? 2 * Q.cap : 64;
        uint32_t *a = realloc(Q.pg, c * sizeof *a);
        size_t *b = realloc(Q.first, c * sizeof *b);
        size_t *d = realloc(Q.count, c * sizeof *d);
        if (!a || !b || !d)
            ompdsm_fatal("out of memory for pushes");
        Q.pg = a, Q.first = b, Q.count = d, Q.cap = c;
    }
    if (Q.nrun + n > Q.runcap) {
        size_t c = Q.runcap ? 2 * Q.runcap : 1024;
        while (c < Q.nrun + n)
            c *= 2;
        struct comm_run *r = realloc(Q.run, c * sizeof *r);
        if (!r)
            ompdsm_fatal("out of memory for pushes");
        Q.run = r, Q.runcap = c;
    }
    memcpy(Q.run + Q.nrun, runs, n * sizeof *runs);
    Q.pg[Q.n] = pg;
    Q.first[Q.n] = Q.nrun;
    Q.count[Q.n] = n;
    Q.n++;
    Q.nrun += n;
}

int dsm_push_flush(void)
{
    int sent = 0;
    for (size_t i = 0; i < Q.n; i++)
        sent |= dsm_push_send(Q.pg[i], Q.run + Q.first[i], Q.count[i]);
    Q.n = Q.nrun = 0;
    return sent;
}

/* ---- refetching a copy that pushes land in ---- */

int dsm_push_merge_needed(uint32_t pg)
{
    return P.on && P.state[pg] != SUB_NONE;
}

void dsm_push_refetch(uint32_t pg, int home)
{
    size_t ps = dsm_g.page_size;
    static __thread uint64_t *snap, *got;
    if (!snap && (!(snap = malloc(ps)) || !(got = malloc(ps))))
        ompdsm_fatal("out of memory for a refetch");
    uint64_t *cur = (uint64_t *)page_sys(pg);
    memcpy(snap, cur, ps);
    if (dsm_fetch_pages(pg, 1, home, got) < 0)
        ompdsm_fatal("refetch of page %u from node %d failed", pg, home);
    /* A word a push changed since the snapshot is newer than the home's
     * copy we got (pushes follow their diffs to the home): each word goes
     * by a compare-swap from the snapshot, so a push landing meanwhile
     * wins.  Where one did, the word is read again from the home, which
     * then has that push's bytes, and swapped in from what the copy holds
     * now, again until no push lands between the read and the swap.  (A
     * byte-by-byte merge was wrong: a push may write a byte with the value
     * the snapshot had, and that byte took the home's older one.)  A push
     * that writes a whole word's snapshot value again, onto a home's
     * older value the get read, cannot be told from no push: the join's
     * refetch therefore runs before any node leaves its barrier
     * (dsm_barrier), and only a forced notice's refetch of a subscribed
     * copy still merges beside pushes. */
    for (size_t i = 0; i < ps / 8; i++) {
        uint64_t exp = snap[i];
        if (exp == got[i] ||
            __atomic_compare_exchange_n(&cur[i], &exp, got[i], 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            continue;
        for (;;) {
            uint64_t now = __atomic_load_n(&cur[i], __ATOMIC_ACQUIRE), fresh;
            if (comm_get(home, DSM_REG_HEAP, page_off(pg) + i * 8, &fresh, 8) < 0)
                ompdsm_fatal("refetch of page %u from node %d failed", pg, home);
            if (__atomic_compare_exchange_n(&cur[i], &now, fresh, 0, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED))
                break;
        }
    }
    DSM_STAT(pages_fetched, 1);
    DSM_STAT(updates, 1);
}
