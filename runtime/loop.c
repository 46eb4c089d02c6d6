/* runtime/loop.c - the work-sharing constructs: loops and sections (the
 * per-thread loop state, the choice of schedule from sched/, lastprivate
 * detection, the loop-end barrier), ordered regions, and single with its
 * copyprivate.  The profiled schedule's driver is profiled.c. */
#include "rt.h"
#include "sched/sched.h"

#include <string.h>

static inline struct rt_loop *L_of(OMPDSM_loop *l)
{
    return (struct rt_loop *)l;
}

static void claim_of(const struct rt_loop *L, struct sched_claim *c)
{
    c->gen = rt_ws_gen(L->seq);
    c->region = RT_REG_AREA;
    if (rt_self.lteam) {
        /* a nested team's words are in process memory (nest.c) */
        c->local = rt_nest_ws_word(L->seq);
        c->node = comm_rank();
        c->off = 0;
        return;
    }
    c->local = NULL;
    rt_ws_where(L->seq, &c->node, &c->off);
}

RT_API void OMPDSM_loop_init(OMPDSM_loop *loop, OMPDSM_loop_site *site,
                             unsigned long long n, int sched, long long chunk,
                             long long eval_size, long long eval_skip,
                             int flags)
{
    struct rt_loop *L = L_of(loop);
    memset(loop, 0, sizeof *loop);
    RT_STAT(loops, 1);
    if (sched == OMPDSM_SCHED_RUNTIME) {
        sched = rt_dv()->sched_kind;
        chunk = rt_dv()->sched_chunk;
    }
    if (sched == OMPDSM_SCHED_DEFAULT || sched == OMPDSM_SCHED_AUTO)
        sched = OMPDSM_SCHED_STATIC;
    const struct rt_prof_override *o = rt_prof_override(site, sched);
    int frozen = 0;
    if (o) {
        if (o->kind != OMPDSM_SCHED_PROFILED)
            eval_size = eval_skip = -1;
        sched = o->kind;
        /* An override to static runs as a profiled loop with equal weights
         * that never measures (static's partition exactly), so that the
         * statistics time it per execution as they time profiled loops:
         * the baseline ompdsm-tune compares with. */
        if (sched == OMPDSM_SCHED_STATIC && site && rt_self.nthreads > 1 &&
            !rt_self.lteam) {
            sched = OMPDSM_SCHED_PROFILED;
            frozen = 1;
        }
        if (o->chunk >= 0)
            chunk = o->chunk;
        if (o->eval_size >= 0)
            eval_size = o->eval_size;
        if (o->eval_skip >= 0)
            eval_skip = o->eval_skip;
    }
    /* profiled needs the site's memory and a team over the nodes (a
     * nested team's threads share one node); anything else runs it as
     * static, which is its partition before it has measured. */
    if (sched == OMPDSM_SCHED_PROFILED &&
        (!site || rt_self.nthreads <= 1 || rt_self.lteam))
        sched = OMPDSM_SCHED_STATIC;
    if (chunk < 0)
        chunk = 0;
    L->n = n;
    L->kind = sched;
    L->chunk = (unsigned long long)chunk;
    if (L->kind != OMPDSM_SCHED_STATIC && L->kind != OMPDSM_SCHED_PROFILED &&
        !L->chunk)
        L->chunk = 1;
    L->tid = rt_self.tid;
    L->nthreads = rt_self.nthreads;
    L->flags = flags;
    L->site = site;
    L->seq = rt_self.ws_seq++;
    L->gen = rt_ws_gen(L->seq);
    rt_ws_enter(L->seq, L->kind == OMPDSM_SCHED_DYNAMIC ||
                            L->kind == OMPDSM_SCHED_GUIDED);
    if (flags & OMPDSM_LOOP_ORDERED) {
        rt_self.ordered_loop = L;
        rt_self.ordered_iter = 0;
        rt_self.ordered_passed = 1; /* no iteration started yet */
    }
    L->frozen = frozen;
    if (L->kind == OMPDSM_SCHED_PROFILED)
        rt_prof_init(L, eval_size, eval_skip);
}

RT_API void OMPDSM_sections_init(OMPDSM_loop *loop, OMPDSM_loop_site *site,
                                 unsigned nsections)
{
    OMPDSM_loop_init(loop, site, nsections, OMPDSM_SCHED_DYNAMIC, 1, 0, 0,
                     OMPDSM_LOOP_MONOTONIC);
}

static void ordered_pass_skipped(void);

RT_API int OMPDSM_loop_next(OMPDSM_loop *loop, unsigned long long *lo,
                            unsigned long long *hi)
{
    struct rt_loop *L = L_of(loop);
    uint64_t a, b;
    if (rt_self.ordered_loop == L)
        ordered_pass_skipped();
    if (L->done)
        return 0;
    if (L->nthreads <= 1) {
        /* A team of one does everything, in order, with no claims. */
        L->done = 1;
        if (!L->n)
            return 0;
        *lo = 0;
        *hi = L->n;
        L->did_last = 1;
        return 1;
    }
    int got;
    switch (L->kind) {
    case OMPDSM_SCHED_STATIC:
        if (!L->chunk) {
            sched_static_block(L->n, L->tid, L->nthreads, &a, &b);
            L->done = 1;
            got = a < b;
        } else {
            got = sched_static_chunk(L->n, L->chunk, L->tid, L->nthreads,
                                     L->next++, &a, &b);
            if (!got)
                L->done = 1;
        }
        break;
    case OMPDSM_SCHED_DYNAMIC: {
        struct sched_claim c;
        uint64_t ci;
        claim_of(L, &c);
        /* Chunk numbers must fit the claim word's value bits. */
        if (L->n && (L->n - 1) / L->chunk + 1 >= SCHED_WORD_VAL_MASK)
            L->chunk = (L->n - 1) / (SCHED_WORD_VAL_MASK - 1) + 1;
        uint64_t nchunks = L->n ? (L->n - 1) / L->chunk + 1 : 0;
        int nodes = rt_self.group.nodes;
        if (nodes > 1 &&
            !(L->flags & (OMPDSM_LOOP_ORDERED | OMPDSM_LOOP_MONOTONIC))) {
            uint64_t cursor = L->next;
            got = sched_dynamic_next_spread(&c, nodes, comm_rank(), nchunks,
                                            &cursor, &ci);
            L->next = cursor;
        } else
            got = sched_dynamic_next(&c, nchunks, &ci);
        if (got) {
            a = ci * L->chunk;
            b = a + L->chunk < L->n ? a + L->chunk : L->n;
        } else {
            L->done = 1;
        }
        break;
    }
    case OMPDSM_SCHED_GUIDED: {
        struct sched_claim c;
        claim_of(L, &c);
        /* Iteration numbers must fit the claim word's value bits: count in
         * grains of g iterations when the loop is longer. */
        uint64_t g = L->n >> (SCHED_WORD_VAL_BITS - 1)
                         ? (L->n >> (SCHED_WORD_VAL_BITS - 1)) + 1 : 1;
        uint64_t ng = (L->n + g - 1) / g, cg = (L->chunk + g - 1) / g;
        got = sched_guided_next(&c, ng, cg, L->nthreads, &a, &b);
        if (got) {
            a *= g;
            b = b * g < L->n ? b * g : L->n;
        } else {
            L->done = 1;
        }
        break;
    }
    case OMPDSM_SCHED_PROFILED:
        got = rt_prof_next(L, &a, &b);
        break;
    default:
        ompdsm_fatal("unknown schedule kind %d", L->kind);
    }
    if (!got)
        return 0;
    if (b == L->n)
        L->did_last = 1;
    *lo = a;
    *hi = b;
    return 1;
}

RT_API int OMPDSM_loop_last(OMPDSM_loop *loop)
{
    return L_of(loop)->did_last;
}

RT_API void OMPDSM_loop_end(OMPDSM_loop *loop, int nowait)
{
    struct rt_loop *L = L_of(loop);
    rt_wait_begin(RT_WAIT_LOOP_END, NULL, L->site ? L->site->file : NULL,
                  L->site ? L->site->line : 0, NULL, ~0ull);
    if (rt_self.ordered_loop == L) {
        ordered_pass_skipped();
        rt_self.ordered_loop = NULL;
    }
    /* nowait 2, a combined parallel for's loop: a profiled loop that may
     * re-partition still ends with the barrier that carries its times
     * (ompdsm_abi.h) */
    if (L->kind == OMPDSM_SCHED_PROFILED)
        rt_prof_end(L, nowait == 1 || (nowait && L->frozen));
    else if (!nowait)
        rt_team_barrier(NULL, 0, 0, NULL);
    rt_wait_end();
}

/* ---- ordered ---- */

/* Every team node holds, per ordered-loop slot, one word per sender (see
 * rt.h); the thread finishing iteration k sets its node's word on every
 * team node to sched_word(tag, k + 1), the tag naming the loop instance.
 * Ordered regions run one at a time, so the largest word with this
 * instance's tag says how many iterations have passed. */
static uint64_t ordered_tag(const struct rt_loop *L)
{
    return (L->seq + 1) & SCHED_WORD_GEN_MASK;
}

static volatile uint64_t *ordered_words(const struct rt_loop *L)
{
    return rt_area->ordered + (L->seq % RT_ORD_SLOTS) * (uint64_t)comm_size();
}

/* How many iterations have passed, and in *from the node whose thread
 * passed the last of them (-1: none yet). */
static uint64_t ordered_done(const struct rt_loop *L, int *from)
{
    volatile uint64_t *w = ordered_words(L);
    uint64_t done = 0, tag = ordered_tag(L);
    *from = -1;
    for (int s = 0; s < rt_self.group.nodes; s++) {
        uint64_t v = __atomic_load_n(&w[s], __ATOMIC_ACQUIRE);
        if (sched_word_gen(v) == tag && sched_word_val(v) > done) {
            done = sched_word_val(v);
            *from = s;
        }
    }
    return done;
}

static int ordered_ready(void *arg)
{
    int from;
    return ordered_done(arg, &from) >= rt_self.ordered_iter;
}

/* The acquire of a turn: from the node that passed the previous
 * iteration, whose positions it pushed before its signal (ordered_publish),
 * so that each turn reads no other node's positions or log; its own
 * acquires carry everything earlier turns released. */
static void ordered_acquire(struct rt_loop *L)
{
    int from;
    dsm_atomic_drain();
    if (rt_self.ordered_iter && (ordered_done(L, &from), from >= 0))
        dsm_acquire_pushed(from);
    else
        dsm_acquire();
}

static void ordered_wait(struct rt_loop *L)
{
    if (rt_self.lteam) {
        rt_nest_ordered_wait(L->seq, rt_self.ordered_iter);
        return;
    }
    if (comm_wait_until(ordered_ready, L) < 0)
        ompdsm_fatal("ordered: the job is failing");
}

static void ordered_publish(struct rt_loop *L)
{
    if (rt_self.lteam) {
        rt_nest_ordered_publish(L->seq, rt_self.ordered_iter);
        rt_self.ordered_passed = 1;
        return;
    }
    uint64_t w = sched_word(ordered_tag(L), rt_self.ordered_iter + 1);
    uint64_t off = offsetof(struct rt_area, ordered) +
                   ((L->seq % RT_ORD_SLOTS) * (uint64_t)comm_size() +
                    (uint64_t)comm_rank()) * 8;
    /* With several threads per node, the node's word at every node must
     * only grow: the next iteration's thread of this node may learn that
     * this one passed (from this node's own word, or another node's)
     * before this thread's notifies to the other nodes are out, and its
     * larger value must not be overtaken by ours.  So a node's threads
     * publish one at a time, and the own node last: notifies of one
     * sender to one peer arrive in the order they were issued. */
    int hyb = rt_self.nlocal > 1;
    if (hyb)
        rt_node_ordered_lock(1);
    int me = comm_rank();
    for (int node = 0; node < rt_self.group.nodes; node++)
        if (node != me) {
            dsm_release_push(node);
            COMM_CHECK(comm_notify(node, RT_REG_AREA, off, w));
        }
    COMM_CHECK(comm_notify(me, RT_REG_AREA, off, w));
    if (hyb)
        rt_node_ordered_lock(0);
    rt_self.ordered_passed = 1;
}

/* An iteration may run no ordered region at all (OpenMP allows it): before
 * this thread moves on, it takes its turn anyway so that the next
 * iteration does not wait for it forever; it acquires too, so that the
 * positions it passes on carry the previous turns' releases. */
static void ordered_pass_skipped(void)
{
    struct rt_loop *L = rt_self.ordered_loop;
    if (!L || rt_self.ordered_passed || L->nthreads <= 1)
        return;
    ordered_wait(L);
    if (!rt_self.lteam)
        ordered_acquire(L);
    ordered_publish(L);
}

RT_API void OMPDSM_loop_iter(OMPDSM_loop *loop, unsigned long long k)
{
    ordered_pass_skipped();
    rt_self.ordered_loop = L_of(loop);
    rt_self.ordered_iter = k;
    rt_self.ordered_passed = 0;
}

RT_API void OMPDSM_ordered_start(void)
{
    struct rt_loop *L = rt_self.ordered_loop;
    if (!L || L->nthreads <= 1)
        return;
    rt_wait_begin(RT_WAIT_ORDERED, RT_CALLER, NULL, 0, NULL, ~0ull);
    ordered_wait(L);
    if (!rt_self.lteam) /* (a nested team shares the node's copies) */
        ordered_acquire(L);
    rt_wait_end();
}

RT_API void OMPDSM_ordered_end(void)
{
    struct rt_loop *L = rt_self.ordered_loop;
    if (!L || L->nthreads <= 1)
        return;
    if (!rt_self.lteam) {
        dsm_atomic_drain();
        dsm_release();
    }
    ordered_publish(L);
}

/* ---- single ---- */

RT_API int OMPDSM_single_start(void)
{
    RT_STAT(singles, 1);
    if (rt_self.nthreads <= 1) {
        rt_self.ws_seq++;
        return 1;
    }
    struct rt_loop L;
    memset(&L, 0, sizeof L);
    L.seq = rt_self.ws_seq++;
    rt_ws_enter(L.seq, 0);
    struct sched_claim c;
    claim_of(&L, &c);
    return sched_single_claim(&c);
}

RT_API void OMPDSM_single_end(int nowait)
{
    if (nowait)
        return;
    rt_wait_begin(RT_WAIT_SINGLE_END, RT_CALLER, NULL, 0, NULL, ~0ull);
    rt_team_barrier(NULL, 0, 0, NULL);
    rt_wait_end();
}

RT_API void OMPDSM_single_copyprivate(int executed, void *data,
                                      unsigned long size)
{
    rt_wait_begin(RT_WAIT_COPYPRIVATE, RT_CALLER, NULL, 0, NULL, ~0ull);
    rt_team_barrier(data, size, executed, data);
    rt_wait_end();
}
