/* every thread of the team creates tasks (no single); tasks are complete
   at an explicit barrier; a task created inside a for loop body captures
   the loop variable. */
#include <stdio.h>
#include <omp.h>

#define PER 20
#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int made[MAXT][PER];
static int loop_done[100];

int main(void)
{
    int bad = 0, team = 0, t, k;
    omp_set_dynamic(0);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt) reduction(+:bad)
    {
        int me = omp_get_thread_num(), j, i;
#pragma omp master
        team = omp_get_num_threads();
        for (j = 0; j < PER; j++) {
#pragma omp task
            made[me][j] += me * 100 + j;
        }
#pragma omp barrier
        for (j = 0; j < PER; j++)
            if (made[me][j] != me * 100 + j)
                bad++;
#pragma omp for
        for (i = 0; i < 100; i++) {
#pragma omp task
            loop_done[i] += i + 1;
        }
        /* the for's barrier completes those tasks too */
        for (i = 0; i < 100; i++)
            if (loop_done[i] != i + 1)
                bad++;
    }
    for (t = 0; t < team; t++)
        for (k = 0; k < PER; k++)
            bad += made[t][k] != t * 100 + k;
    CHECK(bad == 0, "tasks from every thread");
    printf("team %d\n", team);
    printf("task_all_threads: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
