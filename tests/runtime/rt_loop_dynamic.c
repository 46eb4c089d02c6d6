/* rt_loop_dynamic.c - dynamic and guided loops: every iteration exactly
 * once (a count and a sum reduced over the team equal n and n(n-1)/2, and
 * every iteration has an owner), the blocks form a partition of 0..n-1 in
 * claim order, dynamic blocks are chunk-aligned and chunk-sized (except the
 * last), guided blocks are never smaller than the chunk (except the last),
 * never larger than max(chunk, ceil(remaining / T)), and shrink; plus the
 * profiled schedule, which must at least run every iteration once. */
#include "rt_test.h"

#include <time.h>

enum { MAXT = 64, NMAX = 2000 };

static int (*g_owner)[NMAX];    /* tid + 1 */
static int (*g_size)[NMAX];     /* size of the block starting at k, or 0 */
static long long *g_count, *g_sum;
static OMPDSM_global globals[] = {
    {(void **)&g_owner, sizeof *g_owner, __alignof__(*g_owner), "owner"},
    {(void **)&g_size, sizeof *g_size, __alignof__(*g_size), "size"},
    {(void **)&g_count, 8, 8, "count"},
    {(void **)&g_sum, 8, 8, "sum"},
};

static OMPDSM_loop_site site = {"rt_loop_dynamic.c", 30, "region", 0};

struct frame {
    unsigned long long n;
    int sched;
    long long chunk;
};

static void region(void *fp)
{
    struct frame *f = fp;
    int tid = omp_get_thread_num(), T = omp_get_num_threads();
    unsigned long long c = f->chunk > 0 ? (unsigned long long)f->chunk : 1;
    long long cnt, sum;
    OMPDSM_reduce_init(&cnt, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_reduce_init(&sum, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi, prev_size = ~0ull;
    OMPDSM_loop_init(&L, &site, f->n, f->sched, f->chunk, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi)) {
        CHECK(lo < hi && hi <= f->n, "block [%llu,%llu) of n=%llu", lo, hi,
              f->n);
        if (!(lo < hi && hi <= f->n))
            break;
        unsigned long long sz = hi - lo, rem = f->n - lo;
        if (f->sched == OMPDSM_SCHED_DYNAMIC && T > 1)
            CHECK(lo % c == 0 && (sz == c || hi == f->n),
                  "dynamic,%llu: block [%llu,%llu)", c, lo, hi);
        if (f->sched == OMPDSM_SCHED_GUIDED && T > 1) {
            unsigned long long share = (rem + (unsigned long long)T - 1) / T;
            unsigned long long most = share > c ? share : c;
            CHECK((sz >= c || hi == f->n) && sz <= most,
                  "guided,%llu T=%d: block [%llu,%llu) with %llu left",
                  c, T, lo, hi, rem);
            CHECK(sz <= prev_size || hi == f->n,
                  "guided: a thread's block grew from %llu to %llu",
                  prev_size, sz);
            prev_size = sz;
        }
        (*g_size)[lo] = (int)sz;
        for (unsigned long long k = lo; k < hi; k++) {
            (*g_owner)[k] = tid + 1;
            cnt++;
            sum += (long long)k;
        }
    }
    OMPDSM_red r[2] = {{g_count, &cnt, OMPDSM_TY_I64, OMPDSM_OP_ADD},
                       {g_sum, &sum, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 2);
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd = {region, "rt_loop_dynamic.c:40 (main)", 0};

/* A slow thread 0 (2 ms a chunk) in a dynamic,1 loop of NSLOW chunks: the
 * others must take over most of the chunks it would have had (with one
 * share of the chunks per node, they steal from node 0's share, chunks
 * 0 .. NSLOW/T-1). */
enum { NSLOW = 400 };
static void region_slow(void *fp)
{
    (void)fp;
    int tid = omp_get_thread_num();
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, NSLOW, OMPDSM_SCHED_DYNAMIC, 1, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            (*g_owner)[k] = tid + 1;
            if (!tid) {
                struct timespec ts = {0, 2000000};
                nanosleep(&ts, NULL);
            }
        }
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd_slow = {region_slow, "rt_loop_dynamic.c:90 (main)", 0};
static OMPDSM_region *regions[] = {&rd, &rd_slow};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_loop_dynamic.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 2, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static void check_partition(const struct frame *f, int T)
{
    unsigned long long n = f->n;
    CHECK_EQ_LL(*g_count, (long long)n, "iterations run");
    CHECK_EQ_LL(*g_sum, (long long)(n * (n ? n - 1 : 0) / 2), "sum of k");
    long long unowned = 0;
    for (unsigned long long k = 0; k < n; k++)
        unowned += !(*g_owner)[k] || (*g_owner)[k] > T;
    CHECK(!unowned, "%lld iterations without a valid owner", unowned);
    if (T == 1)
        return;
    /* Walk the blocks in claim order: they must tile 0..n-1. */
    unsigned long long k = 0, prev = ~0ull;
    int blocks = 0;
    while (k < n) {
        int sz = (*g_size)[k];
        if (sz <= 0) {
            rtt_fail("no block starts at %llu (n=%llu)", k, n);
            return;
        }
        if (f->sched == OMPDSM_SCHED_GUIDED)
            CHECK((unsigned long long)sz <= prev || k + sz == n,
                  "guided: block at %llu of %d after one of %llu", k, sz, prev);
        prev = (unsigned long long)sz;
        k += (unsigned long long)sz;
        blocks++;
    }
    CHECK(k == n, "blocks end at %llu, n=%llu", k, n);
    if (f->sched == OMPDSM_SCHED_DYNAMIC) {
        unsigned long long c = f->chunk > 0 ? (unsigned long long)f->chunk : 1;
        CHECK_EQ_LL(blocks, (long long)((n + c - 1) / c), "dynamic blocks");
    }
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_loop_dynamic", 45);
    int T = omp_get_max_threads();
    unsigned long long ns[] = {0, 1, (unsigned long long)T - 1, 7, 1000};
    struct {
        int sched;
        long long chunk;
    } cfg[] = {
        {OMPDSM_SCHED_DYNAMIC, 0},  {OMPDSM_SCHED_DYNAMIC, 1},
        {OMPDSM_SCHED_DYNAMIC, 4},  {OMPDSM_SCHED_DYNAMIC, 13},
        {OMPDSM_SCHED_GUIDED, 0},   {OMPDSM_SCHED_GUIDED, 1},
        {OMPDSM_SCHED_GUIDED, 5},   {OMPDSM_SCHED_PROFILED, 0},
        {OMPDSM_SCHED_PROFILED, 3},
    };
    int loops = 0;
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            struct frame f = {ns[j], cfg[i].sched, cfg[i].chunk};
            static char ph[96];
            snprintf(ph, sizeof ph, "sched %d chunk %lld n=%llu", f.sched,
                     f.chunk, f.n);
            rtt_phase(ph);
            memset(*g_owner, 0, sizeof *g_owner);
            memset(*g_size, 0, sizeof *g_size);
            *g_count = *g_sum = 0;
            OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
            check_partition(&f, T);
            loops++;
        }
    /* A long dynamic loop with chunk 1: many claims, all nodes racing. */
    rtt_phase("dynamic,1 n=2000");
    struct frame f = {NMAX, OMPDSM_SCHED_DYNAMIC, 1};
    memset(*g_owner, 0, sizeof *g_owner);
    memset(*g_size, 0, sizeof *g_size);
    *g_count = *g_sum = 0;
    OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
    check_partition(&f, T);
    if (T > 1) {
        rtt_phase("dynamic,1 with a slow thread 0");
        memset(*g_owner, 0, sizeof *g_owner);
        OMPDSM_parallel(&rd_slow, NULL, 0, 0, 1);
        int mine = 0, unowned = 0, share = NSLOW / T;
        for (int k = 0; k < NSLOW; k++) {
            mine += (*g_owner)[k] == 1;
            unowned += !(*g_owner)[k];
        }
        CHECK(!unowned, "%d iterations not run", unowned);
        CHECK(mine <= share * 3 / 4,
              "slow thread 0 ran %d of %d chunks (its node's share: %d)", mine,
              NSLOW, share);
    }
    char d[32];
    snprintf(d, sizeof d, "loops=%d", loops + 1);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
