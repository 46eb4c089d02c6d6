/* rt_icv_inherit.c - ICVs set in the serial part reach every thread of the
 * next region, on every node: OpenMP 3.0 gives each task its own
 * run-sched-var, dyn-var and nest-var, inherited by the implicit tasks of a
 * region, and one max-active-levels-var for the program.  After
 *   omp_set_schedule(omp_sched_dynamic, 3);
 *   #pragma omp parallel for schedule(runtime)
 * every thread must see (dynamic, 3) and the loop must run each iteration
 * once.  (Written as a failing test when rt_icv lived per process and the
 * fork carried no ICV: other nodes took static blocks while node 0 claimed
 * dynamic chunks, 875 iterations of 500 on 4 nodes.  Fixed by "forks carry
 * the data-environment ICVs"; kept as a regression test.) */
#include "rt_test.h"

enum { N = 500 };

static long long *g_count, *g_sum;
static OMPDSM_global globals[] = {
    {(void **)&g_count, 8, 8, "count"},
    {(void **)&g_sum, 8, 8, "sum"},
};
static OMPDSM_loop_site site = {"rt_icv_inherit.c", 30, "region", 0};

static void region(void *fp)
{
    (void)fp;
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    CHECK(kind == omp_sched_dynamic && chunk == 3, "omp_get_schedule in the "
          "region: kind %d chunk %d after omp_set_schedule(dynamic, 3)",
          kind, chunk);
    CHECK(omp_get_dynamic() == 1, "omp_get_dynamic in the region: %d after "
          "omp_set_dynamic(1)", omp_get_dynamic());
    CHECK(omp_get_nested() == 1, "omp_get_nested in the region: %d after "
          "omp_set_nested(1)", omp_get_nested());
    CHECK(omp_get_max_active_levels() == 4, "omp_get_max_active_levels in the "
          "region: %d after omp_set_max_active_levels(4)",
          omp_get_max_active_levels());
    long long c, s;
    OMPDSM_reduce_init(&c, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_reduce_init(&s, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, N, OMPDSM_SCHED_RUNTIME, 0, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi)) {
        CHECK(omp_get_num_threads() == 1 || hi - lo == 3 || hi == N,
              "schedule(runtime) after omp_set_schedule(dynamic, 3): block "
              "[%llu,%llu)", lo, hi);
        for (unsigned long long k = lo; k < hi; k++) {
            c++;
            s += (long long)k;
        }
    }
    OMPDSM_red r[2] = {{g_count, &c, OMPDSM_TY_I64, OMPDSM_OP_ADD},
                       {g_sum, &s, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 2);
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd = {region, "rt_icv_inherit.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_icv_inherit.c", globals, 2,
                           0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_icv_inherit", 20);
    omp_set_schedule(omp_sched_dynamic, 3);
    omp_set_dynamic(1);
    omp_set_nested(1);
    omp_set_max_active_levels(4);
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    CHECK_EQ_LL(*g_count, N, "iterations of the schedule(runtime) loop");
    CHECK_EQ_LL(*g_sum, (long long)N * (N - 1) / 2, "sum of their numbers");
    return rtt_end("schedule(runtime) after omp_set_schedule");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
