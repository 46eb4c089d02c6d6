/* mtu_threadprivate: a threadprivate variable defined in tp.c and used in
   main.c: per-thread copies, copyin from the master, persistence between
   regions, all across translation units. */
#include <stdio.h>
#include <omp.h>
#include "tp.h"

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0;
    omp_set_dynamic(0);
    tp_count = 10;
    tp_acc[1] = 8.0;
#pragma omp parallel copyin(tp_count, tp_acc) reduction(+:bad)
    {
        int me = omp_get_thread_num();
        if (tp_get() != 10 || tp_acc[1] != 8.0)
            bad++;
        tp_bump(me);
#pragma omp barrier
        if (tp_count != 10 + me || tp_acc[0] != 0.5 + me)
            bad++;
    }
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
        if (tp_get() != 10 + me)        /* persisted */
            bad++;
    }
    CHECK(bad == 0, "threadprivate across units");
    CHECK(tp_count == 10 && tp_acc[0] == 0.5, "master copy");
    printf("master tp_count %d acc %.2f %.2f\n", tp_count, tp_acc[0], tp_acc[1]);
    printf("mtu_threadprivate: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
