/* a unit without tasks whose region calls, in another unit, a function
   with a nested parallel region that creates tasks; the outer team's
   barriers must not wait for task arrivals only the calling thread
   knows of (it hung on 2 nodes before the runtime ignored nested regions
   there). */
#include <stdio.h>
#include <omp.h>
#include "inner.h"

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0, rounds = 0;
#pragma omp parallel reduction(+:bad)
    {
        int r;
        for (r = 0; r < 3; r++) {
            if (omp_get_thread_num() == 0)
                bad += inner_sum(10) != 55;
#pragma omp barrier
#pragma omp master
            rounds++;
#pragma omp barrier
        }
    }
    CHECK(bad == 0, "tasks of the nested region");
    CHECK(rounds == 3, "barriers of the outer team");
    printf("mtu_task_region: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
