/* barrier: in each phase every thread writes its slot, after the barrier
   every thread sees all slots of that phase. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
#define PHASES 15
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int slot[MAXT];
    int bad = 0, team = 0;
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads(), p, t;
#pragma omp master
        team = nt;
        for (p = 1; p <= PHASES; p++) {
            if (me < MAXT)
                slot[me] = p * 1000 + me;
#pragma omp barrier
            for (t = 0; t < nt && t < MAXT; t++)
                if (slot[t] != p * 1000 + t)
                    bad++;
#pragma omp barrier
        }
    }
    CHECK(bad == 0, "a slot written before the barrier was not seen after it");
    printf("team %d phases %d\n", team, PHASES);
    printf("barrier_phases: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
