/* parallel sections (combined construct) with num_threads, shared and
   private clauses; a section calling a worksharing-free function, and a
   region with a single section. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

int main(void)
{
    long r[3] = {0, 0, 0};
    int t, one = 0;
    omp_set_dynamic(0);
    int nt = omp_get_max_threads();
#pragma omp parallel sections num_threads(nt) shared(r) private(t)
    {
#pragma omp section
        { t = 5; r[0] = fact(t); }
#pragma omp section
        { t = 10; r[1] = fact(t); }
#pragma omp section
        { t = 3; r[2] = fact(t) + fact(t); }
    }
#pragma omp parallel sections
    {
#pragma omp section
        one++;
    }
    CHECK(r[0] == 120 && r[1] == 3628800L && r[2] == 12, "factorials");
    CHECK(one == 1, "single section");
    printf("r %ld %ld %ld one %d\n", r[0], r[1], r[2], one);
    printf("sections_parallel: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
