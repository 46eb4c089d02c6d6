/* rt_ordered_skip.c - an ordered loop whose iterations do not all execute
 * the ordered region (`if (k % 2 == 0) { #pragma omp ordered ... }`), which
 * OpenMP allows: an iteration executes at most one ordered region.  The
 * regions that do run must run in iteration order, and nothing may wait
 * for an ordered region that an iteration skipped.
 *
 * Documents a runtime bug: this deadlocks on 2 nodes and more.
 * runtime/loop.c counts progress only in OMPDSM_ordered_end (the thread
 * that ends iteration k's ordered region publishes "k + 1 done"), and
 * OMPDSM_ordered_start (ordered_ready) waits until "done >= k"; when
 * iteration 1 skips its ordered region nobody ever publishes 2, and the
 * thread running iteration 2 waits for ever.  Progress must also advance
 * for iterations that end without an ordered region (as libgomp does at
 * chunk boundaries: OMPDSM_loop_iter/OMPDSM_loop_next could publish the
 * end of the previous iteration or chunk). */
#include "rt_test.h"

enum { N = 40 };

static int (*g_log)[N];
static int *g_pos;
static OMPDSM_global globals[] = {
    {(void **)&g_log, sizeof *g_log, __alignof__(*g_log), "log"},
    {(void **)&g_pos, sizeof(int), __alignof__(int), "pos"},
};
static OMPDSM_loop_site site = {"rt_ordered_skip.c", 20, "region", 0};

struct frame { int sched; long long chunk; };
static void region(void *fp)
{
    struct frame *f = fp;
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, N, f->sched, f->chunk, 0, 0,
                     OMPDSM_LOOP_ORDERED);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            OMPDSM_loop_iter(&L, k);
            if (k % 2 == 0) {
                OMPDSM_ordered_start();
                (*g_log)[*g_pos] = (int)k;
                *g_pos += 1;
                OMPDSM_ordered_end();
            }
        }
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd = {region, "rt_ordered_skip.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_ordered_skip.c", globals,
                           2, 0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_ordered_skip", 6);
    struct frame fs[] = {{OMPDSM_SCHED_STATIC, 1}, {OMPDSM_SCHED_DYNAMIC, 1}};
    for (int s = 0; s < 2; s++) {
        rtt_phase(s ? "dynamic,1" : "static,1");
        *g_pos = 0;
        OMPDSM_parallel(&rd, &fs[s], sizeof fs[s], 0, 1);
        CHECK_EQ_LL(*g_pos, N / 2, "ordered regions run");
        for (int j = 0; j < N / 2; j++)
            CHECK((*g_log)[j] == 2 * j, "log[%d] = %d, expected %d", j,
                  (*g_log)[j], 2 * j);
    }
    return rtt_end("even iterations ordered");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
