/* omp_set_schedule / omp_get_schedule round trip for every kind and several
   chunk sizes, also inside a region (run-sched-var belongs to the task);
   the default schedule is implementation defined and not printed. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    omp_sched_t kinds[3] = {omp_sched_static, omp_sched_dynamic, omp_sched_guided};
    int chunks[3] = {1, 5, 64}, i, j, bad = 0;
    omp_sched_t k;
    int m;
    omp_get_schedule(&k, &m);
    CHECK(k == omp_sched_static || k == omp_sched_dynamic ||
          k == omp_sched_guided || k == omp_sched_auto, "default kind");
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) {
            omp_set_schedule(kinds[i], chunks[j]);
            omp_get_schedule(&k, &m);
            CHECK(k == kinds[i] && m == chunks[j], "round trip");
        }
    omp_set_schedule(omp_sched_auto, 0);
    omp_get_schedule(&k, &m);
    CHECK(k == omp_sched_auto, "auto");

    omp_set_schedule(omp_sched_guided, 9);
#pragma omp parallel private(k, m) reduction(+:bad)
    {
        omp_get_schedule(&k, &m);
        if (k != omp_sched_guided || m != 9)
            bad++;                      /* inherited by implicit tasks */
        omp_set_schedule(omp_sched_dynamic, 2 + omp_get_thread_num());
        omp_get_schedule(&k, &m);
        if (k != omp_sched_dynamic || m != 2 + omp_get_thread_num())
            bad++;
    }
    CHECK(bad == 0, "schedule in the region");
    printf("api_schedule: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
