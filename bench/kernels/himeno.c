/*
 * himeno.c - Himeno-style pressure-Poisson kernel, written for ompdsm from
 * the published description of the Himeno benchmark (a 19-point Jacobi
 * iteration for the pressure Poisson equation of incompressible flow, rated
 * at 34 floating point operations per interior grid point and iteration).
 *
 * What it computes: NITER Jacobi sweeps, in single precision as published,
 *     s0 = a0 p(i+1,j,k) + a1 p(i,j+1,k) + a2 p(i,j,k+1)
 *        + b0 [p(i+1,j+1,k) - p(i+1,j-1,k) - p(i-1,j+1,k) + p(i-1,j-1,k)]
 *        + b1 [p(i,j+1,k+1) - p(i,j-1,k+1) - p(i,j+1,k-1) + p(i,j-1,k-1)]
 *        + b2 [p(i+1,j,k+1) - p(i-1,j,k+1) - p(i+1,j,k-1) + p(i-1,j,k-1)]
 *        + c0 p(i-1,j,k) + c1 p(i,j-1,k) + c2 p(i,j,k-1) + wrk1(i,j,k)
 *     ss = (s0 a3(i,j,k) - p(i,j,k)) bnd(i,j,k)
 *     GOSA += ss^2 ;  p'(i,j,k) = p(i,j,k) + omega ss       (omega = 0.8)
 * over the interior points, with the published initial state: a0=a1=a2=1,
 * a3=1/6, b=0, c=1, bnd=1, wrk1=0, p(i,j,k) = i^2/(NI-1)^2.  GOSA is the
 * squared residual norm of the sweep; we accumulate it in double precision
 * so that it is reproducible to many digits whatever the thread count.
 *
 * Grid sizes.  The published sizes are XS 32x32x64, S 64x64x128 and
 * M 128x128x256, listed as I x J x K with K the longest and, in the C
 * version, the contiguous (innermost) dimension; some tables write XS the
 * other way round as 64x32x32 (K x J x I).  Our choice: NI x NJ x NK
 * points in total including the fixed boundary layer, K innermost:
 *     XS: 32 x 32 x 64    S: 64 x 64 x 128    M: 128 x 128 x 256
 * so there are (NI-2)(NJ-2)(NK-2) updated points per sweep.
 *
 * Verification: this is not an NPB kernel and there is no published
 * reference value for a fixed iteration count, so we check what the method
 * guarantees: with a symmetric operator, damped Jacobi (omega = 0.8) never
 * increases the residual, so GOSA must be finite and non-increasing over the
 * sweeps and must have decreased overall.
 *
 * Build:  gcc -O2 -fopenmp -DSIZE=XS himeno.c -o himeno -lm   (SIZE = XS|S|M)
 * Run:    ./himeno [iterations]        (default 100)
 * The outer (i) loop of the sweep is "schedule(runtime)".
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include "kernel.h"

#ifndef SIZE
#define SIZE XS
#endif
#define SIZE_ID_XS 1
#define SIZE_ID_S 2
#define SIZE_ID_M 3
#define SIZE_ID_(c) SIZE_ID_##c
#define SIZE_ID(c) SIZE_ID_(c)

#if SIZE_ID(SIZE) == 1
#define NI 32
#define NJ 32
#define NK 64
#elif SIZE_ID(SIZE) == 2
#define NI 64
#define NJ 64
#define NK 128
#elif SIZE_ID(SIZE) == 3
#define NI 128
#define NJ 128
#define NK 256
#else
#error "SIZE must be one of XS, S, M"
#endif

#define DEFAULT_ITER 100

static float p[NI][NJ][NK];
static float a[4][NI][NJ][NK];
static float b[3][NI][NJ][NK];
static float c[3][NI][NJ][NK];
static float bnd[NI][NJ][NK];
static float wrk1[NI][NJ][NK];
static float wrk2[NI][NJ][NK];

static const float omega = 0.8f;

/* Parallel initialisation, so that first touch already spreads the pages
 * the way the static loops will use them. */
static void init(void)
{
    int i;
#pragma omp parallel for
    for (i = 0; i < NI; i++) {
        int j, k, l;
        float pi = (float)(i * i) / (float)((NI - 1) * (NI - 1));
        for (j = 0; j < NJ; j++)
            for (k = 0; k < NK; k++) {
                for (l = 0; l < 3; l++) {
                    a[l][i][j][k] = 1.0f;
                    b[l][i][j][k] = 0.0f;
                    c[l][i][j][k] = 1.0f;
                }
                a[3][i][j][k] = 1.0f / 6.0f;
                p[i][j][k] = pi;
                bnd[i][j][k] = 1.0f;
                wrk1[i][j][k] = 0.0f;
                wrk2[i][j][k] = 0.0f;
            }
    }
}

/* One Jacobi sweep; returns GOSA. */
static double sweep(void)
{
    double gosa = 0.0;
    int i;
#pragma omp parallel private(i)
    {
#pragma omp for schedule(runtime) reduction(+:gosa)
        for (i = 1; i < NI - 1; i++) {
            int j, k;
            for (j = 1; j < NJ - 1; j++)
                for (k = 1; k < NK - 1; k++) {
                    float s0, ss;
                    s0 = a[0][i][j][k] * p[i + 1][j][k]
                       + a[1][i][j][k] * p[i][j + 1][k]
                       + a[2][i][j][k] * p[i][j][k + 1]
                       + b[0][i][j][k] * (p[i + 1][j + 1][k] - p[i + 1][j - 1][k]
                                        - p[i - 1][j + 1][k] + p[i - 1][j - 1][k])
                       + b[1][i][j][k] * (p[i][j + 1][k + 1] - p[i][j - 1][k + 1]
                                        - p[i][j + 1][k - 1] + p[i][j - 1][k - 1])
                       + b[2][i][j][k] * (p[i + 1][j][k + 1] - p[i - 1][j][k + 1]
                                        - p[i + 1][j][k - 1] + p[i - 1][j][k - 1])
                       + c[0][i][j][k] * p[i - 1][j][k]
                       + c[1][i][j][k] * p[i][j - 1][k]
                       + c[2][i][j][k] * p[i][j][k - 1]
                       + wrk1[i][j][k];
                    ss = (s0 * a[3][i][j][k] - p[i][j][k]) * bnd[i][j][k];
                    gosa += (double)ss * (double)ss;
                    wrk2[i][j][k] = p[i][j][k] + omega * ss;
                }
        }
        /* Jacobi: p is replaced only after every point has been computed
         * (the implicit barrier of the loop above). */
#pragma omp for
        for (i = 1; i < NI - 1; i++) {
            int j, k;
            for (j = 1; j < NJ - 1; j++)
                for (k = 1; k < NK - 1; k++)
                    p[i][j][k] = wrk2[i][j][k];
        }
    }
    return gosa;
}

int main(int argc, char **argv)
{
    int niter = DEFAULT_ITER, n, nthreads = 1, ok = 1;
    double *gosa, t0, tm, flops, mflops;
    const char *sched;

    if (argc > 1) {
        niter = atoi(argv[1]);
        if (niter < 2) {
            fprintf(stderr, "usage: %s [iterations >= 2]\n", argv[0]);
            return 2;
        }
    }
    sched = schedule_in_use();

    gosa = (double *)malloc(sizeof(double) * (size_t)niter);
    if (gosa == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

#pragma omp parallel
#pragma omp master
    nthreads = omp_get_num_threads();

    printf("\n\n Himeno-style 19-point Jacobi kernel (ompdsm, OpenMP C)\n\n");
    printf(" Grid size = %s (%d x %d x %d points, I x J x K)\n", STR(SIZE), NI, NJ, NK);
    init();

    t0 = omp_get_wtime();
    for (n = 0; n < niter; n++)
        gosa[n] = sweep();
    tm = omp_get_wtime() - t0;
    if (tm <= 0.0) /* below clock resolution; keeps Mop/s finite */
        tm = 1.0e-9;

    for (n = 0; n < niter; n++) {
        if (!isfinite(gosa[n]))
            ok = 0;
        if (n > 0 && gosa[n] > gosa[n - 1])
            ok = 0;
    }
    if (!(gosa[niter - 1] < gosa[0]))
        ok = 0;

    flops = 34.0 * (double)(NI - 2) * (double)(NJ - 2) * (double)(NK - 2) * (double)niter;
    mflops = flops / tm / 1.0e6;

    printf(" GOSA after first sweep : %.9e\n", gosa[0]);
    printf("\n Himeno Benchmark Completed.\n");
    printf("Size = %s\n", STR(SIZE));
    printf("Grid = %dx%dx%d\n", NI, NJ, NK);
    printf("Iterations = %d\n", niter);
    printf("Threads = %d\n", nthreads);
    printf("Schedule = %s\n", sched);
    printf("Time in seconds = %.6f\n", tm);
    printf("MFLOPS measured : %.2f\n", mflops);
    printf("GOSA : %.9e\n", gosa[niter - 1]);
    printf("Verification = %s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
    free(gosa);
    return ok ? 0 : 1;
}
