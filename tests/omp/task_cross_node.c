/* tasks created by one thread under `single` run on every thread of the
   team: each task records the thread that runs it and then waits (polling
   once a millisecond, at most 5 seconds) until every thread has run a
   task.  With several nodes of several threads each (2 x 2), tasks the
   creator queued on its node must be taken by the threads of the other
   nodes; the program fails when some thread ran none (it gave up after
   5 s), as it did at 2 x 2 and 2 x 4 while tasks stayed on their node.
   Every task's result is checked too. */
#include <stdio.h>
#include <omp.h>

#define NT 48
#define MAXT 64
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int ran_on[NT];
static long result[NT];
static int has_run[MAXT], distinct, gave_up;

int main(void)
{
    int team = 1, k;
    for (k = 0; k < NT; k++)
        ran_on[k] = -1;
#pragma omp parallel
    {
#pragma omp single
        {
            int j;
            team = omp_get_num_threads();
            for (j = 0; j < NT; j++) {
                long v = 1000L * j;
#pragma omp task firstprivate(v)
                {
                    int me = omp_get_thread_num(), all;
                    double t0 = omp_get_wtime();
#pragma omp critical
                    {
                        if (me < MAXT && !has_run[me]) {
                            has_run[me] = 1;
                            distinct++;
                        }
                    }
                    ran_on[j] = me;
                    result[j] = v + j;
                    for (;;) {
                        double t1 = omp_get_wtime();
                        while (omp_get_wtime() - t1 < 0.001)
                            ; /* (not hammering the lock the others need) */
#pragma omp critical
                        {
                            if (omp_get_wtime() - t0 >= 5.0)
                                gave_up = 1;
                            all = distinct >= (team < MAXT ? team : MAXT) ||
                                  gave_up;
                        }
                        if (all)
                            break;
                    }
                }
            }
        }
    }
    for (k = 0; k < NT; k++) {
        CHECK(ran_on[k] >= 0 && ran_on[k] < team, "every task ran");
        CHECK(result[k] == 1001L * k, "a task's firstprivate value");
    }
    CHECK(distinct == (team < MAXT ? team : MAXT), "every thread ran a task");
    printf("every thread ran a task: %s\n",
           distinct == (team < MAXT ? team : MAXT) ? "yes" : "no");
    printf("task_cross_node: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
