/* reduction on a for nowait: the reduced value is only guaranteed after a
   later barrier; several loops reduce into different variables before one
   explicit barrier. */
#include <stdio.h>
#include <omp.h>

#define N 300
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    long s1 = 0, s2 = 0;
    int cnt = 0, bad = 0;
#pragma omp parallel reduction(+:bad)
    {
        int k;
#pragma omp for reduction(+:s1) nowait
        for (k = 0; k < N; k++)
            s1 += k;
#pragma omp for reduction(+:s2) schedule(dynamic) nowait
        for (k = 0; k < N; k++)
            s2 += 2 * k;
#pragma omp for reduction(+:cnt) nowait schedule(static, 1)
        for (k = 0; k < 7; k++)
            cnt++;
#pragma omp barrier
        if (s1 != (long)N * (N - 1) / 2 || s2 != (long)N * (N - 1) || cnt != 7)
            bad++;
    }
    CHECK(bad == 0, "value after the barrier");
    printf("s1 %ld s2 %ld cnt %d\n", s1, s2, cnt);
    printf("reduction_nowait: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
