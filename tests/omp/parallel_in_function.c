/* a parallel region inside a function called several times, with function
   arguments and local variables of the caller shared in the region, and a
   function called recursively around a region. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long scaled_sum(const int *v, int n, int scale)
{
    long s = 0;
    int i;
#pragma omp parallel for reduction(+:s)
    for (i = 0; i < n; i++)
        s += (long)v[i] * scale;
    return s;
}

static long rec(int depth)
{
    long here = 0;
    if (depth == 0)
        return 0;
#pragma omp parallel reduction(+:here)
    here += 1;
    return here + rec(depth - 1);
}

int main(void)
{
    int v[300], i, k, team = 0;
    for (i = 0; i < 300; i++)
        v[i] = i - 100;
    omp_set_dynamic(0);
    for (k = 1; k <= 5; k++) {
        long e = 0;
        for (i = 0; i < 300; i++)
            e += (long)v[i] * k;
        long s = scaled_sum(v, 300 - k, k);
        for (i = 300 - k; i < 300; i++)
            e -= (long)v[i] * k;
        CHECK(s == e, "scaled_sum");
        printf("k=%d sum %ld\n", k, s);
    }
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();
    long r = rec(6);
    CHECK(r == 6L * team, "regions in a recursive function");
    printf("parallel_in_function: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
