/* threadprivate on a function-static variable and on a file-static array:
   each thread keeps its own call counter across calls and across regions. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int hist[4];
#pragma omp threadprivate(hist)

static int next_id(void)
{
    static int calls = 0;
#pragma omp threadprivate(calls)
    calls++;
    hist[calls % 4]++;
    return calls;
}

int main(void)
{
    int bad = 0, k;
    omp_set_dynamic(0);
#pragma omp parallel reduction(+:bad)
    {
        int j, last = 0;
        for (j = 0; j < 10; j++)
            last = next_id();
        if (last != 10)
            bad++;
    }
#pragma omp parallel reduction(+:bad)
    {
        int last = 0, j;
        for (j = 0; j < 5; j++)
            last = next_id();
        if (last != 15)                 /* persisted from the first region */
            bad++;
        if (hist[0] + hist[1] + hist[2] + hist[3] != 15 || hist[3] != 4)
            bad++;
    }
    int serial = next_id();             /* master's copy */
    CHECK(bad == 0, "per-thread static counters");
    CHECK(serial == 16, "master copy of the static counter");
    for (k = 0; k < 4; k++)
        printf("%d ", hist[k]);
    printf("\nserial %d\n", serial);
    printf("threadprivate_static_local: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
