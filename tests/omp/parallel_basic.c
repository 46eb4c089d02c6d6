/* parallel: every thread of the team runs the region once, thread numbers
   are 0..T-1 and distinct, and the team has omp_get_max_threads() threads
   when dynamic adjustment is off. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int seen[MAXT] = {0};
    int count = 0, bad = 0, team = -1, i;
    omp_set_dynamic(0);
    int maxt = omp_get_max_threads();

#pragma omp parallel
    {
        int tid = omp_get_thread_num();
        int nt = omp_get_num_threads();
        if (tid == 0)
            team = nt;
        if (tid < 0 || tid >= nt || nt > MAXT) {
#pragma omp atomic
            bad++;
        } else {
#pragma omp atomic
            seen[tid]++;
        }
#pragma omp atomic
        count++;
    }

    CHECK(bad == 0, "thread number out of range");
    CHECK(team == maxt, "team size differs from omp_get_max_threads()");
    CHECK(count == team, "not every thread executed the region once");
    for (i = 0; i < team && i < MAXT; i++)
        CHECK(seen[i] == 1, "thread number not seen exactly once");
    CHECK(omp_get_thread_num() == 0, "serial part is not thread 0");
    CHECK(omp_get_num_threads() == 1, "serial part team size is not 1");
    printf("team size %d, region executions %d\n", team, count);
    printf("parallel_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
