/* rt_ordered.c - loops with an ordered clause: OMPDSM_loop_iter at every
 * iteration and an ordered region (OMPDSM_ordered_start/end, here in a
 * separate function as an orphaned `ordered` would be) that appends the
 * iteration to a shared log.  The log must hold 0..n-1 in order: the
 * regions ran in iteration order and each saw the previous one's writes.
 * Under static, static with chunk, dynamic and guided, for several n, and
 * two ordered loops back to back with nowait. */
#include "rt_test.h"

enum { NMAX = 300 };

static int (*g_log)[2][NMAX];
static int (*g_pos)[2];
static long long *g_work;
static OMPDSM_global globals[] = {
    {(void **)&g_log, sizeof *g_log, __alignof__(*g_log), "log"},
    {(void **)&g_pos, sizeof *g_pos, __alignof__(*g_pos), "pos"},
    {(void **)&g_work, 8, 8, "work"},
};
static OMPDSM_loop_site site1 = {"rt_ordered.c", 30, "region", 0};
static OMPDSM_loop_site site2 = {"rt_ordered.c", 40, "region", 0};

/* The orphaned ordered region. */
static void append(int which, int k)
{
    OMPDSM_ordered_start();
    int p = (*g_pos)[which];
    if (p < NMAX)
        (*g_log)[which][p] = k;
    (*g_pos)[which] = p + 1;
    OMPDSM_ordered_end();
}

struct frame {
    unsigned long long n;
    int sched;
    long long chunk;
    int twice;
};
static void region(void *fp)
{
    struct frame *f = fp;
    long long w;
    OMPDSM_reduce_init(&w, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site1, f->n, f->sched, f->chunk, 0, 0,
                     OMPDSM_LOOP_ORDERED);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            OMPDSM_loop_iter(&L, k);
            w += (long long)k * 2; /* unordered part of the body */
            append(0, (int)k);
        }
    OMPDSM_loop_end(&L, f->twice);
    if (f->twice) {
        OMPDSM_loop_init(&L, &site2, f->n, f->sched, f->chunk, 0, 0,
                         OMPDSM_LOOP_ORDERED);
        while (OMPDSM_loop_next(&L, &lo, &hi))
            for (unsigned long long k = lo; k < hi; k++) {
                OMPDSM_loop_iter(&L, k);
                append(1, (int)(f->n - 1 - k));
            }
        OMPDSM_loop_end(&L, 0);
    }
    OMPDSM_red r[1] = {{g_work, &w, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
}
static OMPDSM_region rd = {region, "rt_ordered.c:45 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_ordered.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_ordered", 20);
    int T = omp_get_max_threads();
    struct { int sched; long long chunk; } sc[] = {
        {OMPDSM_SCHED_STATIC, 0}, {OMPDSM_SCHED_STATIC, 1},
        {OMPDSM_SCHED_STATIC, 3}, {OMPDSM_SCHED_DYNAMIC, 1},
        {OMPDSM_SCHED_DYNAMIC, 4}, {OMPDSM_SCHED_GUIDED, 2},
    };
    unsigned long long ns[] = {0, 1, (unsigned long long)T + 2, 150};
    int loops = 0;
    for (size_t s = 0; s < sizeof sc / sizeof *sc; s++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            struct frame f = {ns[j], sc[s].sched, sc[s].chunk, j == 2};
            static char ph[80];
            snprintf(ph, sizeof ph, "ordered sched %d,%lld n=%llu", f.sched,
                     f.chunk, f.n);
            rtt_phase(ph);
            memset(*g_log, 0xff, sizeof *g_log);
            (*g_pos)[0] = (*g_pos)[1] = 0;
            *g_work = 0;
            OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
            loops += 1 + f.twice;
            for (int which = 0; which <= f.twice; which++) {
                CHECK((*g_pos)[which] == (int)f.n, "%s loop %d: %d ordered "
                      "regions ran, expected %llu", ph, which,
                      (*g_pos)[which], f.n);
                int bad = -1;
                for (unsigned long long k = 0; k < f.n && k < NMAX; k++) {
                    int want = which ? (int)(f.n - 1 - k) : (int)k;
                    if ((*g_log)[which][k] != want) {
                        bad = (int)k;
                        break;
                    }
                }
                CHECK(bad < 0, "%s loop %d: log[%d] = %d out of order",
                      ph, which, bad, bad < 0 ? 0 : (*g_log)[which][bad]);
            }
            CHECK_EQ_LL(*g_work, (long long)(f.n * (f.n ? f.n - 1 : 0)),
                        "unordered part");
        }
    char d[32];
    snprintf(d, sizeof d, "loops=%d", loops);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
