/* rt_lock.c - the OpenMP lock routines: omp_set/unset_lock guarding a
 * non-atomic read-modify-write (exact total), omp_test_lock failing while
 * another thread holds the lock and succeeding once it is free, nestable
 * locks (depth counts from omp_test_nest_lock, exclusion between threads),
 * an array of 16 locks each guarding its own counter, and a lock created
 * and destroyed inside a region by one thread and used by all. */
#include "rt_test.h"

enum { MAXT = 64, M = 40, NL = 16, R = 48 };

static omp_lock_t *g_lk;
static omp_nest_lock_t *g_nl;
static omp_lock_t (*g_locks)[NL];
static omp_lock_t *g_inner;
static long long *g_cnt, *g_cnt2, *g_cnt3, *g_cnt4;
static long long (*g_per)[NL];
static int (*g_test_fail)[MAXT];
static OMPDSM_global globals[] = {
    {(void **)&g_lk, sizeof(omp_lock_t), __alignof__(omp_lock_t), "lk"},
    {(void **)&g_nl, sizeof(omp_nest_lock_t), __alignof__(omp_nest_lock_t), "nl"},
    {(void **)&g_locks, sizeof *g_locks, __alignof__(*g_locks), "locks"},
    {(void **)&g_inner, sizeof(omp_lock_t), __alignof__(omp_lock_t), "inner"},
    {(void **)&g_cnt, 8, 8, "cnt"},
    {(void **)&g_cnt2, 8, 8, "cnt2"},
    {(void **)&g_cnt3, 8, 8, "cnt3"},
    {(void **)&g_cnt4, 8, 8, "cnt4"},
    {(void **)&g_per, sizeof *g_per, __alignof__(*g_per), "per"},
    {(void **)&g_test_fail, sizeof *g_test_fail, __alignof__(*g_test_fail),
     "test_fail"},
};

static void pause_a_little(void)
{
    volatile unsigned x = 0;
    for (int i = 0; i < 3000; i++)
        x += (unsigned)i;
}

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();

    /* simple lock */
    for (int i = 0; i < M; i++) {
        omp_set_lock(g_lk);
        long long v = *g_cnt;
        pause_a_little();
        *g_cnt = v + 1;
        omp_unset_lock(g_lk);
    }
    OMPDSM_barrier();

    /* test_lock: fails while thread 0 holds it */
    if (t == 0)
        omp_set_lock(g_lk);
    OMPDSM_barrier();
    if (t != 0)
        (*g_test_fail)[t] = omp_test_lock(g_lk) ? 1 : 2;
    OMPDSM_barrier();
    if (t == 0)
        omp_unset_lock(g_lk);
    OMPDSM_barrier();
    while (!omp_test_lock(g_lk))
        ;
    long long v = *g_cnt2;
    *g_cnt2 = v + 1;
    omp_unset_lock(g_lk);
    OMPDSM_barrier();

    /* nestable lock */
    for (int i = 0; i < M / 2; i++) {
        omp_set_nest_lock(g_nl);
        omp_set_nest_lock(g_nl);
        omp_set_nest_lock(g_nl);
        int depth = omp_test_nest_lock(g_nl);
        CHECK(depth == 4, "omp_test_nest_lock by the owner at depth 3 "
              "returned %d", depth);
        v = *g_cnt3;
        pause_a_little();
        *g_cnt3 = v + 1;
        for (int d = 0; d < 4; d++)
            omp_unset_nest_lock(g_nl);
    }
    OMPDSM_barrier();
    if (t == 0) {
        omp_set_nest_lock(g_nl);
        omp_set_nest_lock(g_nl);
    }
    OMPDSM_barrier();
    if (t != 0)
        CHECK(omp_test_nest_lock(g_nl) == 0, "omp_test_nest_lock succeeded "
              "while thread 0 holds the lock");
    OMPDSM_barrier();
    if (t == 0) {
        omp_unset_nest_lock(g_nl);
        omp_unset_nest_lock(g_nl);
    }
    OMPDSM_barrier();

    /* an array of locks */
    for (int r = 0; r < R; r++) {
        int i = (t * 5 + r) % NL;
        omp_set_lock(&(*g_locks)[i]);
        long long w = (*g_per)[i];
        (*g_per)[i] = w + 1 + i;
        omp_unset_lock(&(*g_locks)[i]);
    }

    /* a lock made and destroyed inside the region */
    if (OMPDSM_single_start())
        omp_init_lock(g_inner);
    OMPDSM_single_end(0);
    for (int i = 0; i < 5; i++) {
        omp_set_lock(g_inner);
        long long w = *g_cnt4;
        *g_cnt4 = w + 1;
        omp_unset_lock(g_inner);
    }
    OMPDSM_barrier();
    if (OMPDSM_single_start())
        omp_destroy_lock(g_inner);
    OMPDSM_single_end(0);
    (void)T;
}
static OMPDSM_region rd = {region, "rt_lock.c:40 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_lock.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_lock", 45);
    int T = omp_get_max_threads();
    rtt_phase("serial part");
    omp_init_lock(g_lk);
    omp_init_nest_lock(g_nl);
    for (int i = 0; i < NL; i++)
        omp_init_lock(&(*g_locks)[i]);
    CHECK(omp_test_lock(g_lk) == 1, "omp_test_lock of a free lock failed");
    omp_unset_lock(g_lk);
    CHECK(omp_test_nest_lock(g_nl) == 1 && omp_test_nest_lock(g_nl) == 2,
          "omp_test_nest_lock in the serial part");
    omp_unset_nest_lock(g_nl);
    omp_unset_nest_lock(g_nl);
    omp_set_lock(g_lk);
    omp_unset_lock(g_lk);

    for (int rep = 1; rep <= 2; rep++) {
        rtt_phase(rep == 1 ? "region 1" : "region 2");
        OMPDSM_parallel(&rd, NULL, 0, 0, 1);
        CHECK_EQ_LL(*g_cnt, (long long)rep * T * M, "omp_set_lock counter");
        CHECK_EQ_LL(*g_cnt2, (long long)rep * T, "omp_test_lock counter");
        CHECK_EQ_LL(*g_cnt3, (long long)rep * T * (M / 2), "nest lock counter");
        CHECK_EQ_LL(*g_cnt4, (long long)rep * T * 5, "in-region lock counter");
        for (int t = 1; t < T; t++)
            CHECK((*g_test_fail)[t] == 2, "thread %d: omp_test_lock on a lock "
                  "held by thread 0 returned %s", t,
                  (*g_test_fail)[t] == 1 ? "true" : "nothing");
        long long want[NL] = {0};
        for (int t = 0; t < T; t++)
            for (int r = 0; r < R; r++) {
                int i = (t * 5 + r) % NL;
                want[i] += 1 + i;
            }
        for (int i = 0; i < NL; i++)
            CHECK((*g_per)[i] == rep * want[i], "lock array: counter %d is "
                  "%lld, expected %lld", i, (*g_per)[i], rep * want[i]);
    }
    omp_destroy_lock(g_lk);
    omp_destroy_nest_lock(g_nl);
    omp_init_lock(g_lk); /* again after destroy */
    omp_set_lock(g_lk);
    omp_unset_lock(g_lk);
    omp_destroy_lock(g_lk);
    char d[32];
    snprintf(d, sizeof d, "locks=%d", NL + 3);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
