/* bench/dsm/lockthr.c - one lock contended by several threads per node
 * (hybrid nodes), on 1 node or more; node 0 prints.
 *
 * Every thread of every node takes the lock PAIRS times (argument 2,
 * default 20000) and increments a shared counter under it (homed at node
 * 0; the lock's manager is node 1, or 0 on 1 node); THREADS threads per
 * node (argument 1, default 2).  Prints the time
 * per lock pair (the run's time over all pairs of the job) and node 0's
 * and node 1's counts per lock pair: DSM releases and acquires, lock
 * acquires re-taken from the cache, local hand-overs (a lock handed to a
 * thread of the same node: no message, no release), and the transport's
 * operations (gets, puts, atomics, notifies; to the node itself too).
 * The counter is checked: nodes x threads x pairs.  With `active` (argument
 * 3) only the first `active` nodes take the lock (1: node 0's threads
 * contend among themselves for a lock managed at node 1).  Each thread
 * computes about `work` x 10 ns (argument 4, default 10) under the lock
 * and as long after it.
 *
 *   ompdsmrun -np N bench_dsm_lockthr [threads [pairs [active [work]]]] */
#include "comm/comm.h"
#include "dsm/dsm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t *counter;
static uint32_t lk;
static long pairs;
static int work;

/* About `work` x 10 ns of computing. */
static void spin(int w)
{
    for (volatile int i = 0; i < w * 4; i++)
        ;
}

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < pairs; i++) {
        dsm_lock(lk);
        (*counter)++;
        spin(work);
        dsm_unlock(lk);
        spin(work);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    pairs = argc > 2 ? atol(argv[2]) : 20000;
    int active = argc > 3 ? atoi(argv[3]) : 1 << 20;
    work = argc > 4 ? atoi(argv[4]) : 10;
    if (threads < 1 || threads > 64 || pairs < 1 || active < 1 || work < 0) {
        fprintf(stderr,
                "usage: bench_dsm_lockthr [threads [pairs [active [work]]]]\n");
        return 2;
    }
    if (comm_init() < 0)
        return 2;
    dsm_init();
    if (comm_connect() < 0)
        return 2;
    counter = dsm_global_alloc(64, 64, "counter");
    dsm_start();
    int me = comm_rank(), n = comm_size();
    if (active > n)
        active = n;
    if (me >= active)
        pairs = 0;
    lk = (1u << 16) + (n > 1); /* managed by node 1 (of 2 or more) */
    /* Warm up: every node takes it once. */
    for (int k = 0; k < n; k++) {
        if (k == me) {
            dsm_lock(lk);
            dsm_unlock(lk);
        }
        dsm_barrier(COMM_WORLD, NULL);
    }
    int64_t base = *counter;
    struct dsm_stats d0, d1;
    struct comm_stats c0, c1;
    dsm_barrier(COMM_WORLD, NULL);
    dsm_stats_get(&d0);
    comm_stats_get(&c0);
    double t0 = ompdsm_now();
    pthread_t th[64];
    for (int t = 1; t < threads; t++)
        pthread_create(&th[t], NULL, worker, NULL);
    worker(NULL);
    for (int t = 1; t < threads; t++)
        pthread_join(th[t], NULL);
    dsm_stats_get(&d1);
    comm_stats_get(&c1);
    dsm_barrier(COMM_WORLD, NULL);
    double el = ompdsm_now() - t0;
    enum { NCOL = 9 };
    static const char *const col[NCOL] = {
        "releases", "acquires", "cache re-takes", "local hand-overs",
        "gets", "puts", "atomics", "notifies", "lock wait us"};
    double p = pairs ? (double)pairs * threads : 1;
    double v[NCOL] = {
        (double)(d1.releases - d0.releases) / p,
        (double)(d1.acquires - d0.acquires) / p,
        (double)(d1.lock_cached - d0.lock_cached) / p,
#ifdef DSM_STATS_LOCK_LOCAL
        (double)(d1.lock_local_handoffs - d0.lock_local_handoffs) / p,
#else
        0,
#endif
        (double)(c1.gets - c0.gets) / p, (double)(c1.puts - c0.puts) / p,
        (double)(c1.atomics - c0.atomics) / p,
        (double)(c1.notifies - c0.notifies) / p,
        (double)(d1.lock_ns - d0.lock_ns) / 1e3 / p};
    double row[2][NCOL] = {{0}};
    if (me < 2)
        for (int k = 0; k < NCOL; k++)
            row[me][k] = v[k];
    comm_allreduce(COMM_WORLD, row, 2 * NCOL, COMM_DOUBLE, COMM_SUM);
    int64_t want = (int64_t)pairs * threads;
    comm_allreduce(COMM_WORLD, &want, 1, COMM_INT64, COMM_SUM);
    int64_t got = *counter - base;
    if (me == 0) {
        printf("transport %s nodes %d (%d taking the lock) threads %d pairs %ld\n",
               comm_transport_name(), n, active, threads, pairs);
        printf("pair %.3f us\n", el / ((double)want) * 1e6);
        if (got != want)
            printf("ERROR: counter %lld, want %lld\n", (long long)got,
                   (long long)want);
        printf("per lock pair      node 0   node 1\n");
        for (int k = 0; k < NCOL; k++)
            printf("  %-16s %8.3f %8.3f\n", col[k], row[0][k], row[1][k]);
    }
    dsm_barrier(COMM_WORLD, NULL);
    dsm_fini();
    comm_fini();
    return got != want;
}
