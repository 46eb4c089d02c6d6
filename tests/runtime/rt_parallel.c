/* rt_parallel.c - OMPDSM_parallel: fork and join, the frame passed by value
 * and by pointer to shared storage from OMPDSM_local_alloc, a large frame,
 * if(0), num_threads above nodes x T (more threads per node), nested
 * regions (a team of one inside an active region, threads of the node
 * inside an inactive one), and many consecutive regions of two kinds. */
#include "rt_test.h"

enum { MAXT = 64, NREG = 300, BIGF = 1500 };

/* Shared globals, as ompcc turns `int seen[MAXT];` etc. into pointers. */
static int (*g_seen)[MAXT];
static int (*g_nthr)[MAXT];
static int (*g_level)[MAXT];
static int (*g_round)[MAXT];
static long long (*g_inner)[MAXT];
static int *g_alone_runs;
static int *g_alone_node;
static OMPDSM_global globals[] = {
    {(void **)&g_seen, sizeof *g_seen, __alignof__(*g_seen), "seen"},
    {(void **)&g_nthr, sizeof *g_nthr, __alignof__(*g_nthr), "nthr"},
    {(void **)&g_level, sizeof *g_level, __alignof__(*g_level), "level"},
    {(void **)&g_round, sizeof *g_round, __alignof__(*g_round), "round"},
    {(void **)&g_inner, sizeof *g_inner, __alignof__(*g_inner), "inner"},
    {(void **)&g_alone_runs, sizeof(int), __alignof__(int), "alone_runs"},
    {(void **)&g_alone_node, sizeof(int), __alignof__(int), "alone_node"},
};

/* ---- region 0: fork/join with frame by value and by pointer ---- */
struct frame_basic {
    int magic;            /* by value (firstprivate) */
    double scale;         /* by value */
    long long *acc;       /* shared local (OMPDSM_local_alloc) */
    int *slots;           /* shared local array of MAXT */
};
static void region_basic(void *fp)
{
    struct frame_basic *f = fp;
    int tid = omp_get_thread_num(), n = omp_get_num_threads();
    CHECK(f->magic == 0x5eed && f->scale == 2.5,
          "frame by value: magic %#x scale %g", f->magic, f->scale);
    (*g_seen)[tid] = tid + 1;
    (*g_nthr)[tid] = n;
    (*g_level)[tid] = omp_get_level() * 100 + omp_get_active_level() * 10 +
                      omp_in_parallel();
    f->slots[tid] = (tid + 1) * 7;
    long long v = tid + 1;
    OMPDSM_atomic(f->acc, OMPDSM_TY_I64, OMPDSM_OP_ADD, &v, 0);
}

/* ---- region 1: a large by-value frame ---- */
struct frame_big {
    unsigned char bytes[BIGF];
    unsigned sum;
};
static void region_big(void *fp)
{
    struct frame_big *f = fp;
    unsigned s = 0;
    for (int i = 0; i < BIGF; i++)
        s = s * 31 + f->bytes[i];
    CHECK(s == f->sum, "large frame: checksum %u, expected %u", s, f->sum);
    (*g_seen)[omp_get_thread_num()] += 1000;
}

/* ---- region 2: run with if(0): a team of one on node 0 ---- */
static void region_alone(void *fp)
{
    (void)fp;
    *g_alone_runs += 1;
    *g_alone_node = rtt_node();
    CHECK(omp_get_num_threads() == 1 && omp_get_thread_num() == 0,
          "if(0): team of %d, thread %d", omp_get_num_threads(),
          omp_get_thread_num());
    CHECK(omp_get_level() == 1 && omp_get_active_level() == 0 &&
              !omp_in_parallel(),
          "if(0): level %d active %d in_parallel %d", omp_get_level(),
          omp_get_active_level(), omp_in_parallel());
}

/* ---- regions 3, 4: nested regions: a team of one inside an active
 * region (max-active-levels 1 by default), a team of threads of the node
 * inside an inactive one (a team of one on 1 node), as libgomp ---- */
struct frame_inner {
    int outer_tid;
    int outer_n;
    int expect;            /* the nested team's size */
    long long *red_target; /* shared local of the outer thread's caller */
    long long *iters;      /* iterations the team ran, and last ones */
    long long *lasts;
};
static OMPDSM_loop_site inner_site = {"rt_parallel.c", 120, "region_inner", 0};
static void region_inner(void *fp)
{
    struct frame_inner *f = fp;
    int me = omp_get_thread_num();
    CHECK(omp_get_num_threads() == f->expect && me >= 0 && me < f->expect,
          "nested: team of %d, thread %d, expected a team of %d",
          omp_get_num_threads(), me, f->expect);
    CHECK(omp_get_level() == 2 &&
              omp_get_active_level() == (f->outer_n > 1) + (f->expect > 1),
          "nested: level %d active level %d", omp_get_level(),
          omp_get_active_level());
    CHECK(omp_get_ancestor_thread_num(1) == f->outer_tid &&
              omp_get_ancestor_thread_num(2) == me &&
              omp_get_ancestor_thread_num(0) == 0,
          "nested: ancestors %d %d %d (outer tid %d)",
          omp_get_ancestor_thread_num(0), omp_get_ancestor_thread_num(1),
          omp_get_ancestor_thread_num(2), f->outer_tid);
    CHECK(omp_get_team_size(1) == f->outer_n &&
              omp_get_team_size(2) == f->expect && omp_get_team_size(0) == 1,
          "nested: team sizes %d %d %d (outer %d)", omp_get_team_size(0),
          omp_get_team_size(1), omp_get_team_size(2), f->outer_n);
    /* Work-sharing, single and barrier in the nested team. */
    OMPDSM_loop L;
    unsigned long long lo, hi, cnt = 0;
    OMPDSM_loop_init(&L, &inner_site, 10, OMPDSM_SCHED_DYNAMIC, 3, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            cnt++;
    __atomic_fetch_add(f->iters, (long long)cnt, __ATOMIC_RELAXED);
    __atomic_fetch_add(f->lasts, OMPDSM_loop_last(&L), __ATOMIC_RELAXED);
    OMPDSM_loop_end(&L, 0);
    if (OMPDSM_single_start())
        (*g_inner)[f->outer_tid] += 1;
    OMPDSM_single_end(0);
    OMPDSM_barrier();
    /* A reduction in the nested region lands at its join. */
    long long priv;
    OMPDSM_reduce_init(&priv, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    priv += 5;
    OMPDSM_red r[1] = {{f->red_target, &priv, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
}
static OMPDSM_region rd_inner = {region_inner, "rt_parallel.c:120 (outer)", 0};

static void region_outer(void *fp)
{
    (void)fp;
    int tid = omp_get_thread_num(), n = omp_get_num_threads();
    long long *target = OMPDSM_local_alloc(sizeof(long long), 8, 0);
    long long iters = 0, lasts = 0;
    *target = 100;
    /* no clause: nthreads-var; num_threads(4) */
    int e1 = n > 1 ? 1 : omp_get_max_threads(), e2 = n > 1 ? 1 : 4;
    struct frame_inner fi = {tid, n, e1, target, &iters, &lasts};
    OMPDSM_parallel(&rd_inner, &fi, sizeof fi, 0, 1);
    CHECK(iters == 10 && lasts == 1, "nested loop: %lld iterations, %lld "
          "threads ran the last", iters, lasts);
    fi.expect = e2;
    iters = lasts = 0;
    OMPDSM_parallel(&rd_inner, &fi, sizeof fi, 4, 1);
    CHECK(iters == 10 && lasts == 1, "nested loop: %lld iterations, %lld "
          "threads ran the last", iters, lasts);
    CHECK(*target == 100 + 5 * (e1 + e2), "nested reduction: %lld, expected "
          "%d", *target, 100 + 5 * (e1 + e2));
    CHECK(omp_get_level() == 1 && omp_get_num_threads() == fi.outer_n &&
              omp_get_thread_num() == tid,
          "after nested region: level %d, team %d, thread %d",
          omp_get_level(), omp_get_num_threads(), omp_get_thread_num());
    OMPDSM_local_free(&target);
    (*g_inner)[tid] += 10;
}

/* ---- region 5: many consecutive regions ---- */
struct frame_round {
    int r;
};
static void region_round(void *fp)
{
    struct frame_round *f = fp;
    int tid = omp_get_thread_num();
    CHECK((*g_round)[tid] == f->r - 1, "round %d: my slot holds %d",
          f->r, (*g_round)[tid]);
    (*g_round)[tid] = f->r;
}

static OMPDSM_region rd_basic = {region_basic, "rt_parallel.c:40 (main)", 0};
static OMPDSM_region rd_big = {region_big, "rt_parallel.c:70 (main)", 0};
static OMPDSM_region rd_alone = {region_alone, "rt_parallel.c:85 (main)", 0};
static OMPDSM_region rd_outer = {region_outer, "rt_parallel.c:150 (main)", 0};
static OMPDSM_region rd_round = {region_round, "rt_parallel.c:170 (main)", 0};
static OMPDSM_region *regions[] = {&rd_basic, &rd_big, &rd_alone, &rd_inner,
                                   &rd_outer, &rd_round};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_parallel.c", globals,
                           sizeof globals / sizeof *globals, 0, regions,
                           sizeof regions / sizeof *regions, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static void clear(void)
{
    memset(*g_seen, 0, sizeof *g_seen);
    memset(*g_nthr, 0, sizeof *g_nthr);
    memset(*g_level, 0, sizeof *g_level);
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_parallel", 40);
    int T = omp_get_max_threads();
    CHECK(T >= 1 && T <= MAXT, "max threads %d", T);
    CHECK(!omp_in_parallel() && omp_get_level() == 0 &&
              omp_get_num_threads() == 1,
          "serial part: in_parallel %d level %d team %d", omp_in_parallel(),
          omp_get_level(), omp_get_num_threads());

    rtt_phase("basic");
    long long *acc = OMPDSM_local_alloc(sizeof(long long), 8, 0);
    int *slots = OMPDSM_local_alloc(MAXT * sizeof(int), 16, 0);
    for (int rep = 0; rep < 3; rep++) {
        clear();
        *acc = 1000;
        memset(slots, 0, MAXT * sizeof(int));
        struct frame_basic fr = {0x5eed, 2.5, acc, slots};
        OMPDSM_parallel(&rd_basic, &fr, sizeof fr, 0, 1);
        CHECK_EQ_LL(*acc, 1000 + (long long)T * (T + 1) / 2,
                    "atomic sum through the frame pointer");
        for (int t = 0; t < MAXT; t++) {
            CHECK_EQ_LL((*g_seen)[t], t < T ? t + 1 : 0, "seen[t]");
            CHECK_EQ_LL((*g_nthr)[t], t < T ? T : 0, "team size seen by t");
            CHECK_EQ_LL(slots[t], t < T ? (t + 1) * 7 : 0, "shared local slot");
            CHECK_EQ_LL((*g_level)[t], t < T ? (T > 1 ? 111 : 100) : 0,
                        "level*100+active*10+in_parallel");
        }
    }

    rtt_phase("num_threads above nodes");
    clear();
    {
        struct frame_basic fr = {0x5eed, 2.5, acc, slots};
        *acc = 0;
        /* more than nodes x T: that many threads, more per node */
        OMPDSM_parallel(&rd_basic, &fr, sizeof fr, T + 5, 1);
        CHECK_EQ_LL((*g_nthr)[0], T + 5, "num_threads(T+5) team size");
        CHECK_EQ_LL(*acc, (long long)(T + 5) * (T + 6) / 2,
                    "num_threads(T+5) sum");
        for (int t = 0; t < T + 5; t++)
            CHECK_EQ_LL((*g_seen)[t], t + 1, "num_threads(T+5) thread ran");
    }

    rtt_phase("large frame");
    clear();
    {
        static struct frame_big fb; /* private (not a translated global) */
        unsigned s = 0;
        for (int i = 0; i < BIGF; i++) {
            fb.bytes[i] = (unsigned char)(i * 13 + 1);
            s = s * 31 + fb.bytes[i];
        }
        fb.sum = s;
        OMPDSM_parallel(&rd_big, &fb, sizeof fb, 0, 1);
        for (int t = 0; t < MAXT; t++)
            CHECK_EQ_LL((*g_seen)[t], t < T ? 1000 : 0, "large frame seen");
    }

    rtt_phase("if(0)");
    *g_alone_runs = 0;
    *g_alone_node = -1;
    OMPDSM_parallel(&rd_alone, NULL, 0, 0, 0);
    OMPDSM_parallel(&rd_alone, NULL, 0, T, 0);
    CHECK_EQ_LL(*g_alone_runs, 2, "if(0) runs");
    CHECK_EQ_LL(*g_alone_node, 0, "if(0) node");
    CHECK(omp_get_level() == 0, "level after if(0): %d", omp_get_level());

    rtt_phase("nested");
    memset(*g_inner, 0, sizeof *g_inner);
    OMPDSM_parallel(&rd_outer, NULL, 0, 0, 1);
    for (int t = 0; t < MAXT; t++)
        CHECK_EQ_LL((*g_inner)[t], t < T ? 12 : 0, "nested: inner[t]");

    rtt_phase("many regions");
    memset(*g_round, 0, sizeof *g_round);
    for (int r = 1; r <= NREG; r++) {
        struct frame_round fr = {r};
        OMPDSM_parallel(&rd_round, &fr, sizeof fr, 0, 1);
        if (r % 50 == 0) {
            for (int t = 0; t < T; t++)
                CHECK_EQ_LL((*g_round)[t], r, "round slot after join");
            /* Interleave a different region and frame size. */
            clear();
            struct frame_basic fb = {0x5eed, 2.5, acc, slots};
            *acc = 0;
            OMPDSM_parallel(&rd_basic, &fb, sizeof fb, 0, 1);
            CHECK_EQ_LL(*acc, (long long)T * (T + 1) / 2, "interleaved sum");
        }
    }
    OMPDSM_local_free(&slots);
    OMPDSM_local_free(&acc);
    char d[64];
    snprintf(d, sizeof d, "team=%d regions=%d", T, NREG + 10);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
