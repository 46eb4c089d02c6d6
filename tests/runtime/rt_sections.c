/* rt_sections.c - sections (OMPDSM_sections_init + a switch over section
 * numbers): every section exactly once whatever the team size (1, 2, 3, 7
 * and 20 sections), the thread that ran the last section is the one that
 * sees OMPDSM_loop_last (lastprivate), nowait followed by a barrier, and a
 * reduction over the sections. */
#include "rt_test.h"

enum { MAXS = 20 };

static long long (*g_runs)[MAXS];  /* atomic count per section */
static int (*g_by)[MAXS];          /* tid + 1 of the thread that ran it */
static int *g_last_tid;
static long long *g_lasts, *g_sum;
static OMPDSM_global globals[] = {
    {(void **)&g_runs, sizeof *g_runs, __alignof__(*g_runs), "runs"},
    {(void **)&g_by, sizeof *g_by, __alignof__(*g_by), "by"},
    {(void **)&g_last_tid, sizeof(int), __alignof__(int), "last_tid"},
    {(void **)&g_lasts, 8, 8, "lasts"},
    {(void **)&g_sum, 8, 8, "sum"},
};
static OMPDSM_loop_site site = {"rt_sections.c", 25, "region", 0};

struct frame {
    unsigned nsec;
    int nowait;
};

static void section_body(int k, long long *sum)
{
    long long one = 1;
    OMPDSM_atomic(&(*g_runs)[k], OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
    (*g_by)[k] = omp_get_thread_num() + 1;
    *sum += (k + 1) * (k + 1);
}

static void region(void *fp)
{
    struct frame *f = fp;
    long long sum;
    OMPDSM_reduce_init(&sum, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_sections_init(&L, &site, f->nsec);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            switch (k) {
            case 0: section_body(0, &sum); break;
            case 1: section_body(1, &sum); break;
            case 2: section_body(2, &sum); break;
            default:
                if (k < MAXS)
                    section_body((int)k, &sum);
                else
                    rtt_fail("section %llu of %u", k, f->nsec);
                break;
            }
    if (OMPDSM_loop_last(&L)) {
        *g_last_tid = omp_get_thread_num();
        long long one = 1;
        OMPDSM_atomic(g_lasts, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
    }
    OMPDSM_red r[1] = {{g_sum, &sum, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
    OMPDSM_loop_end(&L, f->nowait);
    if (f->nowait)
        OMPDSM_barrier();
    /* After the barrier every thread sees every section's effects. */
    for (unsigned k = 0; k < f->nsec; k++)
        CHECK((*g_runs)[k] == 1, "%u sections: section %u ran %lld times "
              "(seen by thread %d)", f->nsec, k, (*g_runs)[k],
              omp_get_thread_num());
}
static OMPDSM_region rd = {region, "rt_sections.c:40 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_sections.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_sections", 40);
    unsigned ns[] = {1, 2, 3, 7, 20};
    int constructs = 0;
    for (int rep = 0; rep < 3; rep++)
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            for (int nowait = 0; nowait < 2; nowait++) {
                struct frame f = {ns[i], nowait};
                memset(*g_runs, 0, sizeof *g_runs);
                memset(*g_by, 0, sizeof *g_by);
                *g_last_tid = -1;
                *g_lasts = *g_sum = 0;
                OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
                constructs++;
                long long want = 0;
                for (unsigned k = 0; k < f.nsec; k++)
                    want += (long long)(k + 1) * (k + 1);
                CHECK_EQ_LL(*g_sum, want, "reduction over sections");
                CHECK_EQ_LL(*g_lasts, 1, "threads seeing loop_last");
                CHECK(*g_last_tid + 1 == (*g_by)[f.nsec - 1],
                      "%u sections: loop_last on thread %d, the last section "
                      "ran on thread %d", f.nsec, *g_last_tid,
                      (*g_by)[f.nsec - 1] - 1);
                for (unsigned k = f.nsec; k < MAXS; k++)
                    CHECK((*g_runs)[k] == 0, "section %u of %u ran", k, f.nsec);
            }
    char d[32];
    snprintf(d, sizeof d, "constructs=%d", constructs);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
