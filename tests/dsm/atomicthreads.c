/* tests/dsm/atomicthreads.c - atomics by several threads of one node on a
 * word whose page is homed at another node (hybrid nodes).  Every epoch the
 * T threads of every node but 0 add 1 to a counter homed at node 0
 * (OMPDSM_HOME_POLICY=first) N times each; after the barrier every thread
 * of every node reads the counter.  On 2 nodes node 1 is the page's only
 * writer and keeps its copy, which its atomics wrote their results into:
 * that copy must hold the last result, not an earlier one written late by
 * a thread that was overtaken at the home; and right after its update a
 * thread must read its own result or a later one (dsm.h). */
#include "dsmtest.h"

#include <pthread.h>

enum { T = 4, N = 4000, EPOCHS = 5 };

static int64_t *g;
static pthread_barrier_t bar;

static void add64(void *v, const void *a) { *(int64_t *)v += *(const int64_t *)a; }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int64_t one = 1;
    int bad = 0;
    for (int e = 0; e < EPOCHS; e++) {
        if (T_rank != 0)
            for (int i = 0; i < N; i++) {
                int64_t mine;
                dsm_atomic_update(g, 8, add64, &one, NULL, &mine);
                /* the thread reads its own update, or a later one */
                int64_t now = *(volatile int64_t *)g;
                if (now < mine && bad++ < 5)
                    T_FAIL("epoch %d thread %d: read %lld after its atomic "
                           "made it %lld", e, t, (long long)now,
                           (long long)mine);
            }
        t_node_barrier(&bar, t);
        int64_t want = (int64_t)(e + 1) * (T_size - 1) * T * N;
        if (*g != want)
            T_FAIL("epoch %d thread %d: counter %lld, expected %lld", e, t,
                   (long long)*g, (long long)want);
        t_node_barrier(&bar, t);
    }
    return NULL;
}

int main(void)
{
    t_start(sizeof *g, (void **)&g);
    t_run_threads(T, &bar, worker);
    return t_finish();
}
