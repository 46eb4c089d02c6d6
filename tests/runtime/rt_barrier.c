/* rt_barrier.c - barriers: in each of 150 rounds every thread writes its
 * slot in a page all threads write (false sharing, multiple writers) and
 * its own pages, passes a barrier, and checks every other thread's writes
 * of this round; a second barrier closes the round.  Also barriers in a
 * function called from the region (orphaned) and the loop-end barrier
 * used as the only synchronisation. */
#include "rt_test.h"

enum { MAXT = 64, ROUNDS = 150, PER = 2048 };

static int (*g_slot)[MAXT];          /* one page, all threads */
static int (*g_own)[MAXT][PER];      /* 8 KB per thread */
static OMPDSM_global globals[] = {
    {(void **)&g_slot, sizeof *g_slot, __alignof__(*g_slot), "slot"},
    {(void **)&g_own, sizeof *g_own, __alignof__(*g_own), "own"},
};

static void orphaned_barrier(void)
{
    OMPDSM_barrier();
}

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    long long bad = 0;
    for (int r = 1; r <= ROUNDS; r++) {
        (*g_slot)[t] = r * 100 + t;
        (*g_own)[t][(r * 37) % PER] = r;
        (*g_own)[t][0] = r;
        (*g_own)[t][PER - 1] = -r;
        if (r % 2)
            OMPDSM_barrier();
        else
            orphaned_barrier();
        for (int u = 0; u < T; u++)
            bad += (*g_slot)[u] != r * 100 + u || (*g_own)[u][0] != r ||
                   (*g_own)[u][PER - 1] != -r ||
                   (*g_own)[u][(r * 37) % PER] != r;
        OMPDSM_barrier();
    }
    CHECK(!bad, "%lld stale values seen after barriers", bad);
}
static OMPDSM_region rd = {region, "rt_barrier.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_barrier.c", globals, 2, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_barrier", 45);
    int T = omp_get_max_threads();
    rtt_phase("rounds");
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    /* The join is a barrier too: node 0 sees the last round. */
    for (int u = 0; u < T; u++)
        CHECK((*g_slot)[u] == ROUNDS * 100 + u && (*g_own)[u][0] == ROUNDS,
              "after the join: slot[%d]=%d own[%d][0]=%d", u, (*g_slot)[u], u,
              (*g_own)[u][0]);
    char d[32];
    snprintf(d, sizeof d, "rounds=%d", ROUNDS);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
