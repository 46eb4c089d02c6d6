/* for nowait: two static loops with the same trip count (and the same chunk)
   in one region assign the same logical iterations to the same threads, so a
   dependence between them needs no barrier (OpenMP 3.0, 2.5.1). */
#include <stdio.h>
#include <omp.h>

#define N 777
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int a[N], b[N], c[N], d[N], e[N];
    int i;
#pragma omp parallel
    {
        int k;
#pragma omp for schedule(static) nowait
        for (k = 0; k < N; k++)
            a[k] = 2 * k;
        /* same trip count, different bounds: logical iteration k-1 */
#pragma omp for schedule(static) nowait
        for (k = 1; k <= N; k++)
            b[k - 1] = a[k - 1] + 1;
#pragma omp for schedule(static, 5) nowait
        for (k = 0; k < N; k++)
            c[k] = k * k;
#pragma omp for schedule(static, 5) nowait
        for (k = 3 * N; k > 0; k -= 3)
            d[N - k / 3] = c[N - k / 3] - 1;
#pragma omp barrier
#pragma omp for
        for (k = 0; k < N; k++)
            e[k] = b[N - 1 - k] + d[N - 1 - k];
    }
    long sum = 0;
    for (i = 0; i < N; i++) {
        CHECK(b[i] == 2 * i + 1, "b: static nowait dependence");
        CHECK(d[i] == i * i - 1, "d: static,5 nowait dependence");
        int j = N - 1 - i;
        CHECK(e[i] == 2 * j + 1 + j * j - 1, "e after explicit barrier");
        sum += e[i];
    }
    printf("sum %ld\n", sum);
    printf("for_nowait: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
