/* for: inside a parallel region every iteration of a loop with the default
   schedule is executed exactly once, and the implicit barrier at the end of
   the loop makes all results visible. */
#include <stdio.h>
#include <omp.h>

#define N 1000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int a[N], b[N], i, bad = 0;
    for (i = 0; i < N; i++)
        a[i] = b[i] = 0;
#pragma omp parallel
    {
        int k;
#pragma omp for
        for (k = 0; k < N; k++)
            a[k]++;
        /* implicit barrier: every a[] is complete here */
#pragma omp for reduction(+:bad)
        for (k = 0; k < N; k++) {
            if (a[N - 1 - k] != 1)
                bad++;
            b[k] = a[N - 1 - k] + k;
        }
    }
    long sum = 0;
    for (i = 0; i < N; i++) {
        CHECK(a[i] == 1, "iteration not executed exactly once");
        CHECK(b[i] == 1 + i, "second loop value");
        sum += b[i];
    }
    CHECK(bad == 0, "value from the first loop not visible after its barrier");
    CHECK(sum == (long)N + (long)N * (N - 1) / 2, "sum");
    printf("sum %ld\n", sum);
    printf("for_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
