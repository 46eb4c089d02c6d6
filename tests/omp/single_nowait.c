/* single nowait: executed once; without the barrier the result is read only
   after an explicit barrier. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int a = 0, b = 0, c = 0, bad = 0, team = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp single nowait
        a++;
#pragma omp single nowait
        b += 10;
#pragma omp single nowait
        {
            c = 7;
        }
#pragma omp master
        team = omp_get_num_threads();
#pragma omp barrier
        if (a != 1 || b != 10 || c != 7)
            bad++;
    }
    CHECK(bad == 0, "values after the barrier");
    CHECK(a == 1 && b == 10 && c == 7, "single nowait executed once");
    printf("a %d b %d c %d team %d\n", a, b, c, team);
    printf("single_nowait: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
