/* tests/dsm/samefault.c - the threads of one node fault on the same page at
 * once (hybrid nodes): every epoch node 0, home of every page
 * (OMPDSM_HOME_POLICY=first), rewrites an array of P DSM pages; after the
 * barrier the T threads of every node, released together, read the array
 * in the same order, so they meet on each invalid page.  Each page must be
 * fetched once per node, whatever the number of threads faulting on it:
 * a node other than 0 fetches exactly P pages per epoch (the statistic
 * pages_fetched, taken by thread 0 before the barrier and after the
 * reading; some pages come in at the barrier's acquire, under the update
 * protocol or adaptively, once each too), and every thread reads every
 * value node 0 wrote.  A thread that faulted while another was fetching
 * the page and then fetched it again made it fail with 67-96 pages for
 * 64. */
#include "dsmtest.h"

#include <pthread.h>
#include <string.h>

enum { T = 4, P = 64, EPOCHS = 10 };
static int WPP; /* 64-bit words per DSM page */

static int64_t *a;
static pthread_barrier_t bar;

static int64_t val(int i, int e) { return (int64_t)i * 1000003 + e * 7; }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int e = 0; e < EPOCHS; e++) {
        if (T_rank == 0) {
            /* the threads of node 0 share the writing */
            for (int i = t; i < P * WPP; i += T)
                a[i] = val(i, e);
        }
        pthread_barrier_wait(&bar);
        struct dsm_stats s0, s1;
        if (t == 0) {
            dsm_stats_get(&s0);
            dsm_barrier(COMM_WORLD, NULL);
        }
        pthread_barrier_wait(&bar);
        int64_t bad = 0;
        for (int i = 0; i < P * WPP; i++)
            if (a[i] != val(i, e) && bad++ == 0)
                T_FAIL("epoch %d thread %d: a[%d] = %lld, expected %lld", e,
                       t, i, (long long)a[i], (long long)val(i, e));
        pthread_barrier_wait(&bar);
        if (t == 0) {
            dsm_stats_get(&s1);
            uint64_t got = s1.pages_fetched - s0.pages_fetched;
            uint64_t want = T_rank == 0 ? 0 : P;
            if (got != want)
                T_FAIL("epoch %d: %d threads fetched %llu pages, expected "
                       "%llu (each page once per node)", e, T,
                       (unsigned long long)got, (unsigned long long)want);
            dsm_barrier(COMM_WORLD, NULL);
        }
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(void)
{
    t_init();
    WPP = (int)(dsm_page_size() / 8);
    a = dsm_global_alloc((size_t)P * dsm_page_size(), 64, "test globals");
    dsm_start();
    t_run_threads(T, &bar, worker);
    return t_finish();
}
