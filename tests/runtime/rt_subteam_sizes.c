/* rt_subteam_sizes.c - documents a runtime bug: two regions whose
 * sub-teams (num_threads < nodes) have different sizes deadlock at their
 * first barrier.  runtime/team.c runs every sub-team's barriers on comm
 * channel 1 (struct comm_group {1, k}); comm/coll.c, comm_barrier_x, numbers
 * barriers with a per-node counter per channel (comm_g.coll_seq[chan]) and
 * waits for arrival/release words >= that number.  Only members advance
 * it, so after a sub-team of 2 (nodes 0,1) node 2 is behind nodes 0 and 1,
 * and a later sub-team of 3 waits forever for node 2's arrival.  Needs at
 * least 4 nodes to show (sizes 2 and 3); passes trivially below.  The
 * sub-team's members should agree on the channel's sequence number (e.g.
 * the fork message carrying node 0's count for channel 1). */
#include "rt_test.h"

static long long *g_count;
static OMPDSM_global globals[] = {{(void **)&g_count, 8, 8, "count"}};

static void region(void *fp)
{
    (void)fp;
    OMPDSM_barrier();
    long long one = 1;
    OMPDSM_atomic(g_count, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
    OMPDSM_barrier();
}
static OMPDSM_region rd = {region, "rt_subteam_sizes.c:20 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_subteam_sizes.c", globals,
                           1, 0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_subteam_sizes", 6);
    int T = omp_get_max_threads();
    long long want = 0;
    if (T >= 4) {
        rtt_phase("num_threads(2)");
        OMPDSM_parallel(&rd, NULL, 0, 2, 1);
        want += 2;
        rtt_phase("num_threads(3) after num_threads(2)");
        OMPDSM_parallel(&rd, NULL, 0, 3, 1);
        want += 3;
    }
    CHECK_EQ_LL(*g_count, want, "members counted");
    return rtt_end(T >= 4 ? "sizes 2,3" : "fewer than 4 nodes: nothing to show");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
