/* reduction(max:) and reduction(min:) (OpenMP 3.1, supported by ompcc) on
   float and double, including negative values and a combined use with a
   sum reduction in one clause list. */
#include <stdio.h>
#include <omp.h>

#define N 600
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static double g(int i) { return ((i * 104729L) % 2003 - 1000) * 0.125; }

int main(void)
{
    float fmax = -1e30f, fmin = 1e30f, e_fmax = -1e30f, e_fmin = 1e30f;
    double dmax = -1e300, dmin = 1e300, e_dmax = -1e300, e_dmin = 1e300;
    double sum = 0, e_sum = 0;
    int i;
#pragma omp parallel
    {
        int k;
#pragma omp for reduction(max:fmax, dmax) reduction(min:fmin, dmin) \
        reduction(+:sum) schedule(dynamic, 7)
        for (k = 0; k < N; k++) {
            double x = g(k);
            float y = (float)(x * 0.5);
            if (y > fmax) fmax = y;
            if (y < fmin) fmin = y;
            if (x > dmax) dmax = x;
            if (x < dmin) dmin = x;
            sum += x;
        }
    }
    for (i = 0; i < N; i++) {
        double x = g(i);
        float y = (float)(x * 0.5);
        if (y > e_fmax) e_fmax = y;
        if (y < e_fmin) e_fmin = y;
        if (x > e_dmax) e_dmax = x;
        if (x < e_dmin) e_dmin = x;
        e_sum += x;
    }
    CHECK(fmax == e_fmax && fmin == e_fmin, "float max/min");
    CHECK(dmax == e_dmax && dmin == e_dmin, "double max/min");
    CHECK(sum == e_sum, "sum next to max/min");
    printf("float %.4f %.4f double %.3f %.3f sum %.3f\n", fmax, fmin, dmax,
           dmin, sum);
    printf("reduction_max_min_float: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
