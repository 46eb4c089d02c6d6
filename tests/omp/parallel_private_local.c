/* parallel: variables (scalars and arrays) declared inside the region are
   private to each thread; a barrier between write and read exposes sharing. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0, team = 0;
    omp_set_dynamic(0);
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
        int local = me * 7 + 3;
        double darr[16];
        int k;
        for (k = 0; k < 16; k++)
            darr[k] = me * 100 + k;
#pragma omp barrier
        if (local != me * 7 + 3)
            bad++;
        for (k = 0; k < 16; k++)
            if (darr[k] != me * 100 + k)
                bad++;
#pragma omp barrier
        {
            int inner = local * 2;     /* block-scope variable */
#pragma omp barrier
            if (inner != (me * 7 + 3) * 2)
                bad++;
        }
#pragma omp master
        team = omp_get_num_threads();
    }
    CHECK(bad == 0, "a variable declared in the region was shared");
    printf("team %d, private locals checked\n", team);
    printf("parallel_private_local: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
