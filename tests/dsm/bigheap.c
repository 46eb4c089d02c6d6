/* tests/dsm/bigheap.c - a heap of several GiB (OMPDSM_HEAP_SIZE) of which
 * only a part is touched: allocation of a multi-GiB block and of a global
 * near 1 GiB, sparse writes across them, and resident memory that stays
 * far below the heap size. */
#include "dsmtest.h"

#include <string.h>
#include <unistd.h>

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(void)
{
    char *glob;
    size_t gsize = (size_t)1 << 30;
    t_start(gsize, (void **)&glob);
    if (dsm_heap_size() < (size_t)6 << 30)
        T_FAIL("heap is %zu bytes; the test wants OMPDSM_HEAP_SIZE >= 6G",
               dsm_heap_size());
    size_t big = (size_t)3 << 30;
    char *b = NULL;
    if (T_rank == 0)
        b = dsm_malloc(big);
    uint64_t bp = (uint64_t)(uintptr_t)b;
    comm_bcast(COMM_WORLD, 0, &bp, 8);
    b = (char *)(uintptr_t)bp;
    if (!b) {
        T_FAIL("dsm_malloc of 3 GiB failed");
        return t_finish();
    }
    /* Each node writes one byte every 64 MiB in its share. */
    size_t step = (size_t)64 << 20;
    for (size_t off = (size_t)T_rank * 4096; off < big; off += step)
        b[off] = (char)(off / step + 1);
    for (size_t off = (size_t)T_rank * 4096; off < gsize; off += step)
        glob[off] = (char)(off / step + 2);
    t_barrier();
    for (int r = 0; r < T_size; r++) {
        for (size_t off = (size_t)r * 4096; off < big; off += step)
            if (b[off] != (char)(off / step + 1))
                T_FAIL("big[%zu] wrong", off);
        for (size_t off = (size_t)r * 4096; off < gsize; off += step)
            if (glob[off] != (char)(off / step + 2))
                T_FAIL("glob[%zu] wrong", off);
    }
    long kb = rss_kb();
    if (kb < 0 || kb > 512 * 1024)
        T_FAIL("resident memory %ld KiB: untouched heap pages were populated", kb);
    /* Asking for more than is left fails cleanly with NULL. */
    if (T_rank == 0) {
        void *huge = dsm_malloc((size_t)64 << 30);
        if (huge)
            T_FAIL("64 GiB allocation from a smaller heap succeeded");
    }
    t_barrier();
    return t_finish();
}
