/* rt_thrash.c - programs for thrash_test.py (the thrashing report by
 * variable, docs/diagnostics.md), on two nodes; CASE is
 *   false      each thread adds to its own elements of `slots`, which
 *              share one page, between barriers (false sharing)
 *   private    each thread adds to elements of `big` a page apart (no
 *              sharing: no page written by two nodes)
 *   migratory  each thread adds to `counter` under a lock, in turn
 *   block      as false, on a malloc'd block (named by its call's line,
 *              marked @MALLOC)
 * Every global is aligned to 64 KiB, the default page, so each starts a
 * page of its own.  The sums are checked too. */
#include "rt_test.h"

enum { ITERS = 200, PAGE = 65536, BIG = 2 * PAGE / 8 };

static long long (*g_slots)[1024];
static long long (*g_big)[BIG];
static long long *g_counter;
static long long **g_block;
static omp_lock_t *g_lock;
static OMPDSM_global globals[] = {
    {(void **)&g_slots, sizeof *g_slots, PAGE, "slots", 8},
    {(void **)&g_big, sizeof *g_big, PAGE, "big", 8},
    {(void **)&g_counter, 8, PAGE, "counter", 8},
    {(void **)&g_block, sizeof(long long *), PAGE, "block", 8},
    {(void **)&g_lock, sizeof(omp_lock_t), PAGE, "lock", 8},
};

static const char *g_case;

static void pause_a_little(void)
{
    volatile unsigned x = 0;
    for (int i = 0; i < 20000; i++)
        x += (unsigned)i;
}

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    for (int it = 0; it < ITERS; it++) {
        if (!strcmp(g_case, "false"))
            (*g_slots)[t * 8 + it % 8] += 1;
        else if (!strcmp(g_case, "block"))
            (*g_block)[t * 8 + it % 8] += 1;
        else if (!strcmp(g_case, "private"))
            (*g_big)[t * (PAGE / 8) + it % 8] += 1;
        else if (!strcmp(g_case, "migratory")) {
            omp_set_lock(g_lock);
            *g_counter += 1;
            omp_unset_lock(g_lock);
            pause_a_little();
            continue;
        }
        OMPDSM_barrier();
    }
}

static OMPDSM_region rd = {region, "rt_thrash.c:region", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_thrash.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_thrash", 60);
    int T = omp_get_max_threads();
    omp_init_lock(g_lock);
    *g_block = OMPDSM_calloc(1024, sizeof(long long)); /* @MALLOC */
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    long long sum = 0;
    for (int i = 0; i < 1024; i++)
        sum += (*g_slots)[i] + (*g_block)[i];
    for (int i = 0; i < BIG; i++)
        sum += (*g_big)[i];
    sum += *g_counter;
    CHECK_EQ_LL(sum, (long long)T * ITERS, "sum of every element");
    return rtt_end(g_case);
}

int main(int argc, char **argv, char **envp)
{
    g_case = argc > 1 ? argv[1] : "false";
    return OMPDSM_main(argc, argv, envp, user_main);
}
