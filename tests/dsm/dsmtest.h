/* tests/dsm/dsmtest.h - helpers for DSM-level multi-node tests: start a
 * node without the OpenMP runtime, fail loudly, and a small seeded RNG. */
#ifndef DSMTEST_H
#define DSMTEST_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "comm/comm.h"
#include "dsm/dsm.h"

static int T_rank, T_size;
static int T_failures;

#define T_FAIL(...)                                                            \
    do {                                                                       \
        printf("FAIL: node %d: ", T_rank);                                     \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
        fflush(stdout);                                                        \
        if (++T_failures > 20)                                                 \
            exit(1);                                                           \
    } while (0)

/* Fixed lock ids for the tests: any id names a lock, and these lie far
 * above the few that dsm_lock_alloc hands out in these programs. */
enum { T_LOCK_BASE = 1 << 16 };

/* Starts comm and initialises the DSM: globals may be allocated next,
 * then dsm_start(). */
static inline void t_init(void)
{
    if (comm_init() < 0)
        exit(2);
    T_rank = comm_rank();
    T_size = comm_size();
    dsm_init();
    if (comm_connect() < 0)
        exit(2);
}

/* Starts comm and the DSM; `globals` bytes are allocated as program globals
 * (deterministically) before the protocol starts and returned in *g. */
static inline void t_start(size_t globals, void **g)
{
    t_init();
    if (globals && g)
        *g = dsm_global_alloc(globals, 64, "test globals");
    dsm_start();
}

static inline int t_finish(void)
{
    struct comm_group w = COMM_WORLD;
    int64_t f = T_failures;
    comm_allreduce(w, &f, 1, COMM_INT64, COMM_SUM);
    dsm_fini();
    comm_fini();
    if (T_rank == 0)
        printf("%s (%d nodes, %s)\n", f ? "FAILED" : "ok", T_size,
               comm_transport_name());
    return f ? 1 : 0;
}

/* An on|off switch of the DSM (OMPDSM_LOCK_CACHE, ...) that is on unless
 * set to off, as the runtime reads it. */
static inline int t_env_on(const char *name)
{
    const char *v = getenv(name);
    return !v || strcmp(v, "off") != 0;
}

/* Whether the run uses OMPDSM_PROTOCOL=update (the default: invalidate). */
static inline int t_update_protocol(void)
{
    const char *v = getenv("OMPDSM_PROTOCOL");
    return v && !strcmp(v, "update");
}

/* A store marked for software write detection (OMPDSM_WD) the way
 * ompcc's pass marks one: before and after it (runtime/ompdsm_abi.h). */
void OMPDSM_wd_mark(const void *p, unsigned long len);
#define T_WD_STORE(lv, v)                                                      \
    do {                                                                       \
        OMPDSM_wd_mark(&(lv), sizeof(lv));                                     \
        (lv) = (v);                                                            \
        OMPDSM_wd_mark(&(lv), sizeof(lv));                                     \
    } while (0)

static inline void t_barrier(void)
{
    dsm_barrier(COMM_WORLD, NULL);
}

/* Tests with several threads per node: a barrier of every thread of every
 * node (thread 0 of each node takes the DSM barrier between two barriers
 * of the node's threads). */
static inline void t_node_barrier(pthread_barrier_t *bar, int t)
{
    pthread_barrier_wait(bar);
    if (t == 0)
        dsm_barrier(COMM_WORLD, NULL);
    pthread_barrier_wait(bar);
}

/* Runs worker on nthreads threads of this node (thread 0 is the caller),
 * after initialising bar for them; returns when all are done. */
static inline void t_run_threads(int nthreads, pthread_barrier_t *bar,
                                 void *(*worker)(void *))
{
    pthread_t th[64];
    if (nthreads > 64)
        exit(2);
    pthread_barrier_init(bar, NULL, (unsigned)nthreads);
    if (nthreads > 1) /* (as the runtime says when its pool grows) */
        dsm_volatile_threads(nthreads);
    for (int t = 1; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    worker((void *)0);
    for (int t = 1; t < nthreads; t++)
        pthread_join(th[t], NULL);
}

/* Application threads per node for the tests that take several
 * (T_THREADS in the environment, 1 to 64; default 1). */
static inline int t_threads(void)
{
    const char *v = getenv("T_THREADS");
    int t = v && *v ? atoi(v) : 1;
    if (t < 1 || t > 64) {
        fprintf(stderr, "T_THREADS=%s: expected 1 to 64\n", v);
        exit(2);
    }
    return t;
}

struct t_rng {
    uint64_t s;
};
static inline uint64_t t_next(struct t_rng *r)
{
    uint64_t x = r->s += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
