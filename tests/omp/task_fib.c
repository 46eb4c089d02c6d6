/* recursive tasks: fib(n) with a task per call above a cutoff and taskwait
   before combining, compared with the closed recursion. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static long fib(int n)
{
    long a, b;
    if (n < 2)
        return n;
    if (n < 12)
        return fib_serial(n);
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(void)
{
    long r = -1;
    int n = 22;
#pragma omp parallel
    {
#pragma omp single
        r = fib(n);
    }
    long e = 0, f0 = 0, f1 = 1;
    int k;
    for (k = 0; k < n; k++) {
        e = f0 + f1;
        f0 = f1;
        f1 = e;
    }
    e = f0;                          /* fib(n) by iteration */
    CHECK(r == e && r == fib_serial(n), "fib with tasks");
    printf("fib(%d) = %ld\n", n, r);
    printf("task_fib: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
