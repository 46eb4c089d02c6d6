/* tasks created under `single` run on more than one thread: each task
   records the thread that runs it and then waits (at most 5 seconds,
   with flushes) until some task has run on another thread.  On one
   thread nothing can spread; with several the program fails when every
   task ran on the creating thread, which is what running tasks
   undeferred does, and when a task gave up waiting: some thread that
   could have run another task waited 5 s instead (issue 15: on 1 node
   x 2 threads, the node's leader waited in the barrier for its helper's
   task to end without running the other tasks). */
#include <stdio.h>
#include <omp.h>

#define NT 16
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int ran_on[NT];
static int first_tid = -1, spread, gave_up;

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
#pragma omp task
                {
                    int me = omp_get_thread_num(), first;
                    double t0 = omp_get_wtime();
#pragma omp critical
                    {
                        if (first_tid < 0)
                            first_tid = me;
                        else if (first_tid != me)
                            spread = 1;
                        first = first_tid;
                    }
                    ran_on[j] = me;
                    (void)first;
                    /* give the other threads time to take the other tasks */
                    while (team > 1) {
                        int s;
                        double t1 = omp_get_wtime();
                        while (omp_get_wtime() - t1 < 0.001)
                            ; /* (not hammering the lock the others need) */
#pragma omp critical
                        {
                            if (omp_get_wtime() - t0 >= 5.0)
                                gave_up = 1; /* (the other tasks need not wait) */
                            s = spread || gave_up;
                        }
                        if (s)
                            break;
                    }
                }
            }
        }
    }
    int distinct = 0, t, seen_any;
    for (t = 0; t < team; t++) {
        seen_any = 0;
        for (k = 0; k < NT; k++)
            seen_any |= ran_on[k] == t;
        distinct += seen_any;
    }
    for (k = 0; k < NT; k++)
        CHECK(ran_on[k] >= 0 && ran_on[k] < team, "every task ran");
    CHECK(team == 1 ? distinct == 1 : distinct > 1, "tasks ran on more than one thread");
    CHECK(!gave_up, "no task waited 5 s for a task to run on another thread");
    printf("spread: %s\n", team == 1 || distinct > 1 ? "yes" : "no");
    printf("task_spread: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
