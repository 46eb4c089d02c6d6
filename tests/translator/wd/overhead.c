/* overhead.c - the kernels whose instruction counts wd.py compares under
 * callgrind, built with and without the write-detection pass at -O2: a
 * 5-point stencil (a store per point, in a loop the optimisation marks
 * once per row) and a matrix-vector product (a dot product per row, one
 * store per row).  Only the kernel_* functions are counted. */
#include "wdrt.h"

#include <stdio.h>

static volatile int vn = 200, vreps = 4;

__attribute__((noinline)) void kernel_stencil(double *un, const double *u, int n)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            un[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                                    u[i * n + j - 1] + u[i * n + j + 1]);
}

__attribute__((noinline)) void kernel_matvec(double *y, const double *a, const double *x,
                                             int n)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++)
            s += a[i * n + j] * x[j];
        y[i] = s;
    }
}

int main(void)
{
    int n = vn, reps = vreps;
    double *u = wdrt_alloc(sizeof *u * (size_t)(n * n), 64);
    double *un = wdrt_alloc(sizeof *un * (size_t)(n * n), 64);
    double *x = wdrt_alloc(sizeof *x * (size_t)n, 64);
    double *y = wdrt_alloc(sizeof *y * (size_t)n, 64);
    for (int i = 0; i < n * n; i++)
        u[i] = i % 17;
    for (int i = 0; i < n; i++)
        x[i] = i % 5;
    for (int r = 0; r < reps; r++) {
        kernel_stencil(un, u, n);
        kernel_matvec(y, u, x, n);
    }
    /* stores per kernel, for wd.py */
    printf("stencil %d matvec %d check %g\n", reps * (n - 2) * (n - 2), reps * n,
           un[n + 1] + y[n - 1]);
    return 0;
}
