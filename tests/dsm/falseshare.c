/* tests/dsm/falseshare.c - multiple writers on the same pages: in every
 * epoch each writer (each thread of each node; T_THREADS threads per node,
 * default 1) writes its own interleaved elements (bytes, ints and doubles,
 * so writers share words as well as pages, within a node and between
 * nodes), then after the barrier every thread of every node checks every
 * element. */
#include "dsmtest.h"

#include <string.h>

enum { NB = 3 * 4096 + 100, NI = 5000, ND = 3000, EPOCHS = 30 };

struct g {
    unsigned char bytes[NB];
    int ints[NI];
    double dbl[ND];
};

static struct g *g;
static int TH;
static pthread_barrier_t bar;

static unsigned char bval(int i, int e) { return (unsigned char)(i * 7 + e * 13 + 1); }
static int ival(int i, int e) { return i * 31 + e * 1000003; }
static double dval(int i, int e) { return i * 0.5 + e; }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int gid = T_rank * TH + t, total = T_size * TH;
    for (int e = 0; e < EPOCHS; e++) {
        /* Owner of element i in epoch e rotates so every node's copy goes
         * stale somewhere every epoch. */
        for (int i = 0; i < NB; i++)
            if ((i + e) % total == gid)
                g->bytes[i] = bval(i, e);
        for (int i = 0; i < NI; i++)
            if ((i + e) % total == gid)
                g->ints[i] = ival(i, e);
        for (int i = 0; i < ND; i++)
            if ((i / 3 + e) % total == gid)
                g->dbl[i] = dval(i, e);
        t_node_barrier(&bar, t);
        for (int i = 0; i < NB; i++)
            if (g->bytes[i] != bval(i, e))
                T_FAIL("epoch %d thread %d byte %d: %u != %u", e, t, i,
                       g->bytes[i], bval(i, e));
        for (int i = 0; i < NI; i++)
            if (g->ints[i] != ival(i, e))
                T_FAIL("epoch %d thread %d int %d: %d != %d", e, t, i,
                       g->ints[i], ival(i, e));
        for (int i = 0; i < ND; i++)
            if (g->dbl[i] != dval(i, e))
                T_FAIL("epoch %d thread %d double %d: %g != %g", e, t, i,
                       g->dbl[i], dval(i, e));
        /* Nobody may write the next epoch before everyone checked. */
        t_node_barrier(&bar, t);
    }
    return NULL;
}

int main(void)
{
    TH = t_threads();
    t_start(sizeof *g, (void **)&g);
    t_run_threads(TH, &bar, worker);
    return t_finish();
}
