/* rt_hybrid.c - the layout of teams over hybrid nodes: run as
 * `rt_hybrid NODES T` (the expected node count and threads per node, from
 * the test's command line, not from the runtime), it checks that
 * omp_get_max_threads() is NODES x T and that, for every team size k from
 * 1 to that, num_threads(k) gives k threads numbered node-major: thread t
 * runs on node t / per with per = min(T, ceil(k / NODES)) threads per node
 * (tests/runtime/hybrid_test.py runs it under several settings).  It
 * also prints, for the team of all threads, each thread's node and CPU
 * affinity ("cpus t=T node=N count=C first=F": how many CPUs its mask
 * allows and the lowest), which hybrid_test.py checks against --bind-to. */
#include "rt_test.h"

#include <pthread.h>
#include <sched.h>

enum { MAXT = 256 };

static int (*g_node)[MAXT];
static int (*g_size)[MAXT];
static int (*g_runs)[MAXT];
static int (*g_cpus)[MAXT][2]; /* count, first */
static OMPDSM_global globals[] = {
    {(void **)&g_cpus, sizeof *g_cpus, __alignof__(*g_cpus), "cpus"},
    {(void **)&g_node, sizeof *g_node, __alignof__(*g_node), "node"},
    {(void **)&g_size, sizeof *g_size, __alignof__(*g_size), "size"},
    {(void **)&g_runs, sizeof *g_runs, __alignof__(*g_runs), "runs"},
};

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    if (t >= MAXT)
        return;
    (*g_node)[t] = rtt_node();
    (*g_size)[t] = omp_get_num_threads();
    cpu_set_t set;
    int count = -1, first = -1;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0) {
        count = CPU_COUNT(&set);
        for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
            if (CPU_ISSET(c, &set))
                first = c;
    }
    (*g_cpus)[t][0] = count;
    (*g_cpus)[t][1] = first;
    long long one = 1;
    OMPDSM_atomic(&(*g_runs)[t], OMPDSM_TY_I32, OMPDSM_OP_ADD, &one, 0);
    /* a barrier and a reduction-free loop inside, for good measure */
    OMPDSM_barrier();
}

static OMPDSM_region rd = {region, "rt_hybrid.c:22 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_hybrid.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1,
                           0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)envp;
    rtt_begin("rt_hybrid", 60);
    if (argc < 3) {
        printf("usage: rt_hybrid NODES T\n");
        return 2;
    }
    int nodes = atoi(argv[1]), tpn = atoi(argv[2]);
    int maxt = omp_get_max_threads();
    CHECK(maxt == nodes * tpn, "omp_get_max_threads() %d, expected %d x %d",
          maxt, nodes, tpn);
    for (int k = 1; k <= maxt && k <= MAXT; k++) {
        memset(*g_node, 0xff, sizeof *g_node);
        memset(*g_size, 0, sizeof *g_size);
        memset(*g_runs, 0, sizeof *g_runs);
        OMPDSM_parallel(&rd, NULL, 0, k, 1);
        int per = (k + nodes - 1) / nodes;
        if (per > tpn)
            per = tpn;
        for (int t = 0; t < MAXT; t++) {
            CHECK_EQ_LL((*g_runs)[t], t < k ? 1 : 0, "runs of thread");
            if (t >= k)
                continue;
            CHECK((*g_node)[t] == t / per, "team of %d: thread %d ran on node "
                  "%d, expected %d", k, t, (*g_node)[t], t / per);
            CHECK_EQ_LL((*g_size)[t], k, "team size seen");
        }
    }
    OMPDSM_parallel(&rd, NULL, 0, maxt, 1);
    for (int t = 0; t < maxt && t < MAXT; t++)
        printf("cpus t=%d node=%d count=%d first=%d\n", t, (*g_node)[t],
               (*g_cpus)[t][0], (*g_cpus)[t][1]);
    char d[64];
    snprintf(d, sizeof d, "nodes=%d tpn=%d", nodes, tpn);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
