/* tests/dsm/threads.c - several application threads per node (what hybrid
 * nodes will do): the threads of every node fault on the same pages at the
 * same time, write interleaved elements, take distributed locks and do
 * atomics concurrently; one thread per node runs the DSM barrier after the
 * node's threads met; then every thread checks everything. */
#include "dsmtest.h"

#include <pthread.h>
#include <string.h>

enum { T = 3, N = 60000, EPOCHS = 12, LOCKS = 50 };

struct g {
    int32_t a[N];
    int64_t counter;
    int64_t atomic_counter;
};

static struct g *g;
static pthread_barrier_t bar;

static void add64(void *v, const void *a) { *(int64_t *)v += *(const int64_t *)a; }

/* Thread t of node r owns element i in epoch e if (i + e) % (size*T) is its
 * global id: threads of different nodes and of one node interleave. */
static int32_t val(int i, int e) { return i * 7 + e * 100003; }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int gid = T_rank * T + t, total = T_size * T;
    int64_t one = 1;
    for (int e = 0; e < EPOCHS; e++) {
        for (int i = 0; i < N; i++)
            if ((i + e) % total == gid)
                g->a[i] = val(i, e);
        for (int k = 0; k < LOCKS; k++) {
            dsm_lock(T_LOCK_BASE + 10);
            int64_t c = g->counter;
            g->counter = c + 1;
            dsm_unlock(T_LOCK_BASE + 10);
            dsm_atomic_update(&g->atomic_counter, 8, add64, &one, NULL, NULL);
        }
        t_node_barrier(&bar, t);
        for (int i = 0; i < N; i++)
            if (g->a[i] != val(i, e)) {
                T_FAIL("epoch %d thread %d: a[%d] = %d, expected %d", e, t, i,
                       g->a[i], val(i, e));
                break;
            }
        int64_t want = (int64_t)(e + 1) * LOCKS * total;
        if (g->counter != want)
            T_FAIL("epoch %d thread %d: counter %lld, expected %lld", e, t,
                   (long long)g->counter, (long long)want);
        if (g->atomic_counter != want)
            T_FAIL("epoch %d thread %d: atomic counter %lld, expected %lld", e,
                   t, (long long)g->atomic_counter, (long long)want);
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
