/* lastprivate on for: the original gets the value from the sequentially
   last iteration (whatever thread ran it, any schedule) for scalars, an
   array and a struct; firstprivate+lastprivate on the same variable;
   lastprivate with nowait is read after a barrier. */
#include <stdio.h>
#include <omp.h>

#define N 97
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct pt { int x, y; };

int main(void)
{
    int i, last = -1, arr[3] = {0, 0, 0}, fl = 5, ln = -1, bad = 0;
    double dl = 0;
    struct pt p = {0, 0};

#pragma omp parallel for lastprivate(last, dl, arr, p) schedule(dynamic, 3)
    for (i = 0; i < N; i++) {
        last = i * 2;
        dl = i * 0.5;
        arr[0] = i; arr[1] = i + 1; arr[2] = i + 2;
        p.x = i; p.y = -i;
    }
    CHECK(last == (N - 1) * 2, "scalar");
    CHECK(dl == (N - 1) * 0.5, "double");
    CHECK(arr[0] == N - 1 && arr[2] == N + 1, "array");
    CHECK(p.x == N - 1 && p.y == 1 - N, "struct");

    /* every iteration assigns fl from its firstprivate copy */
#pragma omp parallel for firstprivate(fl) lastprivate(fl) schedule(guided)
    for (i = 0; i < N; i++)
        fl = i + (fl >= 5 ? 1000 : 0);
    CHECK(fl == N - 1 + 1000, "firstprivate+lastprivate");

#pragma omp parallel reduction(+:bad)
    {
        int k;
#pragma omp for lastprivate(ln) nowait schedule(static, 4)
        for (k = 10; k > 0; k--)
            ln = k;
#pragma omp barrier
        if (ln != 1)
            bad++;
    }
    CHECK(bad == 0, "lastprivate with nowait after a barrier");
    printf("last %d dl %.1f arr %d %d %d p %d %d fl %d ln %d\n", last, dl,
           arr[0], arr[1], arr[2], p.x, p.y, fl, ln);
    printf("data_lastprivate: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
