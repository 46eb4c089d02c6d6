/* bench/kernels/cgsolve.h - the conjugate-gradient solver that cgband.c and
 * cgrand.c share (Hestenes and Stiefel's algorithm, as a user writes it in
 * OpenMP: a `parallel for schedule(CG_SCHED)` per vector loop and for the
 * matrix-vector product, dot products as reductions), its CSR arrays and
 * vectors (file-scope statics, so that ompdsm shares them as globals), the
 * classes (S: N 20,000 rows, OUTER 6 solves; A: 200,000 and 24; ITERS 25
 * steps a solve) and the report.  The includer includes kernel.h (CLASS),
 * defines NZMAX (the entries of all rows at most), includes this, fills
 * rowptr/col/val, and calls cg_run.
 *
 * The run: OUTER times, x = 0 and ITERS CG steps of A x = b, then the
 * residual ||b - A x|| / ||b|| computed afresh from x (not the
 * recurrence's r), so a lost or doubled update anywhere shows, and the
 * next b is x scaled to ||b|| = sqrt(N).  Verification: every solve's true
 * relative residual below 1e-8, and a checksum sum(x) printed for
 * comparison with the native build (gcc has no `profiled`: that build
 * passes -DCG_SCHED=static). */
#ifndef BENCH_CGSOLVE_H
#define BENCH_CGSOLVE_H

#include <math.h>
#include <stdio.h>
#include <omp.h>

#if CLASS_ID(CLASS) == CLASS_ID_S
#define N 20000
#define OUTER 6
#elif CLASS_ID(CLASS) == CLASS_ID_A
#define N 200000
#define OUTER 24
#else
#error "cgsolve.h: CLASS must be S or A"
#endif
#define ITERS 25

#ifndef CG_SCHED
#define CG_SCHED profiled
#endif

static int rowptr[N + 1];
static int col[NZMAX];
static double val[NZMAX];
static double x[N], b[N], r[N], p[N], q[N];

/* y = A v over all rows. */
static void matvec(const double *v, double *y)
{
#pragma omp parallel for schedule(CG_SCHED)
    for (int i = 0; i < N; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
            s += val[k] * v[col[k]];
        y[i] = s;
    }
}

/* OUTER solves of ITERS CG steps each, b the normalised previous x; the
 * report; 0 when verified. */
static int cg_run(const char *kernel, const char *class_name)
{
    double t0, t1, worst = 0.0, sum = 0.0;

    for (int i = 0; i < N; i++)
        b[i] = 1.0 + (double)(i % 17) / 17.0;
    t0 = omp_get_wtime();
    for (int it = 0; it < OUTER; it++) {
        double rho = 0.0;
#pragma omp parallel for schedule(CG_SCHED) reduction(+:rho)
        for (int i = 0; i < N; i++) {
            x[i] = 0.0;
            r[i] = b[i];
            p[i] = b[i];
            rho += b[i] * b[i];
        }
        for (int s = 0; s < ITERS; s++) {
            double pq = 0.0, rho_new = 0.0;
            matvec(p, q);
#pragma omp parallel for schedule(CG_SCHED) reduction(+:pq)
            for (int i = 0; i < N; i++)
                pq += p[i] * q[i];
            double alpha = rho / pq;
#pragma omp parallel for schedule(CG_SCHED) reduction(+:rho_new)
            for (int i = 0; i < N; i++) {
                x[i] += alpha * p[i];
                r[i] -= alpha * q[i];
                rho_new += r[i] * r[i];
            }
            double beta = rho_new / rho;
            rho = rho_new;
#pragma omp parallel for schedule(CG_SCHED)
            for (int i = 0; i < N; i++)
                p[i] = r[i] + beta * p[i];
        }
        /* The true residual, from x, not the recurrence's r. */
        double bb = 0.0, rr = 0.0, xx = 0.0;
        matvec(x, q);
#pragma omp parallel for schedule(CG_SCHED) reduction(+:bb, rr, xx)
        for (int i = 0; i < N; i++) {
            double d = b[i] - q[i];
            bb += b[i] * b[i];
            rr += d * d;
            xx += x[i] * x[i];
        }
        double rel = sqrt(rr / bb);
        if (!(rel <= worst))
            worst = rel;
        double scale = sqrt((double)N / xx);
#pragma omp parallel for schedule(CG_SCHED)
        for (int i = 0; i < N; i++)
            b[i] = x[i] * scale;
    }
    t1 = omp_get_wtime();
    for (int i = 0; i < N; i++)
        sum += x[i];
    int ok = worst < 1e-8 && isfinite(sum);
    printf("Kernel = %s\nClass = %s\nSize = %d\nNonzeros = %d\n"
           "Iterations = %d x %d\nThreads = %d\nResidual = %.3e\n"
           "Checksum = %.10e\nTime in seconds = %.6f\nVerification = %s\n",
           kernel, class_name, N, rowptr[N], OUTER, ITERS, omp_get_max_threads(), worst,
           sum, t1 - t0, ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
    return ok ? 0 : 1;
}

#endif
