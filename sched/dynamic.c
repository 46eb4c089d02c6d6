/* sched/dynamic.c - dynamic, guided and single claims on a word at the
 * instance's home node.  The word holds the instance's generation in its top
 * 24 bits and the next chunk (dynamic) or iteration (guided) in the low 40.
 * A word still holding an older generation belongs to a finished instance:
 * the first claimer resets it.  A word already holding a newer generation
 * means this instance is over (a thread only moves past an instance once
 * it is exhausted or taken), so late threads get nothing. */
#include "sched.h"
#include "comm/comm.h"

/* The word's compare-swap and fetch-add: remote atomics through comm, or
 * CPU atomics on a word of this process (c->local). */
static void word_cas(const struct sched_claim *c, uint64_t expect,
                     uint64_t desired, uint64_t *old)
{
    if (c->local) {
        uint64_t e = expect;
        __atomic_compare_exchange_n(c->local, &e, desired, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        *old = e;
        return;
    }
    COMM_CHECK(comm_cas(c->node, c->region, c->off, expect, desired, old));
}

static void word_fetch_add(const struct sched_claim *c, uint64_t add,
                           uint64_t *old)
{
    if (c->local) {
        *old = __atomic_fetch_add(c->local, add, __ATOMIC_SEQ_CST);
        return;
    }
    COMM_CHECK(comm_fetch_add(c->node, c->region, c->off, add, old));
}

/* -1: the word belongs to an older instance; 0: ours; 1: a newer one. */
static int age(uint64_t word, uint64_t gen)
{
    uint64_t d = (sched_word_gen(word) - gen) & SCHED_WORD_GEN_MASK;
    if (!d)
        return 0;
    return d < 0x800000 ? 1 : -1;
}

/* Compare-swap loop: f computes the new value from the current one
 * (ours); returns 0 when f says done. */
static int claim_guess(const struct sched_claim *c,
                       int (*f)(uint64_t cur, uint64_t *next, void *arg),
                       void *arg, uint64_t *got, uint64_t guess)
{
    uint64_t old;
    for (;;) {
        int a = age(guess, c->gen);
        if (a > 0)
            return 0;
        uint64_t cur = a < 0 ? 0 : sched_word_val(guess), next;
        if (!f(cur, &next, arg))
            return 0;
        word_cas(c, guess, sched_word(c->gen, next), &old);
        if (old == guess) {
            *got = cur;
            return 1;
        }
        guess = old;
    }
}

/* dynamic: one fetch-add per chunk in the common case.  Adding 1 to a word
 * of this instance hands out the next chunk; the counter may run past the
 * end by at most one per thread, far from the generation bits.  A word of
 * an older instance was bumped harmlessly; install ours with a
 * compare-swap (taking chunk 0) unless another thread did first. */
int sched_dynamic_next(const struct sched_claim *c, uint64_t nchunks,
                       uint64_t *chunk_index)
{
    for (;;) {
        uint64_t old;
        word_fetch_add(c, 1, &old);
        int a = age(old, c->gen);
        if (a > 0)
            return 0;
        if (a == 0) {
            uint64_t v = sched_word_val(old);
            if (v >= nchunks)
                return 0;
            *chunk_index = v;
            return 1;
        }
        if (!nchunks)
            return 0;
        uint64_t seen;
        word_cas(c, old + 1, sched_word(c->gen, 1), &seen);
        if (seen == old + 1) {
            *chunk_index = 0;
            return 1;
        }
        /* Someone else moved the word: try again. */
    }
}

/* dynamic over a team of nodes: the chunks are cut into one share per node
 * ([j*nchunks/nodes, (j+1)*nchunks/nodes) for node j), each counted by the
 * instance's word at that node.  A thread claims from its own node's word
 * (an atomic on local memory) and, once that share is gone, from the other
 * nodes' in turn (remote fetch-adds: stealing, only at the end of the
 * loop).  *cursor (0 at the start of the instance) is how many words this
 * thread has found exhausted, so each word is overrun by at most one
 * fetch-add per thread.  Chunks are no longer handed out in increasing
 * order, not even to one thread; loops with an ordered or lastprivate
 * clause (OMPDSM_LOOP_ORDERED, OMPDSM_LOOP_MONOTONIC) and sections use the
 * single word (sched_dynamic_next). */
int sched_dynamic_next_spread(const struct sched_claim *c, int nodes, int self,
                              uint64_t nchunks, uint64_t *cursor,
                              uint64_t *chunk_index)
{
    while (*cursor < (uint64_t)nodes) {
        int j = (int)(((uint64_t)self + *cursor) % (uint64_t)nodes);
        uint64_t lo = nchunks * (uint64_t)j / (uint64_t)nodes;
        uint64_t hi = nchunks * (uint64_t)(j + 1) / (uint64_t)nodes;
        struct sched_claim w = *c;
        w.node = j;
        uint64_t ci;
        if (sched_dynamic_next(&w, hi - lo, &ci)) {
            *chunk_index = lo + ci;
            return 1;
        }
        ++*cursor;
    }
    return 0;
}

struct guided_arg {
    uint64_t n, min_chunk;
    int nthreads;
    uint64_t size;
};

static int guided_step(uint64_t cur, uint64_t *next, void *arg)
{
    struct guided_arg *g = arg;
    if (cur >= g->n)
        return 0;
    uint64_t rem = g->n - cur;
    uint64_t s = (rem + (uint64_t)g->nthreads - 1) / (uint64_t)g->nthreads;
    if (s < g->min_chunk)
        s = g->min_chunk;
    if (s > rem)
        s = rem;
    g->size = s;
    *next = cur + s;
    return 1;
}

static int claim(const struct sched_claim *c,
                 int (*f)(uint64_t cur, uint64_t *next, void *arg), void *arg,
                 uint64_t *got)
{
    return claim_guess(c, f, arg, got, sched_word(c->gen, 0));
}

int sched_guided_next(const struct sched_claim *c, uint64_t n,
                      uint64_t min_chunk, int nthreads, uint64_t *lo,
                      uint64_t *hi)
{
    struct guided_arg g = {n, min_chunk ? min_chunk : 1, nthreads, 0};
    uint64_t cur;
    if (!claim(c, guided_step, &g, &cur))
        return 0;
    *lo = cur;
    *hi = cur + g.size;
    return 1;
}

static int single_step(uint64_t cur, uint64_t *next, void *arg)
{
    (void)arg;
    if (cur)
        return 0;
    *next = 1;
    return 1;
}

/* The first compare-swap guesses that the slot's last instance (one
 * generation earlier) was a single too, taken: in a loop of singles the
 * winner then claims with one remote operation instead of two (the
 * suites' cpcrit over tcp: a round trip an iteration).  A wrong guess
 * costs nothing more than the generation-0 guess did: the swap fails and
 * returns the word. */
int sched_single_claim(const struct sched_claim *c)
{
    uint64_t got, gen = c->gen & SCHED_WORD_GEN_MASK;
    uint64_t guess = gen == 1 ? 0 : sched_word((gen - 1) & SCHED_WORD_GEN_MASK, 1);
    return claim_guess(c, single_step, NULL, &got, guess);
}
