/* counts lattice points inside circles of several radii with a collapsed
   parallel loop and a reduction (an integer "pi" computation), compared
   with a serial row-by-row count. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int radii[3] = {10, 57, 200}, r;
    for (r = 0; r < 3; r++) {
        long R = radii[r], x, y, cnt = 0, ecnt = 0;
#pragma omp parallel for collapse(2) reduction(+:cnt) schedule(guided)
        for (x = -R; x <= R; x++)
            for (y = -R; y <= R; y++)
                if (x * x + y * y <= R * R)
                    cnt++;
        for (x = -R; x <= R; x++) {
            long h = 0;
            while ((h + 1) * (h + 1) + x * x <= R * R)
                h++;
            ecnt += x * x <= R * R ? 2 * h + 1 : 0;
        }
        CHECK(cnt == ecnt, "lattice point count");
        printf("R=%ld points %ld pi~%.4f\n", R, cnt, (double)cnt / (R * R));
    }
    printf("misc_circle_count: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
