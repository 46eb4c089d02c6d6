/* bench/dsm/lock.c - distributed lock costs against the transport's round
 * trip, measured in one run (2+ nodes; node 0 prints):
 *
 *   pair_cached   an uncontended lock/unlock pair on node 0, which last
 *                 held the lock (its manager is node 0: no message)
 *   handoff       one lock handed back and forth between nodes 0 and 1
 *                 (ping-pong through a shared turn word under the lock):
 *                 time per handoff
 *   rtt           an 8-byte get from node 1 (the transport's round trip)
 *
 * The ratio handoff/rtt is printed as RATIO. */
#include "comm/comm.h"
#include "dsm/dsm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

enum { PAIRS = 100000, HANDOFFS = 500, RTTS = 5000 };

int main(void)
{
    if (comm_init() < 0)
        return 2;
    dsm_init();
    if (comm_connect() < 0)
        return 2;
    int64_t *turn = dsm_global_alloc(64, 64, "turn");
    dsm_start();
    int me = comm_rank(), n = comm_size();
    if (n < 2) {
        fprintf(stderr, "bench_dsm_lock: needs 2 nodes or more\n");
        return 2;
    }
    uint32_t lk = 1u << 16; /* the same id on every node, no message */
    dsm_barrier(COMM_WORLD, NULL);
    double pair = 0, hand = 0, rtt = 0;
    if (me == 0) {
        dsm_lock(lk);
        dsm_unlock(lk);
        double t0 = ompdsm_now();
        for (int i = 0; i < PAIRS; i++) {
            dsm_lock(lk);
            dsm_unlock(lk);
        }
        pair = (ompdsm_now() - t0) / PAIRS * 1e6;
        uint64_t v;
        t0 = ompdsm_now();
        for (int i = 0; i < RTTS; i++)
            COMM_CHECK(comm_get(1, DSM_REG_HEAP, 0, &v, 8));
        rtt = (ompdsm_now() - t0) / RTTS * 1e6;
    }
    dsm_barrier(COMM_WORLD, NULL);
    double t0 = ompdsm_now();
    if (me < 2) {
        for (int i = me; i < 2 * HANDOFFS;) {
            dsm_lock(lk);
            if (*turn == i) {
                (*turn)++;
                i += 2;
            }
            dsm_unlock(lk);
            sched_yield();
        }
    }
    hand = (ompdsm_now() - t0) / (2 * HANDOFFS) * 1e6;
    dsm_barrier(COMM_WORLD, NULL);
    if (me == 0) {
        printf("transport %s\n", comm_transport_name());
        printf("pair_cached %.3f us\nhandoff %.2f us\nrtt %.2f us\n", pair,
               hand, rtt);
        printf("RATIO handoff/rtt=%.2f\n", hand / rtt);
    }
    dsm_fini();
    comm_fini();
    return 0;
}
