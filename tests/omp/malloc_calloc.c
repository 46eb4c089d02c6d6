/* calloc'ed memory is zero when read by every thread, and is then filled in
   parallel; a second calloc after free is zero again. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define N 20000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int r, i, bad = 0;
    long total = 0;
    for (r = 0; r < 2; r++) {
        long *v = calloc(N, sizeof *v);
        double *d = calloc(N / 2, sizeof *d);
        if (!v || !d)
            return 1;
#pragma omp parallel reduction(+:bad)
        {
            int k;
#pragma omp for
            for (k = 0; k < N; k++)
                if (v[N - 1 - k] != 0 || (k < N / 2 && d[k] != 0.0))
                    bad++;
#pragma omp for
            for (k = 0; k < N; k++)
                v[k] = k + r;
        }
        for (i = 0; i < N; i++)
            total += v[i];
        free(v);
        free(d);
    }
    CHECK(bad == 0, "calloc memory not zero");
    CHECK(total == 2L * N * (N - 1) / 2 + N, "values written");
    printf("total %ld\n", total);
    printf("malloc_calloc: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
