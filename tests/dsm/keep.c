/* tests/dsm/keep.c - pages kept writable across barriers
 * (OMPDSM_KEEP_WRITABLE): a page written in interval after interval stays
 * writable with its twin brought up to date at each barrier, so its later
 * writes take no fault.  What must still hold:
 *
 * - phase 1: every write reaches every node after the next barrier, for
 *   pages written by their home, by another node, and by both (halves of
 *   one page); rounds in which nobody writes publish no notice at all (a
 *   kept page whose diff is empty must not be noticed); with keeping on,
 *   pages are kept (dsm_kept), with it off none is (meson runs it with
 *   OMPDSM_KEEP_GAP=4: the measured gap depends on the machine's load,
 *   and a loaded one keeps fewer pages);
 * - phase 2: a write to a kept page followed by a lock release reaches the
 *   node that acquires the lock next (the first lock release after a
 *   barrier must compare kept pages with their twins and publish the
 *   changed ones);
 * - phase 3: a barrier root's hook that writes a kept page and names it
 *   with dsm_wrote gets its write to every node by the barrier's end;
 * - phase 4: writes resume after idle rounds (keeping ended) and are seen.
 *
 * Node h allocates PAGES pages (homed at h).  Pages 0-1 are written by h
 * only, pages 2-3 by h's left neighbour only, page 4 half by each. */
#include "dsmtest.h"

#include <string.h>
#include <time.h>

enum { PAGES = 5, ROUNDS = 30, IDLE_EVERY = 7, LOCK_ROUNDS = 20 };

struct g {
    int64_t *pages[64][PAGES];
    int64_t *flag[64]; /* phase 2: round published by node h, under its lock */
};

static struct g *g;
static size_t words;
static int n_, me_;

static int64_t val(int r, int h, int k, size_t w)
{
    return (int64_t)r * 1000003 + h * 1009 + k * 101 + (int64_t)(w % 7);
}

/* Who writes word w of page k of node h. */
static int writer(int h, int k, size_t w)
{
    int left = (h + n_ - 1) % n_;
    if (k < 2)
        return h;
    if (k < 4)
        return left;
    return w < words / 2 ? h : left;
}

static void write_round(int r)
{
    for (int h = 0; h < n_; h++)
        for (int k = 0; k < PAGES; k++)
            for (size_t w = 0; w < words; w++)
                if (writer(h, k, w) == me_)
                    g->pages[h][k][w] = val(r, h, k, w);
}

/* Every word holds what its writer wrote in round r. */
static void check_round(int r, const char *phase)
{
    for (int h = 0; h < n_; h++)
        for (int k = 0; k < PAGES; k++)
            for (size_t w = 0; w < words; w++)
                if (g->pages[h][k][w] != val(r, h, k, w)) {
                    T_FAIL("%s, round %d: page %d of node %d, word %zu "
                           "(written by node %d) = %lld, expected %lld",
                           phase, r, k, h, w, writer(h, k, w),
                           (long long)g->pages[h][k][w],
                           (long long)val(r, h, k, w));
                    return;
                }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Phase 3's hook: on the barrier's root (whichever node that is), the
 * root writes word 0 of page 2 of its right neighbour (a page the root
 * writes every round, so kept there). */
static int64_t hook_value;
static int hook(void *ctx, struct comm_buf *acc)
{
    (void)ctx;
    (void)acc;
    int64_t *p = &g->pages[(me_ + 1) % n_][2][0];
    *p = hook_value;
    dsm_wrote(p, sizeof *p);
    return 0;
}

int main(void)
{
    t_start(sizeof *g, (void **)&g);
    size_t ps = dsm_page_size();
    words = ps / sizeof(int64_t);
    me_ = T_rank;
    n_ = T_size;
    if (n_ > 64 || n_ < 2) {
        T_FAIL("2 to 64 nodes");
        return t_finish();
    }
    int keep_on = t_env_on("OMPDSM_KEEP_WRITABLE");
    for (int k = 0; k < PAGES; k++)
        g->pages[me_][k] = dsm_memalign(ps, ps);
    g->flag[me_] = dsm_memalign(ps, ps);
    t_barrier();

    /* Phase 1. */
    int last = 0;
    struct dsm_stats a, b;
    for (int r = 1; r <= ROUNDS; r++) {
        int idle = r % IDLE_EVERY == 0;
        dsm_stats_get(&a);
        if (!idle) {
            write_round(r);
            last = r;
        }
        t_barrier();
        dsm_stats_get(&b);
        if (idle && b.notices_sent != a.notices_sent)
            T_FAIL("round %d: nobody wrote, but this node published %llu "
                   "notices", r,
                   (unsigned long long)(b.notices_sent - a.notices_sent));
        check_round(last, "phase 1");
        t_barrier();
    }
    dsm_stats_get(&b);
    if (keep_on && b.kept < ROUNDS)
        T_FAIL("only %llu page-releases kept a page writable in %d rounds",
               (unsigned long long)b.kept, ROUNDS);
    if (!keep_on && b.kept)
        T_FAIL("OMPDSM_KEEP_WRITABLE=off, but %llu page-releases kept a page",
               (unsigned long long)b.kept);

    /* Phase 2: a ring; node h writes page 2 of its right neighbour (kept
     * at h) after a barrier, then publishes the round under its lock; the
     * right neighbour takes that lock until it sees the round, then must
     * see the page. */
    int right = (me_ + 1) % n_, left = (me_ + n_ - 1) % n_;
    int64_t *mine = g->pages[right][2], *theirs = g->pages[me_][2];
    for (int r = 1; r <= LOCK_ROUNDS; r++) {
        int64_t v = 5000000 + r;
        for (size_t w = 0; w < words; w++)
            mine[w] = v + (int64_t)w;
        t_barrier(); /* kept again */
        for (size_t w = 0; w < words; w += 97)
            mine[w] = -v - (int64_t)w;
        dsm_lock(T_LOCK_BASE + (uint32_t)me_);
        g->flag[me_][0] = r;
        dsm_unlock(T_LOCK_BASE + (uint32_t)me_);
        double deadline = now_s() + 60;
        for (;;) {
            dsm_lock(T_LOCK_BASE + (uint32_t)left);
            int64_t f = g->flag[left][0];
            if (f == r)
                for (size_t w = 0; w < words; w++) {
                    int64_t want = w % 97 ? v + (int64_t)w : -v - (int64_t)w;
                    if (theirs[w] != want) {
                        T_FAIL("phase 2 round %d: word %zu of the page node %d "
                               "wrote before its lock release = %lld, expected "
                               "%lld", r, w, left, (long long)theirs[w],
                               (long long)want);
                        break;
                    }
                }
            dsm_unlock(T_LOCK_BASE + (uint32_t)left);
            if (f == r)
                break;
            if (now_s() > deadline) {
                T_FAIL("phase 2 round %d: node %d's round never came", r, left);
                break;
            }
        }
        t_barrier();
    }

    /* Phase 3: the root's hook writes a kept page; every node writes its
     * page 2 of its right neighbour before each barrier. */
    for (int r = 1; r <= 6; r++) {
        for (size_t w = 0; w < words; w++)
            mine[w] = 7000000 + r;
        hook_value = -7000000 - r;
        struct comm_buf down = {0};
        struct dsm_sync_ext ext = {NULL, 0, NULL, hook, NULL, &down};
        dsm_barrier(COMM_WORLD, &ext);
        comm_buf_free(&down);
        int hooked = 0;
        for (int h = 0; h < n_; h++) {
            int64_t w0 = g->pages[h][2][0], w1 = g->pages[h][2][1];
            hooked += w0 == hook_value;
            if ((w0 != hook_value && w0 != 7000000 + r) || w1 != 7000000 + r)
                T_FAIL("phase 3 round %d: page 2 of node %d holds %lld, %lld",
                       r, h, (long long)w0, (long long)w1);
        }
        if (hooked != 1)
            T_FAIL("phase 3 round %d: the root hook's write is seen in %d "
                   "pages, expected 1", r, hooked);
        t_barrier();
    }

    /* Phase 4: idle long enough for every keeping to end, then write. */
    for (int i = 0; i < 20; i++)
        t_barrier();
    write_round(ROUNDS + 1);
    t_barrier();
    check_round(ROUNDS + 1, "phase 4");
    t_barrier();
    write_round(ROUNDS + 2);
    t_barrier();
    check_round(ROUNDS + 2, "phase 4");
    return t_finish();
}
