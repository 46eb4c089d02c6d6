/* rt_loop_clauses.c - loop clauses: nowait (two static loops with the same
 * mapping and no barrier between them; 300 dynamic loops in a row with
 * nowait, more than the 256 claim slots, so fast threads reuse slots while
 * slow ones finish), and lastprivate through OMPDSM_loop_last under every
 * schedule (exactly one thread, holding the value of iteration n-1; nobody
 * for an empty loop). */
#include "rt_test.h"

enum { MAXT = 64, N = 600, CHAIN = 300, CN = 24 };

static int (*g_a)[N];
static int (*g_b)[N];
static unsigned char (*g_chain)[CHAIN][CN]; /* tid + 1 per iteration */
static long long (*g_chain_cnt)[CHAIN];
static long long *g_lasts;
static long long *g_lastval;
static OMPDSM_global globals[] = {
    {(void **)&g_a, sizeof *g_a, __alignof__(*g_a), "a"},
    {(void **)&g_b, sizeof *g_b, __alignof__(*g_b), "b"},
    {(void **)&g_chain, sizeof *g_chain, __alignof__(*g_chain), "chain"},
    {(void **)&g_chain_cnt, sizeof *g_chain_cnt, __alignof__(*g_chain_cnt),
     "chain_cnt"},
    {(void **)&g_lasts, 8, 8, "lasts"},
    {(void **)&g_lastval, 8, 8, "lastval"},
};
static OMPDSM_loop_site site_a = {"rt_loop_clauses.c", 30, "region_nowait", 0};
static OMPDSM_loop_site site_b = {"rt_loop_clauses.c", 35, "region_nowait", 0};
static OMPDSM_loop_site site_c = {"rt_loop_clauses.c", 60, "region_chain", 0};
static OMPDSM_loop_site site_l = {"rt_loop_clauses.c", 90, "region_last", 0};

/* for nowait: a[i] = i + 1;  for: b[i] = a[i] * 2 (same static mapping, so
 * each thread reads only what it wrote itself). */
static void region_nowait(void *fp)
{
    (void)fp;
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site_a, N, OMPDSM_SCHED_STATIC, 0, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            (*g_a)[k] = (int)k + 1;
    OMPDSM_loop_end(&L, 1);
    OMPDSM_loop_init(&L, &site_b, N, OMPDSM_SCHED_STATIC, 0, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            (*g_b)[k] = (*g_a)[k] * 2;
    OMPDSM_loop_end(&L, 0);
    /* After the second loop's barrier everybody sees both arrays. */
    int bad = 0;
    for (int k = 0; k < N; k++)
        bad += (*g_a)[k] != k + 1 || (*g_b)[k] != 2 * (k + 1);
    CHECK(!bad, "nowait pair: %d elements wrong after the barrier", bad);
}

/* CHAIN dynamic loops with nowait, then one barrier. */
static void region_chain(void *fp)
{
    (void)fp;
    int tid = omp_get_thread_num();
    OMPDSM_red r[CHAIN];
    long long cnt[CHAIN];
    for (int c = 0; c < CHAIN; c++) {
        OMPDSM_loop L;
        unsigned long long lo, hi;
        OMPDSM_reduce_init(&cnt[c], OMPDSM_TY_I64, OMPDSM_OP_ADD);
        OMPDSM_loop_init(&L, &site_c, CN, OMPDSM_SCHED_DYNAMIC, 1 + c % 3, 0,
                         0, 0);
        while (OMPDSM_loop_next(&L, &lo, &hi))
            for (unsigned long long k = lo; k < hi; k++) {
                (*g_chain)[c][k] = (unsigned char)(tid + 1);
                cnt[c]++;
            }
        OMPDSM_loop_end(&L, 1);
        r[c] = (OMPDSM_red){&(*g_chain_cnt)[c], &cnt[c], OMPDSM_TY_I64,
                            OMPDSM_OP_ADD};
    }
    OMPDSM_reduce(r, CHAIN);
    OMPDSM_barrier();
}

struct frame_last {
    unsigned long long n;
    int sched;
    long long chunk;
    long long lb, step;
};
/* for lastprivate(x): x = i * 3 + 1 with i = lb + k * step */
static void region_last(void *fp)
{
    struct frame_last *f = fp;
    long long x = -12345; /* private, undefined until assigned */
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site_l, f->n, f->sched, f->chunk, 0, 0,
                     OMPDSM_LOOP_MONOTONIC);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            long long i = f->lb + (long long)k * f->step;
            x = i * 3 + 1;
        }
    if (OMPDSM_loop_last(&L)) {
        *g_lastval = x;
        long long one = 1;
        OMPDSM_atomic(g_lasts, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
    }
    OMPDSM_loop_end(&L, 0);
}

static OMPDSM_region rd_nowait = {region_nowait, "rt_loop_clauses.c:30 (main)", 0};
static OMPDSM_region rd_chain = {region_chain, "rt_loop_clauses.c:60 (main)", 0};
static OMPDSM_region rd_last = {region_last, "rt_loop_clauses.c:90 (main)", 0};
static OMPDSM_region *regions[] = {&rd_nowait, &rd_chain, &rd_last};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_loop_clauses.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 3, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_loop_clauses", 45);
    int T = omp_get_max_threads();

    rtt_phase("nowait pair");
    for (int rep = 0; rep < 3; rep++) {
        memset(*g_a, 0, sizeof *g_a);
        memset(*g_b, 0, sizeof *g_b);
        OMPDSM_parallel(&rd_nowait, NULL, 0, 0, 1);
    }

    rtt_phase("nowait chain");
    OMPDSM_parallel(&rd_chain, NULL, 0, 0, 1);
    long long badcnt = 0, unowned = 0;
    int badc = -1, unc = -1, unk = -1;
    for (int c = 0; c < CHAIN; c++) {
        if ((*g_chain_cnt)[c] != CN && !badcnt++)
            badc = c;
        for (int k = 0; k < CN; k++)
            if ((!(*g_chain)[c][k] || (*g_chain)[c][k] > T) && !unowned++)
                unc = c, unk = k;
    }
    CHECK(!badcnt, "nowait chain: %lld of %d loops did not run exactly %d "
          "iterations (first: loop %d ran %lld)", badcnt, CHAIN, CN, badc,
          badc >= 0 ? (*g_chain_cnt)[badc] : 0);
    CHECK(!unowned, "nowait chain: %lld iterations never ran (first: "
          "iteration %d of loop %d)", unowned, unk, unc);

    rtt_phase("lastprivate");
    struct { int sched; long long chunk; } sc[] = {
        {OMPDSM_SCHED_STATIC, 0}, {OMPDSM_SCHED_STATIC, 1},
        {OMPDSM_SCHED_STATIC, 4}, {OMPDSM_SCHED_DYNAMIC, 1},
        {OMPDSM_SCHED_DYNAMIC, 5}, {OMPDSM_SCHED_GUIDED, 1},
        {OMPDSM_SCHED_GUIDED, 3},
    };
    unsigned long long ns[] = {0, 1, (unsigned long long)T + 1, 101};
    int loops = 0;
    for (size_t s = 0; s < sizeof sc / sizeof *sc; s++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            struct frame_last f = {ns[j], sc[s].sched, sc[s].chunk, 50, -3};
            *g_lasts = 0;
            *g_lastval = 777;
            OMPDSM_parallel(&rd_last, &f, sizeof f, 0, 1);
            loops++;
            CHECK(*g_lasts == (f.n ? 1 : 0), "lastprivate sched %d,%lld n=%llu: "
                  "%lld threads saw loop_last", f.sched, f.chunk, f.n,
                  *g_lasts);
            long long want = f.n ? (50 - 3 * (long long)(f.n - 1)) * 3 + 1 : 777;
            CHECK(*g_lastval == want, "lastprivate sched %d,%lld n=%llu: x=%lld,"
                  " expected %lld", f.sched, f.chunk, f.n, *g_lastval, want);
        }
    char d[64];
    snprintf(d, sizeof d, "chain=%d lastprivate loops=%d", CHAIN, loops);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
