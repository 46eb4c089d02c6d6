/* task: tasks created by one thread (inside single) are all executed
   exactly once by the team, and are complete at the barrier at the end of
   the single / region. */
#include <stdio.h>
#include <omp.h>

#define NT 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int done[NT];

int main(void)
{
    int i, bad = 0;
    long sum = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp single
        {
            int k;
            for (k = 0; k < NT; k++) {
#pragma omp task
                {
                    done[k]++;
#pragma omp atomic
                    sum += k;
                }
            }
        }
        /* the barrier of the single completes all tasks */
        if (sum != (long)NT * (NT - 1) / 2)
            bad++;
    }
    for (i = 0; i < NT; i++)
        CHECK(done[i] == 1, "task not executed exactly once");
    CHECK(bad == 0, "tasks not complete at the barrier");
    printf("sum %ld\n", sum);
    printf("task_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
