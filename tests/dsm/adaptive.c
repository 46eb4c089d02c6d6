/* tests/dsm/adaptive.c - copies refetched at the acquire instead of
 * invalidated (OMPDSM_ADAPTIVE_UPDATE): a page every node writes between
 * every two barriers is invalidated, faulted back at once, and from then
 * on refetched at the barrier; a page only its home writes is read by the
 * others after every barrier, and after the barriers stop, under a lock
 * and after flushes.  Every read must see the latest value, whichever of
 * invalidation and refetch the node chose; under the invalidate protocol
 * the refetch must have happened (dsm_updates > 0 on every node but 0),
 * or this test would not test it.  With OMPDSM_LOCK_KEEP (on by default)
 * a copy this node writes every round is kept writable and refetched
 * under its writes instead (dsm_rebased): that counts too. */
#include "dsmtest.h"

#include <sched.h>
#include <string.h>

enum { ROUNDS = 40, SLOTS = 64 };

struct g {
    int64_t shared[SLOTS];   /* slot r: node r's round (all in one page) */
    char pad[1 << 16];
    int64_t homed[SLOTS];    /* written by node 0 only */
};

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    if (T_size > SLOTS) {
        printf("adaptive: at most %d nodes\n", SLOTS);
        return 2;
    }
    for (int64_t r = 1; r <= ROUNDS; r++) {
        g->shared[T_rank] = r;
        if (T_rank == 0)
            for (int k = 0; k < SLOTS; k++)
                g->homed[k] = r * 1000 + k;
        t_barrier();
        for (int n = 0; n < T_size; n++)
            if (g->shared[n] != r)
                T_FAIL("round %lld: slot of node %d holds %lld", (long long)r,
                       n, (long long)g->shared[n]);
        for (int k = 0; k < SLOTS; k++)
            if (g->homed[k] != r * 1000 + k) {
                T_FAIL("round %lld: homed[%d] holds %lld", (long long)r, k,
                       (long long)g->homed[k]);
                break;
            }
        t_barrier();
    }
    /* Lock handoffs: node n waits for its turn, reads the sum nodes
     * 0..n-1 left and adds its own. */
    uint32_t lk = T_LOCK_BASE + 7;
    if (T_rank == 0) {
        g->homed[0] = 0;
        g->homed[1] = 0;
    }
    t_barrier();
    for (;;) {
        dsm_lock(lk);
        int64_t turn = g->homed[0];
        if (turn == T_rank) {
            g->homed[1] += T_rank + 1;
            g->homed[0] = turn + 1;
            dsm_unlock(lk);
            break;
        }
        dsm_unlock(lk);
        if (turn < 0 || turn > T_rank)
            T_FAIL("lock phase: turn %lld", (long long)turn);
        sched_yield();
    }
    t_barrier();
    int64_t want = (int64_t)T_size * (T_size + 1) / 2;
    if (g->homed[1] != want)
        T_FAIL("lock phase: sum %lld, want %lld", (long long)g->homed[1],
               (long long)want);
    struct dsm_stats st;
    dsm_stats_get(&st);
    if (T_rank != 0 && !t_update_protocol() &&
        t_env_on("OMPDSM_ADAPTIVE_UPDATE") && st.updates + st.rebased == 0)
        T_FAIL("no copy was refetched at an acquire (dsm_updates and "
               "dsm_rebased 0)");
    return t_finish();
}
