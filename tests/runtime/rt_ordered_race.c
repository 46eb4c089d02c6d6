/* rt_ordered_race.c - stress of ordered loops: 16 schedule(static,1)
 * ordered loops of 200 iterations, so that every iteration changes node,
 * checking that the ordered regions run one at a time and in order.
 *
 * Regression test for a runtime bug (runtime/loop.c, OMPDSM_ordered_end):
 * "iterations done" was one word per node that every sender overwrote with
 * plain stores; stores from different senders (or a node's own, late store
 * to itself) overtook each other, the word went backwards and the loop
 * deadlocked at random on 2 nodes and more (gdb, 2 nodes, same state 3 s
 * apart: node 1's own late store of 216 had overwritten node 0's 217, and
 * both waited for ever).  Fixed by one word per sender (the reader takes
 * the largest).  On tcp with 8 nodes on 2 CPUs each handoff costs about
 * 0.6 ms: the sizes keep the run near 2 s. */
#include "rt_test.h"

enum { N = 200, REPS = 16 };

static long long *g_next;
static long long *g_bad;
static OMPDSM_global globals[] = {
    {(void **)&g_next, 8, 8, "next"},
    {(void **)&g_bad, 8, 8, "bad"},
};
static OMPDSM_loop_site site = {"rt_ordered_race.c", 25, "region", 0};

static void region(void *fp)
{
    (void)fp;
    OMPDSM_loop L;
    unsigned long long lo, hi;
    for (int rep = 0; rep < REPS; rep++) {
        OMPDSM_loop_init(&L, &site, N, OMPDSM_SCHED_STATIC, 1, 0, 0,
                         OMPDSM_LOOP_ORDERED);
        while (OMPDSM_loop_next(&L, &lo, &hi))
            for (unsigned long long k = lo; k < hi; k++) {
                OMPDSM_loop_iter(&L, k);
                OMPDSM_ordered_start();
                if (*g_next != (long long)rep * N + (long long)k)
                    *g_bad += 1;
                *g_next += 1;
                OMPDSM_ordered_end();
            }
        OMPDSM_loop_end(&L, 0);
    }
}
static OMPDSM_region rd = {region, "rt_ordered_race.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_ordered_race.c", globals,
                           2, 0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_ordered_race", 30);
    rtt_phase("16 ordered static,1 loops of 200");
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    CHECK_EQ_LL(*g_next, (long long)N * REPS, "ordered regions run");
    CHECK_EQ_LL(*g_bad, 0, "ordered regions out of order");
    return rtt_end("loops=16 n=200");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
