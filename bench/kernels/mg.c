/*
 * mg.c - multigrid kernel, written for ompdsm from the NPB specification
 * (Bailey et al., RNR-94-007, kernel MG; classes as in the NPB 2 report
 * NAS-95-020, with the later 128^3 definition of class W - see README.md).
 *
 * What it computes: NIT V-cycle iterations for the discrete Poisson problem
 * A u = v on an N x N x N periodic grid, starting from u = 0:
 *     r = v - A u ;  u = u + M r          (M = one V-cycle)
 * and reports the L2 norm of the final residual, sqrt(sum r^2 / N^3).
 * v is zero except at 20 points: +1 at the ten points where a field of the
 * specification's pseudorandom numbers (seed 314159265, a = 5^13, filled in
 * natural order, first index fastest) is largest and -1 at the ten where it
 * is smallest.
 *
 * All operators are 27-point stencils whose coefficient depends only on the
 * distance class of the neighbour (centre, face, edge, corner):
 *     A (residual)      : -8/3, 0, 1/6, 1/12
 *     P (restriction)   : 1/2, 1/4, 1/8, 1/16
 *     Q (prolongation)  : trilinear interpolation (1, 1/2, 1/4, 1/8)
 *     S (smoother)      : -3/8, 1/32, -1/64, 0   (classes S, W, A)
 * The V-cycle from level k (grid 2^k) down to level 1 (grid 2):
 *     r_{k-1} = P r_k ; z_{k-1} = M^{k-1} r_{k-1} ; z_k = Q z_{k-1} ;
 *     r_k = r_k - A z_k ; z_k = z_k + S r_k          (z_1 = S r_1)
 * A coarse point sits on the fine point with twice its (1-based) index.
 *
 * Verification: the final residual norm must match the NPB reference value
 * to a relative error of 1e-8 (reference values: see README.md).
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S mg.c -o mg -lm     (CLASS = S|W|A)
 * The outer (plane) loop of every stencil is "schedule(runtime)".
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include "kernel.h"

#if CLASS_ID(CLASS) == 1
#define LT 5
#define NIT 4
#define RNM2_REF 0.5307707005735e-04
#elif CLASS_ID(CLASS) == 2
#define LT 7
#define NIT 4
#define RNM2_REF 0.6467329375339e-05
#elif CLASS_ID(CLASS) == 3
#define LT 8
#define NIT 4
#define RNM2_REF 0.2433365309069e-05
#else
#error "CLASS must be one of S, W, A"
#endif

#define NG (1 << LT)              /* finest grid size per dimension */
#define NCHARGE 10                /* points of each sign in v */

/* Every level is stored with one ghost layer on each side, so periodic
 * neighbours are plain array reads after the ghost refresh (comm3). */
#define LSIZE(k) ((k) <= LT ? ((long)((1 << (k)) + 2) * ((1 << (k)) + 2) * ((1 << (k)) + 2)) : 0L)
#define TOTAL (LSIZE(1) + LSIZE(2) + LSIZE(3) + LSIZE(4) + LSIZE(5) + LSIZE(6) + LSIZE(7) + LSIZE(8))

/* u_all holds the solution on the finest level and the corrections z_k on
 * the coarser ones; r_all holds the residuals of every level. */
static double u_all[TOTAL];
static double r_all[TOTAL];
static long level_off[LT + 1];

/* The 20 nonzeros of v, kept as a list: v is far too sparse to be worth a
 * full grid, which keeps class A within about 320 MB. */
static long charge_idx[2 * NCHARGE];
static double charge_val[2 * NCHARGE];

static const double coef_a[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
static const double coef_s[4] = {-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0};
static const double coef_p[4] = {1.0 / 2.0, 1.0 / 4.0, 1.0 / 8.0, 1.0 / 16.0};

#define IX(i3, i2, i1, n) ((((long)(i3)) * (n) + (i2)) * (n) + (i1))

/* ---- the specification's pseudorandom generator (see ep.c) --------------- */
#define LCG_MASK ((1ULL << 46) - 1ULL)
#define LCG_A 1220703125ULL
#define TWO_M46 1.4210854715202004e-14

/* Refresh the ghost layer from the opposite interior faces.  The three
 * sweeps are ordered so that edges and corners come out right too. */
static void comm3(double *x, int m)
{
    int n = m + 2;
#pragma omp parallel
    {
        int i3, i2, i1;
#pragma omp for
        for (i3 = 1; i3 <= m; i3++)
            for (i2 = 1; i2 <= m; i2++) {
                x[IX(i3, i2, 0, n)] = x[IX(i3, i2, m, n)];
                x[IX(i3, i2, m + 1, n)] = x[IX(i3, i2, 1, n)];
            }
#pragma omp for
        for (i3 = 1; i3 <= m; i3++)
            for (i1 = 0; i1 <= m + 1; i1++) {
                x[IX(i3, 0, i1, n)] = x[IX(i3, m, i1, n)];
                x[IX(i3, m + 1, i1, n)] = x[IX(i3, 1, i1, n)];
            }
#pragma omp for
        for (i2 = 0; i2 <= m + 1; i2++)
            for (i1 = 0; i1 <= m + 1; i1++) {
                x[IX(0, i2, i1, n)] = x[IX(m, i2, i1, n)];
                x[IX(m + 1, i2, i1, n)] = x[IX(1, i2, i1, n)];
            }
    }
}

static void zero3(double *x, int m)
{
    long i, len = (long)(m + 2) * (m + 2) * (m + 2);
#pragma omp parallel for
    for (i = 0; i < len; i++)
        x[i] = 0.0;
}

/* Sums of the in-plane neighbours of row (i3,i2) for every i1: s1 holds the
 * 4 neighbours at distance 1 in (i2,i3), s2 the 4 diagonal ones.  With them
 * a 27-point stencil needs only a few additions per point:
 *   faces   = s1[i1] + x[i1-1] + x[i1+1]
 *   edges   = s2[i1] + s1[i1-1] + s1[i1+1]
 *   corners = s2[i1-1] + s2[i1+1]                                      */
static void plane_sums(const double *x, int n, int i3, int i2, double *s1, double *s2)
{
    int i1;
    const double *xm = x + IX(i3, i2 - 1, 0, n), *xp = x + IX(i3, i2 + 1, 0, n);
    const double *ym = x + IX(i3 - 1, i2, 0, n), *yp = x + IX(i3 + 1, i2, 0, n);
    const double *d1 = x + IX(i3 - 1, i2 - 1, 0, n), *d2 = x + IX(i3 - 1, i2 + 1, 0, n);
    const double *d3 = x + IX(i3 + 1, i2 - 1, 0, n), *d4 = x + IX(i3 + 1, i2 + 1, 0, n);
    for (i1 = 0; i1 < n; i1++) {
        s1[i1] = xm[i1] + xp[i1] + ym[i1] + yp[i1];
        s2[i1] = d1[i1] + d2[i1] + d3[i1] + d4[i1];
    }
}

/* r = v - A u on a level of size m.  v == NULL means the finest level's
 * right-hand side, i.e. the charge list; v == r is the in-place form used on
 * coarse levels (each point reads v before writing r at the same point). */
static void resid(const double *u, const double *v, double *r, int m)
{
    int n = m + 2, i3;
#pragma omp parallel for schedule(runtime)
    for (i3 = 1; i3 <= m; i3++) {
        double s1[NG + 2], s2[NG + 2];
        int i2, i1;
        for (i2 = 1; i2 <= m; i2++) {
            const double *uc = u + IX(i3, i2, 0, n);
            long row = IX(i3, i2, 0, n);
            plane_sums(u, n, i3, i2, s1, s2);
            for (i1 = 1; i1 <= m; i1++) {
                double edges = s2[i1] + s1[i1 - 1] + s1[i1 + 1];
                double corners = s2[i1 - 1] + s2[i1 + 1];
                double rhs = v ? v[row + i1] : 0.0;
                /* coef_a[1] is zero: the face term is omitted. */
                r[row + i1] = rhs - coef_a[0] * uc[i1] - coef_a[2] * edges - coef_a[3] * corners;
            }
        }
    }
    if (v == NULL) {
        int c;
        for (c = 0; c < 2 * NCHARGE; c++)
            r[charge_idx[c]] += charge_val[c];
    }
    comm3(r, m);
}

/* u = u + S r. */
static void psinv(const double *r, double *u, int m)
{
    int n = m + 2, i3;
#pragma omp parallel for schedule(runtime)
    for (i3 = 1; i3 <= m; i3++) {
        double s1[NG + 2], s2[NG + 2];
        int i2, i1;
        for (i2 = 1; i2 <= m; i2++) {
            const double *rc = r + IX(i3, i2, 0, n);
            double *uc = u + IX(i3, i2, 0, n);
            plane_sums(r, n, i3, i2, s1, s2);
            for (i1 = 1; i1 <= m; i1++) {
                double faces = s1[i1] + rc[i1 - 1] + rc[i1 + 1];
                double edges = s2[i1] + s1[i1 - 1] + s1[i1 + 1];
                /* coef_s[3] is zero: the corner term is omitted. */
                uc[i1] += coef_s[0] * rc[i1] + coef_s[1] * faces + coef_s[2] * edges;
            }
        }
    }
    comm3(u, m);
}

/* Restriction: coarse point j (1-based) takes the P-weighted neighbourhood
 * of fine point 2j. */
static void rprj3(const double *rf, int mf, double *rc, int mc)
{
    int nf = mf + 2, nc = mc + 2, j3;
#pragma omp parallel for schedule(runtime)
    for (j3 = 1; j3 <= mc; j3++) {
        double s1[NG + 2], s2[NG + 2];
        int j2, j1, i3 = 2 * j3;
        for (j2 = 1; j2 <= mc; j2++) {
            int i2 = 2 * j2;
            const double *fr = rf + IX(i3, i2, 0, nf);
            plane_sums(rf, nf, i3, i2, s1, s2);
            for (j1 = 1; j1 <= mc; j1++) {
                int i1 = 2 * j1;
                double faces = s1[i1] + fr[i1 - 1] + fr[i1 + 1];
                double edges = s2[i1] + s1[i1 - 1] + s1[i1 + 1];
                double corners = s2[i1 - 1] + s2[i1 + 1];
                rc[IX(j3, j2, j1, nc)] = coef_p[0] * fr[i1] + coef_p[1] * faces +
                                         coef_p[2] * edges + coef_p[3] * corners;
            }
        }
    }
    comm3(rc, mc);
}

/* Prolongation: u_fine += Q z.  Coarse point c lies on fine point 2c; the
 * fine points in between get averages of their coarse neighbours.  Coarse
 * index 0 (a ghost) feeds fine point 1; writes that land in the fine ghost
 * layer are overwritten by the comm3 at the end. */
static void interp(const double *z, int mc, double *u, int mf)
{
    int nc = mc + 2, nf = mf + 2, c3;
#pragma omp parallel for schedule(runtime)
    for (c3 = 0; c3 <= mc; c3++) {
        double z1[NG + 2], z2[NG + 2], z3[NG + 2];
        int c2, c1;
        for (c2 = 0; c2 <= mc; c2++) {
            const double *a = z + IX(c3, c2, 0, nc);       /* (c3,   c2)   */
            const double *b = z + IX(c3, c2 + 1, 0, nc);   /* (c3,   c2+1) */
            const double *c = z + IX(c3 + 1, c2, 0, nc);   /* (c3+1, c2)   */
            const double *d = z + IX(c3 + 1, c2 + 1, 0, nc);
            double *f00 = u + IX(2 * c3, 2 * c2, 0, nf);
            double *f01 = u + IX(2 * c3, 2 * c2 + 1, 0, nf);
            double *f10 = u + IX(2 * c3 + 1, 2 * c2, 0, nf);
            double *f11 = u + IX(2 * c3 + 1, 2 * c2 + 1, 0, nf);
            for (c1 = 0; c1 <= mc + 1; c1++) {
                z1[c1] = a[c1] + b[c1];
                z2[c1] = a[c1] + c[c1];
                z3[c1] = z1[c1] + c[c1] + d[c1];
            }
            for (c1 = 0; c1 <= mc; c1++) {
                int f1 = 2 * c1;
                f00[f1] += a[c1];
                f00[f1 + 1] += 0.5 * (a[c1] + a[c1 + 1]);
                f01[f1] += 0.5 * z1[c1];
                f01[f1 + 1] += 0.25 * (z1[c1] + z1[c1 + 1]);
                f10[f1] += 0.5 * z2[c1];
                f10[f1 + 1] += 0.25 * (z2[c1] + z2[c1 + 1]);
                f11[f1] += 0.25 * z3[c1];
                f11[f1 + 1] += 0.125 * (z3[c1] + z3[c1 + 1]);
            }
        }
    }
    comm3(u, mf);
}

static double norm2u3(const double *r, int m)
{
    int n = m + 2, i3;
    double s = 0.0;
#pragma omp parallel for reduction(+:s)
    for (i3 = 1; i3 <= m; i3++) {
        int i2, i1;
        for (i2 = 1; i2 <= m; i2++)
            for (i1 = 1; i1 <= m; i1++) {
                double t = r[IX(i3, i2, i1, n)];
                s += t * t;
            }
    }
    return sqrt(s / ((double)m * m * m));
}

/* One V-cycle applied to the finest residual, ending with u updated. */
static void mg3p(void)
{
    int k;
    for (k = LT; k >= 2; k--)
        rprj3(r_all + level_off[k], 1 << k, r_all + level_off[k - 1], 1 << (k - 1));
    zero3(u_all + level_off[1], 2);
    psinv(r_all + level_off[1], u_all + level_off[1], 2);
    for (k = 2; k < LT; k++) {
        double *zk = u_all + level_off[k], *rk = r_all + level_off[k];
        zero3(zk, 1 << k);
        interp(u_all + level_off[k - 1], 1 << (k - 1), zk, 1 << k);
        resid(zk, rk, rk, 1 << k);
        psinv(rk, zk, 1 << k);
    }
    interp(u_all + level_off[LT - 1], NG / 2, u_all + level_off[LT], NG);
    resid(u_all + level_off[LT], NULL, r_all + level_off[LT], NG);
    psinv(r_all + level_off[LT], u_all + level_off[LT], NG);
}

/* Place the charges: stream through the whole random field in natural order
 * (element e, counted from 0 with the first index fastest, receives the
 * (e+1)-th number of the sequence) keeping the ten largest and the ten
 * smallest values.  No grid is needed for this. */
static void make_charges(void)
{
    double big[NCHARGE], small[NCHARGE];
    long bigpos[NCHARGE], smallpos[NCHARGE];
    unsigned long long xs = 314159265ULL;
    long e, total = (long)NG * NG * NG;
    int c, nb = 0, ns = 0;

    for (e = 0; e < total; e++) {
        double val;
        xs = (LCG_A * xs) & LCG_MASK;
        val = (double)xs * TWO_M46;
        /* Keep sorted lists: big[] descending, small[] ascending. */
        if (nb < NCHARGE || val > big[nb - 1]) {
            int pos = (nb < NCHARGE) ? nb++ : NCHARGE - 1;
            while (pos > 0 && big[pos - 1] < val) {
                big[pos] = big[pos - 1];
                bigpos[pos] = bigpos[pos - 1];
                pos--;
            }
            big[pos] = val;
            bigpos[pos] = e;
        }
        if (ns < NCHARGE || val < small[ns - 1]) {
            int pos = (ns < NCHARGE) ? ns++ : NCHARGE - 1;
            while (pos > 0 && small[pos - 1] > val) {
                small[pos] = small[pos - 1];
                smallpos[pos] = smallpos[pos - 1];
                pos--;
            }
            small[pos] = val;
            smallpos[pos] = e;
        }
    }
    for (c = 0; c < NCHARGE; c++) {
        long eb = bigpos[c], es = smallpos[c];
        charge_idx[c] = IX(eb / ((long)NG * NG) + 1, (eb / NG) % NG + 1, eb % NG + 1, NG + 2);
        charge_val[c] = 1.0;
        charge_idx[NCHARGE + c] = IX(es / ((long)NG * NG) + 1, (es / NG) % NG + 1, es % NG + 1, NG + 2);
        charge_val[NCHARGE + c] = -1.0;
    }
}

int main(void)
{
    int k, it, nthreads = 1, ok;
    double t0, tm, rnm2, err, mflops;
    double *u = NULL, *r = NULL;
    const char *sched = schedule_in_use();

    printf("\n\n NPB-specification MG kernel (ompdsm, OpenMP C)\n\n");
    printf(" Size: %dx%dx%d\n Iterations: %d\n", NG, NG, NG, NIT);

    level_off[0] = 0;
    for (k = 1; k <= LT; k++)
        level_off[k] = (k == 1) ? 0 : level_off[k - 1] + LSIZE(k - 1);
    u = u_all + level_off[LT];
    r = r_all + level_off[LT];

#pragma omp parallel
#pragma omp master
    nthreads = omp_get_num_threads();

    make_charges();

    /* One untimed iteration touches every level (page placement, caches);
     * the timed run then starts again from u = 0. */
    for (k = 1; k <= LT; k++) {
        zero3(u_all + level_off[k], 1 << k);
        zero3(r_all + level_off[k], 1 << k);
    }
    resid(u, NULL, r, NG);
    mg3p();
    zero3(u, NG);

    t0 = omp_get_wtime();
    resid(u, NULL, r, NG);
    for (it = 1; it <= NIT; it++) {
        mg3p();
        resid(u, NULL, r, NG);
    }
    tm = omp_get_wtime() - t0;
    if (tm <= 0.0) /* below clock resolution; keeps Mop/s finite */
        tm = 1.0e-9;

    rnm2 = norm2u3(r, NG);
    err = fabs(rnm2 - RNM2_REF) / RNM2_REF;
    ok = (err <= 1.0e-8) && !isnan(rnm2);
    printf("\n L2 Norm is  %20.13e\n Reference   %20.13e\n Error is    %20.13e\n",
           rnm2, RNM2_REF, err);

    /* 58 operations per finest-grid point per iteration: the customary
     * operation count for this kernel, kept so Mop/s are comparable. */
    mflops = 58.0 * NIT * (double)NG * NG * NG / tm / 1.0e6;
    printf("\n MG Benchmark Completed.\n");
    printf("Class = %s\n", STR(CLASS));
    printf("Size = %dx%dx%d\n", NG, NG, NG);
    printf("Iterations = %d\n", NIT);
    printf("Threads = %d\n", nthreads);
    printf("Schedule = %s\n", sched);
    printf("Time in seconds = %.6f\n", tm);
    printf("Mop/s total = %.2f\n", mflops);
    printf("Operation type = floating point\n");
    printf("Verification = %s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
    return ok ? 0 : 1;
}
