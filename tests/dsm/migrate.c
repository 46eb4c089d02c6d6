/* tests/dsm/migrate.c - home migration (OMPDSM_MIGRATION).  Run with
 * OMPDSM_MIGRATION_FORCE=N, every page used in an interval changes home at
 * every N-th barrier, and three phases check that nothing is lost:
 *   1. pages written by several nodes: every node writes its own words,
 *      interleaved over the same pages, reads all of them after each
 *      barrier, and also writes some pages it is not home of;
 *   2. a lock held across a barrier: the holder writes a page, the barrier
 *      moves the page's home, the holder writes again and unlocks; every
 *      other node then updates it under the lock, and all must see every
 *      update (the diff after the move must go to the new home);
 *   3. lock-protected increments released just before a barrier that
 *      moves the page, and acquired by the next holder after it.
 * Under OMPDSM_MIGRATION=faults without forcing, phase 4 checks the
 * policy: a page only one node uses moves to that node, after which it
 * takes no more remote faults on it.  The migrations counted must not be
 * 0 whenever migration is on, so a mechanism that silently never moves a
 * page fails. */
#include "dsmtest.h"

#include <string.h>

enum { WORDS = 48 * 1024, EPOCHS = 12, LOCK_ROUNDS = 8, INCS = 5 };

struct g {
    int64_t w[WORDS];     /* phase 1: several pages, every node's words */
    int64_t held[8192];   /* phase 2: its own page(s) */
    int64_t ctr[8192];    /* phase 3 */
    int64_t solo[8192];   /* phase 4: used by node 1 only */
};

static int64_t val(int e, size_t i) { return (int64_t)e * 1000003 + (int64_t)i; }

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    const char *pol = getenv("OMPDSM_MIGRATION");
    const char *force = getenv("OMPDSM_MIGRATION_FORCE");
    int forced = force && atoi(force) > 0;
    int on = forced || (pol && strcmp(pol, "off"));
    enum { LOCK = T_LOCK_BASE + 7 };

    /* Phase 1. */
    for (int e = 1; e <= EPOCHS; e++) {
        for (size_t i = (size_t)T_rank; i < WORDS; i += (size_t)T_size)
            g->w[(i + (size_t)e) % WORDS] = val(e, i);
        t_barrier();
        for (size_t i = 0; i < WORDS; i++)
            if (g->w[(i + (size_t)e) % WORDS] != val(e, i)) {
                T_FAIL("epoch %d: w[%zu] = %lld, expected %lld", e,
                       (i + (size_t)e) % WORDS,
                       (long long)g->w[(i + (size_t)e) % WORDS],
                       (long long)val(e, i));
                break;
            }
        t_barrier();
    }

    /* Phase 2: node 0 holds the lock across the barrier. */
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        if (T_rank == 0) {
            dsm_lock(LOCK);
            g->held[r] += 1;
            g->held[4096 + r] += 1;
        }
        t_barrier();
        if (T_rank == 0) {
            g->held[r] += 10;
            g->held[4096 + r] += 10;
            dsm_unlock(LOCK);
        } else {
            dsm_lock(LOCK);
            g->held[r] += 100;
            dsm_unlock(LOCK);
        }
        t_barrier();
        int64_t want = 11 + 100 * (T_size - 1);
        if (g->held[r] != want || g->held[4096 + r] != 11)
            T_FAIL("lock round %d: %lld and %lld, expected %lld and 11", r,
                   (long long)g->held[r], (long long)g->held[4096 + r],
                   (long long)want);
    }

    /* Phase 3: increments under the lock just before each barrier. */
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        for (int k = 0; k < INCS; k++) {
            dsm_lock(LOCK);
            g->ctr[1 + (r * 97 + k) % 8191] += 1;
            g->ctr[0] += 1;
            dsm_unlock(LOCK);
        }
        t_barrier();
    }
    dsm_lock(LOCK);
    int64_t c0 = g->ctr[0];
    dsm_unlock(LOCK);
    if (c0 != (int64_t)LOCK_ROUNDS * INCS * T_size)
        T_FAIL("counter %lld, expected %lld", (long long)c0,
               (long long)LOCK_ROUNDS * INCS * T_size);
    for (int r = 0; r < LOCK_ROUNDS; r++)
        for (int k = 1; k < INCS; k++) {
            int64_t v = g->ctr[1 + (r * 97 + k) % 8191];
            if (v < T_size)
                T_FAIL("ctr[%d] = %lld, expected at least %d",
                       1 + (r * 97 + k) % 8191, (long long)v, T_size);
        }
    t_barrier();

    /* Phase 4: the faults policy moves node 1's page to node 1. */
    struct dsm_stats st;
    uint64_t late_remote = 0;
    for (int e = 0; e < 8; e++) {
        if (e == 6 && T_rank == 1) {
            dsm_stats_get(&st);
            late_remote = st.remote_faults;
        }
        if (T_rank == 1) {
            /* Two write faults per interval: the policy's minimum. */
            g->solo[0] += g->solo[0] + 1;
            dsm_release();
            for (size_t i = 512; i < 8192; i += 512)
                g->solo[i] += g->solo[i] + 1;
        }
        t_barrier();
    }
    for (size_t i = 0; i < 8192; i += 512)
        if (g->solo[i] != 255)
            T_FAIL("solo[%zu] = %lld, expected 255", i, (long long)g->solo[i]);
    dsm_stats_get(&st);
    if (T_rank == 1 && on && !forced && pol && !strcmp(pol, "faults") &&
        st.remote_faults != late_remote)
        T_FAIL("policy faults: node 1 still takes remote faults on its own "
               "page (%llu more in the last 2 barriers)",
               (unsigned long long)(st.remote_faults - late_remote));
    int64_t moved = (int64_t)st.migrations;
    comm_allreduce(COMM_WORLD, &moved, 1, COMM_INT64, COMM_SUM);
    if (on && moved == 0)
        T_FAIL("migration on, but no page changed home");
    if (!on && moved != 0)
        T_FAIL("migration off, but %lld pages changed home", (long long)moved);
    if (T_rank == 0)
        printf("%lld pages changed home\n", (long long)moved);
    return t_finish();
}
