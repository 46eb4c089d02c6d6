/*
 * ep.c - "Embarrassingly Parallel" kernel, written for ompdsm from the NPB
 * specification (Bailey et al., RNR-94-007, "The NAS Parallel Benchmarks",
 * kernel EP; problem classes as in the NPB 2 report NAS-95-020).
 *
 * What it computes: n = 2^M pairs of uniform deviates (x_j, y_j) in (-1,1)
 * are drawn from the specification's linear congruential generator
 * (a = 5^13, modulus 2^46, seed 271828183).  Pairs with t = x^2 + y^2 <= 1
 * are turned into Gaussian deviates X = x*sqrt(-2 ln t / t), Y = y*...
 * (Marsaglia polar method), the sums of X and Y are accumulated, and the
 * pairs are tallied into ten square annuli l <= max(|X|,|Y|) < l+1.
 *
 * Verification: the sums of X and Y must match the NPB reference values
 * to a relative error of 1e-8.  Where the annulus counts are published
 * (run outputs for classes B and C) they are compared exactly as well.
 * See README.md in this directory for where each reference value came from.
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S ep.c -o ep -lm     (CLASS = S|W|A|B|C)
 * The batch loop is "schedule(runtime)" so OMP_SCHEDULE selects the schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include "kernel.h"

/* ---- class selection (compile time) -------------------------------------
 * -DCLASS=S is a bare token; map it to a number through token pasting,
 * because "#if CLASS == S" would compare two undefined identifiers (both 0). */

#if CLASS_ID(CLASS) == 1
#define M 24
#elif CLASS_ID(CLASS) == 2
#define M 25
#elif CLASS_ID(CLASS) == 3
#define M 28
#elif CLASS_ID(CLASS) == 4
#define M 30
#elif CLASS_ID(CLASS) == 5
#define M 32
#else
#error "CLASS must be one of S, W, A, B, C"
#endif

/* Pairs are processed in batches of 2^MK so that the batch loop has enough
 * iterations for any schedule to balance, while each batch is long enough to
 * amortise the jump-ahead of the generator to its starting point. */
#define MK 16
#define NK (1L << MK)              /* pairs per batch */
#define NN (1L << (M - MK))        /* number of batches */
#define NQ 10                      /* number of annuli */

/* ---- the specification's pseudorandom generator ---------------------------
 * x_{k+1} = a * x_k mod 2^46, r_k = 2^-46 x_k.  The spec describes a
 * double-precision splitting; 64-bit unsigned arithmetic gives the same
 * sequence more simply: the product wraps modulo 2^64, and since 2^46
 * divides 2^64 its low 46 bits are exactly a*x mod 2^46. */
#define LCG_MASK ((1ULL << 46) - 1ULL)
#define LCG_A 1220703125ULL         /* 5^13 */
#define TWO_M46 1.4210854715202004e-14 /* 2^-46, exact */

static unsigned long long lcg_mul(unsigned long long a, unsigned long long x)
{
    return (a * x) & LCG_MASK;
}

/* a^n mod 2^46 by binary exponentiation: this is what lets every batch start
 * at its own point of the single global sequence, independent of threads. */
static unsigned long long lcg_pow(unsigned long long a, unsigned long long n)
{
    unsigned long long r = 1ULL;
    while (n) {
        if (n & 1ULL)
            r = lcg_mul(r, a);
        a = lcg_mul(a, a);
        n >>= 1;
    }
    return r;
}

/* Published reference sums (see README.md for provenance). */
static void reference(double *sx, double *sy, const long **q)
{
    static const long qB[NQ] = {393058470L, 375280898L, 70460742L, 4438852L,
                                105691L, 948L, 5L, 0L, 0L, 0L};
    static const long qC[NQ] = {1572172634L, 1501108549L, 281805648L,
                                17761221L, 424017L, 3821L, 13L, 0L, 0L, 0L};
    *q = NULL;
#if CLASS_ID(CLASS) == 1
    *sx = -3.247834652034740e+3; *sy = -6.958407078382297e+3;
#elif CLASS_ID(CLASS) == 2
    *sx = -2.863319731645753e+3; *sy = -6.320053679109499e+3;
#elif CLASS_ID(CLASS) == 3
    *sx = -4.295875165629892e+3; *sy = -1.580732573678431e+4;
#elif CLASS_ID(CLASS) == 4
    *sx = 4.033815542441498e+4;  *sy = -2.660669192809233e+4; *q = qB;
#else
    *sx = 4.764367927994629e+4;  *sy = -8.084072988037119e+4; *q = qC;
#endif
    (void)qB; (void)qC;
}

int main(void)
{
    const unsigned long long seed = 271828183ULL;
    double sx = 0.0, sy = 0.0;
    long q[NQ];
    long k;
    int l, nthreads = 1;
    double t0, t1, tm, mops;
    const char *sched = schedule_in_use();

    for (l = 0; l < NQ; l++)
        q[l] = 0;

    printf("\n\n NPB-specification EP kernel (ompdsm, OpenMP C)\n\n");
    printf(" Number of random numbers generated: %.0f\n",
           ldexp(1.0, M + 1));

    t0 = omp_get_wtime();
#pragma omp parallel private(k, l)
    {
        long qloc[NQ];
        for (l = 0; l < NQ; l++)
            qloc[l] = 0;
#pragma omp master
        nthreads = omp_get_num_threads();

#pragma omp for schedule(runtime) reduction(+:sx, sy)
        for (k = 0; k < NN; k++) {
            /* Batch k consumes numbers 2*NK*k+1 .. 2*NK*(k+1) of the
             * sequence, so its state starts at seed * a^(2*NK*k). */
            unsigned long long x =
                lcg_mul(lcg_pow(LCG_A, (unsigned long long)(2 * NK) * (unsigned long long)k), seed);
            double bsx = 0.0, bsy = 0.0;
            long i;
            for (i = 0; i < NK; i++) {
                double x1, x2, t;
                x = lcg_mul(LCG_A, x);
                x1 = 2.0 * ((double)x * TWO_M46) - 1.0;
                x = lcg_mul(LCG_A, x);
                x2 = 2.0 * ((double)x * TWO_M46) - 1.0;
                t = x1 * x1 + x2 * x2;
                if (t <= 1.0) {
                    double f = sqrt(-2.0 * log(t) / t);
                    double gx = x1 * f, gy = x2 * f;
                    double ax = fabs(gx), ay = fabs(gy);
                    int ql = (int)(ax > ay ? ax : ay);
                    qloc[ql]++;
                    bsx += gx;
                    bsy += gy;
                }
            }
            sx += bsx;
            sy += bsy;
        }
        /* OpenMP 3.0 has no array reductions: merge the per-thread tallies. */
#pragma omp critical
        for (l = 0; l < NQ; l++)
            q[l] += qloc[l];
    }
    t1 = omp_get_wtime();
    tm = t1 - t0;
    if (tm <= 0.0) /* below clock resolution; keeps Mop/s finite */
        tm = 1.0e-9;

    {
        double rsx, rsy, ex, ey;
        const long *rq;
        long gc = 0;
        int ok;
        reference(&rsx, &rsy, &rq);
        for (l = 0; l < NQ; l++)
            gc += q[l];
        ex = fabs((sx - rsx) / rsx);
        ey = fabs((sy - rsy) / rsy);
        ok = (ex <= 1.0e-8) && (ey <= 1.0e-8) && !isnan(sx) && !isnan(sy);
        if (rq != NULL)
            for (l = 0; l < NQ; l++)
                if (q[l] != rq[l])
                    ok = 0;

        printf("\n EP Benchmark Results:\n\n");
        printf(" N = 2^%d\n", M);
        printf(" No. Gaussian Pairs = %ld\n", gc);
        printf(" Sums = %25.15e %25.15e\n", sx, sy);
        printf(" Reference sums = %25.15e %25.15e\n", rsx, rsy);
        printf(" Relative errors = %10.3e %10.3e\n", ex, ey);
        printf(" Counts:\n");
        for (l = 0; l < NQ; l++)
            printf("%3d %15ld%s\n", l, q[l],
                   rq ? (q[l] == rq[l] ? "" : "   (reference differs)") : "");

        mops = ldexp(1.0, M + 1) / tm / 1.0e6;
        printf("\n EP Benchmark Completed.\n");
        printf("Class = %s\n", STR(CLASS));
        printf("Size = %.0f\n", ldexp(1.0, M + 1));
        printf("Iterations = 0\n");
        printf("Threads = %d\n", nthreads);
        printf("Schedule = %s\n", sched);
    printf("Time in seconds = %.6f\n", tm);
        printf("Mop/s total = %.2f\n", mops);
        printf("Operation type = Random numbers generated\n");
        printf("Verification = %s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
        return ok ? 0 : 1;
    }
}
