/* bench/dsm/diff.c - diff creation throughput against memcmp on the same
 * pages (one process): unchanged pages, sparse changes, pages of doubles
 * all changed, and a byte-interleaved worst case. */
#include "dsm/dsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAGE = 4096, NPAGES = 8192 }; /* 32 MiB */

static double now(void)
{
    return ompdsm_now();
}

int main(void)
{
    unsigned char *twin = aligned_alloc(PAGE, (size_t)PAGE * NPAGES);
    unsigned char *cur = aligned_alloc(PAGE, (size_t)PAGE * NPAGES);
    struct comm_run *runs = malloc((PAGE / 2 + 1) * sizeof *runs);
    uint64_t x = 12345;
    for (size_t i = 0; i < (size_t)PAGE * NPAGES; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        twin[i] = (unsigned char)(x >> 56);
    }
    static const char *names[] = {"unchanged", "sparse (1 double/256 B)",
                                  "all doubles changed", "every other byte"};
    printf("%-26s %10s %10s %8s\n", "pattern", "diff GB/s", "memcmp GB/s", "runs/pg");
    for (int pat = 0; pat < 4; pat++) {
        memcpy(cur, twin, (size_t)PAGE * NPAGES);
        double *d = (double *)cur;
        size_t nd = (size_t)PAGE * NPAGES / 8;
        if (pat == 1)
            for (size_t i = 0; i < nd; i += 32)
                d[i] += 1.0;
        if (pat == 2)
            for (size_t i = 0; i < nd; i++)
                d[i] = (double)i * 1.000001;
        if (pat == 3)
            for (size_t i = 0; i < (size_t)PAGE * NPAGES; i += 2)
                cur[i] ^= 0x5a;
        double best_d = 1e9, best_m = 1e9;
        size_t total_runs = 0;
        volatile int sink = 0;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            total_runs = 0;
            for (size_t p = 0; p < NPAGES; p++)
                total_runs += diff_page(twin + p * PAGE, cur + p * PAGE, PAGE, runs);
            double t1 = now();
            for (size_t p = 0; p < NPAGES; p++)
                sink += memcmp(twin + p * PAGE, cur + p * PAGE, PAGE) != 0;
            double t2 = now();
            if (t1 - t0 < best_d)
                best_d = t1 - t0;
            if (t2 - t1 < best_m)
                best_m = t2 - t1;
        }
        double gb = (double)PAGE * NPAGES / 1e9;
        printf("%-26s %10.2f %10.2f %8.1f\n", names[pat], gb / best_d, gb / best_m,
               (double)total_runs / NPAGES);
    }
    return 0;
}
