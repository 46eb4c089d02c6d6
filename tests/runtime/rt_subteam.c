/* rt_subteam.c - parallel regions with fewer threads than nodes (k = T-1
 * and k = 1, besides the full team), through num_threads(k) and through
 * omp_set_num_threads(k): the team's size and
 * placement, barriers, a dynamic loop, single, critical and a reduction
 * inside the sub-team, and - the point - every node outside the sub-team
 * seeing the sub-team's writes after the join, although it held valid
 * copies of those pages from before the region. */
#include "rt_test.h"

enum { MAXT = 64, PER = 1500 };

static int (*g_data)[MAXT][PER];   /* thread t's part: pages of its own */
static int (*g_small)[MAXT];       /* one page, every member writes */
static long long *g_members, *g_singles, *g_crit, *g_iters, *g_red;
static int *g_k;
static OMPDSM_global globals[] = {
    {(void **)&g_data, sizeof *g_data, __alignof__(*g_data), "data"},
    {(void **)&g_small, sizeof *g_small, __alignof__(*g_small), "small"},
    {(void **)&g_members, 8, 8, "members"},
    {(void **)&g_singles, 8, 8, "singles"},
    {(void **)&g_crit, 8, 8, "crit"},
    {(void **)&g_iters, 8, 8, "iters"},
    {(void **)&g_red, 8, 8, "red"},
    {(void **)&g_k, sizeof(int), __alignof__(int), "k"},
};
static const char *const criticals[] = {"subteam_counter"};

static int value(int k, int t, int i)
{
    return k * 1000000 + t * 10000 + i;
}

static OMPDSM_loop_site site_dyn = {"rt_subteam.c", 40, "region_sub", 0};

struct frame_sub {
    int k;
};
static void region_sub(void *fp)
{
    struct frame_sub *f = fp;
    int k = f->k, t = omp_get_thread_num();
    CHECK(omp_get_num_threads() == k, "sub-team size %d, expected %d",
          omp_get_num_threads(), k);
    CHECK(k == 1 || rtt_node() == t, "thread %d runs on node %d", t,
          rtt_node());
    for (int i = 0; i < PER; i++)
        (*g_data)[t][i] = value(k, t, i);
    (*g_small)[t] = k * 100 + t;
    long long one = 1;
    OMPDSM_atomic(g_members, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
    OMPDSM_barrier();
    /* The sub-team's barrier made the neighbour's part visible. */
    int nb = (t + 1) % k, bad = 0;
    for (int i = 0; i < PER; i++)
        bad += (*g_data)[nb][i] != value(k, nb, i);
    CHECK(!bad, "k=%d: %d words of thread %d's part wrong after the "
          "sub-team barrier", k, bad, nb);
    for (int u = 0; u < k; u++)
        CHECK((*g_small)[u] == k * 100 + u, "k=%d: small[%d]=%d after barrier",
              k, u, (*g_small)[u]);
    /* A dynamic loop: claim words live on the sub-team's nodes. */
    long long cnt;
    OMPDSM_reduce_init(&cnt, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site_dyn, 100, OMPDSM_SCHED_DYNAMIC, 7, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long i = lo; i < hi; i++)
            cnt += (long long)i + 1;
    OMPDSM_red r[1] = {{g_iters, &cnt, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
    OMPDSM_loop_end(&L, 0);
    if (OMPDSM_single_start())
        *g_singles += 1;
    OMPDSM_single_end(0);
    OMPDSM_critical_start("subteam_counter");
    long long c = *g_crit;
    *g_crit = c + 1;
    OMPDSM_critical_end("subteam_counter");
    /* A reduction at the join, which the nodes outside take part in. */
    long long mine;
    OMPDSM_reduce_init(&mine, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    mine = t + 1;
    OMPDSM_red r2[1] = {{g_red, &mine, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r2, 1);
}

/* Every thread of the full team checks what the last sub-team wrote. */
static void region_check(void *fp)
{
    (void)fp;
    int k = *g_k;
    int bad = 0;
    for (int t = 0; t < k; t++)
        for (int i = 0; i < PER; i++)
            bad += (*g_data)[t][i] != value(k, t, i);
    CHECK(!bad, "after the join of the k=%d sub-team: %d words wrong on "
          "node %d", k, bad, rtt_node());
    for (int t = 0; t < k; t++)
        CHECK((*g_small)[t] == k * 100 + t, "after join of k=%d: small[%d]=%d",
              k, t, (*g_small)[t]);
    CHECK(*g_members == k && *g_singles == 1 && *g_crit == k &&
              *g_iters == 5050 && *g_red == (long long)k * (k + 1) / 2,
          "after join of k=%d, node %d sees members %lld singles %lld crit "
          "%lld iters %lld red %lld",
          k, rtt_node(), *g_members, *g_singles, *g_crit, *g_iters, *g_red);
}

static OMPDSM_region rd_sub = {region_sub, "rt_subteam.c:30 (main)", 0};
static OMPDSM_region rd_check = {region_check, "rt_subteam.c:90 (main)", 0};
static OMPDSM_region *regions[] = {&rd_sub, &rd_check};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_subteam.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 2,
                           criticals, 1, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int g_all; /* the whole job's threads (omp_get_max_threads at start) */

static void run(int k, int how)
{
    *g_members = *g_singles = *g_crit = *g_iters = *g_red = 0;
    *g_k = k;
    /* Without this flush a team of one (k = 1, no fork) loses the plain
     * store of 0 to the atomics that follow: see rt_atomic_after_write. */
    OMPDSM_flush();
    struct frame_sub f = {k};
    if (how == 0) {
        OMPDSM_parallel(&rd_sub, &f, sizeof f, k, 1);
    } else {
        omp_set_num_threads(k);
        CHECK(omp_get_max_threads() == k, "omp_set_num_threads(%d): max "
              "threads %d", k, omp_get_max_threads());
        OMPDSM_parallel(&rd_sub, &f, sizeof f, 0, 1);
    }
    CHECK(*g_members == k, "k=%d: %lld members", k, *g_members);
    CHECK_EQ_LL(*g_red, (long long)k * (k + 1) / 2, "join reduction");
    CHECK_EQ_LL(*g_iters, 5050, "sub-team dynamic loop sum");
    if (how == 1)
        omp_set_num_threads(g_all); /* all nodes again */
    /* Now every node (outside ones included, which hold copies of these
     * pages from the previous check) must see the sub-team's writes. */
    OMPDSM_parallel(&rd_check, NULL, 0, 0, 1);
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_subteam", 40);
    int T = omp_get_max_threads();
    g_all = T;
    rtt_phase("initial check region");
    *g_k = 0;
    *g_iters = 5050;
    *g_singles = 1;
    OMPDSM_parallel(&rd_check, NULL, 0, 0, 1);
    /* Sizes T, T-1 and 1 only: sub-teams of two different sizes below T
     * deadlock (rt_subteam_sizes documents that bug). */
    int ks[3] = {T, T - 1, 1}, nk = T > 2 ? 3 : T == 2 ? 2 : 1;
    if (T == 2)
        ks[1] = 1;
    for (int round = 0; round < 2; round++)
        for (int ki = 0; ki < nk; ki++) {
            int k = ks[ki];
            static char ph[64];
            snprintf(ph, sizeof ph, "%s with k=%d",
                     round ? "omp_set_num_threads(k)" : "num_threads(k)", k);
            rtt_phase(ph);
            run(k, round);
        }
    char d[48];
    snprintf(d, sizeof d, "team=%d sub-teams=%d,1", T, T > 1 ? T - 1 : 1);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
