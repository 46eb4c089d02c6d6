/* omp_get_num_procs() >= 1, omp_get_thread_limit() >= 1 and not below any
   team size, omp_in_parallel() in serial code, active, inactive and nested
   inactive regions, omp_get_dynamic()/omp_set_dynamic(),
   omp_get_nested()/omp_set_nested(); values that are implementation
   defined are checked, never printed. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0, team = 0, in_inactive = -1, in_nested = -1;
    CHECK(omp_get_num_procs() >= 1, "num_procs");
    CHECK(omp_get_thread_limit() >= 1, "thread_limit");
    CHECK(omp_in_parallel() == 0, "in_parallel in serial code");

    omp_set_dynamic(0);
    CHECK(omp_get_dynamic() == 0, "get_dynamic after set_dynamic(0)");
    omp_set_nested(0);
    CHECK(omp_get_nested() == 0, "get_nested after set_nested(0)");

#pragma omp parallel reduction(+:bad)
    {
#pragma omp master
        team = omp_get_num_threads();
        if (omp_get_thread_limit() < omp_get_num_threads())
            bad++;
        if (omp_in_parallel() != (omp_get_num_threads() > 1))
            bad++;
        if (omp_get_dynamic() != 0 || omp_get_nested() != 0)
            bad++;                      /* inherited by implicit tasks */
#pragma omp master
        {
#pragma omp parallel
            in_nested = omp_in_parallel();
        }
    }
#pragma omp parallel if (0)
    in_inactive = omp_in_parallel();
    CHECK(bad == 0, "values inside the region");
    CHECK(in_inactive == 0, "in_parallel in an inactive region");
    CHECK(in_nested == (team > 1), "in_parallel in a nested inactive region");

    /* dynamic adjustment may be unsupported: only the range is specified */
    omp_set_dynamic(1);
    int d = omp_get_dynamic();
    int t = 0;
#pragma omp parallel
#pragma omp master
    t = omp_get_num_threads();
    CHECK((d == 0 || d == 1) && t >= 1 && t <= omp_get_max_threads(),
          "team size with dynamic adjustment");
    omp_set_dynamic(0);
    CHECK(omp_get_dynamic() == 0, "dynamic off again");
    omp_set_nested(1);
    CHECK(omp_get_nested() == 0 || omp_get_nested() == 1, "get_nested");
    omp_set_nested(0);
    printf("team %d\n", team);
    printf("api_misc_values: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
