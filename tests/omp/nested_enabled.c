/* nested parallelism enabled: the inner region may get 1 or 2 threads
   (unspecified; only checks valid for either are made and nothing about the
   inner team size is printed); level, active level, ancestor thread numbers
   and team sizes are consistent with whatever size it got, and every inner
   thread runs the inner region once. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int inner_count[MAXT], inner_size[MAXT];
    int bad = 0, outer_team = 0, t;
    omp_set_dynamic(0);
    omp_set_nested(1);
    omp_set_max_active_levels(8);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt) reduction(+:bad)
    {
        int otid = omp_get_thread_num(), oteam = omp_get_num_threads();
#pragma omp master
        outer_team = oteam;
#pragma omp parallel num_threads(2) reduction(+:bad)
        {
            int it = omp_get_num_threads(), itid = omp_get_thread_num();
            int active = (oteam > 1) + (it > 1);
            if (it < 1 || it > 2 || itid >= it)
                bad++;
            if (omp_get_level() != 2 || omp_get_active_level() != active)
                bad++;
            if (omp_get_ancestor_thread_num(1) != otid ||
                omp_get_ancestor_thread_num(2) != itid)
                bad++;
            if (omp_get_team_size(1) != oteam || omp_get_team_size(2) != it)
                bad++;
#pragma omp atomic
            inner_count[otid]++;
            if (itid == 0)
                inner_size[otid] = it;
        }
        /* inner region's end barrier: all of this outer thread's inner
           team has finished */
        if (inner_count[otid] != inner_size[otid])
            bad++;
    }
    for (t = 0; t < outer_team; t++)
        bad += inner_count[t] < 1 || inner_count[t] > 2;
    CHECK(bad == 0, "nested region state");
    CHECK(omp_get_level() == 0 && omp_get_active_level() == 0,
          "levels in serial code");
    printf("outer team %d\n", outer_team);
    printf("nested_enabled: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
