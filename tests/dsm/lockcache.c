/* tests/dsm/lockcache.c - lock affinity (OMPDSM_LOCK_CACHE) under
 * contention, checked against a model.
 *
 * Phase 1: each node in turn takes a lock ALONE times with no other node
 * asking: with caching on, all but the first are re-takes from the cache
 * (dsm_lock_cached counts them; an independent count of what the test
 * did, not of what the lock did).
 * Phase 2: THREADS threads per node hammer LOCKS locks (managed by
 * different nodes) in random bursts: a burst of pairs on one lock (so the
 * lock is cached at a node while others queue for it), sometimes taking
 * it by polling dsm_trylock.  Inside each pair the holder stamps the lock's
 * owner word with its own global id, increments the lock's counter by a
 * non-atomic read and write, and checks the stamp is still its own: two
 * holders at once, or a holder that misses the previous holder's write,
 * break the count or the stamp.  At the end each counter must equal the
 * number of pairs the model says were done on it.
 * Phase 3: a node polling through a lock it keeps cached must still see
 * a flag another node published with a flush (a re-take acquires when the
 * last acquire is stale).
 * With lazy release on (the default), the run over tcp is the one that
 * caught a lock handed to a remote waiter without the release its holder
 * had skipped. */
#include "dsmtest.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

enum { THREADS = 2, LOCKS = 3, BURSTS = 40, ALONE = 20 };

struct g {
    /* First, so that its page is homed at node 0 (which writes it), not at
     * the polling node, where the home's copy would be current anyway. */
    volatile int64_t flag;
    char pad0[(1 << 16) - 8];
    struct {
        int64_t owner;
        int64_t count;
        char pad[(1 << 16) - 16];
    } l[LOCKS];
    int64_t alone;
};

static struct g *g;
static int64_t done_by_me[LOCKS][THREADS];

static uint32_t lk(int k) { return T_LOCK_BASE + 200 + (uint32_t)k; }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int64_t gid = (int64_t)T_rank * THREADS + t + 1;
    struct t_rng rng = {(uint64_t)gid * 7919};
    for (int b = 0; b < BURSTS; b++) {
        int k = (int)(t_next(&rng) % LOCKS);
        int len = 1 + (int)(t_next(&rng) % 8);
        int poll = t_next(&rng) % 3 == 0;
        for (int i = 0; i < len; i++) {
            if (poll) {
                while (!dsm_trylock(lk(k)))
                    sched_yield();
            } else {
                dsm_lock(lk(k));
            }
            g->l[k].owner = gid;
            int64_t c = g->l[k].count;
            if (i == 0)
                sched_yield(); /* let others queue behind a held lock */
            g->l[k].count = c + 1;
            if (g->l[k].owner != gid)
                T_FAIL("lock %d: held by %lld and %lld at once", k,
                       (long long)gid, (long long)g->l[k].owner);
            dsm_unlock(lk(k));
            done_by_me[k][t]++;
        }
    }
    return NULL;
}

int main(void)
{
    t_start(sizeof *g, (void **)&g);
    int caching = t_env_on("OMPDSM_LOCK_CACHE");

    /* Phase 1 */
    uint32_t a = T_LOCK_BASE + 150 + 1; /* managed by node 1 of 2, 4, 8 */
    struct dsm_stats s0, s1;
    for (int k = 0; k < T_size; k++) {
        if (k == T_rank) {
            dsm_stats_get(&s0);
            for (int i = 0; i < ALONE; i++) {
                dsm_lock(a);
                g->alone++;
                dsm_unlock(a);
            }
            dsm_stats_get(&s1);
            uint64_t re = s1.lock_cached - s0.lock_cached;
            if (caching && re < ALONE - 1)
                T_FAIL("%llu re-takes from the cache of %d lone pairs",
                       (unsigned long long)re, ALONE);
            if (!caching && re)
                T_FAIL("%llu re-takes from the cache with caching off",
                       (unsigned long long)re);
        }
        t_barrier();
    }
    if (g->alone != (int64_t)ALONE * T_size)
        T_FAIL("lone pairs: count %lld, want %lld", (long long)g->alone,
               (long long)ALONE * T_size);

    /* Phase 2 */
    pthread_t th[THREADS];
    dsm_volatile_threads(THREADS); /* (as the runtime says when its pool grows) */
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    int64_t want[LOCKS];
    for (int k = 0; k < LOCKS; k++) {
        want[k] = 0;
        for (int t = 0; t < THREADS; t++)
            want[k] += done_by_me[k][t];
    }
    comm_allreduce(COMM_WORLD, want, LOCKS, COMM_INT64, COMM_SUM);
    t_barrier();
    for (int k = 0; k < LOCKS; k++)
        if (g->l[k].count != want[k])
            T_FAIL("lock %d: count %lld, want %lld", k,
                   (long long)g->l[k].count, (long long)want[k]);
    t_barrier();

    /* Phase 3: the last node polls through its own lock for node 0's flag,
     * with a copy of the flag's page read before node 0 writes it and the
     * lock cached, so that only an acquire at a re-take shows the flag. */
    uint32_t own = T_LOCK_BASE + 300 + (uint32_t)(T_size - 1);
    if (T_rank == T_size - 1) {
        dsm_lock(own);
        if (g->flag != 0)
            T_FAIL("flag set before node 0 wrote it");
        dsm_unlock(own);
    }
    t_barrier();
    if (T_rank == T_size - 1) {
        double t0 = ompdsm_now();
        int seen = 0;
        while (!seen && ompdsm_now() - t0 < 30) {
            dsm_lock(own);
            seen = g->flag == 1;
            dsm_unlock(own);
            sched_yield();
        }
        if (!seen)
            T_FAIL("polling through a cached lock: the flag published by "
                   "node 0 never became visible");
    } else if (T_rank == 0) {
        dsm_flush();
        g->flag = 1;
        dsm_flush();
    }
    t_barrier();
    return t_finish();
}
