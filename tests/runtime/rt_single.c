/* rt_single.c - single and master: exactly one executor for each of 600
 * single constructs in a row (more than the 256 claim slots), 300 single
 * nowait constructs in a row followed by one barrier, copyprivate of a
 * small struct and of a 40 KB buffer (larger than a barrier's inline
 * slot), copyprivate in the same barrier as a pending reduction, and
 * master (thread 0 only, no barrier). */
#include "rt_test.h"

enum { MAXT = 64, NS = 600, NW = 300, BIGCP = 40000 };

static long long (*g_exec)[NS];     /* executions of single s */
static long long (*g_execw)[NW];    /* executions of single nowait s */
static int (*g_master)[MAXT];
static long long *g_red;
static OMPDSM_global globals[] = {
    {(void **)&g_red, 8, 8, "red"},
    {(void **)&g_exec, sizeof *g_exec, __alignof__(*g_exec), "exec"},
    {(void **)&g_execw, sizeof *g_execw, __alignof__(*g_execw), "execw"},
    {(void **)&g_master, sizeof *g_master, __alignof__(*g_master), "master"},
};

static void region_single(void *fp)
{
    (void)fp;
    long long one = 1;
    for (int s = 0; s < NS; s++) {
        if (OMPDSM_single_start())
            (*g_exec)[s] += 1; /* plain: exactly one thread writes */
        OMPDSM_single_end(0);
        /* after the implied barrier everybody sees the count */
        if (s % 100 == 99)
            for (int u = s - 99; u <= s; u++)
                CHECK((*g_exec)[u] == 1, "single %d ran %lld times", u,
                      (*g_exec)[u]);
    }
    for (int s = 0; s < NW; s++) {
        if (OMPDSM_single_start())
            OMPDSM_atomic(&(*g_execw)[s], OMPDSM_TY_I64, OMPDSM_OP_ADD, &one,
                          0);
        OMPDSM_single_end(1);
    }
    OMPDSM_barrier();
    long long bad = 0;
    for (int s = 0; s < NW; s++)
        bad += (*g_execw)[s] != 1;
    CHECK(!bad, "%lld single nowait constructs did not run exactly once "
          "(first: %lld)", bad, (*g_execw)[0]);
}

static long long t0_plus(int tid)
{
    return tid + 1;
}

struct cp {
    int a;
    double b;
    char s[40];
};
static void region_copyprivate(void *fp)
{
    (void)fp;
    int tid = omp_get_thread_num();
    for (int rep = 0; rep < 20; rep++) {
        struct cp v; /* private */
        memset(&v, 0, sizeof v);
        v.a = -1;
        int ex = OMPDSM_single_start();
        if (ex) {
            v.a = 1000 + rep;
            v.b = rep * 0.5;
            snprintf(v.s, sizeof v.s, "copy %d", rep);
        }
        OMPDSM_single_copyprivate(ex, &v, sizeof v);
        char want[40];
        snprintf(want, sizeof want, "copy %d", rep);
        CHECK(v.a == 1000 + rep && v.b == rep * 0.5 && !strcmp(v.s, want),
              "copyprivate rep %d: thread %d got a=%d b=%g s='%s'", rep, tid,
              v.a, v.b, v.s);
    }
    /* copyprivate in the same barrier as a pending reduction */
    long long red;
    OMPDSM_reduce_init(&red, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    red = t0_plus(tid);
    OMPDSM_red rr[1] = {{g_red, &red, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(rr, 1);
    int val = -1, ex2 = OMPDSM_single_start();
    if (ex2)
        val = 4242;
    OMPDSM_single_copyprivate(ex2, &val, sizeof val);
    int T = omp_get_num_threads();
    CHECK(val == 4242, "copyprivate with a reduction in the same barrier: "
          "thread %d got %d", tid, val);
    CHECK(*g_red == (long long)T * (T + 1) / 2, "reduction combined with "
          "copyprivate: %lld, expected %d", *g_red, T * (T + 1) / 2);
    static __thread unsigned char big[BIGCP]; /* private (not a translated
                                                 global), per thread */
    memset(big, 0, sizeof big);
    int ex = OMPDSM_single_start();
    if (ex)
        for (int i = 0; i < BIGCP; i++)
            big[i] = (unsigned char)(i * 7 + 3);
    OMPDSM_single_copyprivate(ex, big, sizeof big);
    int bad = 0;
    for (int i = 0; i < BIGCP; i++)
        bad += big[i] != (unsigned char)(i * 7 + 3);
    CHECK(!bad, "copyprivate of %d bytes: %d wrong on thread %d", BIGCP, bad,
          tid);
}

static void region_master(void *fp)
{
    (void)fp;
    if (OMPDSM_master()) {
        CHECK(omp_get_thread_num() == 0 && rtt_node() == 0,
              "master ran on thread %d node %d", omp_get_thread_num(),
              rtt_node());
        (*g_master)[omp_get_thread_num()] += 1;
    }
    /* no barrier after master */
}

static OMPDSM_region rd_single = {region_single, "rt_single.c:20 (main)", 0};
static OMPDSM_region rd_cp = {region_copyprivate, "rt_single.c:55 (main)", 0};
static OMPDSM_region rd_master = {region_master, "rt_single.c:90 (main)", 0};
static OMPDSM_region *regions[] = {&rd_single, &rd_cp, &rd_master};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_single.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 3, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_single", 45);
    rtt_phase("single");
    OMPDSM_parallel(&rd_single, NULL, 0, 0, 1);
    long long bad = 0;
    for (int s = 0; s < NS; s++)
        bad += (*g_exec)[s] != 1;
    CHECK(!bad, "%lld single constructs did not run exactly once", bad);
    rtt_phase("copyprivate");
    OMPDSM_parallel(&rd_cp, NULL, 0, 0, 1);
    rtt_phase("master");
    for (int rep = 0; rep < 5; rep++)
        OMPDSM_parallel(&rd_master, NULL, 0, 0, 1);
    CHECK_EQ_LL((*g_master)[0], 5, "master executions");
    for (int t = 1; t < MAXT; t++)
        CHECK_EQ_LL((*g_master)[t], 0, "master on another thread");
    char d[64];
    snprintf(d, sizeof d, "singles=%d nowait=%d", NS, NW);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
