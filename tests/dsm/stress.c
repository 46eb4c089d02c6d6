/* tests/dsm/stress.c - a randomized, seeded stress test: in every epoch each
 * node writes pseudo-random locations it owns in this epoch (ownership is a
 * seeded permutation, so writers are disjoint but share pages and words),
 * on globals and on malloc'd memory; after the barrier every node checks
 * every location against a model that every node computes itself. */
#include "dsmtest.h"

#include <string.h>

enum { N = 200000, EPOCHS = 25 };

static uint64_t owner_seed(int e) { return 0x1234567ull * (uint64_t)(e + 1); }

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 42;
    uint32_t *glob;
    t_start(N * sizeof(uint32_t), (void **)&glob);
    uint32_t *model = calloc(N, sizeof *model);
    /* A malloc'd array too, allocated by node 0 (block-distributed homes). */
    uint16_t *hmodel = calloc(N, sizeof *hmodel);
    uint16_t *heap = NULL;
    if (T_rank == 0)
        heap = dsm_calloc(N, sizeof *heap);
    uint64_t hp = (uint64_t)(uintptr_t)heap;
    comm_bcast(COMM_WORLD, 0, &hp, sizeof hp);
    heap = (uint16_t *)(uintptr_t)hp;
    t_barrier();
    for (int e = 0; e < EPOCHS; e++) {
        struct t_rng pick = {seed * 977 + (uint64_t)e};
        int writes = N / 8;
        for (int w = 0; w < writes; w++) {
            uint64_t r = t_next(&pick);
            uint32_t loc = (uint32_t)(r % N);
            int who = (int)((loc ^ owner_seed(e)) % (uint64_t)T_size);
            uint32_t v = (uint32_t)(r >> 32);
            /* Every node updates the model; only the owner writes memory. */
            model[loc] = v;
            hmodel[loc] = (uint16_t)(v >> 7);
            if (who == T_rank) {
                glob[loc] = v;
                heap[loc] = (uint16_t)(v >> 7);
            }
        }
        /* Ownership must be disjoint: two picks of one location in an epoch
         * are written by the same owner in pick order, as in the model. */
        t_barrier();
        for (uint32_t i = 0; i < N; i++) {
            if (glob[i] != model[i])
                T_FAIL("epoch %d glob[%u] = %u, expected %u", e, i, glob[i], model[i]);
            if (heap[i] != hmodel[i])
                T_FAIL("epoch %d heap[%u] = %u, expected %u", e, i, heap[i], hmodel[i]);
        }
        t_barrier();
    }
    free(model);
    free(hmodel);
    return t_finish();
}
