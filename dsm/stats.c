/* dsm/stats.c - the DSM layer's per-node counters (relaxed atomics,
 * updated where the events happen). */
#include "dsm_int.h"

struct dsm_stats dsm_st;

void dsm_stats_get(struct dsm_stats *out)
{
    uint64_t *src = (uint64_t *)&dsm_st, *dst = (uint64_t *)out;
    for (size_t i = 0; i < sizeof dsm_st / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
