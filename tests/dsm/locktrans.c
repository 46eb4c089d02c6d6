/* tests/dsm/locktrans.c - transitivity of lock and flush handoffs, and
 * one lock under contention.
 *
 * Chain: in round r node k, once handed the turn by node k-1, checks that
 * it sees x[j] == r for every j < k, writes x[k] = r and hands the turn to
 * node k+1.  Node k+1 synchronises only with node k, so it sees node 0's
 * write only if handoffs are transitive (A writes x, releases lock 1; B
 * acquires 1, releases 2; C acquires 2 and must see x).  Phase 1 hands
 * the turn through locks (turn k under lock k), phase 2 alternates locks
 * and flush handoffs (flag written after a flush, read in a flush loop).
 * Phase 3: every node in turn takes one lock ten times alone, then all
 * nodes increment a counter under that lock, half the time polling with
 * dsm_trylock; the counter must come out exact.
 * Phase 4 (lazy release): a chain whose first link is a lock left cached
 * at its writer's node with its release skipped.  Every node first reads
 * y (a valid copy, stale once the round writes), then in step k (steps
 * ordered by comm barriers, which publish nothing) node k takes lock k-1
 * over from node k-1, checks y[j] == r for every j < k (it never takes the
 * locks of j < k-1), and writes y[k] under lock k, which nobody waits for.
 * With OMPDSM_LAZY_RELEASE=on, some takeover must have found the LAZY mark
 * and asked its holder's node to release (dsm_lazy_requests) or found
 * that release done already (dsm_lazy_covered).  Where lock requests go
 * by message (OMPDSM_LOCK_MSG), every takeover must have sent one
 * (dsm_lock_msgs), and none where they do not. */
#include "dsmtest.h"

#include <sched.h>
#include <string.h>

enum { MAXN = 64, ROUNDS = 6, BURSTS = 30, ALONE = 10 };

struct g {
    int64_t x[MAXN];             /* data: x[k] written by node k */
    char pad0[1 << 16];
    int64_t turn[MAXN];          /* turn[k]: round handed to node k */
    char pad1[1 << 16];
    volatile int64_t flag[MAXN]; /* flush handoffs */
    char pad2[1 << 16];
    int64_t counter;
    char pad3[1 << 16];
    int64_t y[MAXN];             /* phase 4: y[k] written by node k */
};

static struct g *g;

static uint32_t lk(int k) { return T_LOCK_BASE + 100 + (uint32_t)k; }

static void wait_turn_lock(int k, int64_t r)
{
    for (;;) {
        dsm_lock(lk(k));
        int64_t t = g->turn[k];
        dsm_unlock(lk(k));
        if (t == r)
            return;
        if (t > r) {
            T_FAIL("turn of node %d is %lld in round %lld", k, (long long)t,
                   (long long)r);
            return;
        }
        sched_yield();
    }
}

static void give_turn_lock(int k, int64_t r)
{
    dsm_lock(lk(k));
    g->turn[k] = r;
    dsm_unlock(lk(k));
}

static void wait_turn_flush(int k, int64_t r)
{
    while (g->flag[k] != r)
        dsm_flush();
    dsm_flush();
}

static void give_turn_flush(int k, int64_t r)
{
    dsm_flush();
    g->flag[k] = r;
    dsm_flush();
}

static void chain_lazy(int64_t r, int64_t prev)
{
    int k = T_rank;
    /* A valid copy of y's page everywhere, from before this round's
     * writes: a taker that acquired nothing would read it stale. */
    int64_t sum = 0;
    for (int j = 0; j < T_size; j++)
        sum += g->y[j];
    if (sum != (int64_t)T_size * prev)
        T_FAIL("phase 4 round %lld: y sums to %lld before the round",
               (long long)r, (long long)sum);
    comm_barrier(COMM_WORLD);
    if (k == 0) {
        dsm_lock(lk(0));
        g->y[0] = r;
        dsm_unlock(lk(0));
    }
    for (int s = 1; s < T_size; s++) {
        /* A comm barrier orders the steps and publishes nothing. */
        comm_barrier(COMM_WORLD);
        if (k != s)
            continue;
        dsm_lock(lk(k - 1));
        for (int j = 0; j < k; j++)
            if (g->y[j] != r)
                T_FAIL("phase 4 round %lld: y[%d] = %lld (not transitive)",
                       (long long)r, j, (long long)g->y[j]);
        dsm_unlock(lk(k - 1));
        dsm_lock(lk(k));
        g->y[k] = r;
        dsm_unlock(lk(k));
    }
}

static void chain(int phase, int64_t r)
{
    int k = T_rank, n = T_size;
    int via_flush = phase == 2 && k % 2 == 1; /* how node k gets its turn */
    if (k > 0) {
        if (via_flush)
            wait_turn_flush(k, r);
        else
            wait_turn_lock(k, r);
    }
    for (int j = 0; j < k; j++)
        if (g->x[j] != r)
            T_FAIL("phase %d round %lld: x[%d] = %lld (not transitive)", phase,
                   (long long)r, j, (long long)g->x[j]);
    g->x[k] = r;
    if (k + 1 < n) {
        if (phase == 2 && (k + 1) % 2 == 1)
            give_turn_flush(k + 1, r);
        else
            give_turn_lock(k + 1, r);
    } else {
        dsm_release();
    }
}

int main(void)
{
    t_start(sizeof *g, (void **)&g);
    if (T_size > MAXN) {
        printf("locktrans: at most %d nodes\n", MAXN);
        return 2;
    }
    int64_t r = 0;
    for (int phase = 1; phase <= 2; phase++)
        for (int i = 0; i < ROUNDS; i++) {
            chain(phase, ++r);
            t_barrier();
        }
    /* Phase 3 */
    uint32_t c = T_LOCK_BASE + 50;
    for (int k = 0; k < T_size; k++) {
        if (k == T_rank)
            for (int i = 0; i < ALONE; i++) {
                dsm_lock(c);
                g->counter++;
                dsm_unlock(c);
            }
        t_barrier();
    }
    for (int i = 0; i < BURSTS; i++) {
        if (i % 2) {
            while (!dsm_trylock(c))
                sched_yield();
        } else {
            dsm_lock(c);
        }
        g->counter++;
        dsm_unlock(c);
        if (i % 7 == 0)
            sched_yield();
    }
    t_barrier();
    int64_t want = (int64_t)T_size * (ALONE + BURSTS);
    if (g->counter != want)
        T_FAIL("counter %lld, want %lld", (long long)g->counter,
               (long long)want);
    /* Phase 4 */
    struct dsm_stats st0, st1;
    dsm_stats_get(&st0);
    for (int i = 0; i < ROUNDS; i++) {
        ++r;
        chain_lazy(r, i ? r - 1 : 0);
        t_barrier();
    }
    dsm_stats_get(&st1);
    int64_t asked = (int64_t)(st1.lazy_requests - st0.lazy_requests +
                              st1.lazy_covered - st0.lazy_covered);
    if (comm_allreduce(COMM_WORLD, &asked, 1, COMM_INT64, COMM_SUM) < 0)
        T_FAIL("allreduce failed");
    if (t_env_on("OMPDSM_LOCK_CACHE") && t_env_on("OMPDSM_LAZY_RELEASE") && !asked)
        T_FAIL("phase 4: no lock takeover checked for a lazy release");
    /* Lock requests by message (OMPDSM_LOCK_MSG: auto, tcp peers; on,
     * every peer; never without lock affinity): each takeover of node
     * k-1's lock by node k is at least one, whichever node manages it
     * (the holder, the taker, or a third that forwards it). */
    const char *mv = getenv("OMPDSM_LOCK_MSG"), *tv = getenv("OMPDSM_TRANSPORT");
    int msgs = t_env_on("OMPDSM_LOCK_CACHE") &&
               (mv && !strcmp(mv, "on") ? 1 : mv && !strcmp(mv, "off") ? 0
                                        : tv && !strcmp(tv, "tcp"));
    uint64_t sent = st1.lock_msgs - st0.lock_msgs;
    if (msgs && T_rank > 0 && sent < ROUNDS)
        T_FAIL("phase 4: %llu lock requests by message for %d takeovers",
               (unsigned long long)sent, ROUNDS);
    if (!msgs && sent)
        T_FAIL("phase 4: %llu lock requests by message, with none asked for",
               (unsigned long long)sent);
    return t_finish();
}
