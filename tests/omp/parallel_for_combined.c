/* combined parallel for with many clauses at once: if, num_threads,
   default(none), shared, private, firstprivate, lastprivate, reduction,
   schedule. */
#include <stdio.h>
#include <omp.h>

#define N 1000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int a[N], i, tmp, base = 5, last = -1, n = N;
    long sum = 0;
    omp_set_dynamic(0);
    int nt = omp_get_max_threads();

#pragma omp parallel for if (n > 10) num_threads(nt) default(none) \
        shared(a, n) private(tmp) firstprivate(base) lastprivate(last) \
        reduction(+:sum) schedule(static, 7)
    for (i = 0; i < n; i++) {
        tmp = i * 3;
        a[i] = tmp + base;
        last = a[i];
        sum += a[i];
    }
    long esum = 0;
    for (i = 0; i < N; i++) {
        CHECK(a[i] == 3 * i + 5, "a[i]");
        esum += 3 * i + 5;
    }
    CHECK(sum == esum, "reduction");
    CHECK(last == 3 * (N - 1) + 5, "lastprivate");
    CHECK(base == 5, "firstprivate changed the original");
    printf("sum %ld last %d\n", sum, last);
    printf("parallel_for_combined: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
