/*
 * cg.c - conjugate gradient kernel, written for ompdsm from the NPB
 * specification (Bailey et al., RNR-94-007, kernel CG, with the matrix
 * generation and class parameters of the NPB 2 report NAS-95-020).
 *
 * What it computes: an estimate of the largest eigenvalue of a symmetric
 * positive definite sparse matrix with a random sparsity pattern, by inverse
 * power iteration:
 *     x = (1,...,1)
 *     repeat NITER times:
 *         solve A z = x approximately with 25 unpreconditioned CG iterations
 *         zeta = SHIFT + 1 / (x . z)
 *         x = z / ||z||
 * The matrix is A = sum_i w_i v_i v_i^T + (RCOND - SHIFT) I, where v_i is a
 * random sparse vector (NONZER random entries plus 0.5 at position i) and
 * the weights w_i fall geometrically from 1 towards RCOND = 0.1.
 *
 * Verification: the final zeta must match the NPB reference value to a
 * relative error of 1e-10 (reference values: see README.md).
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S cg.c -o cg -lm     (CLASS = S|W|A)
 * The loops over the rows are "schedule(runtime)": the sparse matrix-vector
 * rows have very different lengths, so this is where a schedule choice
 * matters, and the other row loops follow the same partition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include "kernel.h"

#if CLASS_ID(CLASS) == 1
#define NA 1400
#define NONZER 7
#define NITER 15
#define SHIFT 10.0
#define ZETA_REF 8.5971775078648
#elif CLASS_ID(CLASS) == 2
#define NA 7000
#define NONZER 8
#define NITER 15
#define SHIFT 12.0
#define ZETA_REF 10.362595087124
#elif CLASS_ID(CLASS) == 3
#define NA 14000
#define NONZER 11
#define NITER 15
#define SHIFT 20.0
#define ZETA_REF 17.130235054029
#else
#error "CLASS must be one of S, W, A"
#endif

#define RCOND 0.1
#define CGITMAX 25
/* Each generating vector has at most NONZER+1 entries, so it contributes at
 * most (NONZER+1)^2 products; duplicates are merged when the rows are built. */
#define MAXTRIP ((long)NA * (NONZER + 1) * (NONZER + 1))
#define NZMAX (MAXTRIP + NA)

/* ---- the specification's pseudorandom generator (see ep.c) --------------- */
#define LCG_MASK ((1ULL << 46) - 1ULL)
#define LCG_A 1220703125ULL
#define TWO_M46 1.4210854715202004e-14
static unsigned long long rng_state;
static double rng_next(void)
{
    rng_state = (LCG_A * rng_state) & LCG_MASK;
    return (double)rng_state * TWO_M46;
}

/* ---- the shared data: matrix in compressed-row form and the vectors ----- */
static int rowstr[NA + 1];
static int colidx[NZMAX];
static double aval[NZMAX];
static double x[NA], z[NA], p[NA], q[NA], r[NA];

/* Triplet scratch used only while the matrix is assembled. */
static int trow[MAXTRIP], tcol[MAXTRIP];
static double tval[MAXTRIP];

/* One random sparse vector: NONZER distinct positions drawn as
 * floor(nn1 * r) with nn1 the smallest power of two >= NA; positions that
 * fall outside the matrix or repeat are rejected (their numbers are still
 * consumed).  Each entry's value is drawn before its position. */
static int sparse_vector(int nn1, double *v, int *iv)
{
    int nzv = 0;
    while (nzv < NONZER) {
        double val = rng_next();
        double loc = rng_next();
        int i = (int)(nn1 * loc), k, dup = 0;
        if (i >= NA)
            continue;
        for (k = 0; k < nzv; k++)
            if (iv[k] == i) {
                dup = 1;
                break;
            }
        if (dup)
            continue;
        v[nzv] = val;
        iv[nzv] = i;
        nzv++;
    }
    return nzv;
}

static void make_matrix(void)
{
    double v[NONZER + 1];
    int iv[NONZER + 1];
    int nn1 = 1, i, j, k, nzv;
    long nt = 0, e;
    double size = 1.0, ratio = pow(RCOND, 1.0 / (double)NA);
    static int fill[NA];

    while (nn1 < NA)
        nn1 *= 2;

    for (i = 0; i < NA; i++) {
        nzv = sparse_vector(nn1, v, iv);
        /* Position i always carries 0.5, which keeps the diagonal populated. */
        for (k = 0; k < nzv; k++)
            if (iv[k] == i)
                break;
        if (k < nzv) {
            v[k] = 0.5;
        } else {
            v[nzv] = 0.5;
            iv[nzv] = i;
            nzv++;
        }
        for (j = 0; j < nzv; j++)
            for (k = 0; k < nzv; k++) {
                trow[nt] = iv[j];
                tcol[nt] = iv[k];
                tval[nt] = size * v[k] * v[j];
                nt++;
            }
        size *= ratio;
    }

    /* Bucket the triplets by row (stable, so duplicate entries are summed in
     * generation order), then merge duplicates within each row. */
    for (i = 0; i <= NA; i++)
        rowstr[i] = 0;
    for (e = 0; e < nt; e++)
        rowstr[trow[e] + 1]++;
    for (i = 0; i < NA; i++)
        rowstr[i + 1] += rowstr[i];
    for (i = 0; i < NA; i++)
        fill[i] = rowstr[i];
    for (e = 0; e < nt; e++) {
        int rr = trow[e];
        colidx[fill[rr]] = tcol[e];
        aval[fill[rr]] = tval[e];
        fill[rr]++;
    }
    /* Per row: stable insertion sort by column, merge duplicates, add the
     * (RCOND - SHIFT) diagonal term (every row has a diagonal entry, from the
     * 0.5 at position i of vector i), and compact in place into final CSR;
     * the output never overtakes the input because merging only shrinks. */
    {
        long out = 0;
        int start = 0;
        for (i = 0; i < NA; i++) {
            int end = fill[i], a, b, newstart = (int)out;
            for (a = start + 1; a < end; a++) {
                int c = colidx[a];
                double w = aval[a];
                b = a - 1;
                while (b >= start && colidx[b] > c) {
                    colidx[b + 1] = colidx[b];
                    aval[b + 1] = aval[b];
                    b--;
                }
                colidx[b + 1] = c;
                aval[b + 1] = w;
            }
            for (a = start; a < end; a++) {
                if (out > newstart && colidx[out - 1] == colidx[a]) {
                    aval[out - 1] += aval[a];
                } else {
                    colidx[out] = colidx[a];
                    aval[out] = aval[a];
                    out++;
                }
            }
            for (a = newstart; a < out; a++)
                if (colidx[a] == i)
                    aval[a] += RCOND - SHIFT;
            start = rowstr[i + 1];
            rowstr[i] = newstart;
        }
        rowstr[NA] = (int)out;
    }
}

/* 25 CG iterations on A z = x from z = 0; returns ||x - A z||.
 * One parallel region for the whole solve keeps fork/join cost out of the
 * inner loop; reductions go into variables shared by the team.  Every loop
 * over the rows is schedule(runtime), so that OMP_SCHEDULE=static is the
 * usual equal split and profiled gives all of them one partition
 * (OMPDSM_PROFILED_SHARE): a node reads p, q, r and z where it wrote them. */
static double conj_grad(void)
{
    double rho = 0.0, rho_new = 0.0, pq = 0.0, rnorm2 = 0.0;
    int cgit;

#pragma omp parallel private(cgit)
    {
        int i, j;
        double alpha, beta;

#pragma omp for schedule(runtime) reduction(+:rho)
        for (i = 0; i < NA; i++) {
            q[i] = 0.0;
            z[i] = 0.0;
            r[i] = x[i];
            p[i] = x[i];
            rho += x[i] * x[i];
        }

        for (cgit = 0; cgit < CGITMAX; cgit++) {
#pragma omp single
            {
                pq = 0.0;
                rho_new = 0.0;
            }
#pragma omp for schedule(runtime)
            for (i = 0; i < NA; i++) {
                double s = 0.0;
                for (j = rowstr[i]; j < rowstr[i + 1]; j++)
                    s += aval[j] * p[colidx[j]];
                q[i] = s;
            }
#pragma omp for schedule(runtime) reduction(+:pq)
            for (i = 0; i < NA; i++)
                pq += p[i] * q[i];

            alpha = rho / pq;
#pragma omp for schedule(runtime) reduction(+:rho_new)
            for (i = 0; i < NA; i++) {
                z[i] += alpha * p[i];
                r[i] -= alpha * q[i];
                rho_new += r[i] * r[i];
            }
            beta = rho_new / rho;
#pragma omp for schedule(runtime)
            for (i = 0; i < NA; i++)
                p[i] = r[i] + beta * p[i];
            /* Every thread has read rho for beta before the barrier above. */
#pragma omp single
            rho = rho_new;
        }

        /* Residual of the approximate solve, as the specification reports. */
#pragma omp for schedule(runtime) reduction(+:rnorm2)
        for (i = 0; i < NA; i++) {
            double s = 0.0, d;
            for (j = rowstr[i]; j < rowstr[i + 1]; j++)
                s += aval[j] * z[colidx[j]];
            d = x[i] - s;
            rnorm2 += d * d;
        }
    }
    return sqrt(rnorm2);
}

/* One step of the inverse power method; returns zeta. */
static double power_step(double *rnorm)
{
    double xz = 0.0, zz = 0.0, scale;
    int i;
    *rnorm = conj_grad();
#pragma omp parallel for schedule(runtime) reduction(+:xz, zz)
    for (i = 0; i < NA; i++) {
        xz += x[i] * z[i];
        zz += z[i] * z[i];
    }
    scale = 1.0 / sqrt(zz);
#pragma omp parallel for schedule(runtime)
    for (i = 0; i < NA; i++)
        x[i] = scale * z[i];
    return SHIFT + 1.0 / xz;
}

int main(void)
{
    int it, i, nthreads = 1, ok;
    double zeta = 0.0, rnorm, t0, tm, err, mflops, nnz;
    const char *sched = schedule_in_use();

    printf("\n\n NPB-specification CG kernel (ompdsm, OpenMP C)\n\n");
    printf(" Size: %d\n Iterations: %d\n", NA, NITER);

    /* The generator starts at 314159265 and one number is drawn before the
     * matrix is generated, as the specification's generation procedure does. */
    rng_state = 314159265ULL;
    (void)rng_next();
    make_matrix();
    nnz = (double)rowstr[NA];

#pragma omp parallel
#pragma omp master
    nthreads = omp_get_num_threads();

    /* One untimed step touches every array (page placement, caches), then
     * the start vector is reset so the timed run starts from scratch. */
#pragma omp parallel for schedule(runtime)
    for (i = 0; i < NA; i++)
        x[i] = 1.0;
    (void)power_step(&rnorm);
#pragma omp parallel for schedule(runtime)
    for (i = 0; i < NA; i++)
        x[i] = 1.0;

    t0 = omp_get_wtime();
    printf("\n   iteration           ||r||                 zeta\n");
    for (it = 1; it <= NITER; it++) {
        zeta = power_step(&rnorm);
        printf("    %5d       %20.14e%20.13f\n", it, rnorm, zeta);
    }
    tm = omp_get_wtime() - t0;
    if (tm <= 0.0) /* below clock resolution; keeps Mop/s finite */
        tm = 1.0e-9;

    err = fabs((zeta - ZETA_REF) / ZETA_REF);
    ok = (err <= 1.0e-10) && !isnan(zeta);
    printf("\n Zeta is    %20.13e\n Reference  %20.13e\n Error is   %20.13e\n",
           zeta, ZETA_REF, err);

    /* Our own operation count: per CG iteration one mat-vec (2 nnz) and
     * 10 NA for the two dot products and three vector updates; per outer
     * step the residual mat-vec plus 3 NA, and 5 NA for zeta and scaling. */
    mflops = (double)NITER *
             (CGITMAX * (2.0 * nnz + 10.0 * NA) + 2.0 * nnz + 3.0 * NA + 5.0 * NA) /
             tm / 1.0e6;
    printf("\n CG Benchmark Completed.\n");
    printf("Class = %s\n", STR(CLASS));
    printf("Size = %d\n", NA);
    printf("Iterations = %d\n", NITER);
    printf("Nonzeros = %.0f\n", nnz);
    printf("Threads = %d\n", nthreads);
    printf("Schedule = %s\n", sched);
    printf("Time in seconds = %.6f\n", tm);
    printf("Mop/s total = %.2f\n", mflops);
    printf("Operation type = floating point\n");
    printf("Verification = %s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
    return ok ? 0 : 1;
}
