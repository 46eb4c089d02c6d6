/* tests/dsm/readahead.c - read-ahead follows streams, not single reads.
 *
 * An array of BLK pages per node, block-distributed (each node is home of
 * its block), written by each node in its own block every round, as a
 * stencil's planes are.
 *
 * Phase 1: each node reads one page across the boundary every round (the
 * first page of its right neighbour's block; the last node, the last page
 * of its left neighbour's).  A read fault there must fetch that page only:
 * read-ahead would also fetch the pages after it, which their home writes
 * and nobody else reads, so they would lose their exclusivity and their
 * home would write-protect them and fault on them every round.  Checked:
 * the reader fetches about one page a round, and the home write-faults
 * about once a round on its block (before: 4 pages fetched and 4 faults a
 * round with OMPDSM_READAHEAD=3; the test failed with 21-24 pages fetched
 * in 12 rounds on 2, 4 and 8 nodes before the read-ahead rule of
 * 2026-11-26).  (Under OMPDSM_PROTOCOL=update every
 * copy a notice names is refetched, so only the home's faults count.)
 *
 * Phase 2: each node reads its right neighbour's whole block in order.
 * Read-ahead must still serve a stream: at most 3 read faults for the 8
 * pages (the first fault fetches one page, the next ones 4).
 *
 * Every value read is checked against the round its home wrote. */
#include "dsmtest.h"

#include <string.h>

enum { BLK = 8, ROUNDS = 12 };

struct g {
    int64_t *arr;
};

static size_t words;

static void write_block(int64_t *b, int64_t v)
{
    for (int p = 0; p < BLK; p++)
        for (size_t i = 0; i < words; i += 512)
            b[p * words + i] = v + p;
}

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    size_t ps = dsm_page_size();
    words = ps / sizeof(int64_t);
    int me = T_rank, n = T_size;
    if (me == 0)
        g->arr = dsm_memalign(ps, (size_t)n * BLK * ps);
    t_barrier();
    int64_t *mine = g->arr + (size_t)me * BLK * words;
    const char *ra = getenv("OMPDSM_READAHEAD");
    int invalidate = !t_update_protocol();
    int ra3 = !ra || !*ra || !strcmp(ra, "3");
    int excl = invalidate && t_env_on("OMPDSM_HOME_EXCLUSIVE");

    /* Phase 1: one page across the boundary per round. */
    int other = me < n - 1 ? me + 1 : me - 1;
    int64_t *peek = g->arr + ((size_t)other * BLK + (me < n - 1 ? 0 : BLK - 1)) * words;
    int64_t peek_off = me < n - 1 ? 0 : BLK - 1;
    struct dsm_stats s0, s1, s2;
    write_block(mine, 0);
    t_barrier();
    dsm_stats_get(&s0);
    for (int r = 1; r <= ROUNDS; r++) {
        write_block(mine, (int64_t)r * 100);
        t_barrier();
        if (n > 1) {
            int64_t v = peek[0], want = (int64_t)r * 100 + peek_off;
            if (v != want)
                T_FAIL("phase 1 round %d: page %lld of node %d holds %lld, "
                       "not %lld", r, (long long)peek_off, other,
                       (long long)v, (long long)want);
        }
        t_barrier();
    }
    dsm_stats_get(&s1);
    uint64_t fetched = s1.pages_fetched - s0.pages_fetched;
    uint64_t wfaults = s1.write_faults - s0.write_faults;
    if (n > 1 && ra3 && invalidate && fetched > ROUNDS + 2)
        T_FAIL("phase 1: %llu pages fetched for %d single-page reads across "
               "the boundary (read ahead into pages nobody reads)",
               (unsigned long long)fetched, ROUNDS);
    if (n > 1 && excl && wfaults > BLK + 2 * ROUNDS)
        T_FAIL("phase 1: %llu write faults on the node's own %d pages in %d "
               "rounds (its pages lost their exclusivity to read-ahead?)",
               (unsigned long long)wfaults, BLK, ROUNDS);

    /* Phase 2: the right neighbour's whole block, in order, once. */
    write_block(mine, 5000);
    t_barrier();
    int right = (me + 1) % n;
    int64_t *rb = g->arr + (size_t)right * BLK * words;
    for (int p = 0; p < BLK; p++) {
        int64_t v = rb[p * words];
        if (v != 5000 + p)
            T_FAIL("phase 2: page %d of node %d holds %lld, not %d", p,
                   right, (long long)v, 5000 + p);
    }
    dsm_stats_get(&s2);
    uint64_t rfaults = s2.read_faults - s1.read_faults;
    if (n > 1 && ra3 && invalidate && (rfaults < 1 || rfaults > 3))
        T_FAIL("phase 2: %llu read faults reading %d pages in order "
               "(read-ahead of 3 should take 2 or 3)",
               (unsigned long long)rfaults, BLK);
    t_barrier();
    return t_finish();
}
