/*
 * nqueens.c - the number of ways to place n queens on an n x n board
 * (the "nqueens" kernel of the Barcelona OpenMP Tasks Suite, written for
 * ompdsm from the algorithm): rows are filled one at a time; each legal
 * placement in the first DEPTH rows is a task carrying its board by value
 * (firstprivate), deeper rows are searched serially (the depth cut-off).
 * Verification: the known solution counts (OEIS A000170).
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S nqueens.c -o nqueens   (CLASS = S|W)
 */
#include <stdio.h>
#include <omp.h>

#ifndef CLASS
#define CLASS S
#endif
#define S 1
#define W 2
#if CLASS == S
#define NQ 12
#define EXPECT 14200L
#define CLASS_NAME "S"
#elif CLASS == W
#define NQ 13
#define EXPECT 73712L
#define CLASS_NAME "W"
#else
#error "CLASS must be S or W"
#endif
#define DEPTH 3

struct board {
    signed char q[NQ]; /* column of the queen in each filled row */
};

static long total;

static int legal(const struct board *b, int row, int col)
{
    int r;
    for (r = 0; r < row; r++) {
        int d = b->q[r] - col;
        if (d == 0 || d == row - r || d == r - row)
            return 0;
    }
    return 1;
}

static long serial(struct board *b, int row)
{
    long n = 0;
    int c;
    if (row == NQ)
        return 1;
    for (c = 0; c < NQ; c++)
        if (legal(b, row, c)) {
            b->q[row] = (signed char)c;
            n += serial(b, row + 1);
        }
    return n;
}

static void search(struct board b, int row)
{
    int c;
    if (row >= DEPTH) {
        long n = serial(&b, row);
#pragma omp atomic
        total += n;
        return;
    }
    for (c = 0; c < NQ; c++) {
        if (!legal(&b, row, c))
            continue;
        struct board nb = b;
        nb.q[row] = (signed char)c;
#pragma omp task firstprivate(nb)
        search(nb, row + 1);
    }
#pragma omp taskwait
}

int main(void)
{
    struct board b;
    int threads = 1;
    double t0 = omp_get_wtime(), t;
#pragma omp parallel
    {
#pragma omp single
        {
            threads = omp_get_num_threads();
            search(b, 0);
        }
    }
    t = omp_get_wtime() - t0;
    printf("Kernel = nqueens\nClass = %s\nN = %d\nCutoff depth = %d\nThreads = %d\n"
           "Result = %ld\nTime = %.6f\nVerification = %s\n", CLASS_NAME, NQ, DEPTH,
           threads, total, t, total == EXPECT ? "SUCCESSFUL" : "UNSUCCESSFUL");
    return total == EXPECT ? 0 : 1;
}
