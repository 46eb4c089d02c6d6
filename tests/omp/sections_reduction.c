/* sections reduction(+, *, |) over several sections and the combined
   parallel sections construct with a reduction. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int sum = 1, bits = 0;
    long prod = 3;
#pragma omp parallel
    {
#pragma omp sections reduction(+:sum) reduction(*:prod) reduction(|:bits)
        {
#pragma omp section
            { sum += 10; prod *= 2; bits |= 1; }
#pragma omp section
            { sum += 20; prod *= 5; bits |= 4; }
#pragma omp section
            { sum += 30; prod *= 7; bits |= 16; }
        }
    }
    CHECK(sum == 61, "sum");
    CHECK(prod == 3L * 2 * 5 * 7, "product");
    CHECK(bits == 21, "bitwise or");

    double d = 0.5;
#pragma omp parallel sections reduction(+:d)
    {
#pragma omp section
        d += 0.25;
#pragma omp section
        d += 0.125;
#pragma omp section
        d += 1.0;
    }
    CHECK(d == 1.875, "parallel sections double sum");
    printf("sum %d prod %ld bits %d d %.3f\n", sum, prod, bits, d);
    printf("sections_reduction: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
