/* tests/dsm/falseshare.c - multiple writers on the same pages: in every
 * epoch each node writes its own interleaved elements (bytes, ints and
 * doubles, so writers share words as well as pages), then after the barrier
 * every node checks every element. */
#include "dsmtest.h"

#include <string.h>

enum { NB = 3 * 4096 + 100, NI = 5000, ND = 3000, EPOCHS = 30 };

struct g {
    unsigned char bytes[NB];
    int ints[NI];
    double dbl[ND];
};

static unsigned char bval(int i, int e) { return (unsigned char)(i * 7 + e * 13 + 1); }
static int ival(int i, int e) { return i * 31 + e * 1000003; }
static double dval(int i, int e) { return i * 0.5 + e; }

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    for (int e = 0; e < EPOCHS; e++) {
        /* Owner of element i in epoch e rotates so every node's copy goes
         * stale somewhere every epoch. */
        for (int i = 0; i < NB; i++)
            if ((i + e) % T_size == T_rank)
                g->bytes[i] = bval(i, e);
        for (int i = 0; i < NI; i++)
            if ((i + e) % T_size == T_rank)
                g->ints[i] = ival(i, e);
        for (int i = 0; i < ND; i++)
            if ((i / 3 + e) % T_size == T_rank)
                g->dbl[i] = dval(i, e);
        t_barrier();
        for (int i = 0; i < NB; i++)
            if (g->bytes[i] != bval(i, e))
                T_FAIL("epoch %d byte %d: %u != %u", e, i, g->bytes[i], bval(i, e));
        for (int i = 0; i < NI; i++)
            if (g->ints[i] != ival(i, e))
                T_FAIL("epoch %d int %d: %d != %d", e, i, g->ints[i], ival(i, e));
        for (int i = 0; i < ND; i++)
            if (g->dbl[i] != dval(i, e))
                T_FAIL("epoch %d double %d: %g != %g", e, i, g->dbl[i], dval(i, e));
        /* Nobody may write the next epoch before everyone checked. */
        t_barrier();
    }
    return t_finish();
}
