/* parallel reduction without a worksharing construct: every thread adds its
   contribution once. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int sum = 100, team = 0;
    long sq = 0;
    double half = 0.0;
    omp_set_dynamic(0);

#pragma omp parallel reduction(+:sum, sq, half)
    {
        int t = omp_get_thread_num();
        sum += t + 1;
        sq += (long)t * t;
        half += 0.5;
#pragma omp master
        team = omp_get_num_threads();
    }
    long esq = 0;
    int t;
    for (t = 0; t < team; t++)
        esq += (long)t * t;
    CHECK(sum == 100 + team * (team + 1) / 2, "int sum");
    CHECK(sq == esq, "long sum of squares");
    CHECK(half == 0.5 * team, "double sum");
    printf("team %d sum %d sq %ld half %.1f\n", team, sum, sq, half);
    printf("parallel_reduction: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
