/* schedule(auto) (OpenMP 3.0): every iteration exactly once, with a
   reduction and inside a region followed by another loop. */
#include <stdio.h>
#include <omp.h>

#define N 1234
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int hits[N], twice[N];
    int i, bad = 0;
    long s = 0;
#pragma omp parallel
    {
#pragma omp for schedule(auto) reduction(+:s)
        for (i = 0; i < N; i++) {
            hits[i]++;
            s += 3 * i;
        }
#pragma omp for schedule(auto)
        for (i = N - 1; i >= 0; i -= 1)
            twice[i] = hits[N - 1 - i] * 2;
    }
    for (i = 0; i < N; i++)
        bad += hits[i] != 1 || twice[i] != 2;
    CHECK(bad == 0, "auto iterations");
    CHECK(s == 3L * N * (N - 1) / 2, "auto reduction");
    printf("sum %ld\n", s);
    printf("sched_auto: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
