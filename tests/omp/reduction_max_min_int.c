/* reduction(max:) and reduction(min:) (OpenMP 3.1, supported by ompcc) on
   int, long, long long, unsigned, short and char; the original value takes
   part (one case where the original is the extreme). */
#include <stdio.h>
#include <omp.h>

#define N 500
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

/* a scrambled sequence with negative and positive values */
static int f(int i) { return (int)((i * 7919L) % 1009) - 500; }

int main(void)
{
    int imax = -1000000, imin = 1000000, ibig = 2000, e_imax = -1000000,
        e_imin = 1000000, e_ibig = 2000;
    long lmax = 0, lmin = 0, e_lmax = 0, e_lmin = 0;
    long long qmax = -(1LL << 60), qmin = 1LL << 60;
    long long e_qmax = -(1LL << 60), e_qmin = 1LL << 60;
    unsigned umax = 0, umin = ~0u, e_umax = 0, e_umin = ~0u;
    short smax = -30000, smin = 30000, e_smax = -30000, e_smin = 30000;
    char cmax = 0, cmin = 0, e_cmax = 0, e_cmin = 0;
    int i;

#pragma omp parallel for reduction(max:imax, ibig, lmax, qmax, umax, smax, cmax) \
        reduction(min:imin, lmin, qmin, umin, smin, cmin)
    for (i = 0; i < N; i++) {
        int x = f(i);
        if (x > imax) imax = x;
        if (x < imin) imin = x;
        if (x > ibig) ibig = x;
        if ((long)x * 3 > lmax) lmax = (long)x * 3;
        if ((long)x * 3 < lmin) lmin = (long)x * 3;
        if ((long long)x << 40 > qmax) qmax = (long long)x << 40;
        if ((long long)x << 40 < qmin) qmin = (long long)x << 40;
        if ((unsigned)(x + 500) * 4000000u > umax) umax = (unsigned)(x + 500) * 4000000u;
        if ((unsigned)(x + 500) * 4000000u < umin) umin = (unsigned)(x + 500) * 4000000u;
        if (x * 50 > smax) smax = (short)(x * 50);
        if (x * 50 < smin) smin = (short)(x * 50);
        if (x / 5 > cmax) cmax = (char)(x / 5);
        if (x / 5 < cmin) cmin = (char)(x / 5);
    }
    for (i = 0; i < N; i++) {
        int x = f(i);
        if (x > e_imax) e_imax = x;
        if (x < e_imin) e_imin = x;
        if (x > e_ibig) e_ibig = x;
        if ((long)x * 3 > e_lmax) e_lmax = (long)x * 3;
        if ((long)x * 3 < e_lmin) e_lmin = (long)x * 3;
        if ((long long)x << 40 > e_qmax) e_qmax = (long long)x << 40;
        if ((long long)x << 40 < e_qmin) e_qmin = (long long)x << 40;
        if ((unsigned)(x + 500) * 4000000u > e_umax) e_umax = (unsigned)(x + 500) * 4000000u;
        if ((unsigned)(x + 500) * 4000000u < e_umin) e_umin = (unsigned)(x + 500) * 4000000u;
        if (x * 50 > e_smax) e_smax = (short)(x * 50);
        if (x * 50 < e_smin) e_smin = (short)(x * 50);
        if (x / 5 > e_cmax) e_cmax = (char)(x / 5);
        if (x / 5 < e_cmin) e_cmin = (char)(x / 5);
    }
    CHECK(imax == e_imax && imin == e_imin, "int");
    CHECK(ibig == 2000 && e_ibig == 2000, "original value is the max");
    CHECK(lmax == e_lmax && lmin == e_lmin, "long");
    CHECK(qmax == e_qmax && qmin == e_qmin, "long long");
    CHECK(umax == e_umax && umin == e_umin, "unsigned");
    CHECK(smax == e_smax && smin == e_smin, "short");
    CHECK(cmax == e_cmax && cmin == e_cmin, "char");
    printf("int %d %d long %ld %ld llong %lld %lld\n", imax, imin, lmax, lmin,
           qmax, qmin);
    printf("unsigned %u %u short %d %d char %d %d\n", umax, umin, smax, smin,
           cmax, cmin);
    printf("reduction_max_min_int: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
