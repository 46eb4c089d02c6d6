/* bench/dsm/diff.c - diff creation throughput against memcmp on the same
 * pages (one process): unchanged pages, sparse changes, pages of doubles
 * all changed, a byte-interleaved worst case, and doubles whose low six
 * bytes changed (the usual update of a double); byte-exact diffs and diffs
 * at the 8-byte granule of a double array (diff_page_g) side by side. */
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
                                  "all doubles changed", "every other byte",
                                  "low 6 bytes of doubles"};
    printf("%-26s %10s %10s %10s %8s %8s\n", "pattern", "diff GB/s",
           "g8 GB/s", "memcmp GB/s", "runs/pg", "g8 runs");
    for (int pat = 0; pat < 5; pat++) {
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
        if (pat == 4)
            for (size_t i = 0; i < (size_t)PAGE * NPAGES; i++)
                if (i % 8 < 6)
                    cur[i] ^= 0x5a;
        double best_d = 1e9, best_m = 1e9, best_g = 1e9;
        size_t total_runs = 0, g_runs = 0;
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
            g_runs = 0;
            for (size_t p = 0; p < NPAGES; p++)
                g_runs += diff_page_g(twin + p * PAGE, cur + p * PAGE, PAGE, runs, 8);
            double t3 = now();
            if (t1 - t0 < best_d)
                best_d = t1 - t0;
            if (t2 - t1 < best_m)
                best_m = t2 - t1;
            if (t3 - t2 < best_g)
                best_g = t3 - t2;
        }
        double gb = (double)PAGE * NPAGES / 1e9;
        printf("%-26s %10.2f %10.2f %10.2f %8.1f %8.1f\n", names[pat],
               gb / best_d, gb / best_g, gb / best_m,
               (double)total_runs / NPAGES, (double)g_runs / NPAGES);
    }
    return 0;
}
