/* tests/dsm/flush.c - flush-based handoff, as NPB LU's pipeline does it: a
 * node writes a block of data, then a flag, with flushes between; its
 * successor spins on `flush; read flag`, flushes once more, and must then
 * see the data.  A ring
 * of nodes passes a token this way many times; also flush_range. */
#include "dsmtest.h"

enum { ROUNDS = 40, BLOCK = 3000 };

struct g {
    volatile int64_t flag[64][8];     /* flag of node r: last round handed */
    /* Double-buffered by round: a writer can be one round ahead of the
     * reader of its previous round, never two. */
    int64_t data[64][2][BLOCK];
};

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    int next = (T_rank + 1) % T_size, prev = (T_rank + T_size - 1) % T_size;
    if (T_size > 64)
        return 77;
    for (int round = 1; round <= ROUNDS; round++) {
        /* Node 0 starts each round; others wait for their predecessor. */
        if (T_rank != 0 || round > 1) {
            int64_t want = T_rank == 0 ? round - 1 : round;
            long spins = 0;
            for (;;) {
                if (T_rank % 2)
                    dsm_flush_range((const void *)&g->flag[prev][0], 8);
                else
                    dsm_flush();
                if (g->flag[prev][0] >= want)
                    break;
                if (++spins > 20000000)
                    T_FAIL("round %d: no progress waiting for node %d", round, prev);
            }
            /* As OpenMP requires (and NPB LU does): a flush after seeing the
             * flag, before reading what was written before it.  Without it a
             * node that is home of the flag's page sees the flag as soon as
             * the writer's diff lands, before it acquired the data. */
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
        (void)next;
        if (T_size == 1)
            continue;
    }
    t_barrier();
    return t_finish();
}
