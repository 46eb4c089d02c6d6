/* omp_set_max_active_levels / omp_get_max_active_levels: set(1) reads back
   1; set(3) reads back a value in [1, 3]; with max-active-levels 0 no region
   is active, so a parallel region has a team of one (OpenMP 3.0,
   algorithm 2.1). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int team0 = -1, team1 = -1;
    omp_set_dynamic(0);
    omp_set_max_active_levels(1);
    CHECK(omp_get_max_active_levels() == 1, "set 1");
    omp_set_max_active_levels(3);
    int v = omp_get_max_active_levels();
    CHECK(v >= 1 && v <= 3, "set 3");
    omp_set_max_active_levels(0);
    CHECK(omp_get_max_active_levels() == 0, "set 0");
#pragma omp parallel
#pragma omp master
    team0 = omp_get_num_threads();
    CHECK(team0 == 1, "team size with max active levels 0");
    omp_set_max_active_levels(1);
#pragma omp parallel
#pragma omp master
    team1 = omp_get_num_threads();
    CHECK(team1 == omp_get_max_threads(), "team size with max active levels 1");
    printf("teams %d %d\n", team0, team1);
    printf("api_max_active_levels: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
