/*
 * producer.c - a producer loop under `single` creating independent work
 * items of about a millisecond each (the common task pattern: one thread
 * walks a list or loop and hands each item to a task).  An item is a
 * chain of ITER_PER_ITEM steps of a 64-bit xorshift-multiply mix seeded
 * with its number; its result goes to out[item].  (A plain linear
 * congruential step is affine: clang folds eight unrolled steps into one
 * multiply-add, so its items did an eighth of gcc's work.)
 * Verification: every 7th item recomputed serially after the timing.
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S producer.c -o producer  (CLASS = S|W)
 */
#include <stdio.h>
#include <omp.h>

#ifndef CLASS
#define CLASS S
#endif
#define S 1
#define W 2
#if CLASS == S
#define ITEMS 400
#define CLASS_NAME "S"
#elif CLASS == W
#define ITEMS 2000
#define CLASS_NAME "W"
#else
#error "CLASS must be S or W"
#endif
#define ITER_PER_ITEM 500000UL

static unsigned long out[ITEMS];

static unsigned long item(unsigned long seed)
{
    unsigned long x = seed + 1, i;
    for (i = 0; i < ITER_PER_ITEM; i++) {
        x ^= x >> 29;
        x *= 6364136223846793005UL;
    }
    return x;
}

int main(void)
{
    int threads = 1, bad = 0, k;
    double t0 = omp_get_wtime(), t;
#pragma omp parallel
    {
#pragma omp single
        {
            int i;
            threads = omp_get_num_threads();
            for (i = 0; i < ITEMS; i++) {
#pragma omp task
                out[i] = item((unsigned long)i);
            }
        }
    }
    t = omp_get_wtime() - t0;
    for (k = 0; k < ITEMS; k += 7)
        bad += out[k] != item((unsigned long)k);
    printf("Kernel = producer\nClass = %s\nItems = %d\nThreads = %d\n"
           "Time = %.6f\nVerification = %s\n", CLASS_NAME, ITEMS, threads, t,
           bad ? "UNSUCCESSFUL" : "SUCCESSFUL");
    return bad ? 1 : 0;
}
