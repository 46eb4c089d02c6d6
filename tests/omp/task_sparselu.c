/* a blocked sparse LU with a task per block operation (the algorithm of
   bench/kernels/sparselu.c at a test size): blocks allocated with malloc by
   the tasks that first update them (fill-in), on whatever node runs them,
   read by tasks of the next step after a taskwait.  Checked against the
   same factorisation run serially here (bit for bit: each block is written
   by one task per step, in step order), and prints a hash of the result's
   bits and the number of non-zero blocks, which must equal gcc's.  About
   40 of its 135 tasks run on other nodes at 2 and 4 nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#define NB 10
#define BS 12

typedef float block[BS][BS];
static block *A[NB][NB], *B[NB][NB];

static block *new_block(void)
{
    block *b = malloc(sizeof(block));
    if (!b)
        exit(2);
    memset(b, 0, sizeof(block));
    return b;
}

static void genmat(block *M[NB][NB])
{
    int v = 1325, ii, jj, i, j;
    for (ii = 0; ii < NB; ii++)
        for (jj = 0; jj < NB; jj++) {
            int null_entry = (ii < jj && ii % 3) || (ii > jj && jj % 3) ||
                             ii % 2 || jj % 2;
            if (ii == jj || ii == jj - 1 || ii - 1 == jj)
                null_entry = 0;
            M[ii][jj] = null_entry ? NULL : new_block();
            for (i = 0; M[ii][jj] && i < BS; i++)
                for (j = 0; j < BS; j++) {
                    v = (3125 * v) % 65536;
                    (*M[ii][jj])[i][j] = (float)((v - 32768.0) / 16384.0);
                }
        }
}

static void lu0(block *d)
{
    for (int k = 0; k < BS; k++)
        for (int i = k + 1; i < BS; i++) {
            (*d)[i][k] /= (*d)[k][k];
            for (int j = k + 1; j < BS; j++)
                (*d)[i][j] -= (*d)[i][k] * (*d)[k][j];
        }
}

static void fwd(block *d, block *c)
{
    for (int k = 0; k < BS; k++)
        for (int i = k + 1; i < BS; i++)
            for (int j = 0; j < BS; j++)
                (*c)[i][j] -= (*d)[i][k] * (*c)[k][j];
}

static void bdiv(block *d, block *r)
{
    for (int i = 0; i < BS; i++)
        for (int k = 0; k < BS; k++) {
            (*r)[i][k] /= (*d)[k][k];
            for (int j = k + 1; j < BS; j++)
                (*r)[i][j] -= (*r)[i][k] * (*d)[k][j];
        }
}

/* A task's 0.2 ms of extra time, so that idle nodes take tasks even at
   this size (the result does not depend on it). */
static void slow(void)
{
    double t = omp_get_wtime();
    while (omp_get_wtime() - t < 2e-4)
        ;
}

static void bmod(block *r, block *c, block *in)
{
    for (int i = 0; i < BS; i++)
        for (int j = 0; j < BS; j++)
            for (int k = 0; k < BS; k++)
                (*in)[i][j] -= (*r)[i][k] * (*c)[k][j];
}

static void serial(block *M[NB][NB])
{
    for (int kk = 0; kk < NB; kk++) {
        lu0(M[kk][kk]);
        for (int jj = kk + 1; jj < NB; jj++)
            if (M[kk][jj])
                fwd(M[kk][kk], M[kk][jj]);
        for (int ii = kk + 1; ii < NB; ii++)
            if (M[ii][kk])
                bdiv(M[kk][kk], M[ii][kk]);
        for (int ii = kk + 1; ii < NB; ii++)
            for (int jj = kk + 1; jj < NB; jj++)
                if (M[ii][kk] && M[kk][jj]) {
                    if (!M[ii][jj])
                        M[ii][jj] = new_block();
                    bmod(M[ii][kk], M[kk][jj], M[ii][jj]);
                }
    }
}

int main(void)
{
    int ii, jj, kk, bad = 0, nonzero = 0;
    unsigned long h = 14695981039346656037UL;
    genmat(A);
    genmat(B);
#pragma omp parallel private(ii, jj, kk)
#pragma omp single
    for (kk = 0; kk < NB; kk++) {
        lu0(A[kk][kk]);
        for (jj = kk + 1; jj < NB; jj++)
            if (A[kk][jj]) {
#pragma omp task firstprivate(kk, jj)
                {
                    fwd(A[kk][kk], A[kk][jj]);
                    slow();
                }
            }
        for (ii = kk + 1; ii < NB; ii++)
            if (A[ii][kk]) {
#pragma omp task firstprivate(kk, ii)
                bdiv(A[kk][kk], A[ii][kk]);
            }
#pragma omp taskwait
        for (ii = kk + 1; ii < NB; ii++)
            for (jj = kk + 1; jj < NB; jj++)
                if (A[ii][kk] && A[kk][jj]) {
#pragma omp task firstprivate(kk, jj, ii)
                    {
                        if (!A[ii][jj])
                            A[ii][jj] = new_block();
                        bmod(A[ii][kk], A[kk][jj], A[ii][jj]);
                        slow();
                    }
                }
#pragma omp taskwait
    }
    serial(B);
    for (ii = 0; ii < NB; ii++)
        for (jj = 0; jj < NB; jj++) {
            if (!A[ii][jj] != !B[ii][jj]) {
                bad++;
                continue;
            }
            if (!A[ii][jj])
                continue;
            nonzero++;
            if (memcmp(A[ii][jj], B[ii][jj], sizeof(block)))
                bad++;
            for (size_t k = 0; k < sizeof(block); k++)
                h = (h ^ ((unsigned char *)A[ii][jj])[k]) * 1099511628211UL;
        }
    if (bad)
        printf("FAIL: %d blocks differ from the serial factorisation\n", bad);
    printf("non-zero blocks %d, hash %016lx\n", nonzero, h);
    return bad != 0;
}
