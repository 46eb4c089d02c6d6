/* bench/kernels/cgrand.c - conjugate gradients (Hestenes and Stiefel's
 * algorithm) on an unstructured sparse matrix, written as a user writes an
 * OpenMP solver (cgsolve.h: every vector loop and the matrix-vector product
 * `schedule(profiled)`, dot products as reductions).  Not the NPB-like
 * cg.c: its matrix, sizes and outer loop are this file's own.
 *
 * The matrix: each row i draws EDGES columns j != i from a seeded linear
 * congruential generator (Knuth's MMIX constants), anywhere in 0..N-1, and
 * both a_ij and a_ji are set, so the pattern is symmetric, rows differ in
 * length (EDGES plus however many rows drew i) and a mat-vec row reads x
 * at pages all over the vector: no node owns the x its rows read.  A pair
 * drawn twice is summed.  Off the diagonal a_ij = -(0.1 + h(i, j)) with h
 * a symmetric hash in [0, 0.9); the diagonal is the row's absolute
 * off-diagonal sum plus 1 + (i % 10) / 10, so A is symmetric and strictly
 * diagonally dominant with a positive diagonal, hence positive definite.
 * Classes: S 20,000 rows x 6 solves x 25 steps (tests), A 200,000 rows x
 * 24 x 25, both with EDGES 6 (13 entries a row on average). */
#include <math.h>
#include <stdint.h>
#include "kernel.h"

#define EDGES 6
/* Each draw makes two entries, each row has its diagonal. */
#define NZMAX (N * (2 * EDGES + 1))

#include "cgsolve.h"

static int edge[N][EDGES];
static int deg[N];

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static double entry(int i, int j)
{
    uint64_t lo = (uint64_t)(i < j ? i : j), hi = (uint64_t)(i < j ? j : i);
    uint64_t h = (lo * 2654435761u) ^ (hi * 40503u);
    return -(0.1 + 0.9 * (double)(h % 1000) / 1000.0);
}

/* Draw the edges, count each row's entries, then fill the rows in column
 * order (row i's columns come from its own draws and from the rows that
 * drew i, in increasing row order); serial, untimed. */
static void build(void)
{
    uint64_t seed = 271828183;
    for (int i = 0; i < N; i++)
        for (int e = 0; e < EDGES; e++) {
            int j;
            do
                j = (int)(lcg(&seed) % N);
            while (j == i);
            edge[i][e] = j;
        }
    for (int i = 0; i < N; i++) {
        deg[i] += EDGES + 1;
        for (int e = 0; e < EDGES; e++)
            deg[edge[i][e]]++;
    }
    rowptr[0] = 0;
    for (int i = 0; i < N; i++) {
        rowptr[i + 1] = rowptr[i] + deg[i];
        deg[i] = 0; /* now the entries filled so far */
    }
    for (int i = 0; i < N; i++) {
        col[rowptr[i] + deg[i]++] = i;
        for (int e = 0; e < EDGES; e++) {
            int j = edge[i][e];
            col[rowptr[i] + deg[i]++] = j;
            col[rowptr[j] + deg[j]++] = i;
        }
    }
    for (int i = 0; i < N; i++) {
        double off = 0.0;
        int diag = -1;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
            if (col[k] == i && diag < 0) {
                diag = k;
                continue;
            }
            val[k] = entry(i, col[k]);
            off += fabs(val[k]);
        }
        val[diag] = off + 1.0 + 0.1 * (double)(i % 10);
    }
}

int main(void)
{
    build();
    return cg_run("cgrand", STR(CLASS));
}
