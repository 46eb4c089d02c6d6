/* tests/dsm/atomic.c - atomics on shared words at their homes: counters of
 * every width (including bytes sharing a word with other nodes' bytes),
 * and a read of one's own atomic update right after it. */
#include "dsmtest.h"

#include <string.h>

enum { ROUNDS = 300 };

struct g {
    int64_t c64;
    int32_t c32[2];
    uint8_t bytes[64];   /* byte r belongs to node r: words shared */
    double d;
};

static void add64(void *v, const void *a) { *(int64_t *)v += *(const int64_t *)a; }
static void add32(void *v, const void *a) { *(int32_t *)v += *(const int32_t *)a; }
static void inc8(void *v, const void *a) { (void)a; *(uint8_t *)v += 1; }
static void addd(void *v, const void *a) { *(double *)v += *(const double *)a; }

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    int64_t one = 1;
    int32_t two = 2;
    double half = 0.5;
    for (int i = 0; i < ROUNDS; i++) {
        int64_t after;
        dsm_atomic_update(&g->c64, 8, add64, &one, NULL, &after);
        dsm_atomic_update(&g->c32[1], 4, add32, &two, NULL, NULL);
        if (T_rank < 64)
            dsm_atomic_update(&g->bytes[T_rank], 1, inc8, NULL, NULL, NULL);
        dsm_atomic_update(&g->d, 8, addd, &half, NULL, NULL);
        /* Our own update is visible to us at once. */
        if (T_rank < 64 && g->bytes[T_rank] != (uint8_t)(i + 1))
            T_FAIL("round %d: own byte reads %u", i, g->bytes[T_rank]);
        if (after < i + 1)
            T_FAIL("round %d: counter went back to %lld", i, (long long)after);
    }
    t_barrier();
    if (g->c64 != (int64_t)ROUNDS * T_size)
        T_FAIL("c64 = %lld, expected %lld", (long long)g->c64, (long long)ROUNDS * T_size);
    if (g->c32[1] != 2 * ROUNDS * T_size || g->c32[0] != 0)
        T_FAIL("c32 = {%d, %d}", g->c32[0], g->c32[1]);
    for (int r = 0; r < T_size && r < 64; r++)
        if (g->bytes[r] != (uint8_t)ROUNDS)
            T_FAIL("byte %d = %u", r, g->bytes[r]);
    if (g->d != 0.5 * ROUNDS * T_size)
        T_FAIL("d = %g", g->d);
    return t_finish();
}
