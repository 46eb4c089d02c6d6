/* rt_tune_prog.c - the program tests/runtime/tune_test.py tunes: one
 * profiled loop executed eight times, whose last node sleeps 3 ms an
 * iteration and the others 1 ms; it checks only that every iteration ran
 * once (a reduced count), whatever schedule ompdsm-tune gives it. */
#include "rt_test.h"

#include <time.h>

static long long *g_count;
static OMPDSM_global globals[] = {{(void **)&g_count, 8, 8, "count"}};
static OMPDSM_loop_site site = {"rt_tune_prog.c", 21, "region", 0};
enum { N = 24 };

static void region(void *fp)
{
    (void)fp;
    int tid = omp_get_thread_num(), T = omp_get_num_threads();
    long long cnt;
    OMPDSM_reduce_init(&cnt, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, N, OMPDSM_SCHED_PROFILED, 0, 1, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            struct timespec ts = {0, (tid == T - 1 && T > 1 ? 3 : 1) * 1000000L};
            nanosleep(&ts, NULL);
            cnt++;
        }
    OMPDSM_red r[1] = {{g_count, &cnt, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd = {region, "rt_tune_prog.c:20 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_tune_prog.c", globals, 1, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_tune_prog", 50);
    for (int e = 0; e < 8; e++) {
        *g_count = 0;
        OMPDSM_parallel(&rd, NULL, 0, 0, 1);
        CHECK_EQ_LL(*g_count, N, "iterations run");
    }
    return rtt_end("");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
