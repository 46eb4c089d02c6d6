/* schedule(guided) with and without a chunk: every iteration once, and with
   chunk k every maximal run of iterations executed by one thread has at
   least k iterations, except at most one (the last chunk). */
#include <stdio.h>
#include <omp.h>

#define N 1000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int owner[N], hits[N];

static int short_runs(int n, int c)
{
    int k = 0, shorts = 0;
    while (k < n) {
        int s = k;
        while (k < n && owner[k] == owner[s])
            k++;
        if (k - s < c)
            shorts++;
    }
    return shorts;
}

int main(void)
{
    int i, bad = 0, ci;
    long sum = 0;

#pragma omp parallel for schedule(guided) reduction(+:sum)
    for (i = 0; i < N; i++) {
        hits[i]++;
        sum += i;
    }
    for (i = 0; i < N; i++)
        bad += hits[i] != 1;
    CHECK(bad == 0, "guided iterations");
    CHECK(sum == (long)N * (N - 1) / 2, "guided sum");

    int chunks[3] = {4, 10, 33};
    for (ci = 0; ci < 3; ci++) {
        int c = chunks[ci];
        for (i = 0; i < N; i++)
            hits[i] = 0, owner[i] = -1;
#pragma omp parallel
        {
#pragma omp for schedule(guided, c)
            for (i = N - 1; i >= 0; i--) {
                hits[N - 1 - i]++;
                owner[N - 1 - i] = omp_get_thread_num();
            }
        }
        bad = 0;
        for (i = 0; i < N; i++)
            bad += hits[i] != 1;
        CHECK(bad == 0, "guided,c iterations");
        CHECK(short_runs(N, c) <= 1, "guided,c chunk smaller than c");
        printf("guided,%d ok=%d\n", c, bad == 0);
    }
    printf("sum %ld\n", sum);
    printf("sched_guided: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
