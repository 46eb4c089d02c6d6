/* tests/dsm/stress.c - a randomized, seeded stress test: in every epoch each
 * writer (each thread of each node; T_THREADS threads per node, default 1)
 * writes pseudo-random locations it owns in this epoch (ownership is a
 * seeded permutation, so writers are disjoint but share pages and words),
 * on globals and on malloc'd memory; after the barrier every thread of
 * every node checks every location against a model that every node
 * computes itself. */
#include "dsmtest.h"

#include <string.h>

enum { N = 200000, EPOCHS = 25 };

static uint64_t seed;
static int TH;
static uint32_t *glob, *model;
static uint16_t *heap, *hmodel;
static pthread_barrier_t bar;

static uint64_t owner_seed(int e) { return 0x1234567ull * (uint64_t)(e + 1); }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int gid = T_rank * TH + t, total = T_size * TH;
    for (int e = 0; e < EPOCHS; e++) {
        struct t_rng pick = {seed * 977 + (uint64_t)e};
        int writes = N / 8;
        for (int w = 0; w < writes; w++) {
            uint64_t r = t_next(&pick);
            uint32_t loc = (uint32_t)(r % N);
            int who = (int)((loc ^ owner_seed(e)) % (uint64_t)total);
            uint32_t v = (uint32_t)(r >> 32);
            /* Thread 0 of every node updates the model; only the owner
             * writes memory. */
            if (t == 0) {
                model[loc] = v;
                hmodel[loc] = (uint16_t)(v >> 7);
            }
            if (who == gid) {
                glob[loc] = v;
                heap[loc] = (uint16_t)(v >> 7);
            }
        }
        /* Ownership must be disjoint: two picks of one location in an epoch
         * are written by the same owner in pick order, as in the model. */
        t_node_barrier(&bar, t);
        for (uint32_t i = 0; i < N; i++) {
            if (glob[i] != model[i])
                T_FAIL("epoch %d thread %d glob[%u] = %u, expected %u", e, t,
                       i, glob[i], model[i]);
            if (heap[i] != hmodel[i])
                T_FAIL("epoch %d thread %d heap[%u] = %u, expected %u", e, t,
                       i, heap[i], hmodel[i]);
        }
        t_node_barrier(&bar, t);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 42;
    TH = t_threads();
    t_start(N * sizeof(uint32_t), (void **)&glob);
    model = calloc(N, sizeof *model);
    /* A malloc'd array too, allocated by node 0 (block-distributed homes). */
    hmodel = calloc(N, sizeof *hmodel);
    if (T_rank == 0)
        heap = dsm_calloc(N, sizeof *heap);
    uint64_t hp = (uint64_t)(uintptr_t)heap;
    comm_bcast(COMM_WORLD, 0, &hp, sizeof hp);
    heap = (uint16_t *)(uintptr_t)hp;
    t_barrier();
    t_run_threads(TH, &bar, worker);
    free(model);
    free(hmodel);
    return t_finish();
}
