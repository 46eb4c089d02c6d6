#include "inner.h"

/* 1 + 2 + ... + n by one task per term in a nested region */
int inner_sum(int n)
{
    int s = 0, i;
#pragma omp parallel shared(s)
    {
#pragma omp single
        for (i = 1; i <= n; i++) {
#pragma omp task shared(s) firstprivate(i)
            {
#pragma omp atomic
                s += i;
            }
        }
    }
    return s;
}
