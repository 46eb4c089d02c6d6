/* omp_get_level, omp_get_active_level, omp_get_ancestor_thread_num and
   omp_get_team_size in serial code, in an active region, in an inactive
   (if(0)) region, and for out-of-range levels (-1). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0, team = 0, lvl_inactive = -1, act_inactive = -1;
    CHECK(omp_get_level() == 0 && omp_get_active_level() == 0, "serial levels");
    CHECK(omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(0) == 1,
          "serial level 0");
    CHECK(omp_get_ancestor_thread_num(1) == -1 && omp_get_team_size(1) == -1,
          "serial level 1 is out of range");
    CHECK(omp_get_ancestor_thread_num(-1) == -1 && omp_get_team_size(-1) == -1,
          "negative level");
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp master
        team = nt;
        if (omp_get_level() != 1)
            bad++;
        if (omp_get_active_level() != (nt > 1 ? 1 : 0))
            bad++;
        if (omp_get_ancestor_thread_num(0) != 0 ||
            omp_get_ancestor_thread_num(1) != me ||
            omp_get_ancestor_thread_num(2) != -1)
            bad++;
        if (omp_get_team_size(0) != 1 || omp_get_team_size(1) != nt ||
            omp_get_team_size(2) != -1)
            bad++;
    }
#pragma omp parallel if (0)
    {
        lvl_inactive = omp_get_level();
        act_inactive = omp_get_active_level();
    }
    CHECK(bad == 0, "levels in the region");
    CHECK(lvl_inactive == 1 && act_inactive == 0, "levels in an inactive region");
    printf("team %d level in inactive region %d active %d\n", team,
           lvl_inactive, act_inactive);
    printf("api_level: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
