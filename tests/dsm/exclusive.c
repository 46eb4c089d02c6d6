/* tests/dsm/exclusive.c - exclusive home pages: a page its home writes
 * again and again, and that no other node fetches, stays writable with no
 * notice (OMPDSM_HOME_EXCLUSIVE); the moment another node fetches it, the
 * home's next release must publish a notice again, or that node keeps
 * reading the copy it fetched.
 *
 * Each node owns pages homed at itself and writes them in rounds; its right
 * neighbour reads them only now and then (after barriers in phase 1, under
 * the owner's lock in phase 2, after flushes on a flag in phase 3), and
 * every read must see the owner's latest round in every word of the page.
 * The stale copies this catches come from a fetch between two notices. */
#include "dsmtest.h"

#include <string.h>
#include <time.h>

enum { PAGES = 3, ROUNDS = 24, LOCK_ROUNDS = 40 };

struct g {
    int64_t *pages[64][PAGES];   /* each node's own pages */
    int64_t *ack[64];            /* a page each node writes its acks into */
    volatile int64_t flag[64];   /* phase 3: round published by node r */
};

static size_t words;

static void fill(int64_t *p, int64_t v)
{
    for (size_t i = 0; i < words; i++)
        p[i] = v;
}

/* Every word of the page holds the same value; returns it (or -1). */
static int64_t whole(const int64_t *p, int owner, int page)
{
    int64_t v = p[0];
    for (size_t i = 1; i < words; i++)
        if (p[i] != v) {
            T_FAIL("page %d of node %d is torn: word 0 = %lld, word %zu = %lld",
                   page, owner, (long long)v, i, (long long)p[i]);
            return -1;
        }
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    size_t ps = dsm_page_size();
    words = ps / sizeof(int64_t);
    int me = T_rank, n = T_size;
    int left = (me + n - 1) % n; /* whose pages this node reads */
    if (n > 64) {
        T_FAIL("at most 64 nodes");
        return t_finish();
    }
    /* One page or less: homed at the allocating node. */
    for (int k = 0; k < PAGES; k++)
        g->pages[me][k] = dsm_memalign(ps, ps);
    g->ack[me] = dsm_memalign(ps, ps);
    t_barrier();

    /* Phase 1: barriers.  Reads at rounds 6, 7, 13 and 20 only: between
     * them the owner's pages stay exclusive. */
    for (int r = 1; r <= ROUNDS; r++) {
        for (int k = 0; k < PAGES; k++)
            fill(g->pages[me][k], (int64_t)r * 1000 + me);
        t_barrier();
        if (r == 6 || r == 7 || r == 13 || r == 20)
            for (int k = 0; k < PAGES; k++) {
                int64_t v = whole(g->pages[left][k], left, k);
                if (v != (int64_t)r * 1000 + left)
                    T_FAIL("phase 1 round %d: page %d of node %d holds round "
                           "%lld", r, k, left, (long long)(v / 1000));
            }
        t_barrier();
    }
    struct dsm_stats st;
    dsm_stats_get(&st);
    int excl_on = t_env_on("OMPDSM_HOME_EXCLUSIVE") && !t_update_protocol();
    if (n > 1 && excl_on && st.exclusive < (uint64_t)PAGES * 8)
        T_FAIL("only %llu pages kept exclusive in phase 1 (expected >= %d)",
               (unsigned long long)st.exclusive, PAGES * 8);
    if (!excl_on && st.exclusive)
        T_FAIL("OMPDSM_HOME_EXCLUSIVE=off or the update protocol, but %llu pages kept exclusive",
               (unsigned long long)st.exclusive);

    /* Phase 2: locks.  The owner writes its first page in several lock
     * sections per round (only the last one is acked), so some of its
     * releases happen with no fetch since the last notice; the reader
     * acks what it sees and must reach the last round. */
    uint32_t lk_own = T_LOCK_BASE + 10 + (uint32_t)me;
    uint32_t lk_left = T_LOCK_BASE + 10 + (uint32_t)left;
    int64_t *mine = g->pages[me][0], *theirs = g->pages[left][0];
    int64_t sent = 0, seen = 0;
    int64_t base = 1000000;
    fill(mine, base);
    g->ack[me][0] = base;
    t_barrier();
    if (n > 1) {
        double deadline = now_s() + 60;
        while ((sent < LOCK_ROUNDS || seen < LOCK_ROUNDS) && !T_failures) {
            if (sent < LOCK_ROUNDS) {
                dsm_lock(lk_own);
                /* The right neighbour acks into its ack page. */
                int64_t a = g->ack[(me + 1) % n][0];
                if (a == base + sent) {
                    sent++;
                    for (int s = 0; s < 3; s++) {
                        fill(mine, base + sent - 1);
                        dsm_unlock(lk_own);
                        dsm_lock(lk_own);
                    }
                    fill(mine, base + sent);
                }
                dsm_unlock(lk_own);
            }
            if (seen < LOCK_ROUNDS) {
                dsm_lock(lk_left);
                int64_t v = whole(theirs, left, 0);
                if (v < base + seen)
                    T_FAIL("phase 2: node %d's page went back from %lld to "
                           "%lld", left, (long long)(base + seen), (long long)v);
                if (v > base + seen) {
                    seen = v - base;
                    g->ack[me][0] = v;
                }
                dsm_unlock(lk_left);
            }
            if (now_s() > deadline) {
                T_FAIL("phase 2: stuck at sent %lld, seen %lld of %d (a stale "
                       "copy of node %d's page?)", (long long)sent,
                       (long long)seen, LOCK_ROUNDS, left);
                break;
            }
        }
    }
    t_barrier();

    /* Phase 3: flushes.  The owner publishes round r in its second page,
     * then raises its flag; the reader waits for the flag, checks the
     * page, and does not read it again for a few rounds. */
    int64_t *p3 = g->pages[me][1];
    for (int r = 1; r <= ROUNDS && !T_failures; r++) {
        fill(p3, 2000000 + r);
        dsm_flush();
        g->flag[me] = r;
        dsm_flush();
        if (r % 5 == 0 && n > 1) {
            double deadline = now_s() + 30;
            while (g->flag[left] < r) {
                dsm_flush();
                if (now_s() > deadline) {
                    T_FAIL("phase 3: flag of node %d stuck at %lld < %d", left,
                           (long long)g->flag[left], r);
                    break;
                }
            }
            /* The flag was read after the last flush: flush once more
             * before the data (as OpenMP requires). */
            dsm_flush();
            int64_t v = whole(g->pages[left][1], left, 1);
            if (v < 2000000 + r)
                T_FAIL("phase 3 round %d: node %d's page holds round %lld",
                       r, left, (long long)(v - 2000000));
        }
        t_barrier();
    }
    t_barrier();
    return t_finish();
}
