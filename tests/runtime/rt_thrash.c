/* rt_thrash.c - programs for thrash_test.py (the thrashing report by
 * variable, docs/diagnostics.md), on two nodes; CASE is
 *   false      each thread adds to its own elements of `slots`, which
 *              share one page, between barriers (false sharing)
 *   private    each thread adds to elements of `big` a page apart (no
 *              sharing: no page written by two nodes)
 *   migratory  each thread adds to `counter` under a lock, in turn
 *   block      as false, on a malloc'd block (named by its call's line,
 *              marked @MALLOC)
 *   aligned    as false, on four blocks from posix_memalign,
 *              aligned_alloc, memalign and valloc (marked @POSIX_MEMALIGN,
 *              @ALIGNED_ALLOC, @MEMALIGN, @VALLOC); each is two pages
 *              long and written in its second page, which no other block
 *              can share
 * Every global is aligned to 64 KiB, the default page, so each starts a
 * page of its own.  The sums are checked too. */
#include "rt_test.h"

enum { ITERS = 200, PAGE = 65536, BIG = 2 * PAGE / 8 };

static long long (*g_slots)[1024]; enum { SLOTS_LINE = __LINE__ }; /* @DECL_SLOTS */
static long long (*g_big)[BIG];
static long long *g_counter;
static long long **g_block;
static long long *(*g_aligned)[4];
static omp_lock_t *g_lock;
static OMPDSM_global globals[] = {
    {(void **)&g_slots, sizeof *g_slots, PAGE, "slots", 8},
    {(void **)&g_big, sizeof *g_big, PAGE, "big", 8},
    {(void **)&g_counter, 8, PAGE, "counter", 8},
    {(void **)&g_block, sizeof(long long *), PAGE, "block", 8},
    {(void **)&g_lock, sizeof(omp_lock_t), PAGE, "lock", 8},
    {(void **)&g_aligned, sizeof *g_aligned, PAGE, "aligned", 8},
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
        else if (!strcmp(g_case, "aligned"))
            for (int k = 0; k < 4; k++)
                (*g_aligned)[k][PAGE / 8 + t * 8 + it % 8] += 1;
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

/* where the globals are declared, as ompcc records it: slots' line, and
 * the others not known (a null file) */
static const OMPDSM_srcpos decls[] = {
    {"tests/runtime/rt_thrash.c", SLOTS_LINE}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0},
};

static OMPDSM_region rd = {region, "rt_thrash.c:region", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_thrash.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void)
{
    OMPDSM_register_unit(&unit);
    OMPDSM_global_decls(&unit, decls);
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_thrash", 60);
    int T = omp_get_max_threads();
    omp_init_lock(g_lock);
    *g_block = OMPDSM_calloc(1024, sizeof(long long)); /* @MALLOC */
    long long sum = 0;
    if (!strcmp(g_case, "aligned")) {
        void *p = NULL;
        int rc = OMPDSM_posix_memalign(&p, PAGE, 2 * PAGE); /* @POSIX_MEMALIGN */
        CHECK_EQ_LL(rc, 0, "posix_memalign");
        (*g_aligned)[0] = p;
        (*g_aligned)[1] = OMPDSM_aligned_alloc(PAGE, 2 * PAGE); /* @ALIGNED_ALLOC */
        (*g_aligned)[2] = OMPDSM_memalign(PAGE, 2 * PAGE); /* @MEMALIGN */
        (*g_aligned)[3] = OMPDSM_valloc(2 * PAGE); /* @VALLOC */
        for (int k = 0; k < 4; k++) {
            CHECK((*g_aligned)[k] != NULL, "aligned block allocated");
            memset((*g_aligned)[k], 0, 2 * PAGE);
        }
    }
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    if (!strcmp(g_case, "aligned")) {
        /* each block received T * ITERS additions: count one of them */
        for (int i = 0; i < 2 * PAGE / 8; i++)
            sum += (*g_aligned)[0][i];
        for (int k = 1; k < 4; k++) {
            long long s = 0;
            for (int i = 0; i < 2 * PAGE / 8; i++)
                s += (*g_aligned)[k][i];
            CHECK_EQ_LL(s, (long long)T * ITERS, "sum of an aligned block");
        }
    }
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
