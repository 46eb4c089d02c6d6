/*
 * fib.c - recursive Fibonacci with one task per call above a cut-off
 * (the "fib" kernel of the Barcelona OpenMP Tasks Suite, written for
 * ompdsm from the algorithm: fib(n) = fib(n-1) + fib(n-2), each half a
 * task sharing its result variable, taskwait before the sum).  Below the
 * cut-off the recursion is serial.  Verification: the iterative value.
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S fib.c -o fib     (CLASS = S|W)
 */
#include <stdio.h>
#include <omp.h>

#ifndef CLASS
#define CLASS S
#endif
#define S 1
#define W 2
#if CLASS == S
#define FIB_N 32
#define FIB_CUT 18
#define CLASS_NAME "S"
#elif CLASS == W
#define FIB_N 36
#define FIB_CUT 20
#define CLASS_NAME "W"
#else
#error "CLASS must be S or W"
#endif

static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static long fib(int n)
{
    long x, y;
    if (n < FIB_CUT)
        return fib_serial(n);
#pragma omp task shared(x)
    x = fib(n - 1);
#pragma omp task shared(y)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

int main(void)
{
    long r = 0, a = 0, b = 1;
    int k, threads = 1;
    double t0 = omp_get_wtime(), t;
#pragma omp parallel
    {
#pragma omp single
        {
            threads = omp_get_num_threads();
            r = fib(FIB_N);
        }
    }
    t = omp_get_wtime() - t0;
    for (k = 0; k < FIB_N; k++) {
        long c = a + b;
        a = b;
        b = c;
    }
    printf("Kernel = fib\nClass = %s\nN = %d\nCutoff = %d\nThreads = %d\n"
           "Result = %ld\nTime = %.6f\nVerification = %s\n", CLASS_NAME, FIB_N,
           FIB_CUT, threads, r, t, r == a ? "SUCCESSFUL" : "UNSUCCESSFUL");
    return r == a ? 0 : 1;
}
