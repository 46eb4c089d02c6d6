/* tests/dsm/lockstress.c - a lock-heavy random stress checked against a
 * model of happens-before.
 *
 * Every node runs its own seeded random sequence of operations on NL locks:
 * a lock pair (plain, or polled with dsm_trylock), a nested pair of two
 * locks, a write outside any lock, a flush.  The program keeps the model
 * itself, as vector clocks: each node has a private clock vc; every write
 * of a node (inside or outside a lock) increments its own component and
 * stores it in its progress word w[me]; each lock carries a clock in
 * shared memory, which a holder joins into its own (vc = max(vc, lock's))
 * and then overwrites with its own.  So whenever a node holds a lock, its
 * vc says which write of every other node happened before, through any
 * chain of locks, flushes and barriers, and it checks:
 *   - w[j] >= vc[j] for every node j (transitivity: the writes of nodes it
 *     never synchronised with directly);
 *   - the lock's data (a counter and CELLS cells spread over pages that
 *     every lock's cells share, so that pages have several writers under
 *     different locks) matches the counter.
 * After each round (a barrier), every node replays every node's random
 * sequence (the model) and checks the exact counts per lock and the exact
 * progress word of every node.
 * Broken on purpose, it failed "not transitive" on 4 and 8 nodes when an
 * acquire applied only the releaser's own log entries (locktrans.c passes
 * that break: its x[] share one page), and on 2 to 8 nodes when an acquire
 * accepted a copy of the releaser's last entries that lacked earlier ones,
 * or a grant said the positions were pushed without pushing them. */
#include "dsmtest.h"

#include <sched.h>
#include <string.h>

enum { MAXN = 16, NL = 6, CELLS = 32, ROUNDS = 4, OPS = 300 };
enum { PAGE_WORDS = 8192, NCELL = 6 * PAGE_WORDS, STRIDE = 1531 };

struct g {
    int64_t cell[NCELL];            /* cell k of lock L: k * STRIDE + L */
    int64_t w[MAXN * PAGE_WORDS];   /* w[j * PAGE_WORDS + j]: node j's */
    int64_t count[NL];              /* pairs taken of each lock */
    int64_t lvc[NL][MAXN];          /* each lock's clock */
};

static struct g *g;
static int64_t vc[MAXN];

static uint32_t lk(int l) { return T_LOCK_BASE + 200 + (uint32_t)l; }
static int64_t *wp(int j) { return &g->w[(size_t)j * PAGE_WORDS + (size_t)j]; }
/* (0 before the first pair: the heap starts zeroed) */
static int64_t cellv(int l, int64_t count, int k)
{
    return count ? count * 131 + l * 7 + k : 0;
}

/* One step of a node's sequence, decided by its RNG alone. */
struct op {
    int kind;   /* 0 lock pair, 1 nested pair, 2 write outside, 3 flush */
    int l1, l2; /* locks, l1 < l2 when nested */
    int poll;   /* take the (first) lock with trylock polling */
};

static struct op next_op(struct t_rng *r)
{
    uint64_t x = t_next(r);
    struct op o = {0, (int)(x % NL), 0, (int)((x >> 8) % 4 == 0)};
    unsigned c = (unsigned)((x >> 16) % 16);
    if (c < 2) {
        o.kind = 1;
        o.l2 = (o.l1 + 1 + (int)((x >> 24) % (NL - 1))) % NL;
        if (o.l2 < o.l1) {
            int t = o.l1;
            o.l1 = o.l2;
            o.l2 = t;
        }
    } else if (c < 5) {
        o.kind = 2;
    } else if (c < 6) {
        o.kind = 3;
    }
    return o;
}

static struct t_rng rng_of(int node)
{
    struct t_rng r = {0x1f2e3d4c5b6a7988ull ^ ((uint64_t)node * 0x9e3779b97f4a7c15ull)};
    return r;
}

static void take(int l, int poll)
{
    if (poll) {
        for (unsigned n = 0; !dsm_trylock(lk(l)); n++)
            if (n % 4 == 3)
                sched_yield();
    } else {
        dsm_lock(lk(l));
    }
}

static void write_own(void)
{
    vc[T_rank]++;
    *wp(T_rank) = vc[T_rank];
}

/* Under lock l: join, check, write. */
static void under(int l, int64_t round)
{
    for (int j = 0; j < T_size; j++)
        if (g->lvc[l][j] > vc[j])
            vc[j] = g->lvc[l][j];
    for (int j = 0; j < T_size; j++)
        if (*wp(j) < vc[j])
            T_FAIL("round %lld, under lock %d: w[%d] = %lld, but its write "
                   "%lld happened before (not transitive)", (long long)round, l,
                   j, (long long)*wp(j), (long long)vc[j]);
    int64_t c = g->count[l];
    for (int k = 0; k < CELLS; k++) {
        int64_t v = g->cell[k * STRIDE + l];
        if (v != cellv(l, c, k)) {
            T_FAIL("round %lld, lock %d (count %lld): cell %d = %lld, want "
                   "%lld", (long long)round, l, (long long)c, k, (long long)v,
                   (long long)cellv(l, c, k));
            break;
        }
    }
    write_own();
    g->count[l] = c + 1;
    for (int k = 0; k < CELLS; k++)
        g->cell[k * STRIDE + l] = cellv(l, c + 1, k);
    for (int j = 0; j < T_size; j++)
        g->lvc[l][j] = vc[j];
}

/* The model: counts per lock and writes per node after `rounds` rounds. */
static void model(int rounds, int64_t *count, int64_t *writes)
{
    memset(count, 0, NL * sizeof *count);
    for (int j = 0; j < T_size; j++) {
        struct t_rng r = rng_of(j);
        writes[j] = 0;
        for (int i = 0; i < rounds * OPS; i++) {
            struct op o = next_op(&r);
            if (o.kind == 0) {
                count[o.l1]++;
                writes[j]++;
            } else if (o.kind == 1) {
                count[o.l1]++;
                count[o.l2]++;
                writes[j] += 2;
            } else if (o.kind == 2) {
                writes[j]++;
            }
        }
    }
}

int main(void)
{
    t_start(sizeof *g, (void **)&g);
    if (T_size > MAXN) {
        printf("lockstress: at most %d nodes\n", MAXN);
        return 2;
    }
    struct t_rng r = rng_of(T_rank);
    int64_t count[NL], writes[MAXN];
    for (int64_t round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < OPS; i++) {
            struct op o = next_op(&r);
            switch (o.kind) {
            case 0:
                take(o.l1, o.poll);
                under(o.l1, round);
                dsm_unlock(lk(o.l1));
                break;
            case 1:
                take(o.l1, o.poll);
                take(o.l2, 0);
                under(o.l1, round);
                under(o.l2, round);
                dsm_unlock(lk(o.l2));
                dsm_unlock(lk(o.l1));
                break;
            case 2:
                write_own();
                break;
            default:
                dsm_flush();
                break;
            }
        }
        t_barrier();
        /* Everything of the round happened before: the exact model. */
        model((int)round, count, writes);
        for (int l = 0; l < NL; l++) {
            if (g->count[l] != count[l])
                T_FAIL("after round %lld: lock %d taken %lld times, model %lld",
                       (long long)round, l, (long long)g->count[l],
                       (long long)count[l]);
            for (int k = 0; k < CELLS; k++)
                if (g->cell[k * STRIDE + l] != cellv(l, count[l], k)) {
                    T_FAIL("after round %lld: lock %d cell %d = %lld, model "
                           "%lld", (long long)round, l, k,
                           (long long)g->cell[k * STRIDE + l],
                           (long long)cellv(l, count[l], k));
                    break;
                }
        }
        for (int j = 0; j < T_size; j++)
            if (*wp(j) != writes[j])
                T_FAIL("after round %lld: w[%d] = %lld, model %lld",
                       (long long)round, j, (long long)*wp(j),
                       (long long)writes[j]);
        if (vc[T_rank] != writes[T_rank])
            T_FAIL("own clock %lld, model %lld", (long long)vc[T_rank],
                   (long long)writes[T_rank]);
        t_barrier();
    }
    struct dsm_stats st;
    dsm_stats_get(&st);
    printf("node %d: %llu lock acquires, %llu from the cache, %llu lazy "
           "requests, %llu found covered, %llu invalidations, %llu updates, "
           "%llu log reads, %llu from the releaser's mirror, %llu with pushed "
           "positions\n",
           T_rank, (unsigned long long)st.lock_acquires,
           (unsigned long long)st.lock_cached,
           (unsigned long long)st.lazy_requests,
           (unsigned long long)st.lazy_covered,
           (unsigned long long)st.invalidations,
           (unsigned long long)st.updates, (unsigned long long)st.log_reads,
           (unsigned long long)st.log_mirrored,
           (unsigned long long)st.log_pushed);
    return t_finish();
}
