/* lastprivate on the loop iteration variable: after the loop it has the
   value it would have after a sequential execution (OpenMP 3.0 example
   A.6: "i == n-1 here" for a loop to n-1), for unit, strided, negative,
   inclusive and unsigned loops and a combined parallel for. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int i, e, n = 100, a[100], b[100];
    unsigned u, eu;
    for (i = 0; i < n; i++)
        b[i] = i;

    /* the pattern of the OpenMP 3.0 example */
#pragma omp parallel
    {
#pragma omp for lastprivate(i)
        for (i = 0; i < n - 1; i++)
            a[i] = b[i] + b[i + 1];
    }
    a[i] = b[i];
    CHECK(i == n - 1 && a[n - 1] == n - 1 && a[0] == 1, "example A.6");

    for (e = 0; e < 10; e += 3) ;
#pragma omp parallel for lastprivate(i)
    for (i = 0; i < 10; i += 3) ;
    CHECK(i == e, "stride 3");
    printf("i < 10 step 3: %d\n", i);

    for (e = 20; e >= -3; e -= 4) ;
#pragma omp parallel for lastprivate(i) schedule(dynamic)
    for (i = 20; i >= -3; i -= 4) ;
    CHECK(i == e, "negative stride");
    printf("i >= -3 step -4: %d\n", i);

    for (e = 0; e <= 10; e++) ;
#pragma omp parallel for lastprivate(i) schedule(guided)
    for (i = 0; i <= 10; i++) ;
    CHECK(i == e, "inclusive");
    printf("i <= 10: %d\n", i);

    for (eu = 10; eu > 0; eu--) ;
#pragma omp parallel for lastprivate(u) schedule(static, 2)
    for (u = 10; u > 0; u--) ;
    CHECK(u == eu, "unsigned down to 0");
    printf("u > 0: %u\n", u);

    printf("data_lastprivate_loopvar: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
