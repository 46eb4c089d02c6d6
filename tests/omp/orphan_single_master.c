/* orphaned single (with copyprivate) and master in functions called from a
   region: executed once per call; copyprivate broadcasts into the callers'
   private variables. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int single_runs, master_runs, master_not0;

static void read_param(int *p, int round)
{
    int v;
#pragma omp single copyprivate(v)
    {
        v = 1000 + round;
        single_runs++;
    }
    *p = v;
}

static void report(void)
{
#pragma omp master
    {
        master_runs++;
        if (omp_get_thread_num() != 0)
            master_not0++;
    }
}

int main(void)
{
    int bad = 0, r;
#pragma omp parallel private(r) reduction(+:bad)
    {
        for (r = 0; r < 5; r++) {
            int param = -1;
            read_param(&param, r);
            if (param != 1000 + r)
                bad++;
            report();
        }
    }
    CHECK(bad == 0, "copyprivate through an orphaned single");
    CHECK(single_runs == 5, "orphaned single executions");
    CHECK(master_runs == 5 && master_not0 == 0, "orphaned master");
    int p = 0;
    read_param(&p, 9);              /* serial */
    report();
    CHECK(p == 1009 && single_runs == 6 && master_runs == 6, "serial calls");
    printf("singles %d masters %d\n", single_runs, master_runs);
    printf("orphan_single_master: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
