/* for with non-unit strides in every increment form OpenMP 3.0 allows:
   var += s, var = var + s, var = s + var, with constant and run-time s and
   trip counts that do and do not divide evenly. */
#include <stdio.h>
#include <omp.h>

#define R 3000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int expv[R], got[R];

static void compare(const char *what)
{
    int k, n = 0, bad = 0;
    for (k = 0; k < R; k++) {
        if (expv[k] != got[k])
            bad++;
        n += got[k];
        expv[k] = got[k] = 0;
    }
    CHECK(bad == 0, what);
    printf("%s: %d iterations\n", what, n);
}

int main(void)
{
    int i, s = 13, lo = 5, hi = 2999;

    for (i = 5; i < 1000; i += 7) expv[i]++;
#pragma omp parallel for
    for (i = 5; i < 1000; i += 7) got[i]++;
    compare("i += 7");

    for (i = lo; i < hi; i += s) expv[i]++;
#pragma omp parallel for schedule(static)
    for (i = lo; i < hi; i += s) got[i]++;
    compare("i += s (run time)");

    for (i = 0; i < 2800; i = i + 100) expv[i]++;
#pragma omp parallel for schedule(static, 3)
    for (i = 0; i < 2800; i = i + 100) got[i]++;
    compare("i = i + 100 (exact)");

    for (i = 1; i < 2801; i = 50 + i) expv[i]++;
#pragma omp parallel for schedule(dynamic)
    for (i = 1; i < 2801; i = 50 + i) got[i]++;
    compare("i = 50 + i");

    for (i = -500; i < 2500; i += 1001) expv[i + 500]++;
#pragma omp parallel for schedule(guided, 2)
    for (i = -500; i < 2500; i += 1001) got[i + 500]++;
    compare("i += 1001 (3 iterations)");

    /* sum of the loop variable over a strided loop */
    long sum = 0, esum = 0;
    for (i = 3; i < 2999; i += 11) esum += i;
#pragma omp parallel for reduction(+:sum)
    for (i = 3; i < 2999; i += 11) sum += i;
    CHECK(sum == esum, "strided sum");
    printf("strided sum %ld\n", sum);

    printf("for_stride: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
