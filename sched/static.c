/* sched/static.c - the static schedules: no communication at all. */
#include "sched.h"

void sched_static_block(uint64_t n, int tid, int nthreads, uint64_t *lo,
                        uint64_t *hi)
{
    uint64_t t = (uint64_t)nthreads, q = n / t, r = n % t, i = (uint64_t)tid;
    if (i < r) {
        *lo = i * (q + 1);
        *hi = *lo + q + 1;
    } else {
        *lo = i * q + r;
        *hi = *lo + q;
    }
}

int sched_static_chunk(uint64_t n, uint64_t chunk, int tid, int nthreads,
                       uint64_t round, uint64_t *lo, uint64_t *hi)
{
    uint64_t c = round * (uint64_t)nthreads + (uint64_t)tid;
    if (chunk && c > (n - 1) / chunk)
        return 0;
    if (!n)
        return 0;
    *lo = c * chunk;
    *hi = *lo + chunk < n ? *lo + chunk : n;
    return 1;
}
