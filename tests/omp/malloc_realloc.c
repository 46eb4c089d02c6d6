/* realloc in the serial part (grow and shrink) keeps the old contents,
   which threads then read; the grown part is filled in parallel. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int n = 100, i, bad = 0, step;
    int *a = malloc(n * sizeof *a);
    if (!a)
        return 1;
#pragma omp parallel for
    for (i = 0; i < n; i++)
        a[i] = i;
    for (step = 0; step < 4; step++) {
        int old = n;
        n *= 4;
        int *na = realloc(a, n * sizeof *a);
        if (!na)
            return 1;
        a = na;
#pragma omp parallel reduction(+:bad)
        {
            int k;
#pragma omp for
            for (k = 0; k < old; k++)
                if (a[k] != k)
                    bad++;
#pragma omp for
            for (k = old; k < n; k++)
                a[k] = k;
        }
    }
    n = 777;
    a = realloc(a, n * sizeof *a);
    if (!a)
        return 1;
    long s = 0;
#pragma omp parallel for reduction(+:s)
    for (i = 0; i < n; i++)
        s += a[i];
    CHECK(bad == 0, "contents after realloc");
    CHECK(s == 777L * 776 / 2, "after shrinking");
    printf("s %ld\n", s);
    free(a);
    printf("malloc_realloc: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
