/* bench/kernels/cgband.c - conjugate gradients (Hestenes and Stiefel's
 * algorithm) on a banded sparse matrix, written as a user writes an OpenMP
 * solver: every vector loop and the matrix-vector product are
 * `schedule(profiled)`, dot products are reductions.  Not the NPB-like
 * cg.c: its matrix, sizes and outer loop are this file's own.
 *
 * The matrix: N rows of 13 entries (fewer at the ends), in compressed-row
 * storage.  Row i has its diagonal and 6 pairs of off-diagonals at -+d,
 * the offsets d taken from one of three sets by i % 3, so that
 * neighbouring rows reach different distances (up to 309 rows away) and a
 * mat-vec row reads x at 13 scattered places.  Every offset is a multiple
 * of 3, so row i + d is in i's class and has -d: the pattern is symmetric.
 * Off the diagonal a_ij = -1 / (1 + (i + j) % 7) (symmetric), and the
 * diagonal is the row's absolute off-diagonal sum plus 1 + (i % 10) / 10,
 * so A is symmetric and strictly diagonally dominant with a positive
 * diagonal, hence positive definite.
 *
 * The solver, its run and verification are cgsolve.h's.  Classes: S 20,000
 * rows x 6 solves x 25 steps (tests), A 200,000 rows x 24 x 25. */
#include <math.h>
#include "kernel.h"

#define PAIRS 6
#define NZMAX (N * (2 * PAIRS + 1))

#include "cgsolve.h"

static const int offs[3][PAIRS] = {
    {3, 6, 15, 33, 111, 303},
    {3, 9, 21, 57, 159, 309},
    {6, 12, 27, 87, 213, 300},
};

static double entry(int i, int j)
{
    return -1.0 / (1.0 + (double)((i + j) % 7));
}

/* Row i's pattern: the diagonal and i -+ d for its class's offsets, in
 * increasing column order; serial, untimed. */
static void build(void)
{
    int nz = 0;
    for (int i = 0; i < N; i++) {
        const int *o = offs[i % 3];
        double off = 0.0;
        int diag = 0;
        rowptr[i] = nz;
        for (int k = -PAIRS; k <= PAIRS; k++) {
            int j = k < 0 ? i - o[-k - 1] : k > 0 ? i + o[k - 1] : i;
            if (j < 0 || j >= N)
                continue;
            col[nz] = j;
            if (j == i) {
                diag = nz;
            } else {
                val[nz] = entry(i, j);
                off += fabs(val[nz]);
            }
            nz++;
        }
        val[diag] = off + 1.0 + 0.1 * (double)(i % 10);
    }
    rowptr[N] = nz;
}

int main(void)
{
    build();
    return cg_run("cgband", STR(CLASS));
}
