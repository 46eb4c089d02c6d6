/* rt_loop_large.c - loops whose trip count does not fit in 40 bits (the ABI
 * takes n as unsigned long long): static, static with a large chunk,
 * dynamic with a large chunk and guided must still hand out every
 * iteration exactly once.  The body only adds up the blocks' sizes (the
 * iterations are not executed one by one).
 *
 * Documents a runtime bug: schedule(guided) hands out iterations several
 * times (and more than n in all) once n >= 2^40.  sched/dynamic.c keeps a
 * guided loop's next *iteration* in the low 40 bits of the claim word
 * (generation << 40 | value); claim() stores (gen << 40) | next with
 * next >= 2^40, which carries into the generation bits, and the claimers
 * then misread the word.  (dynamic counts chunks there, so it only breaks
 * with 2^40 chunks.)  The value field must hold any n, or such loops must
 * fall back to a representation that does. */
#include "rt_test.h"

static unsigned long long *g_total;
static long long *g_blocks;
static OMPDSM_global globals[] = {
    {(void **)&g_total, 8, 8, "total"},
    {(void **)&g_blocks, 8, 8, "blocks"},
};
static OMPDSM_loop_site site = {"rt_loop_large.c", 20, "region", 0};

struct frame {
    unsigned long long n;
    int sched;
    long long chunk;
};
static void region(void *fp)
{
    struct frame *f = fp;
    unsigned long long tot;
    long long blocks;
    OMPDSM_reduce_init(&tot, OMPDSM_TY_U64, OMPDSM_OP_ADD);
    OMPDSM_reduce_init(&blocks, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, f->n, f->sched, f->chunk, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi)) {
        CHECK(lo < hi && hi <= f->n, "block [%llu,%llu) of n=%llu", lo, hi,
              f->n);
        tot += hi - lo;
        if (++blocks > 2000) /* far more than any schedule needs here */
            break;
    }
    OMPDSM_red r[2] = {{g_total, &tot, OMPDSM_TY_U64, OMPDSM_OP_ADD},
                       {g_blocks, &blocks, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 2);
    OMPDSM_loop_end(&L, 0);
}
static OMPDSM_region rd = {region, "rt_loop_large.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_loop_large.c", globals, 2,
                           0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_loop_large", 20);
    const unsigned long long n = (1ULL << 41) + 12345;
    struct { int sched; long long chunk; const char *what; } cfg[] = {
        {OMPDSM_SCHED_STATIC, 0, "static"},
        {OMPDSM_SCHED_STATIC, 1LL << 37, "static,2^37"},
        {OMPDSM_SCHED_DYNAMIC, 1LL << 36, "dynamic,2^36"},
        {OMPDSM_SCHED_GUIDED, 1LL << 30, "guided,2^30"},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++) {
        rtt_phase(cfg[i].what);
        *g_total = 0;
        *g_blocks = 0;
        struct frame f = {n, cfg[i].sched, cfg[i].chunk};
        OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
        CHECK(*g_total == n, "%s over n = 2^41 + 12345: %llu iterations handed "
              "out in %lld blocks", cfg[i].what, *g_total, *g_blocks);
    }
    return rtt_end("n=2^41+12345");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
