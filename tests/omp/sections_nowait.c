/* sections nowait: no barrier at the end of the construct, so results are
   read only after an explicit barrier; two sections constructs back to
   back. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int a = 0, b = 0, c = 0, d = 0, bad = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp sections nowait
        {
#pragma omp section
            a = 1;
#pragma omp section
            b = 2;
        }
#pragma omp sections nowait
        {
#pragma omp section
            c = 3;
#pragma omp section
            d = 4;
        }
#pragma omp barrier
        if (a != 1 || b != 2 || c != 3 || d != 4)
            bad++;
    }
    CHECK(bad == 0, "section results not visible after the barrier");
    printf("a %d b %d c %d d %d\n", a, b, c, d);
    printf("sections_nowait: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
