/* nested parallel regions with nesting disabled (omp_set_nested(0)) and
   with nesting enabled but max-active-levels 1: the inner region has a team
   of one thread, omp_get_level() is 2, omp_get_active_level() counts only
   the outer region (if it is active), ancestor/team_size report the outer
   team. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int run(void)
{
    int bad = 0, outer_team = 0, inner_runs = 0;
#pragma omp parallel reduction(+:bad)
    {
        int otid = omp_get_thread_num(), oteam = omp_get_num_threads();
#pragma omp master
        outer_team = oteam;
#pragma omp parallel reduction(+:bad)
        {
            if (omp_get_num_threads() != 1 || omp_get_thread_num() != 0)
                bad++;
            if (omp_get_level() != 2)
                bad++;
            if (omp_get_active_level() != (oteam > 1 ? 1 : 0))
                bad++;
            if (omp_get_ancestor_thread_num(0) != 0 ||
                omp_get_ancestor_thread_num(1) != otid ||
                omp_get_ancestor_thread_num(2) != 0 ||
                omp_get_ancestor_thread_num(3) != -1)
                bad++;
            if (omp_get_team_size(0) != 1 || omp_get_team_size(1) != oteam ||
                omp_get_team_size(2) != 1 || omp_get_team_size(3) != -1)
                bad++;
            if (omp_in_parallel() != (oteam > 1))
                bad++;
#pragma omp atomic
            inner_runs++;
        }
    }
    CHECK(inner_runs == outer_team, "each inner region ran once");
    CHECK(bad == 0, "inner region state");
    return outer_team;
}

int main(void)
{
    omp_set_dynamic(0);
    omp_set_nested(0);
    CHECK(omp_get_nested() == 0, "omp_get_nested after set_nested(0)");
    int t1 = run();
    omp_set_nested(1);
    omp_set_max_active_levels(1);
    CHECK(omp_get_max_active_levels() == 1, "max active levels");
    int t2 = run();
    printf("outer team %d / %d\n", t1, t2);
    printf("nested_disabled: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
