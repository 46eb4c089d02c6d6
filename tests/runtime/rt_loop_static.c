/* rt_loop_static.c - static work-sharing loops: the exact thread of every
 * iteration for schedule(static) (blocks split as sched/sched.h documents:
 * the first n % T threads get one more) and schedule(static, c) (chunk j to
 * thread j % T, OpenMP's rule), each thread's iterations in increasing
 * order, OMPDSM_loop_last on the owner of iteration n-1 only, empty loops
 * and loops with fewer iterations than threads, and the schedule kinds that
 * fall back to static (no clause, auto). */
#include "rt_test.h"

enum { MAXT = 64, NMAX = 1000 };

static int (*g_owner)[NMAX];  /* tid + 1 of the thread that ran iteration k */
static long long *g_lasts;    /* threads that saw OMPDSM_loop_last */
static int *g_last_tid;
static OMPDSM_global globals[] = {
    {(void **)&g_owner, sizeof *g_owner, __alignof__(*g_owner), "owner"},
    {(void **)&g_lasts, 8, 8, "lasts"},
    {(void **)&g_last_tid, sizeof(int), __alignof__(int), "last_tid"},
};

static OMPDSM_loop_site site = {"rt_loop_static.c", 30, "region", 0};

struct frame {
    unsigned long long n;
    int sched;
    long long chunk;
};

/* Independent statement of the expected owner. */
static int expected_owner(unsigned long long n, long long chunk, int T,
                          unsigned long long k)
{
    if (chunk > 0)
        return (int)((k / (unsigned long long)chunk) % (unsigned long long)T);
    unsigned long long q = n / T, r = n % T;
    if (k < r * (q + 1))
        return (int)(k / (q + 1));
    return (int)(r + (k - r * (q + 1)) / q);
}

static void region(void *fp)
{
    struct frame *f = fp;
    int tid = omp_get_thread_num(), T = omp_get_num_threads();
    OMPDSM_loop L;
    unsigned long long lo, hi, prev = 0, mine = 0;
    int first = 1, blocks = 0;
    OMPDSM_loop_init(&L, &site, f->n, f->sched, f->chunk, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi)) {
        blocks++;
        CHECK(lo < hi && hi <= f->n, "block [%llu,%llu) of n=%llu", lo, hi,
              f->n);
        CHECK(first || lo >= prev, "blocks out of order: [%llu,%llu) after "
              "%llu", lo, hi, prev);
        if (f->chunk > 0 && f->sched == OMPDSM_SCHED_STATIC)
            CHECK(lo % (unsigned long long)f->chunk == 0 &&
                      (hi - lo == (unsigned long long)f->chunk || hi == f->n),
                  "static,%lld: block [%llu,%llu)", f->chunk, lo, hi);
        first = 0;
        for (unsigned long long k = lo; k < hi; k++) {
            (*g_owner)[k] = tid + 1;
            mine++;
        }
        prev = hi;
    }
    if (f->chunk <= 0)
        CHECK(blocks <= 1, "static without chunk: %d blocks", blocks);
    if (OMPDSM_loop_last(&L)) {
        long long one = 1;
        OMPDSM_atomic(g_lasts, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
        *g_last_tid = tid;
    }
    OMPDSM_loop_end(&L, 0);
    /* Every thread checks the whole mapping after the loop's barrier. */
    long long bad = 0;
    unsigned long long firstbad = 0;
    for (unsigned long long k = 0; k < f->n; k++)
        if ((*g_owner)[k] != expected_owner(f->n, f->chunk, T, k) + 1) {
            if (!bad)
                firstbad = k;
            bad++;
        }
    CHECK(!bad, "n=%llu chunk=%lld T=%d: %lld iterations on the wrong "
          "thread, first %llu on thread %d (expected %d)",
          f->n, f->chunk, T, bad, firstbad, (*g_owner)[firstbad] - 1,
          expected_owner(f->n, f->chunk, T, firstbad));
    (void)mine;
}
static OMPDSM_region rd = {region, "rt_loop_static.c:40 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_loop_static.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_loop_static", 40);
    int T = omp_get_max_threads();
    unsigned long long ns[] = {0, 1, (unsigned long long)T - 1,
                               (unsigned long long)T, (unsigned long long)T + 1,
                               97, NMAX};
    long long chunks[] = {0, 1, 3, 7, NMAX + 5};
    int scheds[] = {OMPDSM_SCHED_STATIC, OMPDSM_SCHED_DEFAULT,
                    OMPDSM_SCHED_AUTO};
    int loops = 0;
    for (size_t s = 0; s < 3; s++)
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
                if (s && c) /* default and auto take no chunk */
                    continue;
                struct frame f = {ns[i], scheds[s], chunks[c]};
                static char ph[96];
                snprintf(ph, sizeof ph, "sched %d n=%llu chunk=%lld",
                         scheds[s], f.n, f.chunk);
                rtt_phase(ph);
                memset(*g_owner, 0, sizeof *g_owner);
                *g_lasts = 0;
                *g_last_tid = -1;
                OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
                loops++;
                CHECK_EQ_LL(*g_lasts, f.n ? 1 : 0, "threads with loop_last");
                if (f.n)
                    CHECK_EQ_LL(*g_last_tid,
                                expected_owner(f.n, f.chunk, T, f.n - 1),
                                "lastprivate thread");
                for (unsigned long long k = f.n; k < NMAX; k++)
                    if ((*g_owner)[k]) {
                        rtt_fail("n=%llu: iteration %llu beyond n ran", f.n, k);
                        break;
                    }
            }
    char d[32];
    snprintf(d, sizeof d, "loops=%d", loops);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
