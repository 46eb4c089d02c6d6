/* shared: variables declared before the region are shared by default;
   explicit shared(); writes by one thread are seen by all after a barrier;
   each thread writes a different element of a shared array; a shared
   pointer to a local array of main. */
#include <stdio.h>
#include <omp.h>

#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int flagval = 0, slots[MAXT], bad = 0, team = 0, t;
    double total = 0.0;
    long buf[64];
    long *bp = buf;
    for (t = 0; t < 64; t++)
        buf[t] = 0;
#pragma omp parallel shared(flagval, slots, total, bp) reduction(+:bad)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads(), k;
        if (me == 0) {
            flagval = 4242;
            team = nt;
        }
        if (me < MAXT)
            slots[me] = me + 1;
#pragma omp barrier
        if (flagval != 4242)
            bad++;
        for (k = 0; k < nt && k < MAXT; k++)
            if (slots[k] != k + 1)
                bad++;
#pragma omp for
        for (k = 0; k < 64; k++)
            bp[k] = k * 3;          /* through a shared pointer */
#pragma omp critical
        total += 1.0;
    }
    CHECK(bad == 0, "shared writes not visible to other threads");
    CHECK(total == team, "shared total");
    for (t = 0; t < 64; t++)
        CHECK(buf[t] == t * 3, "write through shared pointer");
    printf("team %d flag %d total %.1f\n", team, flagval, total);
    printf("data_shared: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
