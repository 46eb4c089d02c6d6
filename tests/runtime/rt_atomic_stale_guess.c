/* rt_atomic_stale_guess.c - documents a DSM bug: `#pragma omp atomic`
 * `x = 100 / x` (reversed division; also `x /= v` style updates whose
 * function traps on some old value) kills a node with SIGFPE although x is
 * never 0.  dsm/atomic.c, dsm_atomic_update, applies the update function to
 * a first *guess* of the old value taken from the node's own copy of the
 * page (dsm_g.sys), even when that copy is invalid and stale - here still
 * 0 from before node 0 wrote x = 7 - so the division by the guess traps
 * before the compare-swap could reject it.  The guess must only be used
 * when the page is valid (or the function must not run on unverified
 * values: fetch the home's word first). */
#include "rt_test.h"

static int *g_x;
static OMPDSM_global globals[] = {{(void **)&g_x, sizeof(int), 4, "x"}};

static void region(void *fp)
{
    (void)fp;
    if (omp_get_thread_num() == omp_get_num_threads() - 1) {
        int hundred = 100;
        OMPDSM_atomic(g_x, OMPDSM_TY_I32, OMPDSM_OP_DIV, &hundred, 1);
    }
}
static OMPDSM_region rd = {region, "rt_atomic_stale_guess.c:20 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_atomic_stale_guess.c",
                           globals, 1, 0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_atomic_stale_guess", 20);
    *g_x = 7;
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    CHECK_EQ_LL(*g_x, 100 / 7, "x = 100 / x with x = 7");
    return rtt_end("reversed division");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
