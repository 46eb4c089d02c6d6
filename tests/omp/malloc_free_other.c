/* memory malloc'ed by one thread inside a region is read and freed by
   another thread; memory malloc'ed in the serial part is freed by the last
   thread of the team; memory malloc'ed in a region is used in a later
   region and freed in serial code. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define MAXT 256
#define LEN 1000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int *blocks[MAXT];
static double *kept[MAXT];

int main(void)
{
    int bad = 0, team = 0, t;
    int *serial_block = malloc(LEN * sizeof *serial_block);
    if (!serial_block)
        return 1;
    for (t = 0; t < LEN; t++)
        serial_block[t] = t;
    omp_set_dynamic(0);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt) reduction(+:bad)
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads(), k;
#pragma omp master
        team = n;
        blocks[me] = malloc(LEN * sizeof(int));
        kept[me] = malloc(LEN * sizeof(double));
        if (!blocks[me] || !kept[me])
            bad++;
        else
            for (k = 0; k < LEN; k++) {
                blocks[me][k] = me * LEN + k;
                kept[me][k] = me + 0.5;
            }
#pragma omp barrier
        {
            int other = (me + 1) % n;
            int *b = blocks[other];
            for (k = 0; k < LEN && b; k++)
                if (b[k] != other * LEN + k)
                    bad++;
            free(b);                     /* freed by another thread */
        }
        if (me == n - 1) {
            long s = 0;
            for (k = 0; k < LEN; k++)
                s += serial_block[k];
            if (s != (long)LEN * (LEN - 1) / 2)
                bad++;
            free(serial_block);          /* serial allocation freed here */
        }
    }
#pragma omp parallel num_threads(nt) reduction(+:bad)
    {
        int k, me = omp_get_thread_num();
        int src = (me + omp_get_num_threads() - 1) % omp_get_num_threads();
        for (k = 0; k < LEN; k++)
            if (kept[src][k] != src + 0.5)
                bad++;
    }
    for (t = 0; t < team; t++)
        free(kept[t]);
    CHECK(bad == 0, "cross-thread malloc/free");
    printf("team %d blocks exchanged\n", team);
    printf("malloc_free_other: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
