/* rt_ordered_many.c - many ordered loops in a row (a time-step loop around
 * an ordered loop): 150 instances of a short schedule(static,1) ordered
 * loop, each checking that its ordered regions run in iteration order and
 * after the previous instance's.
 *
 * Documents a runtime bug: from the 65th ordered loop of a run on, ordered
 * regions run out of order.  runtime/loop.c keeps an ordered instance's
 * progress words in slot seq % RT_ORD_SLOTS (64, runtime/rt.h) and tags
 * them with rt_ws_gen(seq) = seq / RT_WS_SLOTS + 1 (256): instances seq and
 * seq + 64 share the slot *and* the tag, so ordered_ready() takes the old
 * instance's "n iterations done" for the new one and lets every thread in
 * at once.  The tag must change whenever a slot is reused (seq /
 * RT_ORD_SLOTS), or the words must be reset between instances. */
#include "rt_test.h"

enum { REPS = 150 };

static long long *g_next, *g_bad;
static int *g_first_bad_rep;
static OMPDSM_global globals[] = {
    {(void **)&g_next, 8, 8, "next"},
    {(void **)&g_bad, 8, 8, "bad"},
    {(void **)&g_first_bad_rep, sizeof(int), __alignof__(int), "first_bad"},
};
static OMPDSM_loop_site site = {"rt_ordered_many.c", 30, "region", 0};

static void region(void *fp)
{
    (void)fp;
    unsigned long long n = (unsigned long long)omp_get_num_threads() * 3;
    for (int rep = 0; rep < REPS; rep++) {
        OMPDSM_loop L;
        unsigned long long lo, hi;
        OMPDSM_loop_init(&L, &site, n, OMPDSM_SCHED_STATIC, 1, 0, 0,
                         OMPDSM_LOOP_ORDERED);
        while (OMPDSM_loop_next(&L, &lo, &hi))
            for (unsigned long long k = lo; k < hi; k++) {
                OMPDSM_loop_iter(&L, k);
                OMPDSM_ordered_start();
                if (*g_next != (long long)(rep * n + k)) {
                    if (!*g_bad)
                        *g_first_bad_rep = rep;
                    *g_bad += 1;
                }
                *g_next += 1;
                OMPDSM_ordered_end();
            }
        OMPDSM_loop_end(&L, 0);
    }
}
static OMPDSM_region rd = {region, "rt_ordered_many.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_ordered_many.c", globals,
                           3, 0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_ordered_many", 20);
    int T = omp_get_max_threads();
    *g_first_bad_rep = -1;
    rtt_phase("150 ordered loops");
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    CHECK_EQ_LL(*g_next, (long long)REPS * 3 * T, "ordered regions run");
    CHECK(*g_bad == 0, "%lld ordered regions out of order, the first in "
          "ordered loop %d of %d", *g_bad, *g_first_bad_rep, REPS);
    return rtt_end("loops=150");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
