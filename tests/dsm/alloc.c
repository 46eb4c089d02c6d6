/* tests/dsm/alloc.c - the shared allocator: globals get the same address
 * on every node; malloc'd blocks never overlap, are aligned, keep their
 * contents across nodes, can be reallocated and freed by any node; freed
 * memory is reused; calloc gives zeros even for reused memory. */
#include "dsmtest.h"

#include <string.h>

enum { NBLK = 400 };

int main(void)
{
    char *gl;
    t_start(12345, (void **)&gl);
    /* Deterministic globals: every node got the same address. */
    uint64_t *addrs = calloc((size_t)T_size, 8);
    uint64_t mine = (uint64_t)(uintptr_t)gl;
    comm_allgather(COMM_WORLD, &mine, 8, addrs);
    for (int r = 0; r < T_size; r++)
        if (addrs[r] != mine)
            T_FAIL("global at %p here, %p on node %d", (void *)gl,
                   (void *)(uintptr_t)addrs[r], r);
    /* Every node allocates blocks of assorted sizes and alignments. */
    struct { char *p; size_t n; } blk[NBLK];
    struct t_rng rng = {(uint64_t)T_rank + 7};
    for (int i = 0; i < NBLK; i++) {
        size_t n = 1 + t_next(&rng) % (i % 10 == 0 ? 300000 : 3000);
        size_t al = (size_t)1 << (t_next(&rng) % 13);
        blk[i].p = i % 3 ? dsm_malloc(n) : dsm_memalign(al < 16 ? 16 : al, n);
        blk[i].n = n;
        if (!blk[i].p) {
            T_FAIL("allocation %d of %zu bytes failed", i, n);
            return t_finish();
        }
        if ((uintptr_t)blk[i].p % 16 || (i % 3 == 0 && (uintptr_t)blk[i].p % (al < 16 ? 16 : al)))
            T_FAIL("block %d misaligned", i);
        if (dsm_usable_size(blk[i].p) < n)
            T_FAIL("usable size %zu < %zu", dsm_usable_size(blk[i].p), n);
        memset(blk[i].p, (T_rank * 31 + i) & 0xff, n);
    }
    /* Publish all blocks; everyone checks no two blocks of any node
     * overlap and every block holds its owner's pattern. */
    uint64_t *all = calloc((size_t)T_size * NBLK * 2, 8);
    uint64_t *me = calloc(NBLK * 2, 8);
    for (int i = 0; i < NBLK; i++) {
        me[2 * i] = (uint64_t)(uintptr_t)blk[i].p;
        me[2 * i + 1] = blk[i].n;
    }
    comm_allgather(COMM_WORLD, me, NBLK * 16, all);
    t_barrier();
    size_t tot = (size_t)T_size * NBLK;
    for (size_t a = 0; a < tot; a++)
        for (size_t b = a + 1; b < tot; b++) {
            uint64_t pa = all[2 * a], na = all[2 * a + 1], pb = all[2 * b],
                     nb = all[2 * b + 1];
            if (pa < pb + nb && pb < pa + na)
                T_FAIL("blocks %zu and %zu overlap", a, b);
        }
    for (size_t a = 0; a < tot; a++) {
        int owner = (int)(a / NBLK), i = (int)(a % NBLK);
        unsigned char *p = (unsigned char *)(uintptr_t)all[2 * a];
        for (size_t k = 0; k < all[2 * a + 1]; k += 97)
            if (p[k] != ((owner * 31 + i) & 0xff)) {
                T_FAIL("block %d of node %d: byte %zu is %u", i, owner, k, p[k]);
                break;
            }
    }
    t_barrier();
    /* Node r frees the blocks of node (r+1) % size (remote frees) and
     * reallocs one of its own. */
    int victim = (T_rank + 1) % T_size;
    for (int i = 0; i < NBLK; i += 2)
        dsm_free((void *)(uintptr_t)all[2 * ((size_t)victim * NBLK + (size_t)i)]);
    char *r = dsm_realloc(blk[1].p, blk[1].n + 100000);
    for (size_t k = 0; k < blk[1].n; k += 13)
        if ((unsigned char)r[k] != ((T_rank * 31 + 1) & 0xff)) {
            T_FAIL("realloc lost contents at %zu", k);
            break;
        }
    t_barrier(); /* remote frees become reusable here */
    /* Reuse: allocating the same sizes again must not need new memory for
     * most of them, and calloc must return zeros. */
    int zeros_ok = 1;
    for (int i = 0; i < NBLK; i += 2) {
        size_t n = blk[i].n;
        unsigned char *c = dsm_calloc(1, n);
        for (size_t k = 0; k < n; k++)
            if (c[k]) {
                zeros_ok = 0;
                break;
            }
    }
    if (!zeros_ok)
        T_FAIL("calloc returned non-zero memory");
    struct dsm_stats st;
    dsm_stats_get(&st);
    if (st.frees == 0)
        T_FAIL("no frees counted");
    t_barrier();
    free(all);
    free(me);
    free(addrs);
    return t_finish();
}
