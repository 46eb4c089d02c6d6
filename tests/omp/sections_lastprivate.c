/* sections lastprivate: after the construct the original variable has the
   value assigned in the lexically last section, whatever thread ran it;
   also firstprivate and lastprivate on the same variable (only the last
   section modifies it: a thread's private copy is shared by all the
   sections that thread runs, in an unspecified order). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int x = -1, y = 10, r;
    double d = 0.0;
    int arr[3] = {0, 0, 0};
    for (r = 0; r < 3; r++) {
#pragma omp parallel
        {
#pragma omp sections lastprivate(x, d, arr) firstprivate(y) lastprivate(y)
            {
#pragma omp section
                { x = 1; d = 1.5; arr[0] = 1; }
#pragma omp section
                { x = 2; d = 2.5; arr[1] = 2; }
#pragma omp section
                { x = 3 + r; d = 3.25 + r; arr[0] = 7; arr[1] = 8; arr[2] = 9; y += 3; }
            }
        }
        CHECK(x == 3 + r, "lastprivate scalar");
        CHECK(d == 3.25 + r, "lastprivate double");
        CHECK(arr[0] == 7 && arr[1] == 8 && arr[2] == 9, "lastprivate array");
        CHECK(y == 10 + 3 * (r + 1), "firstprivate+lastprivate");
        printf("round %d: x %d d %.2f y %d\n", r, x, d, y);
    }
    /* combined parallel sections */
    int z = 0;
#pragma omp parallel sections lastprivate(z)
    {
        z = 100;
#pragma omp section
        z = 200;
    }
    CHECK(z == 200, "parallel sections lastprivate");
    printf("z %d\n", z);
    printf("sections_lastprivate: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
