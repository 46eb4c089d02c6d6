/* mtu_orphan: orphaned for (with a reduction on a global of the other
   unit), single, critical and barrier in lib.c, called from a region in
   main.c and from serial code. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

extern long lib_total;
extern int lib_single_runs, lib_crit;
void lib_work(const int *v, int n);
int lib_team(void);

int main(void)
{
    int v[500], i, team = 0, bad = 0;
    long e = 0;
    for (i = 0; i < 500; i++) {
        v[i] = i % 13;
        e += v[i];
    }
#pragma omp parallel reduction(+:bad)
    {
        int t = lib_team();
        if (omp_get_thread_num() == 0)
            team = t;
        lib_work(v, 500);
        /* after lib_work's barrier every result is complete */
        if (lib_total != e || lib_single_runs != 1 ||
            lib_crit != omp_get_num_threads())
            bad++;
    }
    CHECK(bad == 0, "orphaned constructs across units");
    lib_work(v, 500);                   /* serial call: team of one */
    CHECK(lib_total == 2 * e, "serial orphaned for");
    CHECK(lib_single_runs == 2 && lib_crit == team + 1, "serial single/critical");
    printf("team %d total %ld singles %d crit %d\n", team, lib_total,
           lib_single_runs, lib_crit);
    printf("mtu_orphan: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
