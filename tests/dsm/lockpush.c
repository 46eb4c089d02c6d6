/* tests/dsm/lockpush.c - lock hand-offs that carry the bytes written
 * under the lock (OMPDSM_WD=on; docs/design.md, "Lock hand-offs with the
 * bytes").  Lock k guards page k of the globals, where the holder adds
 * 1 to a shared count and to its own node's count when the count says it
 * is its node's turn (count mod nodes), ITERS times per node and lock.  No
 * barrier runs while the locks go around, so no copy is subscribed to
 * pushes (dsm/push.c): before hand-offs carried bytes, each lock that
 * came from another node made the taker's copy of its page stale (an
 * invalidation and a fault, or a whole-page refetch).
 * Checks: the counts against the closed form (nodes x ITERS, ITERS each);
 * on 2 nodes with hand-offs on, at most 1 page made stale (faults, page
 * fetches and invalidations together) per 10 locks that came from
 * another node, the counts printed either way.  With
 * OMPDSM_HANDOFF_PUSH=off it must fail that bound (meson: lockpush_off).
 * The program marks its own stores as ompcc's pass would. */
#include "dsmtest.h"



enum { NLOCK = 3, ITERS = 300, MAXN = 64 };

struct slot {
    int64_t total;
    int64_t mine[MAXN];
};

int main(void)
{
    size_t ps = 0;
    char *g;
    t_init();
    ps = dsm_page_size();
    g = dsm_global_alloc(NLOCK * ps, ps, "test globals");
    dsm_start();
    int me = T_rank, n = T_size;
    if (n > MAXN)
        T_FAIL("more than %d nodes", MAXN);
    if (!OMPDSM_wd_size) {
        if (me == 0)
            printf("skipped: write detection is off\n");
        return t_finish();
    }
    t_barrier();
    /* Every copy valid: read each page once (no barrier after this; a
     * faster node may have begun counting). */
    volatile int64_t sum = 0;
    for (int k = 0; k < NLOCK; k++)
        sum += ((struct slot *)(g + k * ps))->total;
    struct dsm_stats s0, s1;
    dsm_stats_get(&s0);
    /* Node j counts when the total says it is its turn (total mod nodes),
     * so the locks go from node to node. */
    int done[NLOCK] = {0}, left = NLOCK * ITERS;
    while (left) {
        for (int k = 0; k < NLOCK; k++) {
            struct slot *s = (struct slot *)(g + k * ps);
            if (done[k] == ITERS)
                continue;
            dsm_lock(T_LOCK_BASE + k);
            if (s->total % n == me) {
                T_STORE(s->total, s->total + 1);
                T_STORE(s->mine[me], s->mine[me] + 1);
                done[k]++;
                left--;
            }
            dsm_unlock(T_LOCK_BASE + k);
        }
    }
    dsm_stats_get(&s1);
    t_barrier();
    for (int k = 0; k < NLOCK; k++) {
        struct slot *s = (struct slot *)(g + k * ps);
        if (s->total != (int64_t)n * ITERS)
            T_FAIL("lock %d: total %lld, expected %lld", k, (long long)s->total,
                   (long long)n * ITERS);
        for (int j = 0; j < n; j++)
            if (s->mine[j] != ITERS)
                T_FAIL("lock %d: node %d's count %lld, expected %d", k, j,
                       (long long)s->mine[j], ITERS);
    }
    uint64_t taken = (s1.lock_acquires - s1.lock_cached) -
                     (s0.lock_acquires - s0.lock_cached);
    uint64_t faults = s1.read_faults + s1.write_faults - s0.read_faults -
                      s0.write_faults;
    uint64_t stale = faults + (s1.pages_fetched - s0.pages_fetched) +
                     (s1.invalidations - s0.invalidations);
    printf("node %d: %llu locks from the queue, %llu faults, %llu protection "
           "changes, %llu page fetches, %llu invalidations, %llu hand-off "
           "pushes, %llu pages kept\n", me, (unsigned long long)taken,
           (unsigned long long)faults,
           (unsigned long long)(s1.protects - s0.protects),
           (unsigned long long)(s1.pages_fetched - s0.pages_fetched),
           (unsigned long long)(s1.invalidations - s0.invalidations),
           (unsigned long long)(s1.push_handoff - s0.push_handoff),
           (unsigned long long)(s1.handoff_kept - s0.handoff_kept));
    /* (node 0 is the pages' home: its copies are never stale) */
    if (n == 2 && me == 1 && taken >= 20 && stale * 10 > taken)
        T_FAIL("%llu pages made stale for %llu locks from the queue: more "
               "than 1 in 10", (unsigned long long)stale,
               (unsigned long long)taken);
    return t_finish();
}
