/* shared locals declared together with other variables that use them:
   `int x = 3, *p = &x, y = x + 1;` where a parallel region shares x.  The
   later declarators must see the very x the region updates (p points to
   it) and x's initial value; several shared locals in one declaration,
   of different types (double, a struct, an array), and a non-shared one
   in between. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct pt { int a, b; };

int main(void)
{
    int x = 3, *p = &x, y = x + 1;
    double s = 0.5, t = s * 2, *ps = &s;
    struct pt q = {1, 2}, *pq = &q;
    long arr[4] = {10, 20, 30, 40}, *pa = arr + 1, first = arr[0];
    int n = 0;
#pragma omp parallel shared(x, s, q, arr, n)
    {
#pragma omp atomic
        x += 1;
#pragma omp atomic
        s += 1.0;
#pragma omp critical
        {
            q.b += 1;
            arr[1] += 2;
            n++;
        }
    }
    CHECK(x == 3 + n, "x holds every thread's increment");
    CHECK(*p == x, "p points to the x the region updated");
    CHECK(y == 4, "y was initialised from x's initial value");
    CHECK(t == 1.0, "t was initialised from s's initial value");
    CHECK(*ps == s && s == 0.5 + n, "ps points to the s the region updated");
    CHECK(pq->b == 2 + n && pq->a == 1, "pq points to the q the region updated");
    CHECK(*pa == 20 + 2 * n, "pa points into the arr the region updated");
    CHECK(first == 10, "first was initialised from arr's initial value");
    /* the same, inside a region-free block and a loop */
    int total = 0;
    for (int k = 0; k < 3; k++) {
        int c = k, *pc = &c, d = c * 10;
#pragma omp parallel shared(c)
        {
#pragma omp atomic
            c += 1;
        }
        total += *pc + d;
        CHECK(*pc == k + n, "pc points to the c the region updated");
    }
    CHECK(total == 3 * n + 3 + 30, "loop totals");
    printf("declaration groups: %s\n", nfail ? "FAILED" : "ok");
    return nfail != 0;
}
