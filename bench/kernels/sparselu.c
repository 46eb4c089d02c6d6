/*
 * sparselu.c - LU factorisation of a blocked sparse matrix with a task per
 * block operation, written from the algorithm of the Barcelona OpenMP Tasks
 * Suite's SparseLU (Duran et al., "Barcelona OpenMP Tasks Suite: A Set of
 * Benchmarks Targeting the Exploitation of Task Parallelism in OpenMP",
 * ICPP 2009).  The matrix is NB x NB blocks of BS x BS floats; a block is
 * allocated only where the suite's generation rule makes it non-zero, and
 * fill-in blocks are allocated by the tasks that first update them.  Step
 * kk: lu0 factors the diagonal block; a task per non-zero block of row kk
 * (fwd) and of column kk (bdiv); taskwait; a task per pair of non-zero
 * blocks (ii,kk), (kk,jj) updates block (ii,jj) (bmod, allocating it when
 * it is still zero); taskwait.  All under `parallel` + `single`.
 *
 * Verification: the same factorisation run serially in this program on a
 * second copy of the matrix.  Every block is written by one task per step,
 * and the steps run in order, so both do the same floating-point
 * operations in the same order: the two results must be equal bit for bit
 * (and the same blocks non-zero).
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S sparselu.c -o sparselu  (CLASS = S|W)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "kernel.h"

#if CLASS_ID(CLASS) == 1
#define NB 12
#define BS 32
#elif CLASS_ID(CLASS) == 2
#define NB 24
#define BS 128
#else
#error "CLASS must be S or W"
#endif

typedef float block[BS][BS];

static block *A[NB][NB], *B[NB][NB];

/* The suite's rule: which blocks of the initial matrix are non-zero. */
static int nonzero(int ii, int jj)
{
    int null_entry = 0;
    if (ii < jj && ii % 3 != 0)
        null_entry = 1;
    if (ii > jj && jj % 3 != 0)
        null_entry = 1;
    if (ii % 2 == 1 || jj % 2 == 1)
        null_entry = 1;
    if (ii == jj || ii == jj - 1 || ii - 1 == jj)
        null_entry = 0;
    return !null_entry;
}

static block *new_block(void)
{
    block *b = malloc(sizeof(block));
    if (!b) {
        fprintf(stderr, "sparselu: out of memory\n");
        exit(2);
    }
    memset(b, 0, sizeof(block));
    return b;
}

static void genmat(block *M[NB][NB])
{
    int init_val = 1325, ii, jj, i, j;
    for (ii = 0; ii < NB; ii++)
        for (jj = 0; jj < NB; jj++) {
            M[ii][jj] = NULL;
            if (!nonzero(ii, jj))
                continue;
            M[ii][jj] = new_block();
            for (i = 0; i < BS; i++)
                for (j = 0; j < BS; j++) {
                    init_val = (3125 * init_val) % 65536;
                    (*M[ii][jj])[i][j] = (float)((init_val - 32768.0) / 16384.0);
                }
        }
}

static void lu0(block *d)
{
    int i, j, k;
    for (k = 0; k < BS; k++)
        for (i = k + 1; i < BS; i++) {
            (*d)[i][k] = (*d)[i][k] / (*d)[k][k];
            for (j = k + 1; j < BS; j++)
                (*d)[i][j] = (*d)[i][j] - (*d)[i][k] * (*d)[k][j];
        }
}

static void fwd(block *d, block *c)
{
    int i, j, k;
    for (k = 0; k < BS; k++)
        for (i = k + 1; i < BS; i++)
            for (j = 0; j < BS; j++)
                (*c)[i][j] = (*c)[i][j] - (*d)[i][k] * (*c)[k][j];
}

static void bdiv(block *d, block *r)
{
    int i, j, k;
    for (i = 0; i < BS; i++)
        for (k = 0; k < BS; k++) {
            (*r)[i][k] = (*r)[i][k] / (*d)[k][k];
            for (j = k + 1; j < BS; j++)
                (*r)[i][j] = (*r)[i][j] - (*r)[i][k] * (*d)[k][j];
        }
}

static void bmod(block *r, block *c, block *in)
{
    int i, j, k;
    for (i = 0; i < BS; i++)
        for (j = 0; j < BS; j++) {
            float s = (*in)[i][j];
            for (k = 0; k < BS; k++)
                s = s - (*r)[i][k] * (*c)[k][j];
            (*in)[i][j] = s;
        }
}

static void sparselu_serial(block *M[NB][NB])
{
    int ii, jj, kk;
    for (kk = 0; kk < NB; kk++) {
        lu0(M[kk][kk]);
        for (jj = kk + 1; jj < NB; jj++)
            if (M[kk][jj])
                fwd(M[kk][kk], M[kk][jj]);
        for (ii = kk + 1; ii < NB; ii++)
            if (M[ii][kk])
                bdiv(M[kk][kk], M[ii][kk]);
        for (ii = kk + 1; ii < NB; ii++)
            if (M[ii][kk])
                for (jj = kk + 1; jj < NB; jj++)
                    if (M[kk][jj]) {
                        if (!M[ii][jj])
                            M[ii][jj] = new_block();
                        bmod(M[ii][kk], M[kk][jj], M[ii][jj]);
                    }
    }
}

int main(void)
{
    int threads = 1, tasks = 0, bad = 0, ii, jj, kk;
    double t0, t;
    genmat(A);
    genmat(B);
    t0 = omp_get_wtime();
#pragma omp parallel private(ii, jj, kk)
    {
#pragma omp single
        {
            threads = omp_get_num_threads();
            for (kk = 0; kk < NB; kk++) {
                lu0(A[kk][kk]);
                for (jj = kk + 1; jj < NB; jj++)
                    if (A[kk][jj]) {
#pragma omp task firstprivate(kk, jj)
                        fwd(A[kk][kk], A[kk][jj]);
                        tasks++;
                    }
                for (ii = kk + 1; ii < NB; ii++)
                    if (A[ii][kk]) {
#pragma omp task firstprivate(kk, ii)
                        bdiv(A[kk][kk], A[ii][kk]);
                        tasks++;
                    }
#pragma omp taskwait
                for (ii = kk + 1; ii < NB; ii++)
                    if (A[ii][kk])
                        for (jj = kk + 1; jj < NB; jj++)
                            if (A[kk][jj]) {
#pragma omp task firstprivate(kk, jj, ii)
                                {
                                    if (!A[ii][jj])
                                        A[ii][jj] = new_block();
                                    bmod(A[ii][kk], A[kk][jj], A[ii][jj]);
                                }
                                tasks++;
                            }
#pragma omp taskwait
            }
        }
    }
    t = omp_get_wtime() - t0;
    sparselu_serial(B);
    for (ii = 0; ii < NB; ii++)
        for (jj = 0; jj < NB; jj++) {
            if (!A[ii][jj] != !B[ii][jj])
                bad++;
            else if (A[ii][jj] && memcmp(A[ii][jj], B[ii][jj], sizeof(block)))
                bad++;
        }
    printf("Kernel = sparselu\nClass = %s\nBlocks = %d x %d of %d x %d\n"
           "Tasks = %d\nThreads = %d\nTime = %.6f\nVerification = %s\n",
           STR(CLASS), NB, NB, BS, BS, tasks, threads, t,
           bad ? "UNSUCCESSFUL" : "SUCCESSFUL");
    if (bad)
        printf("blocks that differ from the serial factorisation: %d\n", bad);
    return bad ? 1 : 0;
}
