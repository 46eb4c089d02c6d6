/* tests/dsm/wd.c - software write detection (OMPDSM_WD=on) at the DSM
 * level, the program marking its own stores as ompcc's pass would
 * (OMPDSM_wd_mark before and after each store):
 * - nodes write interleaved doubles, ints and bytes of shared pages
 *   between barriers (false sharing inside pages and inside words): every
 *   value is checked against the model after each barrier, and no write
 *   may fault or make a twin;
 * - lock-protected increments of counters on one page reach every node;
 * - a "call" the pass did not see, inside OMPDSM_wd_guard/unguard, writes
 *   a block with memset and no marks: the other nodes must see it;
 * - with argument "unmarked" (run with OMPDSM_WD=check), node 1 writes one
 *   double without a mark: the job must fail naming the missed write
 *   (wd_check_catches in meson.build expects that failure).
 * Fails before write detection: with the marks ignored, no value written
 * by another node arrives, and the first check names it. */
#include "dsmtest.h"

#include <stdarg.h>

/* The ABI the pass targets (runtime/ompdsm_abi.h declares it). */
extern unsigned long OMPDSM_wd_size;
unsigned long OMPDSM_wd_guard(void *callee, unsigned n, ...);
void OMPDSM_wd_unguard(unsigned long token);

enum { ND = 3 * 8192 + 100, NI = 20000, NB = 70000, ROUNDS = 12, NCNT = 16,
       ITERS = 40, BLK = 3 * 65536 + 17 };

struct g {
    double d[ND];
    int32_t i[NI];
    unsigned char b[NB];
    int64_t cnt[NCNT];
    unsigned char blk[BLK];
};

static double dv(int r, int k) { return r * 1000.5 + k; }
static int32_t iv(int r, int k) { return r * 7919 + k; }
static unsigned char bv(int r, int k) { return (unsigned char)(r * 31 + k); }

/* Stands for code compiled without the pass (a libc call). */
static void __attribute__((noinline)) unseen(void *p, int c, size_t n)
{
    memset(p, c, n);
}

int main(int argc, char **argv)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    int me = T_rank, n = T_size;
    const char *asked = getenv("OMPDSM_WD");
    int expect_on = asked && !strcmp(asked, "on");
    if (asked && (!OMPDSM_wd_size || strcmp(dsm_wd_mode_name(), asked)))
        T_FAIL("OMPDSM_WD=%s, but write detection is %s", asked,
               dsm_wd_mode_name());
    if (argc > 1 && !strcmp(argv[1], "unmarked")) {
        t_barrier();
        if (me == 1)
            g->d[ND - 1] = 42.0; /* no mark */
        t_barrier();
        printf("node %d: the unmarked write was not caught\n", me);
        return 1;
    }
    struct dsm_stats s0, s1;
    t_barrier();
    dsm_stats_get(&s0);
    for (int r = 1; r <= ROUNDS; r++) {
        for (int k = me; k < ND; k += n)
            T_WD_STORE(g->d[k], dv(r, k));
        for (int k = me; k < NI; k += n)
            T_WD_STORE(g->i[k], iv(r, k));
        for (int k = me; k < NB; k += n)
            T_WD_STORE(g->b[k], bv(r, k));
        t_barrier();
        int bad = 0;
        for (int k = 0; k < ND && bad < 3; k++)
            if (g->d[k] != dv(r, k) && ++bad)
                T_FAIL("round %d: d[%d] = %g, expected %g", r, k, g->d[k], dv(r, k));
        for (int k = 0; k < NI && bad < 3; k++)
            if (g->i[k] != iv(r, k) && ++bad)
                T_FAIL("round %d: i[%d] = %d, expected %d", r, k, g->i[k], iv(r, k));
        for (int k = 0; k < NB && bad < 3; k++)
            if (g->b[k] != bv(r, k) && ++bad)
                T_FAIL("round %d: b[%d] = %u, expected %u", r, k, g->b[k], bv(r, k));
        t_barrier();
    }
    dsm_stats_get(&s1);
    printf("node %d: %d rounds: %llu faults, %llu protection changes, %llu "
           "pushes, %llu invalidations, %llu updates\n", me, ROUNDS,
           (unsigned long long)(s1.read_faults + s1.write_faults -
                                s0.read_faults - s0.write_faults),
           (unsigned long long)(s1.protects - s0.protects),
           (unsigned long long)(s1.pushes - s0.pushes),
           (unsigned long long)(s1.invalidations - s0.invalidations),
           (unsigned long long)(s1.updates - s0.updates));
    const char *push = getenv("OMPDSM_PUSH");
    if (expect_on && push && !strcmp(push, "on") && s1.pushes == s0.pushes)
        T_FAIL("OMPDSM_PUSH=on, but node %d pushed nothing in %d rounds of "
               "reads of every node's writes", me, ROUNDS);
    if (expect_on && (s1.write_faults != s0.write_faults || s1.twins != s0.twins))
        T_FAIL("write detection on, but writes faulted: %llu write faults, "
               "%llu twins", (unsigned long long)(s1.write_faults - s0.write_faults),
               (unsigned long long)(s1.twins - s0.twins));

    /* Locks. */
    uint32_t lk = T_LOCK_BASE + 3;
    for (int it = 0; it < ITERS; it++) {
        dsm_lock(lk);
        for (int c = 0; c < NCNT; c++)
            T_WD_STORE(g->cnt[c], g->cnt[c] + c + 1);
        dsm_unlock(lk);
    }
    t_barrier();
    for (int c = 0; c < NCNT; c++)
        if (g->cnt[c] != (int64_t)n * ITERS * (c + 1))
            T_FAIL("counter %d = %lld, expected %lld", c, (long long)g->cnt[c],
                   (long long)n * ITERS * (c + 1));

    /* A guarded call writes a block without marks. */
    for (int r = 1; r <= 3; r++) {
        if (me == (r % n)) {
            unsigned long tok = OMPDSM_wd_guard((void *)unseen, 1, g->blk + 5);
            if (expect_on && !tok)
                T_FAIL("the guard of a heap pointer did nothing");
            unseen(g->blk + 5, r, BLK - 10);
            OMPDSM_wd_unguard(tok);
        }
        t_barrier();
        for (int k = 0; k < BLK; k++) {
            int want = k < 5 || k >= BLK - 5 ? 0 : r;
            if (g->blk[k] != want) {
                T_FAIL("guard round %d: blk[%d] = %d, expected %d", r, k,
                       g->blk[k], want);
                break;
            }
        }
        t_barrier();
    }
    return t_finish();
}
