/* dsm/diff.c - twins and diffs: the runs of bytes a node changed in a page
 * since it made the twin.  Words are compared eight bytes at a time and the
 * ends of each run are trimmed to the exact bytes, so two nodes writing
 * neighbouring bytes of one word (a char array split between threads) do
 * not overwrite each other at the home. */
#include "dsm_int.h"

#include <string.h>

size_t diff_page(const void *twin, const void *cur, size_t len,
                 struct diff_run *runs)
{
    const uint64_t *a = twin, *b = cur;
    size_t nw = len / 8, i = 0, n = 0;
    while (i < nw) {
        /* Skip equal words, a cache line at a time when possible. */
        while (i + 8 <= nw) {
            uint64_t x = (a[i] ^ b[i]) | (a[i + 1] ^ b[i + 1]) |
                         (a[i + 2] ^ b[i + 2]) | (a[i + 3] ^ b[i + 3]) |
                         (a[i + 4] ^ b[i + 4]) | (a[i + 5] ^ b[i + 5]) |
                         (a[i + 6] ^ b[i + 6]) | (a[i + 7] ^ b[i + 7]);
            if (x)
                break;
            i += 8;
        }
        while (i < nw && a[i] == b[i])
            i++;
        if (i == nw)
            break;
        size_t s = i;
        while (i < nw && a[i] != b[i])
            i++;
        /* Little endian: the lowest address is the least significant byte. */
        uint64_t first = a[s] ^ b[s], last = a[i - 1] ^ b[i - 1];
        size_t start = s * 8 + (size_t)__builtin_ctzll(first) / 8;
        size_t end = i * 8 - (size_t)__builtin_clzll(last) / 8;
        runs[n].off = (uint32_t)start;
        runs[n].len = (uint32_t)(end - start);
        n++;
    }
    return n;
}

void diff_apply(void *dst, const void *src, const struct diff_run *runs,
                size_t nruns)
{
    for (size_t k = 0; k < nruns; k++)
        memcpy((char *)dst + runs[k].off, (const char *)src + runs[k].off,
               runs[k].len);
}
