/* single private/firstprivate: a firstprivate copy has the original value
   in the single, private/firstprivate copies do not change the original. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int fp = 12, pv = 99, seen = 0, result = 0;
    int arr[4] = {1, 2, 3, 4};
#pragma omp parallel
    {
#pragma omp single firstprivate(fp, arr) private(pv)
        {
            seen = fp;
            pv = fp * 2;
            fp = -1;
            arr[0] = 100;
            result = pv + arr[3];
        }
    }
    CHECK(seen == 12, "firstprivate value inside single");
    CHECK(fp == 12 && arr[0] == 1, "firstprivate changed the original");
    CHECK(pv == 99, "private changed the original");
    CHECK(result == 28, "result");
    printf("seen %d result %d\n", seen, result);
    printf("single_private: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
