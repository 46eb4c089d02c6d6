/* omp_get_thread_num: 0 in serial code, 0 in an inactive region, 0..T-1
   (each once) in an active region, the same inside functions called from
   the region, and thread 0 is the encountering (master) thread. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int tid_via_call(void) { return omp_get_thread_num(); }

int main(void)
{
    int seen[MAXT] = {0}, bad = 0, team = 0, t, inactive = -1;
    int master_marker = 0;
    CHECK(omp_get_thread_num() == 0, "serial thread number");
#pragma omp parallel if (0)
    inactive = omp_get_thread_num();
    CHECK(inactive == 0, "thread number in an inactive region");
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
#pragma omp master
        {
            team = omp_get_num_threads();
            master_marker = me + 1;
        }
        if (tid_via_call() != me)
            bad++;
        if (me >= 0 && me < MAXT) {
#pragma omp atomic
            seen[me]++;
        } else {
            bad++;
        }
    }
    for (t = 0; t < team && t < MAXT; t++)
        bad += seen[t] != 1;
    CHECK(bad == 0, "thread numbers in the region");
    CHECK(master_marker == 1, "master is thread 0");
    printf("team %d\n", team);
    printf("api_thread_num: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
