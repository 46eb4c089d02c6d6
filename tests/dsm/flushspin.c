/* tests/dsm/flushspin.c - the cost of a spin on a flag (issue 19): a ring
 * of nodes hands a token as NPB LU's pipeline does (write data, flush,
 * write a flag, flush; the successor spins on `flush; read flag`, flushes
 * once more and reads the data).  Besides the data, each node checks from
 * its own statistics that its spinning flushes, which have nothing to
 * publish, made no release and walked no log when they found nothing new:
 *   - releases at most 3 + 1 per other node per round (the two flushes
 *     that publish, and a spin that finds a home page of ours fetched by
 *     another node since its notice), however many times the node spun
 *     (before: one per flush);
 *   - flushes counted idle (dsm_flush_idle) at least the spins less the
 *     ones that can find another node's release or publish a fetched
 *     home page (3 per other node and 1 per round);
 *   - log reads at most 3 per other node and 3 per round, and diffs at
 *     most 3 per page written and round.
 * Before the flush fast path of issue 19, when every flush released, it
 * failed with "spinning flushes release" and "0 of N spinning flushes
 * idle". */
#include "dsmtest.h"

enum { ROUNDS = 40, BLOCK = 3000 };

struct g {
    volatile int64_t flag[64][8]; /* flag of node r: last round handed */
    int64_t data[64][2][BLOCK];   /* double-buffered by round */
};

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    int prev = (T_rank + T_size - 1) % T_size;
    if (T_size > 64)
        return 77;
    struct dsm_stats s0, s1;
    t_barrier();
    dsm_stats_get(&s0);
    long spins = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        if (T_rank != 0 || round > 1) {
            int64_t want = T_rank == 0 ? round - 1 : round;
            long n = 0;
            for (;;) {
                if (T_rank % 2)
                    dsm_flush_range((const void *)&g->flag[prev][0], 8);
                else
                    dsm_flush();
                if (g->flag[prev][0] >= want)
                    break;
                spins++;
                if (++n > 20000000)
                    T_FAIL("round %d: no progress waiting for node %d", round, prev);
            }
            dsm_flush();
            for (int k = 0; k < BLOCK; k++)
                if (g->data[prev][want % 2][k] !=
                    (int64_t)prev * 1000000 + want * 1000 + k) {
                    T_FAIL("round %d: data[%d][%lld][%d] = %lld", round, prev,
                           (long long)(want % 2), k,
                           (long long)g->data[prev][want % 2][k]);
                    break;
                }
        }
        for (int k = 0; k < BLOCK; k++)
            g->data[T_rank][round % 2][k] =
                (int64_t)T_rank * 1000000 + round * 1000 + k;
        dsm_flush();
        g->flag[T_rank][0] = round;
        dsm_flush();
    }
    dsm_stats_get(&s1);
    uint64_t rel = s1.releases - s0.releases, idle = s1.flush_idle - s0.flush_idle;
    uint64_t reads = s1.log_reads - s0.log_reads, diffs = s1.diffs - s0.diffs;
    uint64_t fl = s1.flushes - s0.flushes;
    long others = T_size - 1;
    printf("node %d: %d rounds, %ld spins, %llu flushes, %llu releases, "
           "%llu idle, %llu log reads, %llu diffs\n",
           T_rank, ROUNDS, spins, (unsigned long long)fl, (unsigned long long)rel,
           (unsigned long long)idle, (unsigned long long)reads,
           (unsigned long long)diffs);
    if (T_size > 1) {
        if ((long)rel > (3 + others) * ROUNDS + 2)
            T_FAIL("%llu releases in %d rounds (%ld spins): spinning flushes "
                   "release", (unsigned long long)rel, ROUNDS, spins);
        long slack = (3 * others + 1) * ROUNDS + 2;
        if (spins > slack && (long)idle < spins - slack)
            T_FAIL("%llu of %ld spinning flushes idle", (unsigned long long)idle,
                   spins);
        if ((long)reads > slack + 2 * ROUNDS)
            T_FAIL("%llu log reads in %d rounds", (unsigned long long)reads,
                   ROUNDS);
        /* (one block and the flag: at most 4 pages of 64 KiB) */
        if (diffs > 3 * 4 * ROUNDS)
            T_FAIL("%llu diffs in %d rounds", (unsigned long long)diffs, ROUNDS);
    }
    t_barrier();
    return t_finish();
}
