/* default(none): every variable used in the region is listed explicitly
   (shared, private, firstprivate, reduction), on parallel and on combined
   parallel for; globals must be listed too. */
#include <stdio.h>
#include <omp.h>

#define N 100
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int gcount;
static double gscale = 2.0;

int main(void)
{
    int a[N], n = N, i, tmp, off = 3, team = 0;
    long sum = 0;
#pragma omp parallel default(none) shared(a, n, team, gcount) \
        private(tmp, i) firstprivate(off) reduction(+:sum)
    {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for
        for (i = 0; i < n; i++) {
            tmp = i + off;
            a[i] = tmp;
            sum += tmp;
        }
#pragma omp atomic
        gcount++;
    }
    long esum = 0;
    for (i = 0; i < N; i++) {
        CHECK(a[i] == i + 3, "a[i]");
        esum += i + 3;
    }
    CHECK(sum == esum, "reduction");
    CHECK(gcount == team, "global counter");

    double dsum = 0;
#pragma omp parallel for default(none) shared(a, n, gscale) reduction(+:dsum)
    for (i = 0; i < n; i++)
        dsum += a[i] * gscale;
    CHECK(dsum == 2.0 * esum, "parallel for default(none)");
    printf("sum %ld dsum %.1f\n", sum, dsum);
    printf("data_default_none: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
