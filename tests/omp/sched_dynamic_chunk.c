/* schedule(dynamic, c): when c divides the trip count every chunk has
   exactly c consecutive iterations, so iterations [j*c, (j+1)*c) all run on
   one thread; when it does not, every maximal run of one thread except at
   most one (the last chunk) is at least c long. */
#include <stdio.h>
#include <omp.h>

#define N 960
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int owner[N + 100], hits[N + 100];

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
    int chunks[4] = {2, 5, 16, 960}, ci, i;
    for (ci = 0; ci < 4; ci++) {
        int c = chunks[ci], bad = 0;
        for (i = 0; i < N; i++)
            hits[i] = 0, owner[i] = -1;
#pragma omp parallel for schedule(dynamic, c)
        for (i = 0; i < N; i++) {
            hits[i]++;
            owner[i] = omp_get_thread_num();
        }
        for (i = 0; i < N; i++) {
            if (hits[i] != 1)
                bad++;
            if (owner[i] != owner[(i / c) * c])
                bad++;
        }
        CHECK(bad == 0, "dynamic chunk not executed by one thread");
        printf("dynamic,%d ok=%d\n", c, bad == 0);
    }
    /* 997 iterations, chunk 10: one short chunk at most */
    for (i = 0; i < 997; i++)
        hits[i] = 0;
#pragma omp parallel for schedule(dynamic, 10)
    for (i = 0; i < 997; i++) {
        hits[i]++;
        owner[i] = omp_get_thread_num();
    }
    int bad = 0;
    for (i = 0; i < 997; i++)
        bad += hits[i] != 1;
    CHECK(bad == 0, "dynamic,10 iterations");
    CHECK(short_runs(997, 10) <= 1, "dynamic,10 more than one short chunk");
    printf("sched_dynamic_chunk: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
