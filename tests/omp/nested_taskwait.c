/* taskwait inside a nested parallel region waits for the children of the
   nested region's implicit task only, not for those of the task that
   encountered the region: the single thread defers a task that waits
   (up to 10 s) for a flag, then starts a nested region whose threads do
   a taskwait before its master sets the flag.  A taskwait that waited for
   the outer task's child would wait for the flag it is about to set.  The
   outer taskwait after the nested region must still wait for that child,
   and tasks created inside the nested region are complete at its
   taskwait.  With a team of one the task runs at once, so it is created
   only when there are other threads to run it.  Failed on 2, 1x2 and 2x2
   nodes while the nested taskwait waited for the outer task's child
   (which waited 10 s for the flag, then gave up).  An expected failure
   under the translator's mock runtime, which runs tasks at once. */
#include <stdio.h>
#include <omp.h>

static int flag, child_done, inner_tasks[4], nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    omp_set_nested(1);
#pragma omp parallel
    {
#pragma omp single
        {
            int spun = omp_get_num_threads() > 1;
            if (spun) {
#pragma omp task
                {
                    double t0 = omp_get_wtime();
                    int f = 0;
                    while (!f && omp_get_wtime() - t0 < 10.0) {
#pragma omp flush
                        f = flag;
                    }
                    child_done = f ? 1 : 2;
#pragma omp flush
                }
            }
#pragma omp parallel num_threads(2)
            {
                int me = omp_get_thread_num();
#pragma omp task firstprivate(me)
                inner_tasks[me] = 10 + me;
#pragma omp taskwait
                CHECK(inner_tasks[me] == 10 + me,
                      "a nested thread's task complete at its taskwait");
#pragma omp barrier
#pragma omp master
                {
                    flag = 1;
#pragma omp flush
                }
            }
#pragma omp taskwait
            if (spun)
                CHECK(child_done == 1,
                      "the outer task's child done at the outer taskwait, "
                      "having seen the flag set after the nested taskwait");
            CHECK(inner_tasks[0] == 10 && inner_tasks[1] == 10 + 1,
                  "the nested team's tasks");
        }
    }
    printf("nested_taskwait: %s\n", nfail ? "FAILED" : "ok");
    return nfail != 0;
}
