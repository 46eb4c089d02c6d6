/* critical(name): two differently named critical sections each protect
   their own data; a named critical may be nested inside another name; the
   same name used in two places excludes both places. */
#include <stdio.h>
#include <omp.h>

#define ITERS 100
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int a = 0, b = 0, both = 0, in_a = 0, overlap = 0, team = 0;
#pragma omp parallel
    {
        int k;
#pragma omp master
        team = omp_get_num_threads();
        for (k = 0; k < ITERS; k++) {
#pragma omp critical(alpha)
            {
                if (in_a++) overlap++;
                a = a + 1;
                in_a--;
            }
#pragma omp critical(beta)
            b = b + 2;
            if (k % 10 == 0) {
#pragma omp critical(alpha)
                {
                    if (in_a++) overlap++;
#pragma omp critical(gamma)
                    both = both + 1;
                    in_a--;
                }
            }
        }
    }
    CHECK(overlap == 0, "critical(alpha) overlap");
    CHECK(a == team * ITERS, "alpha counter");
    CHECK(b == 2 * team * ITERS, "beta counter");
    CHECK(both == team * (ITERS / 10), "nested gamma counter");
    printf("team %d a %d b %d both %d\n", team, a, b, both);
    printf("critical_named: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
