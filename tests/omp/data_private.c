/* private: every thread gets its own uninitialised copy of scalars,
   arrays, structs and pointers (never read before written here); copies
   are independent (checked across a barrier) and the originals are not
   modified. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct rec { int id; double v[3]; };

int main(void)
{
    int x = 11, arr[8], k, bad = 0;
    double d = 2.5;
    struct rec r = {1, {1, 2, 3}};
    int target = 5;
    int *p = &target;
    for (k = 0; k < 8; k++)
        arr[k] = k;
#pragma omp parallel private(x, arr, d, r, p, k) reduction(+:bad)
    {
        int me = omp_get_thread_num();
        x = me;
        d = me * 0.5;
        for (k = 0; k < 8; k++)
            arr[k] = me * 8 + k;
        r.id = me;
        r.v[0] = r.v[1] = r.v[2] = me;
        p = &x;
#pragma omp barrier
        if (x != me || d != me * 0.5 || r.id != me || r.v[2] != me || p != &x)
            bad++;
        for (k = 0; k < 8; k++)
            if (arr[k] != me * 8 + k)
                bad++;
    }
    CHECK(bad == 0, "private copies are not independent");
    CHECK(x == 11 && d == 2.5 && r.id == 1 && r.v[2] == 3 && p == &target,
          "original modified");
    for (k = 0; k < 8; k++)
        CHECK(arr[k] == k, "original array modified");

    /* private on a worksharing loop inside a region where x is shared */
    int sum = 0;
#pragma omp parallel
    {
#pragma omp for private(x) reduction(+:sum)
        for (k = 0; k < 100; k++) {
            x = k * 2;
            sum += x;
        }
    }
    CHECK(sum == 9900, "private on for");
    CHECK(x == 11, "original modified by for private");
    printf("x %d sum %d\n", x, sum);
    printf("data_private: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
