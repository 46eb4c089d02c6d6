/* tests/dsm/lockkeep.c - lock and flush hand-offs between nodes of one
 * thread each (OMPDSM_LOCK_KEEP): a page written before a lock release
 * stays writable with its twin brought up to date, and a kept page that
 * another node wrote is refetched under this node's writes (rebased)
 * instead of being invalidated; a flush keeps nothing.  The nodes write
 * interleaved words of the same pages (false sharing, as NPB LU's a, b,
 * c, d arrays at its threads' boundary) in turns, handed on by a lock
 * (phase 1) and by a flag between flushes (phase 2).  What must hold:
 *
 * - at its turn, a node sees every other node's words as that node wrote
 *   them at its last turn, and its own as it wrote them at its own (a
 *   rebase must not lose the other nodes' bytes, nor a twin brought up to
 *   date lose this node's);
 * - with OMPDSM_LOCK_KEEP on (the default) on shm and tcp: in phase 1
 *   pages stay kept (dsm_lock_kept), kept pages are rebased
 *   (dsm_rebased), and a node takes fewer write faults than half its turns
 *   (2 pages of each node's, written at every turn: 2 x nodes faults at
 *   its first); with it off, none is kept or rebased and a node takes a
 *   write fault at least at every turn (meson runs both).  Phase 1's
 *   faults are counted only with OMPDSM_LAZY_RELEASE=off: under lazy
 *   release the release a lock's next taker asks for may be made by the
 *   node's release helper, beside the node's thread, and that one
 *   write-protects the kept pages.
 * - in phase 2, on or off, a write fault at least at every turn: a flush
 *   write-protects what it publishes (a spin of flushes on a flag would
 *   otherwise compare every kept page with its twin at each turn: NPB LU W
 *   on 2 nodes took 9.7-11.0 s against 7.6-8.2 s; docs/design.md). 
 *
 * Node h allocates PAGES pages, homed at h: a home absorbs the other
 * nodes' diffs into its twin, a copy is rebased. */
#include "dsmtest.h"

#include <sched.h>
#include <time.h>

enum { PAGES = 2, PER_NODE = 60 }; /* turns of each node a phase */

struct g {
    int64_t *pages[64][PAGES];
    int64_t turn;  /* phase 1: whose turn (under the lock) */
    int64_t *flag; /* phase 2: the turn, on a page of its own */
};

static struct g *g;
static size_t words;
static int n_, me_, turns;

static int64_t val(int phase, int t, size_t w)
{
    return (int64_t)phase * 100000007 + (int64_t)t * 10007 + (int64_t)w;
}

/* The last turn before t that node q took (turn t is node t % n's), or
 * -1. */
static int last_turn(int q, int t)
{
    int s = t - 1 - ((t - 1 - q) % n_ + n_) % n_;
    return s >= 0 ? s : -1;
}

/* Node me_ at turn t: check every word, then write its own. */
static void take_turn(int phase, int t)
{
    for (int h = 0; h < n_; h++)
        for (int k = 0; k < PAGES; k++)
            for (size_t w = 0; w < words; w++) {
                int q = (int)(w % (size_t)n_);
                int s = last_turn(q, t);
                int64_t want = s < 0 ? 0 : val(phase, s, w);
                if (g->pages[h][k][w] != want) {
                    T_FAIL("phase %d turn %d: page %d of node %d, word %zu "
                           "(node %d's, its last turn %d) = %lld, expected %lld",
                           phase, t, k, h, w, q, s,
                           (long long)g->pages[h][k][w], (long long)want);
                    return;
                }
            }
    for (int h = 0; h < n_; h++)
        for (int k = 0; k < PAGES; k++)
            for (size_t w = (size_t)me_; w < words; w += (size_t)n_)
                g->pages[h][k][w] = val(phase, t, w);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void zero_pages(void)
{
    for (int k = 0; k < PAGES; k++)
        memset(g->pages[me_][k], 0, words * sizeof(int64_t));
}

int main(void)
{
    t_start(sizeof *g, (void **)&g);
    size_t ps = dsm_page_size();
    words = ps / sizeof(int64_t);
    me_ = T_rank;
    n_ = T_size;
    turns = PER_NODE * n_;
    if (n_ > 64 || n_ < 2) {
        T_FAIL("2 to 64 nodes");
        return t_finish();
    }
    int on = t_env_on("OMPDSM_LOCK_KEEP") && t_env_on("OMPDSM_KEEP_WRITABLE");
    int lazy = t_env_on("OMPDSM_LAZY_RELEASE");
    for (int k = 0; k < PAGES; k++)
        g->pages[me_][k] = dsm_memalign(ps, ps);
    if (me_ == 0)
        g->flag = dsm_memalign(ps, ps);
    zero_pages();
    t_barrier();

    /* Phase 1: turns handed on under one lock. */
    struct dsm_stats a, b;
    dsm_stats_get(&a);
    int mine = 0;
    for (int t = me_; t < turns; t += n_) {
        double deadline = now_s() + 60;
        for (;;) {
            dsm_lock(T_LOCK_BASE);
            if (g->turn == t)
                break;
            dsm_unlock(T_LOCK_BASE);
            sched_yield();
            if (now_s() > deadline) {
                T_FAIL("phase 1: turn %d never came (turn %lld)", t,
                       (long long)g->turn);
                return t_finish();
            }
        }
        take_turn(1, t);
        g->turn = t + 1;
        dsm_unlock(T_LOCK_BASE);
        mine++;
    }
    t_barrier();
    dsm_stats_get(&b);
    uint64_t wf1 = b.write_faults - a.write_faults;
    uint64_t kept = b.lock_kept - a.lock_kept, rebased = b.rebased - a.rebased;

    /* Phase 2: the same turns, handed on by a flag between flushes (NPB
     * LU's sync_left and sync_right). */
    zero_pages();
    t_barrier();
    dsm_stats_get(&a);
    for (int t = me_; t < turns; t += n_) {
        double deadline = now_s() + 60;
        for (;;) {
            dsm_flush();
            if (*(volatile int64_t *)g->flag == t)
                break;
            if (now_s() > deadline) {
                T_FAIL("phase 2: turn %d never came (flag %lld)", t,
                       (long long)*g->flag);
                return t_finish();
            }
        }
        dsm_flush();
        take_turn(2, t);
        dsm_flush();
        *g->flag = t + 1;
        dsm_flush();
    }
    t_barrier();
    dsm_stats_get(&b);
    uint64_t wf2 = b.write_faults - a.write_faults;
    kept += b.lock_kept - a.lock_kept;
    rebased += b.rebased - a.rebased;

    /* Counted over the job: a node may have had nothing to rebase. */
    int64_t c[2] = {(int64_t)kept, (int64_t)rebased};
    comm_allreduce(COMM_WORLD, c, 2, COMM_INT64, COMM_SUM);
    printf("node %d: %d turns a phase; write faults %llu (locks) %llu "
           "(flushes); kept %llu, rebased %llu\n", me_, mine,
           (unsigned long long)wf1, (unsigned long long)wf2,
           (unsigned long long)kept, (unsigned long long)rebased);
    if (on) {
        if (!c[0] || !c[1])
            T_FAIL("OMPDSM_LOCK_KEEP on: %lld pages kept and %lld rebased in "
                   "the job", (long long)c[0], (long long)c[1]);
        if (!lazy && wf1 * 2 >= (uint64_t)mine)
            T_FAIL("OMPDSM_LOCK_KEEP on: %llu write faults in %d turns under "
                   "a lock", (unsigned long long)wf1, mine);
    } else {
        if (c[0] || c[1])
            T_FAIL("OMPDSM_LOCK_KEEP off: %lld pages kept and %lld rebased",
                   (long long)c[0], (long long)c[1]);
        if (wf1 < (uint64_t)mine)
            T_FAIL("OMPDSM_LOCK_KEEP off: only %llu write faults in %d turns "
                   "under a lock", (unsigned long long)wf1, mine);
    }
    if (wf2 < (uint64_t)mine)
        T_FAIL("only %llu write faults in %d turns handed on by flushes: a "
               "flush kept pages writable", (unsigned long long)wf2, mine);
    return t_finish();
}
