/* rt_sched_env.c - schedule(runtime) driven by OMP_SCHEDULE (meson runs it
 * with several values; argv gives the kind and chunk expected): every
 * thread's omp_get_schedule, every iteration exactly once, and the blocks
 * the kind implies (static,c: chunk j on thread j % T exactly; static:
 * one block per thread; dynamic,c: chunk-aligned blocks of c; guided,c:
 * at least c, at most max(c, ceil(remaining / T))). */
#include "rt_test.h"

enum { MAXT = 64, N = 777 };

static int (*g_owner)[N];
static long long *g_count, *g_sum;
static OMPDSM_global globals[] = {
    {(void **)&g_owner, sizeof *g_owner, __alignof__(*g_owner), "owner"},
    {(void **)&g_count, 8, 8, "count"},
    {(void **)&g_sum, 8, 8, "sum"},
};
static OMPDSM_loop_site site = {"rt_sched_env.c", 25, "region", 0};

struct frame {
    int kind;   /* omp_sched_t */
    int chunk;
};
static void region(void *fp)
{
    struct frame *f = fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    CHECK((int)kind == f->kind && chunk == f->chunk, "omp_get_schedule on "
          "thread %d: %d,%d; expected %d,%d", t, kind, chunk, f->kind,
          f->chunk);
    long long c, s;
    OMPDSM_reduce_init(&c, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_reduce_init(&s, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi, cc = f->chunk > 0 ? (unsigned long long)f->chunk : 1;
    int blocks = 0;
    OMPDSM_loop_init(&L, &site, N, OMPDSM_SCHED_RUNTIME, 0, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi)) {
        blocks++;
        unsigned long long sz = hi - lo, rem = N - lo;
        if (T > 1) {
            if (f->kind == omp_sched_static && f->chunk > 0)
                CHECK((lo / cc) % (unsigned long long)T == (unsigned long long)t
                          && lo % cc == 0 && (sz == cc || hi == N),
                      "static,%d: thread %d got [%llu,%llu)", f->chunk, t, lo,
                      hi);
            if (f->kind == omp_sched_dynamic)
                CHECK(lo % cc == 0 && (sz == cc || hi == N),
                      "dynamic,%d: block [%llu,%llu)", f->chunk, lo, hi);
            if (f->kind == omp_sched_guided) {
                unsigned long long share = (rem + (unsigned long long)T - 1) / T;
                CHECK((sz >= cc || hi == N) && sz <= (share > cc ? share : cc),
                      "guided,%d: block [%llu,%llu) with %llu left", f->chunk,
                      lo, hi, rem);
            }
        }
        for (unsigned long long k = lo; k < hi; k++) {
            (*g_owner)[k] = t + 1;
            c++;
            s += (long long)k;
        }
    }
    if (f->kind == omp_sched_static && f->chunk == 0)
        CHECK(blocks <= 1, "static: %d blocks on thread %d", blocks, t);
    OMPDSM_red r[2] = {{g_count, &c, OMPDSM_TY_I64, OMPDSM_OP_ADD},
                       {g_sum, &s, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 2);
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd = {region, "rt_sched_env.c:30 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_sched_env.c", globals, 3, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)envp;
    rtt_begin("rt_sched_env", 30);
    if (argc != 3) {
        rtt_fail("usage: rt_sched_env KIND CHUNK (expected from OMP_SCHEDULE)");
        return rtt_end("");
    }
    struct frame f = {atoi(argv[1]), atoi(argv[2])};
    const char *env = getenv("OMP_SCHEDULE");
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    CHECK((int)kind == f.kind && chunk == f.chunk, "OMP_SCHEDULE='%s': "
          "omp_get_schedule %d,%d; expected %d,%d", env ? env : "", kind,
          chunk, f.kind, f.chunk);
    for (int rep = 0; rep < 3; rep++) {
        *g_count = *g_sum = 0;
        memset(*g_owner, 0, sizeof *g_owner);
        OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*g_count, N, "iterations");
        CHECK_EQ_LL(*g_sum, (long long)N * (N - 1) / 2, "sum of iterations");
        int unowned = 0;
        for (int k = 0; k < N; k++)
            unowned += !(*g_owner)[k];
        CHECK(!unowned, "%d iterations never ran", unowned);
    }
    char d[64];
    snprintf(d, sizeof d, "OMP_SCHEDULE=%s", env ? env : "(unset)");
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
