/* worksharing inside nested regions: a for (also orphaned) and a single in
   an inner region bind to the inner team, so every inner region runs all
   iterations once and its single once, whatever the inner team size. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
#define N 40
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int hits[MAXT][N];
static int singles[MAXT];

static void inner_loop(int row)
{
    int j;
#pragma omp for
    for (j = 0; j < N; j++)
        hits[row][j] += 1;
}

int main(void)
{
    int bad = 0, team = 0, t, j;
    long crit = 0;
    omp_set_dynamic(0);
    omp_set_nested(1);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
    {
        int row = omp_get_thread_num();
#pragma omp master
        team = omp_get_num_threads();
#pragma omp parallel num_threads(2)
        {
            int k;
#pragma omp for
            for (k = 0; k < N; k++)
                hits[row][k] += 10;
            inner_loop(row);
#pragma omp single
            singles[row]++;
#pragma omp critical
            crit += 1;
        }
    }
    for (t = 0; t < team; t++) {
        for (j = 0; j < N; j++)
            bad += hits[t][j] != 11;
        bad += singles[t] != 1;
    }
    CHECK(bad == 0, "inner worksharing");
    CHECK(crit >= team && crit <= 2L * team, "inner critical count");
    printf("outer team %d rows checked %d\n", team, team);
    printf("nested_for: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
