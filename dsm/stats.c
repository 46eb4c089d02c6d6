/* dsm/stats.c - the DSM layer's per-node counters, updated where the
 * events happen: each thread into a block of its own (dsm_int.h), summed
 * here when read.
 *
 * A thread takes a free block at its first count (a compare-and-swap over
 * a static array: the first count may come from the fault handler, where
 * nothing may allocate) and frees it when it exits (a pthread key's
 * destructor).  A block keeps its counts when freed, so a thread that
 * takes it later adds to them and the sums stay whole. */
#include "dsm_int.h"

#include <pthread.h>
#include <stddef.h>

enum { STAT_BLOCKS = 256 };

struct stat_block {
    struct dsm_stats s;
    int used;
} __attribute__((aligned(64)));

struct dsm_stats dsm_st; /* threads beyond the blocks (atomics) */
__thread struct dsm_stats *dsm_st_self __attribute__((tls_model("initial-exec")));

static struct stat_block blocks[STAT_BLOCKS];
static int nblocks; /* blocks ever taken: the sums read these */
static int full;    /* every block taken once: stop looking */
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void block_free(void *b)
{
    /* (run by the exiting thread: a count after this, from another key's
     * destructor, takes a block again, and this runs again for it) */
    if (dsm_st_self == &((struct stat_block *)b)->s)
        dsm_st_self = NULL;
    __atomic_store_n(&((struct stat_block *)b)->used, 0, __ATOMIC_RELEASE);
}

static void key_make(void)
{
    if (pthread_key_create(&key, block_free) != 0)
        key = (pthread_key_t)-1;
}

void dsm_stat_slow(size_t off, uint64_t v)
{
    uint64_t *p = (uint64_t *)((char *)&dsm_st + off);
    if (__atomic_load_n(&full, __ATOMIC_RELAXED) == 0) {
        pthread_once(&key_once, key_make);
        for (int i = 0; i < STAT_BLOCKS && key != (pthread_key_t)-1; i++) {
            int z = 0;
            if (!__atomic_compare_exchange_n(&blocks[i].used, &z, 1, 0,
                                             __ATOMIC_ACQ_REL,
                                             __ATOMIC_RELAXED))
                continue;
            int n = __atomic_load_n(&nblocks, __ATOMIC_RELAXED);
            while (n <= i && !__atomic_compare_exchange_n(
                                 &nblocks, &n, i + 1, 0, __ATOMIC_RELEASE,
                                 __ATOMIC_RELAXED))
                ;
            if (pthread_setspecific(key, &blocks[i]) != 0) {
                block_free(&blocks[i]);
                break;
            }
            dsm_st_self = &blocks[i].s;
            dsm_stat_add(off, v);
            return;
        }
        /* (a thread that exits frees a block again; counting those who
         * found none into dsm_st is right either way) */
        __atomic_store_n(&full, 1, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

void dsm_stats_get(struct dsm_stats *out)
{
    uint64_t *dst = (uint64_t *)out;
    const size_t n = sizeof dsm_st / sizeof(uint64_t);
    const uint64_t *src = (const uint64_t *)&dsm_st;
    for (size_t i = 0; i < n; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    int nb = __atomic_load_n(&nblocks, __ATOMIC_ACQUIRE);
    for (int b = 0; b < nb; b++) {
        src = (const uint64_t *)&blocks[b].s;
        for (size_t i = 0; i < n; i++)
            dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    }
}
