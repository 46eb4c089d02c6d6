/* schedule(dynamic) without a chunk: every iteration exactly once even when
   iterations have very different costs; the result is independent of which
   thread ran what. */
#include <stdio.h>
#include <omp.h>

#define N 500
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long work(int i)
{
    long s = 0;
    int k, m = (i % 17 == 0) ? 2000 : 10;
    for (k = 0; k < m; k++)
        s += (i + k) % 7;
    return s;
}

int main(void)
{
    static long res[N];
    static int hits[N];
    int i, bad = 0;
    long total = 0, etotal = 0;

#pragma omp parallel for schedule(dynamic) reduction(+:total)
    for (i = 0; i < N; i++) {
        hits[i]++;
        res[i] = work(i);
        total += res[i];
    }
    for (i = 0; i < N; i++) {
        if (hits[i] != 1 || res[i] != work(i))
            bad++;
        etotal += work(i);
    }
    CHECK(bad == 0, "iteration not executed exactly once");
    CHECK(total == etotal, "reduction");

    int count = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic) reduction(+:count)
        for (i = N; i > 0; i -= 2)
            count++;
    }
    CHECK(count == N / 2, "dynamic with stride inside a region");
    printf("total %ld count %d\n", total, count);
    printf("sched_dynamic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
