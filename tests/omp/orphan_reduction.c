/* orphaned for with reductions (+, *, max) on globals, which are shared in
   the enclosing region; the reduced values are complete after the loop's
   barrier; called again from serial code it accumulates on one thread. */
#include <stdio.h>
#include <omp.h>

#define N 400
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

long gsum;
static double gprod = 1.0;
static int gmax;

static void reduce_all(const int *v)
{
    int i;
#pragma omp for reduction(+:gsum) reduction(*:gprod) reduction(max:gmax)
    for (i = 0; i < N; i++) {
        gsum += v[i];
        if (i % 100 == 0)
            gprod *= 2.0;
        if (v[i] > gmax)
            gmax = v[i];
    }
}

int main(void)
{
    int v[N], i, bad = 0;
    long e = 0;
    int emax = 0;
    for (i = 0; i < N; i++) {
        v[i] = (i * 37) % 101;
        e += v[i];
        if (v[i] > emax)
            emax = v[i];
    }
#pragma omp parallel reduction(+:bad)
    {
        reduce_all(v);
        if (gsum != e || gprod != 16.0 || gmax != emax)
            bad++;
    }
    CHECK(bad == 0, "reduced values after the orphaned loop's barrier");
    reduce_all(v);                  /* serial: accumulates again */
    CHECK(gsum == 2 * e && gprod == 256.0 && gmax == emax, "serial call");
    printf("gsum %ld gprod %.1f gmax %d\n", gsum, gprod, gmax);
    printf("orphan_reduction: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
