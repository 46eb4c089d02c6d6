/* threadprivate: each thread has its own copy of a global; with dynamic
   threads off and the same team size, values persist between two parallel
   regions; the master's copy is the original seen by serial code. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int tp_counter;
double tp_scale = 1.5;
#pragma omp threadprivate(tp_counter, tp_scale)
static long tp_static;
#pragma omp threadprivate(tp_static)

int main(void)
{
    int bad = 0, team = 0;
    omp_set_dynamic(0);
    tp_counter = 5;                         /* master's copy */
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
#pragma omp master
        team = omp_get_num_threads();
        if (me != 0 && tp_scale != 1.5)
            bad++;                          /* initial value of new copies */
        tp_counter = me * 10;
        tp_static = 1000L * me;
        tp_scale = me + 0.5;
#pragma omp barrier
        if (tp_counter != me * 10 || tp_static != 1000L * me)
            bad++;
    }
    CHECK(bad == 0, "copies are not private / initial value");
    CHECK(tp_counter == 0 && tp_static == 0 && tp_scale == 0.5,
          "master copy after the region");
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
        if (tp_counter != me * 10 || tp_static != 1000L * me ||
            tp_scale != me + 0.5)
            bad++;                          /* persisted */
        tp_counter += 1;
    }
    CHECK(bad == 0, "values did not persist between regions");
    CHECK(tp_counter == 1, "master copy after second region");
    printf("team %d master copy %d\n", team, tp_counter);
    printf("threadprivate_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
