/* Variable-length array locals in parallel regions (the NPB 3.3 MG zran3
   pattern, where `const int mm = 10;` makes `int jg[4][mm][2]` a VLA):
   a VLA made private by a clause, a VLA shared by the region that every
   thread writes its own slot of and the master reads after a barrier,
   and a firstprivate VLA that every thread starts from a copy of. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int run(int m)
{
    const int mm = m;               /* not a constant expression in C */
    int best[mm][2];                /* private to each thread */
    int slot[64][mm];               /* shared: one row per thread */
    int init[mm];                   /* firstprivate */
    int i, bad = 0, nthreads = 1;
    for (i = 0; i < mm; i++)
        init[i] = 3 * i;
#pragma omp parallel private(best, i) reduction(+:bad)
    {
        int me = omp_get_thread_num();
#pragma omp master
        nthreads = omp_get_num_threads();
        for (i = 0; i < mm; i++) {
            best[i][0] = me * 1000 + i;
            best[i][1] = -i;
        }
        for (i = 0; i < mm; i++)
            slot[me][i] = best[i][0] + best[i][1];
#pragma omp barrier
#pragma omp master
        {
            int t;
            for (t = 0; t < omp_get_num_threads(); t++)
                for (i = 0; i < mm; i++)
                    if (slot[t][i] != t * 1000)
                        bad++;
        }
        for (i = 0; i < mm; i++)
            if (best[i][0] != me * 1000 + i)
                bad++;
    }
    CHECK(bad == 0, "private and shared VLA contents");
#pragma omp parallel firstprivate(init) private(i) reduction(+:bad)
    {
        int me = omp_get_thread_num();
        for (i = 0; i < mm; i++) {
            if (init[i] != 3 * i)
                bad++;
            init[i] += me + 1;
        }
        if (sizeof init != mm * sizeof(int))
            bad++;
    }
    CHECK(bad == 0, "firstprivate VLA contents and size");
    CHECK(init[mm - 1] == 3 * (mm - 1), "firstprivate VLA original unchanged");
    return slot[nthreads - 1][mm - 1];
}

int main(void)
{
    int last = run(10);
    int n = 1;
#pragma omp parallel
#pragma omp master
    n = omp_get_num_threads();
    CHECK(last == (n - 1) * 1000, "value read after the region");
    printf("last %d\n", last == (n - 1) * 1000 ? 1 : 0);
    printf("data_vla_local: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
