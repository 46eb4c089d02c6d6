/* schedule(static) without a chunk: each thread gets at most one contiguous
   chunk, every iteration runs once, and two loops with the same trip count
   in the same region get the same assignment (OpenMP 3.0, 2.5.1). */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int own1[2000], own2[2000];

/* returns the number of violations of "one contiguous chunk per thread" */
static int contiguity(const int *own, int n, int team)
{
    int seen[MAXT] = {0}, k, bad = 0;
    for (k = 0; k < n; k++) {
        int t = own[k];
        if (t < 0 || t >= team || t >= MAXT) {
            bad++;
            continue;
        }
        if (k == 0 || own[k - 1] != t) {
            if (seen[t])
                bad++;          /* a second chunk for the same thread */
            seen[t] = 1;
        }
    }
    return bad;
}

int main(void)
{
    int sizes[4] = {1000, 7, 1, 1999}, s, team = 1;
    for (s = 0; s < 4; s++) {
        int n = sizes[s], k, i, bad = 0;
        for (k = 0; k < n; k++)
            own1[k] = own2[k] = -1;
#pragma omp parallel
        {
#pragma omp master
            team = omp_get_num_threads();
#pragma omp for schedule(static)
            for (i = 0; i < n; i++)
                own1[i] = omp_get_thread_num();
            /* same trip count, other bounds and direction */
#pragma omp for schedule(static)
            for (i = 3 * n + 5; i > 5; i -= 3)
                own2[(3 * n + 5 - i) / 3] = omp_get_thread_num();
        }
        for (k = 0; k < n; k++)
            if (own1[k] != own2[k])
                bad++;
        CHECK(bad == 0, "two static loops with the same trip count differ");
        CHECK(contiguity(own1, n, team) == 0, "not one contiguous chunk per thread");
        printf("n=%d checked\n", n);
    }
    printf("team %d\n", team);
    printf("sched_static: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
