/* omp_get_num_threads / omp_set_num_threads / omp_get_max_threads: 1 in
   serial code; the team size in a region (the same value for every thread
   and inside single); omp_set_num_threads(k) changes omp_get_max_threads()
   and the size of the next team (k <= the initial maximum). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int team_size(int *max_inside)
{
    int t = 0, bad = 0;
#pragma omp parallel reduction(+:bad)
    {
        int nt = omp_get_num_threads();
#pragma omp master
        {
            t = nt;
            *max_inside = omp_get_max_threads();
        }
#pragma omp barrier
        if (nt != t)
            bad++;
#pragma omp single
        if (omp_get_num_threads() != t)
            bad++;
    }
    return bad ? -1 : t;
}

int main(void)
{
    int m_in = 0;
    omp_set_dynamic(0);
    int maxt = omp_get_max_threads();
    CHECK(omp_get_num_threads() == 1, "serial num_threads");
    CHECK(maxt >= 1, "max threads");
    int t0 = team_size(&m_in);
    CHECK(t0 == maxt, "default team size");
    CHECK(m_in == maxt, "max threads inherited by the implicit tasks");
    int k = maxt > 1 ? maxt / 2 : 1;
    omp_set_num_threads(k);
    CHECK(omp_get_max_threads() == k, "max threads after set_num_threads");
    int t1 = team_size(&m_in);
    CHECK(t1 == k, "team size after set_num_threads");
    omp_set_num_threads(maxt);
    int t2 = team_size(&m_in);
    CHECK(t2 == maxt, "team size restored");
    printf("max %d teams %d %d %d\n", maxt, t0, t1, t2);
    printf("api_num_threads: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
