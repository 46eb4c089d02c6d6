/* tests/dsm/globals.c - the allocator for program globals: every node gets
 * the same addresses; requested alignments hold; no two globals overlap;
 * a global of a page or more has pages of its own (no other global on its
 * first or last page) and, when it asked for no more than 64-byte
 * alignment, starts at a cache colour that differs from the previous such
 * global's modulo 4 KiB (so arrays streamed together do not collide in
 * the L1 cache); every byte of every global is coherent across nodes
 * after a barrier, including the last page of a coloured global. */
#include "dsmtest.h"

#include <string.h>

struct g {
    size_t size, align;
    unsigned char *p;
};

int main(void)
{
    t_init();
    size_t ps = dsm_page_size();
    struct g g[] = {
        {24, 8, 0},         {3 * ps + 40, 8, 0}, {ps, 16, 0},
        {5 * ps / 2, 64, 0}, {100, 16, 0},        {2 * ps, 128, 0},
        {ps + 1, 4096, 0},  {7 * ps, 8, 0},      {ps - 8, 8, 0},
        {4 * ps, 32, 0},    {8, 8, 0},
    };
    enum { NG = sizeof g / sizeof g[0] };
    for (int i = 0; i < NG; i++)
        g[i].p = dsm_global_alloc(g[i].size, g[i].align, "test global");
    dsm_start();

    /* Same addresses everywhere. */
    uint64_t mine[NG], *all = calloc((size_t)T_size * NG, 8);
    for (int i = 0; i < NG; i++)
        mine[i] = (uint64_t)(uintptr_t)g[i].p;
    comm_allgather(COMM_WORLD, mine, sizeof mine, all);
    for (int r = 0; r < T_size; r++)
        if (memcmp(all + (size_t)r * NG, mine, sizeof mine))
            T_FAIL("node %d placed the globals elsewhere", r);
    free(all);

    uint64_t prev_colour = UINT64_MAX;
    for (int i = 0; i < NG; i++) {
        uintptr_t a = (uintptr_t)g[i].p;
        if (a % g[i].align)
            T_FAIL("global %d (align %zu) at %p", i, g[i].align, (void *)a);
        for (int j = 0; j < NG; j++) {
            uintptr_t b = (uintptr_t)g[j].p;
            if (j != i && a < b + g[j].size && b < a + g[i].size)
                T_FAIL("globals %d and %d overlap", i, j);
            if (j == i || g[i].size < ps)
                continue;
            /* No other global on a large global's first or last page. */
            uintptr_t first = a / ps, last = (a + g[i].size - 1) / ps;
            uintptr_t bf = b / ps, bl = (b + g[j].size - 1) / ps;
            if (bl >= first && bf <= last)
                T_FAIL("global %d shares a page with large global %d", j, i);
        }
        if (g[i].size >= ps && g[i].align <= 64) {
            uint64_t colour = a % 4096;
            if (colour == prev_colour)
                T_FAIL("large global %d has the previous one's colour %llu", i,
                       (unsigned long long)colour);
            prev_colour = colour;
        }
    }

    /* Coherence of every byte: node k writes the bytes i with
     * i % size == k of every global; everyone checks all after a barrier. */
    for (int i = 0; i < NG; i++)
        for (size_t b = (size_t)T_rank; b < g[i].size; b += (size_t)T_size)
            g[i].p[b] = (unsigned char)(i * 37 + b * 11 + 1);
    t_barrier();
    for (int i = 0; i < NG; i++) {
        size_t bad = 0;
        for (size_t b = 0; b < g[i].size; b++)
            if (g[i].p[b] != (unsigned char)(i * 37 + b * 11 + 1))
                bad++;
        if (bad)
            T_FAIL("global %d: %zu of %zu bytes wrong after the barrier", i, bad,
                   g[i].size);
    }
    return t_finish();
}
