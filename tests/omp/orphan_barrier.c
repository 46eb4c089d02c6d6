/* orphaned barrier: a barrier inside a function called by every thread of
   the team separates the phases of a computation done in the caller. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long slot[MAXT];

static void sync_all(void)
{
#pragma omp barrier
}

static void publish(int me, long v)
{
    if (me < MAXT)
        slot[me] = v;
    sync_all();
}

int main(void)
{
    int bad = 0, team = 0;
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads(), p, t;
#pragma omp master
        team = n;
        for (p = 0; p < 10; p++) {
            publish(me, (long)p * 1000 + me);
            for (t = 0; t < n && t < MAXT; t++)
                if (slot[t] != (long)p * 1000 + t)
                    bad++;
            sync_all();
        }
    }
    CHECK(bad == 0, "phase values after orphaned barriers");
    printf("team %d\n", team);
    printf("orphan_barrier: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
