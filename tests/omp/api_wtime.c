/* omp_get_wtime is monotonic (never decreases in a thread, in serial code
   and in every thread of a region) and omp_get_wtick is positive; no time
   is printed. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    double t0 = omp_get_wtime(), prev = t0, tick = omp_get_wtick();
    int k, bad = 0;
    volatile double sink = 0;
    CHECK(tick > 0.0 && tick < 1.0, "wtick");
    for (k = 0; k < 1000; k++) {
        double t = omp_get_wtime();
        if (t < prev)
            bad++;
        prev = t;
        sink += k;
    }
#pragma omp parallel reduction(+:bad)
    {
        double p = omp_get_wtime(), q;
        int j;
        if (omp_get_wtick() <= 0.0)
            bad++;
        for (j = 0; j < 200; j++) {
            q = omp_get_wtime();
            if (q < p)
                bad++;
            p = q;
        }
    }
    double t1 = omp_get_wtime();
    CHECK(bad == 0, "wtime went backwards");
    CHECK(t1 >= t0, "elapsed time negative");
    CHECK(t1 - t0 < 3600.0, "elapsed time implausible");
    printf("wtime monotonic, wtick positive\n");
    printf("api_wtime: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
