/* bench/dsm/lock.c - distributed lock costs against the transport's round
 * trip, measured in one run (2+ nodes; node 0 prints):
 *
 *   pair_cached   an uncontended lock/unlock pair on node 0, which last
 *                 held the lock (its manager is node 0: no message)
 *   pair_remote   the same on node 1, whose lock's manager is node 0:
 *                 messages unless the lock stays cached
 *   pair_write    the same on node 1 with a write under the lock to a word
 *                 homed at node 0 (a release per pair unless lazy)
 *   handoff       one lock handed back and forth between nodes 0 and 1
 *                 (ping-pong through a shared turn word under the lock):
 *                 time per handoff
 *   rtt           an 8-byte get from node 1 (the transport's round trip)
 *
 * Run with OMPDSM_LOCK_CACHE=off for the queue-only lock, with
 * OMPDSM_WD=on for software write detection (the stores are marked as
 * ompcc's pass marks them).  The ratio handoff/rtt is printed as RATIO. */
#include "comm/comm.h"
#include "dsm/dsm.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* ompcc's pass marks a store before and after it (runtime/ompdsm_abi.h);
 * without write detection the marks do nothing. */
void OMPDSM_wd_mark(const void *p, unsigned long len);
static void inc_marked(int64_t *p)
{
    OMPDSM_wd_mark(p, sizeof *p);
    (*p)++;
    OMPDSM_wd_mark(p, sizeof *p);
}

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
    double pair = 0, hand = 0, rtt = 0, pairw = 0;
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
    double pair1 = 0;
    if (me == 1) {
        dsm_lock(lk);
        dsm_unlock(lk);
        double t0 = ompdsm_now();
        for (int i = 0; i < PAIRS / 10; i++) {
            dsm_lock(lk);
            dsm_unlock(lk);
        }
        pair1 = (ompdsm_now() - t0) / (PAIRS / 10) * 1e6;
        t0 = ompdsm_now();
        for (int i = 0; i < PAIRS / 10; i++) {
            dsm_lock(lk);
            inc_marked(&turn[1]);
            dsm_unlock(lk);
        }
        pairw = (ompdsm_now() - t0) / (PAIRS / 10) * 1e6;
    }
    comm_allreduce(COMM_WORLD, &pair1, 1, COMM_DOUBLE, COMM_SUM);
    comm_allreduce(COMM_WORLD, &pairw, 1, COMM_DOUBLE, COMM_SUM);
    dsm_barrier(COMM_WORLD, NULL);
    struct dsm_stats d0, d1;
    struct comm_stats c0, c1;
    dsm_stats_get(&d0);
    comm_stats_get(&c0);
    double t0 = ompdsm_now();
    if (me < 2) {
        for (int i = me; i < 2 * HANDOFFS;) {
            dsm_lock(lk);
            if (*turn == i) {
                inc_marked(turn);
                i += 2;
            }
            dsm_unlock(lk);
            sched_yield();
        }
    }
    hand = (ompdsm_now() - t0) / (2 * HANDOFFS) * 1e6;
    dsm_stats_get(&d1);
    comm_stats_get(&c1);
    /* Where a handoff's time goes: nodes 0 and 1's counts per handoff
     * (each node takes the lock once per handoff, and re-takes it when it
     * finds it is not its turn). */
    enum { NCOL = 16 };
    static const char *const col[NCOL] = {
        "lock acquires", "of them cached", "lock wait us", "blocked us",
        "sleeps", "faults", "pages fetched", "invalidations", "updates",
        "snapshots", "diffs", "notices sent", "gets", "puts", "atomics",
        "notifies"};
    double row[2][NCOL] = {{0}};
    if (me < 2) {
        double v[NCOL] = {
            (double)(d1.lock_acquires - d0.lock_acquires),
            (double)(d1.lock_cached - d0.lock_cached),
            (d1.lock_ns - d0.lock_ns) / 1e3, (c1.wait_ns - c0.wait_ns) / 1e3,
            (double)(c1.sleeps - c0.sleeps),
            (double)(d1.read_faults + d1.write_faults - d0.read_faults -
                     d0.write_faults),
            (double)(d1.pages_fetched - d0.pages_fetched),
            (double)(d1.invalidations - d0.invalidations),
            (double)(d1.updates - d0.updates),
            (double)(d1.snap_updates - d0.snap_updates), (double)(d1.diffs - d0.diffs),
            (double)(d1.notices_sent - d0.notices_sent),
            (double)(c1.gets - c0.gets), (double)(c1.puts - c0.puts),
            (double)(c1.atomics - c0.atomics),
            (double)(c1.notifies - c0.notifies)};
        for (int k = 0; k < NCOL; k++)
            row[me][k] = v[k] / HANDOFFS;
    }
    comm_allreduce(COMM_WORLD, row, 2 * NCOL, COMM_DOUBLE, COMM_SUM);
    dsm_barrier(COMM_WORLD, NULL);
    if (me == 0) {
        const char *cache = getenv("OMPDSM_LOCK_CACHE");
        printf("transport %s lock_cache %s\n", comm_transport_name(),
               cache ? cache : "on");
        printf("pair_cached %.3f us\npair_remote %.3f us\npair_write %.3f us\n"
               "handoff %.2f us\nrtt %.2f us\n", pair, pair1, pairw, hand, rtt);
        if (turn[1] != PAIRS / 10)
            printf("ERROR: the %d writes of pair_write left %lld\n", PAIRS / 10,
                   (long long)turn[1]);
        printf("RATIO handoff/rtt=%.2f\n", hand / rtt);
        printf("per handoff        node 0   node 1\n");
        for (int k = 0; k < NCOL; k++)
            printf("  %-16s %8.2f %8.2f\n", col[k], row[0][k], row[1][k]);

    }
    dsm_fini();
    comm_fini();
    return 0;
}
