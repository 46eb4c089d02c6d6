/* implicit barriers at the end of for, sections and single (without nowait)
   and at the end of the parallel region make all writes visible; tested by
   reading data written by other threads (dynamic schedules). */
#include <stdio.h>
#include <omp.h>

#define N 400
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int a[N], b[N];
    int s1 = 0, s2 = 0, bad = 0, i;
#pragma omp parallel reduction(+:bad)
    {
        int k;
#pragma omp for schedule(dynamic, 3)
        for (k = 0; k < N; k++)
            a[k] = k + 1;
        /* barrier of the for */
#pragma omp for schedule(dynamic, 5)
        for (k = 0; k < N; k++)
            b[k] = a[N - 1 - k] * 2;
#pragma omp sections
        {
#pragma omp section
            s1 = b[0] + b[N - 1];
#pragma omp section
            s2 = b[N / 2];
        }
        /* barrier of the sections */
        if (s1 != 2 * N + 2 || s2 != 2 * (N - N / 2))
            bad++;
#pragma omp single
        a[0] = -5;
        if (a[0] != -5)
            bad++;
    }
    /* barrier at the end of the region */
    for (i = 0; i < N; i++)
        CHECK(b[i] == 2 * (N - i), "b after region");
    CHECK(bad == 0, "value not visible after an implicit barrier");
    printf("s1 %d s2 %d\n", s1, s2);
    printf("barrier_implicit: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
