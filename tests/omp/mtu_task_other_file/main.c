/* tasks created in a unit other than the region's (main.c has no task
   construct; make.c creates them): idle threads still take them while
   the creator is creating, instead of waiting at the barrier until it is
   done (under ompdsm only units with tasks marked their regions, so the
   other nodes slept in the single's barrier and the check below failed
   after a 2 s wait on 2 nodes or more). */
#include <stdio.h>
#include <omp.h>
#include "make.h"

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int spread = 0;
#pragma omp parallel
    {
#pragma omp single
        spread = make_items(omp_get_num_threads());
    }
    CHECK(spread, "another thread took a task while its creator was creating");
    printf("mtu_task_other_file: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
