/* schedule(static, c): chunks of c iterations go round-robin to the threads
   in thread-number order, so logical iteration k runs on thread (k/c) % T;
   chunk sizes 1, 3, a run-time value, and one larger than the loop. */
#include <stdio.h>
#include <omp.h>

#define N 1000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int owner[N];

static int verify(int n, int c, int team)
{
    int k, bad = 0;
    for (k = 0; k < n; k++)
        if (owner[k] != (k / c) % team)
            bad++;
    for (k = 0; k < N; k++)
        owner[k] = -1;
    return bad;
}

int main(void)
{
    int i, team = 1, chunk = 11, bad;
    for (i = 0; i < N; i++)
        owner[i] = -1;

#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();

#pragma omp parallel for schedule(static, 1)
    for (i = 0; i < N; i++)
        owner[i] = omp_get_thread_num();
    bad = verify(N, 1, team);
    CHECK(bad == 0, "static,1");

#pragma omp parallel for schedule(static, 3)
    for (i = 0; i < N; i++)
        owner[i] = omp_get_thread_num();
    bad = verify(N, 3, team);
    CHECK(bad == 0, "static,3");

#pragma omp parallel for schedule(static, chunk)
    for (i = 0; i < 997; i++)
        owner[i] = omp_get_thread_num();
    bad = verify(997, chunk, team);
    CHECK(bad == 0, "static,chunk (run-time value)");

#pragma omp parallel for schedule(static, 2 * N)
    for (i = 0; i < N; i++)
        owner[i] = omp_get_thread_num();
    bad = verify(N, 2 * N, team);
    CHECK(bad == 0, "static,2N: everything on thread 0");

    /* inside one region, with nowait and a stride */
#pragma omp parallel
    {
#pragma omp for schedule(static, 4) nowait
        for (i = 10; i < 10 + 3 * 500; i += 3)
            owner[(i - 10) / 3] = omp_get_thread_num();
    }
    bad = verify(500, 4, team);
    CHECK(bad == 0, "static,4 stride 3");

    printf("team %d, static chunk assignments checked\n", team);
    printf("sched_static_chunk: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
