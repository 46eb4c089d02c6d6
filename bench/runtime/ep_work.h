/* bench/runtime/ep_work.h - the homogeneous compute kernel of the EP-like
 * loop, shared by rt_bench (ompdsm ABI) and ep_omp (gcc -fopenmp) so both
 * run exactly the same instructions per iteration.  One batch is a fixed
 * amount of floating-point work (a recurrence with a division, about 20
 * cycles a step) touching no memory, like a batch of NPB EP's pairs. */
#ifndef EP_WORK_H
#define EP_WORK_H

/* Batch k of `steps` steps; returns its contribution to the checksum. */
static inline double ep_batch(long k, int steps)
{
    double x = 1.0 + (double)k * 1e-6, s = 0.0;
    for (int i = 0; i < steps; i++) {
        x = x * 0.999999 + 1e-7;
        s += x / (1.0 + x * x);
    }
    return s;
}

/* Defaults: 512 batches of 40000 steps (about 0.4 ms each here). */
enum { EP_BATCHES = 512, EP_STEPS = 40000 };

#endif
