/* runtime/loop.c - work-sharing loops and sections: the per-thread loop
 * state, the choice of schedule (sched/), lastprivate detection, the
 * loop-end barrier, and ordered regions. */
#include "rt.h"
#include "sched/sched.h"
#include "ompdsm_config.h"

#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if OMPDSM_HAVE_PAPI
#include <papi.h>
#endif

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

static void prof_init(struct rt_loop *L, long long eval_size,
                      long long eval_skip);
static int prof_next(struct rt_loop *L, uint64_t *lo, uint64_t *hi);
static void prof_end(struct rt_loop *L, int nowait);
static const struct rt_prof_override *prof_override(const OMPDSM_loop_site *s,
                                                    int sched);

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
    const struct rt_prof_override *o = prof_override(site, sched);
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
    if (flags & OMPDSM_LOOP_ORDERED) {
        rt_self.ordered_loop = L;
        rt_self.ordered_iter = 0;
        rt_self.ordered_passed = 1; /* no iteration started yet */
    }
    L->frozen = frozen;
    if (L->kind == OMPDSM_SCHED_PROFILED)
        prof_init(L, eval_size, eval_skip);
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
        got = prof_next(L, &a, &b);
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
    if (L->kind == OMPDSM_SCHED_PROFILED)
        prof_end(L, nowait);
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

static int ordered_ready(void *arg)
{
    const struct rt_loop *L = arg;
    volatile uint64_t *w = ordered_words(L);
    uint64_t done = 0, tag = ordered_tag(L);
    for (int s = 0; s < rt_self.group.nodes; s++) {
        uint64_t v = __atomic_load_n(&w[s], __ATOMIC_ACQUIRE);
        if (sched_word_gen(v) == tag && sched_word_val(v) > done)
            done = sched_word_val(v);
    }
    return done >= rt_self.ordered_iter;
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
        if (node != me)
            COMM_CHECK(comm_notify(node, RT_REG_AREA, off, w));
    COMM_CHECK(comm_notify(me, RT_REG_AREA, off, w));
    if (hyb)
        rt_node_ordered_lock(0);
    rt_self.ordered_passed = 1;
}

/* An iteration may run no ordered region at all (OpenMP allows it): before
 * this thread moves on, it takes its turn anyway so that the next
 * iteration does not wait for it forever. */
static void ordered_pass_skipped(void)
{
    struct rt_loop *L = rt_self.ordered_loop;
    if (!L || rt_self.ordered_passed || L->nthreads <= 1)
        return;
    ordered_wait(L);
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
        dsm_acquire();
    rt_wait_end();
}

RT_API void OMPDSM_ordered_end(void)
{
    struct rt_loop *L = rt_self.ordered_loop;
    if (!L || L->nthreads <= 1)
        return;
    if (!rt_self.lteam)
        dsm_release();
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

/* ---- profiled ----
 * The schedule of "Implementation and Evaluation of Dynamic Load Balancing
 * Using Loop Re-partitioning on Omni/SCASH": an execution that measures
 * gives each thread a block of eval_skip + eval_size iterations at the
 * start of the space (the first eval_skip run plainly, the next eval_size
 * timed), exchanges the times once (an allgather among the team), and
 * splits the rest by speed (sched_profiled_decide).  The weights persist
 * in the loop's site, so later executions split the whole space by them
 * and measure nothing; each execution's per-node times ride on the
 * loop-end barrier, and when they stray from what the weights predict by
 * more than OMPDSM_PROFILED_DRIFT the next execution measures again.
 * Speeds, weights and vectors are per thread (a team of nodes x T threads
 * splits by thread); the site's state is the node's, written by its
 * leader, and each thread's part of an execution is in ps->thr. */

enum { PH_SKIP, PH_TIMED, PH_TIMING, PH_XCHG, PH_RUN, PH_CK, PH_CKRUN,
       PH_DONE };
/* The shortest measurement (eval_size iterations on one node) trusted. */
#define PROF_MIN_MEASURE_NS 100000
/* The shortest predicted rest of a measuring execution that gets a
 * checkpoint: one more allgather is then well under 1% of it. */
#define PROF_CK_MIN_NS 20000000
/* The executions' sums decide once every thread's reach this (loop time
 * and stalls, prof_acc_split): 5 periods of a cgroup quota's 10 ms, and
 * long enough that another job's bursts on a shared machine average out;
 * 20 ms windows chased them (CG A: 20-30 re-partitions a run, loaded). */
#define PROF_ACC_MIN_NS 50000000
/* With OMPDSM_PROFILED_STALLS, a window also has at least this many of
 * the site's executions: a move is judged by one window against the one
 * before, and one execution's time is one sample. */
#define PROF_ACC_MIN_EXECS 3
/* Pieces a node's block is handed out in before the checkpoint: the
 * checkpoint can come that late after its deadline. */
#define PROF_CK_PIECES 64
/* Checkpoints of one execution, at most (each takes a quarter of what is
 * left, and none comes when that is under PROF_CK_MIN_NS: about 20 for a
 * rest of 4 s). */
#define PROF_CK_MAX_ROUNDS 48
/* Checkpoint record slots per node of the job (rt_prof_ck_len): a team
 * of more threads than that many per node runs without checkpoints. */
#define PROF_CK_TPN 64

struct rt_prof_site *rt_prof_sites;
static struct rt_prof_site **prof_tail = &rt_prof_sites;
int rt_prof_counters;
const char *rt_prof_counters_why = "no profiled loop ran";

static int papi_state; /* 0 not tried, 1 library up, -1 not available */
#if OMPDSM_HAVE_PAPI
static int papi_evset = PAPI_NULL;
#endif

/* PAPI's real-time clock and, where the machine has them, its cycle and
 * instruction counters.  Virtual machines without a PMU have no counters:
 * the reason is kept for the statistics report, said once there. */
static void prof_papi_init(void)
{
    if (papi_state)
        return;
    papi_state = -1;
#if OMPDSM_HAVE_PAPI
    if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
        rt_prof_counters_why = "PAPI_library_init failed (timing with "
                               "clock_gettime)";
        return;
    }
    papi_state = 1;
    int es = PAPI_NULL;
    if (PAPI_create_eventset(&es) != PAPI_OK) {
        rt_prof_counters_why = "PAPI has no event set";
        return;
    }
    if (PAPI_add_event(es, PAPI_TOT_CYC) != PAPI_OK ||
        PAPI_add_event(es, PAPI_TOT_INS) != PAPI_OK ||
        PAPI_start(es) != PAPI_OK) {
        rt_prof_counters_why = "PAPI cannot count PAPI_TOT_CYC and "
                               "PAPI_TOT_INS here (no PMU: a virtual machine?)";
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
        return;
    }
    papi_evset = es;
    rt_prof_counters = 1;
    rt_prof_counters_why = "";
#else
    rt_prof_counters_why = "libompdsm was built without PAPI";
#endif
}

/* Wall time in ns: a node sharing its core with another process must look
 * slow, so never CPU time. */
static uint64_t prof_now(void)
{
#if OMPDSM_HAVE_PAPI
    if (papi_state > 0)
        return (uint64_t)PAPI_get_real_nsec();
#endif
    return ompdsm_now_ns();
}

static void prof_counters(long long v[2])
{
    v[0] = v[1] = 0;
#if OMPDSM_HAVE_PAPI
    if (rt_prof_counters && PAPI_read(papi_evset, v) != PAPI_OK)
        v[0] = v[1] = 0;
#endif
}

static const struct rt_prof_override *prof_override(const OMPDSM_loop_site *s,
                                                    int sched)
{
    if (!s || !s->file || !rt_icv.nprof_over)
        return NULL;
    const char *base = strrchr(s->file, '/');
    base = base ? base + 1 : s->file;
    const struct rt_prof_override *any = NULL;
    for (int i = 0; i < rt_icv.nprof_over; i++) {
        const struct rt_prof_override *o = &rt_icv.prof_over[i];
        if (!strcmp(o->file, "*")) {
            if (!any)
                any = o;
        } else if (o->line == s->line &&
                   (!strcmp(o->file, s->file) || !strcmp(o->file, base))) {
            return o;
        }
    }
    return sched == OMPDSM_SCHED_PROFILED ? any : NULL;
}

static void *prof_alloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p)
        ompdsm_fatal("out of memory for a profiled loop's state");
    return p;
}

/* The site's state for a team of nthreads; a new team size starts over. */
static struct rt_prof_site *prof_site(OMPDSM_loop_site *site, int nthreads)
{
    struct rt_prof_site *ps = site->rt;
    if (!ps) {
        ps = prof_alloc(sizeof *ps);
        ps->site = site;
        *prof_tail = ps;
        prof_tail = &ps->next;
        site->rt = ps;
    }
    int nthr = rt_self.tpn > 1 ? rt_self.tpn : 1;
    if (ps->nthreads != nthreads || ps->nthr < nthr) {
        free(ps->speed);
        free(ps->weight);
        free(ps->vec);
        for (int i = 0; i < ps->nthr; i++) {
            free(ps->thr[i].speed);
            free(ps->thr[i].vec);
        }
        free(ps->thr);
        size_t nt = (size_t)nthreads;
        ps->speed = prof_alloc(nt * sizeof *ps->speed);
        ps->weight = prof_alloc(nt * sizeof *ps->weight);
        ps->vec = prof_alloc(nt * sizeof *ps->vec);
        free(ps->acc_it);
        free(ps->acc_ns);
        ps->acc_it = prof_alloc(nt * sizeof *ps->acc_it);
        ps->acc_ns = prof_alloc(nt * sizeof *ps->acc_ns);
        free(ps->prev_weight);
        ps->prev_weight = prof_alloc(nt * sizeof *ps->prev_weight);
        ps->trial = ps->fails = ps->backoff = ps->eq_judged = 0;
        ps->acc_cost = 0;
        ps->acc_execs = 0;
        ps->thr = prof_alloc((size_t)nthr * sizeof *ps->thr);
        for (int i = 0; i < nthr; i++) {
            ps->thr[i].speed = prof_alloc(nt * sizeof *ps->speed);
            ps->thr[i].vec = prof_alloc(nt * sizeof *ps->vec);
        }
        ps->nthr = nthr;
        for (size_t t = 0; t < nt; t++)
            ps->weight[t] = 1;
        ps->nthreads = nthreads;
        ps->measure = 1;
        ps->measured = 0;
        ps->brief = 0;
        if (ps->grp)
            ps->grp->sites--;
        ps->grp = NULL;
    }
    return ps;
}

static struct rt_prof_group *rt_prof_groups;

/* Copies a partition's speeds and weights (nt of each). */
static void prof_copy(double *speed, double *weight, const double *from_speed,
                      const double *from_weight, int nt)
{
    memcpy(speed, from_speed, (size_t)nt * sizeof *speed);
    memcpy(weight, from_weight, (size_t)nt * sizeof *weight);
}

/* The group of a site at its first execution (n, chunk, team): an
 * existing one with the same, or a new one that takes the site's state. */
static struct rt_prof_group *prof_group(struct rt_prof_site *ps,
                                        unsigned long long n,
                                        unsigned long long chunk)
{
    struct rt_prof_group *g;
    for (g = rt_prof_groups; g; g = g->next)
        if (g->n == n && g->chunk == chunk && g->nthreads == ps->nthreads)
            break;
    if (!g) {
        size_t nt = (size_t)ps->nthreads;
        g = prof_alloc(sizeof *g);
        g->n = n;
        g->chunk = chunk;
        g->nthreads = ps->nthreads;
        g->speed = prof_alloc(nt * sizeof *g->speed);
        g->weight = prof_alloc(nt * sizeof *g->weight);
        prof_copy(g->speed, g->weight, ps->speed, ps->weight, ps->nthreads);
        g->measure = ps->measure;
        g->measured = ps->measured;
        g->brief = ps->brief;
        g->next = rt_prof_groups;
        rt_prof_groups = g;
    }
    /* A site joining a group that exists takes its weights next, and
     * measures only by the group's rules (prof_group_take). */
    if (g->sites)
        ps->measure = 0;
    ps->grp_gen = g->sites++ ? g->gen - 1 : g->gen;
    ps->grp = g;
    return g;
}

/* Before an execution: a site takes its group's weights when another
 * loop of the group changed them, and measures when the group does. */
static void prof_group_take(struct rt_prof_site *ps)
{
    struct rt_prof_group *g = ps->grp;
    if (!g)
        return;
    if (ps->grp_gen != g->gen) {
        prof_copy(ps->speed, ps->weight, g->speed, g->weight, ps->nthreads);
        ps->measured = g->measured;
        ps->brief = g->brief;
        ps->grp_gen = g->gen;
        ps->drift_run = 0;
    }
    /* A loop whose group has only a measurement too brief to trust (its
     * loop's body was too short) measures itself once: its body may be
     * long enough. */
    ps->measure = ps->measure || g->measure || (g->brief && !ps->executions);
}

/* After a measurement or a checkpoint of one of its loops: the group
 * takes the site's weights. */
static void prof_group_give(struct rt_prof_site *ps)
{
    struct rt_prof_group *g = ps->grp;
    if (!g)
        return;
    if (ps->brief && g->measured && !g->brief) {
        /* Too brief to replace what another loop measured: the site
         * takes the group's weights again next time. */
        g->measure = 0;
        ps->grp_gen = g->gen - 1;
        return;
    }
    prof_copy(g->speed, g->weight, ps->speed, ps->weight, ps->nthreads);
    g->owner = ps;
    g->measured = ps->measured;
    g->brief = ps->brief;
    g->measure = ps->measure;
    ps->grp_gen = ++g->gen;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* This thread's run delay so far (ns): the time it was runnable but not
 * running, the second field of /proc/thread-self/schedstat.  A node
 * throttled by a cgroup quota or sharing its core with another job
 * accumulates it wherever the stall lands: in a loop body, whose wall
 * time shows it anyway, or outside, in the barrier's release work, its
 * page faults before the loop or its spinning, which a loop timer never
 * sees (CG's 0.2 ms row loops measured a node at half speed as nearly
 * full speed).  0 where the file is missing or OMPDSM_PROFILED_STALLS is
 * off. */
static __thread int stall_fd = -1; /* -2: not available */
static __thread uint64_t stall_mark, stall_mark_t; /* at the last end */
/* Its run delay and time in its last profiled loop-end barrier, for the
 * next record (prof_drift counts of that stall only what the others did
 * not spend waiting anyway). */
static __thread uint64_t stall_bar, stall_bar_ns;
/* The node's forks and time in DSM barriers at that end: a fork since
 * means a region boundary, whose stalls (node 0's serial part, the
 * others' wait for the fork) are a fixed cost no partition changes, and
 * count nothing; the barriers' time is the thread's wait in the
 * constructs between (single, a reduction's barrier). */
static __thread uint64_t stall_forks, stall_bns;

static void prof_dsm_marks(uint64_t *forks, uint64_t *bns)
{
    struct dsm_stats st;
    dsm_stats_get(&st);
    *forks = st.forks;
    *bns = st.barrier_ns;
}

static uint64_t prof_stall(void)
{
    if (stall_fd == -2 || !rt_icv.prof_stalls)
        return 0;
    if (stall_fd < 0) {
        stall_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        if (stall_fd < 0) {
            stall_fd = -2;
            return 0;
        }
    }
    char b[96];
    ssize_t n = pread(stall_fd, b, sizeof b - 1, 0);
    if (n <= 0)
        return 0;
    b[n] = 0;
    char *e;
    (void)strtoull(b, &e, 10);
    return strtoull(e, NULL, 10);
}

/* Stalls over this long a gap between two profiled executions are not
 * counted: they are the program's serial parts or another region's. */
#define PROF_STALL_GAP_NS 100000000ULL

/* This thread's part of the current execution. */
static struct rt_prof_thr *prof_thr(const struct rt_loop *L)
{
    return &L->ps->thr[rt_self.local > 0 ? rt_self.local : 0];
}

/* Forgets the executions' sums: the weights just changed. */
static void prof_acc_reset(struct rt_prof_site *ps, int nt)
{
    memset(ps->acc_it, 0, (size_t)nt * sizeof *ps->acc_it);
    memset(ps->acc_ns, 0, (size_t)nt * sizeof *ps->acc_ns);
    ps->acc_cost = 0;
    ps->acc_execs = 0;
    ps->acc_cmax = 0;
}

/* The weights just changed: with stalls, what the records of the split
 * before still carry (a stall lands in the next execution's record) is
 * not the new one's, so the sums start after the site's next execution. */
static void prof_acc_settle(struct rt_prof_site *ps)
{
    ps->settle = rt_icv.prof_stalls;
}

/* Whether this thread writes the node's shared state of the loop. */
static int prof_leader(void)
{
    return rt_self.local <= 0;
}

/* Several threads per node: the node's leader starts each execution of a
 * profiled loop (the site's state, its group, whether it measures, the
 * vector) and the node's other threads take what it decided, so that the
 * state the node's threads share has one writer.  An execution is known
 * by its work-share instance (L->seq: the same on the team's threads,
 * never reused on a node), and the leader starts the next one only when
 * every other thread of the node has taken this one. */
static struct {
    uint32_t gen, gen_sleep;   /* starts published */
    uint32_t took, took_sleep; /* threads that took the last one */
    uint32_t need;             /* threads to take it */
    uint64_t key;              /* its L->seq + 1 */
    struct rt_prof_site *ps;
    int phase;
    uint64_t base;
} pn;

/* The leader's start of an execution: everything the node's threads
 * share.  Returns the phase the execution starts in; *base: where the
 * measurement's iterations end. */
static int prof_start(struct rt_loop *L, uint64_t *base)
{
    prof_papi_init();
    struct rt_prof_site *ps = prof_site(L->site, L->nthreads);
    L->ps = ps;
    if (!L->frozen && rt_icv.prof_share && !ps->grp && !ps->executions)
        prof_group(ps, L->n, L->chunk);
    if (!L->frozen)
        prof_group_take(ps);
    ps->executions++;
    ps->chunk = L->chunk;
    prof_counters(ps->cnt0);
    if (L->frozen) {
        double eq[L->nthreads];
        for (int t = 0; t < L->nthreads; t++)
            eq[t] = 1;
        *base = 0;
        sched_profiled_vector(0, L->n, L->chunk, L->nthreads, eq, ps->vec);
        return PH_RUN;
    }
    if (ps->measure) {
        uint64_t per = sat_add(L->skip, L->size);
        uint64_t all = sat_mul(per, (uint64_t)L->nthreads);
        *base = all < L->n ? all : L->n;
        return PH_SKIP;
    }
    *base = 0;
    if (sched_profiled_vector(0, L->n, L->chunk, L->nthreads, ps->weight,
                              ps->vec) < 0)
        ompdsm_fatal("schedule(profiled): no partition for %d threads",
                     L->nthreads);
    return PH_RUN;
}

static void prof_init(struct rt_loop *L, long long eval_size,
                      long long eval_skip)
{
    if (L->nthreads > SCHED_PROF_MAX_THREADS)
        ompdsm_fatal("schedule(profiled): teams of more than %d threads are "
                     "not supported", SCHED_PROF_MAX_THREADS);
    L->skip = eval_skip > 0 ? (uint64_t)eval_skip : 0;
    L->size = eval_size > 0 ? (uint64_t)eval_size : 1;
    uint64_t base;
    int phase;
    int shared = rt_self.nlocal > 1;
    if (!shared) {
        phase = prof_start(L, &base);
    } else if (prof_leader()) {
        uint32_t t;
        while ((t = __atomic_load_n(&pn.took, __ATOMIC_ACQUIRE)) < pn.need)
            rt_word_wait(&pn.took, t, &pn.took_sleep);
        phase = prof_start(L, &base);
        pn.ps = L->ps;
        pn.phase = phase;
        pn.base = base;
        pn.need = (uint32_t)(rt_self.nlocal - 1);
        __atomic_store_n(&pn.took, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&pn.key, L->seq + 1, __ATOMIC_RELEASE);
        __atomic_fetch_add(&pn.gen, 1, __ATOMIC_SEQ_CST);
        rt_word_wake(&pn.gen, &pn.gen_sleep);
    } else {
        for (;;) {
            uint32_t g = __atomic_load_n(&pn.gen, __ATOMIC_ACQUIRE);
            if (__atomic_load_n(&pn.key, __ATOMIC_ACQUIRE) == L->seq + 1)
                break;
            rt_word_wait(&pn.gen, g, &pn.gen_sleep);
        }
        L->ps = pn.ps;
        phase = pn.phase;
        base = pn.base;
    }
    L->phase = phase;
    L->base = base;
    /* the leader changes ps->vec only at a measuring execution's
     * exchanges, and this execution, split by it, has none */
    if (phase == PH_RUN)
        memcpy(prof_thr(L)->vec, L->ps->vec,
               (size_t)L->nthreads * sizeof *L->ps->vec);
    if (shared && rt_self.local > 0) {
        __atomic_fetch_add(&pn.took, 1, __ATOMIC_SEQ_CST);
        rt_word_wake(&pn.took, &pn.took_sleep);
    }
    L->t0 = prof_now();
    /* the stalls since this thread's last profiled execution ended */
    struct rt_prof_thr *th = prof_thr(L);
    th->stall0 = prof_stall();
    uint64_t forks, bns;
    prof_dsm_marks(&forks, &bns);
    th->stall_out = stall_mark_t && L->t0 - stall_mark_t < PROF_STALL_GAP_NS &&
                            th->stall0 >= stall_mark && forks == stall_forks
                        ? th->stall0 - stall_mark : 0;
    th->stall_bw = th->stall_out && bns >= stall_bns ? bns - stall_bns : 0;
    th->gap_ns = stall_mark_t && L->t0 - stall_mark_t < PROF_STALL_GAP_NS &&
                         forks == stall_forks
                     ? L->t0 - stall_mark_t : 0;
}

/* A fraction from the environment, read once into *cache (negative until
 * then); every node reads the same.  zero_ok: 0 is allowed, 1 is not (a
 * fraction in [0, 1)); else (0, 1]. */
static double prof_fraction(double *cache, const char *name, double dflt,
                            int zero_ok, const char *hint)
{
    double v;
    __atomic_load(cache, &v, __ATOMIC_RELAXED);
    if (v >= 0)
        return v;
    const char *e = getenv(name);
    v = dflt;
    if (e && *e &&
        (rt_parse_fraction(e, &v) < 0 ||
         (zero_ok ? (v < 0 || v >= 1) : (v <= 0 || v > 1))))
        ompdsm_fatal("%s='%s' is not valid: expected a fraction in %s", name,
                     e, hint);
    __atomic_store(cache, &v, __ATOMIC_RELAXED);
    return v;
}

/* OMPDSM_PROFILED_STEP: how far a re-partition goes towards the measured
 * speeds (sched_prof_in.step). */
static double prof_step(void)
{
    static double step = -1;
    return prof_fraction(&step, "OMPDSM_PROFILED_STEP", 1, 0,
                         "(0, 1], such as 0.5");
}

/* Steps (1a)-(1e): every thread's time for its eval_size iterations, one
 * allgather, and the same decision on every node. */
static void prof_exchange(struct rt_loop *L, uint64_t timed_ns,
                          uint64_t timed_iters)
{
    struct rt_prof_site *ps = L->ps;
    struct rt_prof_thr *th = prof_thr(L);
    int nt = L->nthreads;
    uint64_t t = prof_now();
    /* the weights in use, read before the exchange: the leader changes
     * them once every thread has given its time */
    double cur[nt];
    memcpy(cur, ps->weight, sizeof cur);
    struct {
        uint64_t ns, iters;
    } mine = {timed_ns, timed_iters}, all[nt];
    if (rt_team_allgather(&mine, sizeof mine, all) < 0)
        ompdsm_fatal("schedule(profiled): exchanging the measured speeds "
                     "failed: the job is failing");
    double speed[nt], w[nt];
    uint64_t vec[nt];
    int brief = 0;
    for (int i = 0; i < nt; i++) {
        speed[i] = all[i].iters
                       ? (double)all[i].iters / (double)(all[i].ns ? all[i].ns : 1)
                       : 0;
        brief |= all[i].ns < PROF_MIN_MEASURE_NS;
    }
    /* A measurement shorter than that on some node is clock and cache
     * noise, not speed: split as static does and judge no drift, rather
     * than chase noise and lose locality.  Not the split in use: a drift
     * brought this measurement, so that one is in doubt. */
    if (brief)
        for (int i = 0; i < nt; i++)
            cur[i] = 1;
    struct sched_prof_in in = {L->base, L->n, L->chunk, nt, speed, cur,
                               brief ? INFINITY : rt_icv.prof_gain,
                               prof_step()};
    struct sched_prof_out out = {0, 0, 0, vec, w};
    if (sched_profiled_decide(&in, &out) < 0)
        ompdsm_fatal("schedule(profiled): no partition for %d threads", nt);
    memcpy(th->speed, speed, sizeof speed);
    memcpy(th->vec, vec, sizeof vec);
    L->xchg_ns = prof_now() - t;
    if (!prof_leader())
        return;
    ps->brief = brief;
    memcpy(ps->speed, speed, sizeof speed);
    memcpy(ps->weight, w, sizeof w);
    memcpy(ps->vec, vec, sizeof vec);
    ps->measured = 1;
    ps->measure = 0;
    ps->measurements++;
    prof_acc_reset(ps, nt);
    /* a new measured split: judged against static's once, and no earlier
     * move is on trial */
    ps->eq_judged = brief;
    ps->trial = 0;
    prof_acc_settle(ps);
    if (rt_icv.prof_stalls && !brief) {
        /* With stalls, a measurement shorter than 20 ms on some thread
         * splits only the rest of its own execution; the executions after
         * it start from static's split and the sums move it from there.
         * Such a measurement of a loop's first execution is its page
         * faults (CG A: one node 3-15x slower, 0.89-0.97 : 0.03-0.11 in
         * every run, homogeneous or not), and trying it for a window
         * before static's cost CG A homogeneous 2-3%. */
        int shortm = 0;
        for (int i = 0; i < nt; i++)
            shortm |= all[i].ns < PROF_CK_MIN_NS;
        if (shortm) {
            for (int i = 0; i < nt; i++)
                ps->weight[i] = 1;
            ps->eq_judged = 1;
        }
    }
    ps->repartitions += out.repartition != 0;
    prof_group_give(ps);
    ps->measure_ns += L->xchg_ns;
}

/* OMPDSM_PROFILED_CHECK: when, as a fraction of the rest's predicted
 * time, a measuring execution re-measures; 0: never (one measurement, as
 * the Omni/SCASH paper has it). */
static double prof_check(void)
{
    static double frac = -1;
    return prof_fraction(&frac, "OMPDSM_PROFILED_CHECK", 0.25, 1,
                         "[0, 1), such as 0.25 (0: no checkpoint)");
}

/* Arms the next checkpoint: this thread's ranges are handed out in pieces
 * until frac of pred (the rest's predicted time, ns) has passed. */
static void prof_ck_arm(struct rt_loop *L, double pred, double speed)
{
    struct rt_prof_thr *ps = prof_thr(L);
    double win = prof_check() * pred;
    double piece = speed * win / PROF_CK_PIECES;
    ps->ck_piece = piece >= 1 ? (uint64_t)piece : 1;
    ps->ck_t0 = prof_now();
    ps->ck_at = ps->ck_t0 + (uint64_t)win;
    ps->ck_it = 0;
}

/* Whether a rest predicted to take pred ns gets another checkpoint. */
static int prof_ck_more(const struct rt_prof_thr *ps, double pred)
{
    return pred >= PROF_CK_MIN_NS && isfinite(pred) &&
           ps->ck_rounds < PROF_CK_MAX_ROUNDS;
}

/* Right after the exchange: does this execution get checkpoints?  One
 * measurement of eval_size iterations can be far off (a node throttled
 * in bursts longer than the measurement looks fast or stalled), and a
 * loop executed once (EP's) never gets a second one; a checkpoint a
 * quarter of the way through the rest measures every node over that
 * quarter while all of them work, then splits what is left by those
 * speeds, and so on while what is left is long enough.  Decided from
 * exchanged data only, so every node agrees, and only where a thread may
 * take iterations below ones it already ran (no ordered or monotonic
 * loop) and the split is by block. */
static int prof_ck_start(struct rt_loop *L)
{
    struct rt_prof_thr *ps = prof_thr(L);
    double frac = prof_check();
    if (!(frac > 0) || L->chunk || L->frozen ||
        (uint64_t)L->nthreads > (uint64_t)comm_size() * PROF_CK_TPN ||
        /* (more threads per node than record slots: no checkpoint) */
        (L->flags & (OMPDSM_LOOP_ORDERED | OMPDSM_LOOP_MONOTONIC)))
        return 0;
    struct sched_prof_part p = {L->base, L->n, 0, L->nthreads, ps->vec};
    double pred = 0;
    for (int t = 0; t < L->nthreads; t++) {
        uint64_t c = sched_profiled_count(&p, t);
        if (!c)
            continue;
        if (!(ps->speed[t] > 0))
            return 0;
        double tt = (double)c / ps->speed[t];
        if (tt > pred)
            pred = tt;
    }
    ps->ck_rounds = 0;
    if (!prof_ck_more(ps, pred))
        return 0;
    uint64_t lo = 0, hi = 0;
    if (!sched_profiled_range(&p, L->tid, 0, &lo, &hi))
        lo = hi = 0;
    ps->ck_lo[0] = lo;
    ps->ck_hi[0] = hi;
    ps->ck_n = 1;
    ps->ck_i = 0;
    ps->ck_rn = ps->ck_ri = 0;
    ps->ck_pending = 0;
    ps->ck_blk = 0;
    ps->ck_gap = 0;
    ps->ck_last = 0;
    ps->ck_cit = 0;
    ps->ck_cns = 0;
    prof_ck_arm(L, pred, ps->speed[L->tid]);
    return 1;
}

/* What a thread tells the others at a checkpoint: its record, in a slot
 * of the runtime area on every team node (rt_area_ck_off), written with a
 * put and made valid by a notify of its tag (the execution's work-share
 * instance and the round): nobody waits for a node to reach its
 * checkpoint except when its reserve has run out. */
struct ck_rec {
    uint64_t tag;
    uint64_t it, ns;   /* iterations and time since its last record */
    uint64_t cit, cns; /* the same since the first checkpoint phase began */
    uint64_t n;        /* its ranges left (the reserve not included) */
    uint64_t lo[RT_CK_RANGES], hi[RT_CK_RANGES];
};
/* Slots: per team thread, for executions by their work-share instance mod
 * PROF_CK_EXECS (a thread may start the next execution's checkpoints
 * while another still reads this one's last round: nowait loops) and by
 * round parity (a thread publishes round k + 2 only after every thread's
 * round k + 1, which each publishes after reading round k). */
enum { PROF_CK_EXECS = 8 };

/* Team threads with a slot: PROF_CK_TPN per node.  Not the job's threads
 * per node: the area's size must not depend on them, since every node
 * registers it with the same size before the nodes can compare their
 * threads per node and stop a job whose nodes differ (rt_hybrid's test
 * expects that message). */
static uint64_t ck_threads(int nodes)
{
    return (uint64_t)(nodes > 0 ? nodes : 1) * PROF_CK_TPN;
}

size_t rt_prof_ck_len(int nodes)
{
    return (size_t)PROF_CK_EXECS * 2 * (size_t)ck_threads(nodes) *
           sizeof(struct ck_rec);
}

static uint64_t ck_off(const struct rt_loop *L, uint64_t round, int t)
{
    uint64_t slot = ((L->seq % PROF_CK_EXECS) * 2 + (round & 1)) *
                        ck_threads(comm_size()) + (uint64_t)t;
    return rt_area_ck_off(comm_size()) + slot * sizeof(struct ck_rec);
}

/* A round's tag: never 0 (an empty slot), never reused on a node. */
static uint64_t ck_tag(const struct rt_loop *L, uint64_t round)
{
    return ((L->seq + 1) << 6) | (round & 63);
}

static const struct ck_rec *ck_slot(const struct rt_loop *L, uint64_t round,
                                    int t)
{
    return (const struct ck_rec *)((const char *)rt_area +
                                   ck_off(L, round, t));
}

/* Whether every record of this thread's pending round is in. */
static int ck_complete(void *arg)
{
    const struct rt_loop *L = arg;
    const struct rt_prof_thr *ps = &L->ps->thr[rt_self.local > 0
                                               ? rt_self.local : 0];
    uint64_t tag = ck_tag(L, ps->ck_rounds);
    for (int t = 0; t < L->nthreads; t++) {
        uint64_t v = __atomic_load_n(&ck_slot(L, ps->ck_rounds, t)->tag,
                                     __ATOMIC_ACQUIRE);
        if (v != tag) {
            if (v > tag && v >> 6 != tag >> 6)
                ompdsm_fatal("schedule(profiled): thread %d is %d or more "
                             "loops ahead of thread %d at a checkpoint (its "
                             "record was overwritten)", t, PROF_CK_EXECS,
                             L->tid);
            return 0;
        }
    }
    return 1;
}

/* OMPDSM_PROFILED_RESERVE_MS: the time's worth of its own iterations a
 * thread keeps running after its checkpoint record while the others'
 * come (0: it waits for them, as a synchronous exchange would). */
static double prof_reserve_ns(void)
{
    static double v = -1;
    double r;
    __atomic_load(&v, &r, __ATOMIC_RELAXED);
    if (r >= 0)
        return r;
    const char *e = getenv("OMPDSM_PROFILED_RESERVE_MS");
    r = 10;
    if (e && *e) {
        char *end;
        r = strtod(e, &end);
        if (*end || !(r >= 0) || r > 1e6)
            ompdsm_fatal("OMPDSM_PROFILED_RESERVE_MS='%s' is not valid: "
                         "expected milliseconds, 0 or more, such as 10", e);
    }
    r *= 1e6;
    __atomic_store(&v, &r, __ATOMIC_RELAXED);
    return r;
}

/* The slice [from, from + len) of the concatenation of every thread's
 * ranges (in thread order) as ranges; -1 if more than RT_CK_RANGES. */
static int ck_slice(const struct ck_rec *all, int nt, uint64_t from,
                    uint64_t len, uint64_t *lo, uint64_t *hi)
{
    int n = 0;
    uint64_t acc = 0;
    for (int t = 0; t < nt && len; t++)
        for (uint64_t k = 0; k < all[t].n && len; k++) {
            uint64_t l = all[t].hi[k] - all[t].lo[k];
            if (from < acc + l) {
                uint64_t off = from - acc;
                uint64_t take = l - off < len ? l - off : len;
                if (n && hi[n - 1] == all[t].lo[k] + off) {
                    hi[n - 1] += take; /* adjacent: one range */
                } else {
                    if (n == RT_CK_RANGES)
                        return -1;
                    lo[n] = all[t].lo[k] + off;
                    hi[n] = lo[n] + take;
                    n++;
                }
                from += take;
                len -= take;
            }
            acc += l;
        }
    return n;
}

/* A checkpoint's first half, at this thread's deadline (or when its part
 * ran out): its record of what it ran since its last one, and its ranges
 * left but a reserve from their front, worth OMPDSM_PROFILED_RESERVE_MS
 * (twice the last round's wait for the others when that was longer; at
 * most half of what it has left), which it runs meanwhile. */
static void prof_ck_publish(struct rt_loop *L, uint64_t now)
{
    struct rt_prof_thr *ps = prof_thr(L);
    uint64_t ns = now - ps->ck_t0 - ps->ck_blk;
    struct ck_rec mine = {ck_tag(L, ps->ck_rounds), ps->ck_it, ns,
                          ps->ck_cit + ps->ck_it, ps->ck_cns + ns, 0, {0},
                          {0}};
    uint64_t left = 0;
    for (int k = ps->ck_i; k < ps->ck_n; k++)
        if (ps->ck_lo[k] < ps->ck_hi[k])
            left += ps->ck_hi[k] - ps->ck_lo[k];
    double rns = prof_reserve_ns();
    if (rns > 0 && (double)ps->ck_gap * 2 > rns)
        rns = (double)ps->ck_gap * 2 < 1e8 ? (double)ps->ck_gap * 2 : 1e8;
    double sp = mine.cit && mine.cns ? (double)mine.cit / (double)mine.cns
                                     : ps->speed[L->tid];
    double want = rns > 0 && sp > 0 ? ceil(sp * rns) : 0;
    uint64_t res = want < (double)(left / 2) ? (uint64_t)want : left / 2;
    if (rns > 0 && !res && left)
        res = 1;
    /* handed out in pieces of an eighth, so that the round's end is
     * seen before the reserve runs out */
    ps->ck_rpiece = res / 8 ? res / 8 : 1;
    ps->ck_rn = ps->ck_ri = 0;
    for (int k = ps->ck_i; k < ps->ck_n; k++) {
        uint64_t lo = ps->ck_lo[k], hi = ps->ck_hi[k];
        if (lo >= hi)
            continue;
        if (res) {
            uint64_t take = hi - lo < res ? hi - lo : res;
            ps->ck_rlo[ps->ck_rn] = lo;
            ps->ck_rhi[ps->ck_rn] = lo + take;
            ps->ck_rn++;
            res -= take;
            lo += take;
        }
        if (lo < hi) {
            mine.lo[mine.n] = lo;
            mine.hi[mine.n] = hi;
            mine.n++;
        }
    }
    ps->ck_n = ps->ck_i = 0;
    ps->ck_cit = mine.cit;
    ps->ck_cns = mine.cns;
    ps->ck_t0 = now;
    ps->ck_it = 0;
    ps->ck_blk = 0;
    ps->ck_pub = now;
    ps->ck_pending = 1;
    /* the record, then its tag, to every team node (this one too) */
    for (int node = 0; node < rt_self.group.nodes; node++) {
        uint64_t off = ck_off(L, ps->ck_rounds, L->tid);
        COMM_CHECK(comm_put(node, RT_REG_AREA, off + 8, &mine.it,
                            sizeof mine - 8));
        COMM_CHECK(comm_notify(node, RT_REG_AREA, off, mine.tag));
    }
    L->xchg_ns += prof_now() - now;
}

/* A checkpoint's second half, when every record of the round is in: the
 * ranges, concatenated in thread order, are split by the speeds just
 * measured when that is predicted to gain more than OMPDSM_PROFILED_GAIN
 * (and gives no thread more than RT_CK_RANGES ranges), else each thread
 * keeps its own.  Every node computes it from the same records.  A window
 * shorter than PROF_CK_MIN_NS is judged by the speeds since the first
 * checkpoint phase began: a few ms of a throttled node are its quota's
 * bursts, not its speed.  Those cumulative speeds persist: later
 * executions split by them. */
static void prof_ck_split(struct rt_loop *L, uint64_t now)
{
    struct rt_prof_thr *ps = prof_thr(L);
    struct rt_prof_site *site = L->ps;
    int nt = L->nthreads;
    struct ck_rec *all = prof_alloc((size_t)nt * sizeof *all);
    for (int t = 0; t < nt; t++)
        memcpy(&all[t], ck_slot(L, ps->ck_rounds, t), sizeof *all);
    /* (a later round's record of this slot comes only after this
     * thread's next one) */
    const struct ck_rec *mine = &all[L->tid];
    double sp[nt], cum[nt];
    uint64_t rest[nt], v[nt], r = 0;
    for (int t = 0; t < nt; t++) {
        /* A thread that ran nothing (an empty part) keeps the speed of
         * the first measurement. */
        cum[t] = all[t].cit && all[t].cns
                     ? (double)all[t].cit / (double)all[t].cns : ps->speed[t];
        sp[t] = all[t].ns >= PROF_CK_MIN_NS && all[t].it
                    ? (double)all[t].it / (double)all[t].ns : cum[t];
        rest[t] = 0;
        for (uint64_t k = 0; k < all[t].n; k++)
            rest[t] += all[t].hi[k] - all[t].lo[k];
        r += rest[t];
    }
    double t_old = 0, t_new = 0;
    int split = r > 0 && sched_profiled_vector(0, r, 0, nt, sp, v) == 0;
    for (int t = 0; split && t < nt; t++) {
        double o = rest[t] ? (sp[t] > 0 ? (double)rest[t] / sp[t] : INFINITY) : 0;
        double w = v[t] ? (sp[t] > 0 ? (double)v[t] / sp[t] : INFINITY) : 0;
        t_old = o > t_old ? o : t_old;
        t_new = w > t_new ? w : t_new;
    }
    double gain = rt_icv.prof_gain > 0 ? rt_icv.prof_gain : 0;
    split = split && isfinite(t_new) && t_old > t_new * (1 + gain);
    uint64_t lo[RT_CK_RANGES], hi[RT_CK_RANGES];
    int n = 0;
    if (split) {
        /* Every node checks every slice, so that all agree. */
        uint64_t from = 0;
        for (int t = 0; split && t < nt; t++) {
            int c = ck_slice(all, nt, from, v[t], lo, hi);
            split = c >= 0;
            from += v[t];
        }
        if (split) {
            uint64_t from2 = 0;
            for (int t = 0; t < L->tid; t++)
                from2 += v[t];
            n = ck_slice(all, nt, from2, v[L->tid], lo, hi);
        }
    }
    if (!split) {
        n = (int)mine->n;
        memcpy(lo, mine->lo, sizeof lo);
        memcpy(hi, mine->hi, sizeof hi);
        t_new = t_old;
    }
    memcpy(ps->ck_lo, lo, sizeof lo);
    memcpy(ps->ck_hi, hi, sizeof hi);
    ps->ck_n = n;
    ps->ck_i = 0;
    ps->ck_rounds++;
    ps->ck_pending = 0;
    ps->ck_gap = now - ps->ck_pub;
    memcpy(ps->speed, cum, sizeof cum);
    if (prof_leader()) {
        site->checks++;
        site->check_splits += split != 0;
        memcpy(site->speed, cum, sizeof cum);
        if (split)
            memcpy(site->weight, cum, sizeof cum);
        sched_profiled_vector(0, L->n, 0, nt, site->weight, site->vec);
        prof_group_give(site);
    }
    ps->ck_last = !prof_ck_more(ps, t_new);
    if (!ps->ck_last) {
        /* the next deadline from now (the reserve left is run first); the
         * next record's window goes on from the publication */
        uint64_t t0 = ps->ck_t0, it = ps->ck_it;
        prof_ck_arm(L, t_new, sp[L->tid]);
        ps->ck_t0 = t0;
        ps->ck_it = it;
    }
    free(all);
    uint64_t spent = prof_now() - now;
    L->xchg_ns += spent;
    if (prof_leader())
        site->measure_ns += spent;
}

/* Waits for the rest of a round's records: this thread's reserve ran out
 * before the others reached their checkpoint.  Counted, and timed. */
static void prof_ck_block(struct rt_loop *L)
{
    struct rt_prof_thr *ps = prof_thr(L);
    uint64_t t = prof_now();
    if (comm_wait_until(ck_complete, L) < 0)
        ompdsm_fatal("schedule(profiled): waiting for the checkpoint's "
                     "records failed: the job is failing");
    uint64_t w = prof_now() - t;
    ps->ck_blk += w;
    L->xchg_ns += w;
    __atomic_fetch_add(&L->ps->ck_waits, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&L->ps->ck_wait_ns, w, __ATOMIC_RELAXED);
    if (prof_leader())
        L->ps->measure_ns += w;
}

/* The next range of this thread's part: a piece of at most max
 * iterations, from the reserve first. */
static int prof_ck_range(struct rt_loop *L, uint64_t max, uint64_t *a,
                         uint64_t *b)
{
    struct rt_prof_thr *ps = prof_thr(L);
    uint64_t *lo, hi;
    while (ps->ck_ri < ps->ck_rn && ps->ck_rlo[ps->ck_ri] >= ps->ck_rhi[ps->ck_ri])
        ps->ck_ri++;
    if (ps->ck_ri < ps->ck_rn) {
        lo = &ps->ck_rlo[ps->ck_ri];
        hi = ps->ck_rhi[ps->ck_ri];
    } else {
        while (ps->ck_i < ps->ck_n && ps->ck_lo[ps->ck_i] >= ps->ck_hi[ps->ck_i])
            ps->ck_i++;
        if (ps->ck_i >= ps->ck_n)
            return 0;
        lo = &ps->ck_lo[ps->ck_i];
        hi = ps->ck_hi[ps->ck_i];
    }
    *a = *lo;
    *b = hi - *lo > max ? *lo + max : hi;
    *lo = *b;
    return 1;
}

/* Whether the reserve has iterations left. */
static int prof_ck_reserved(const struct rt_prof_thr *ps)
{
    for (int k = ps->ck_ri; k < ps->ck_rn; k++)
        if (ps->ck_rlo[k] < ps->ck_rhi[k])
            return 1;
    return 0;
}

/* This thread is done: its work time (without the exchange) for the
 * report and the drift check. */
static void prof_finish(struct rt_loop *L)
{
    struct rt_prof_site *ps = L->ps;
    uint64_t now = prof_now();
    uint64_t work = now - L->t0 - L->xchg_ns;
    L->tm = work; /* kept for prof_end */
    L->phase = PH_DONE;
    L->done = 1;
    if (!prof_leader())
        return;
    long long c[2];
    prof_counters(c);
    ps->cycles += (uint64_t)(c[0] - ps->cnt0[0]);
    ps->instructions += (uint64_t)(c[1] - ps->cnt0[1]);
    if (ps->nhist < RT_PROF_HIST) {
        ps->hist_ns[ps->nhist] = now - L->t0;
        ps->hist_it[ps->nhist] = L->iters;
        ps->hist_measured[ps->nhist] = L->base > 0;
        ps->nhist++;
    }
}

static int prof_next(struct rt_loop *L, uint64_t *a, uint64_t *b)
{
    /* This thread's measurement block, [m0, m1), timed from ms. */
    uint64_t per = sat_add(L->skip, L->size);
    uint64_t m0 = sat_mul(per, (uint64_t)L->tid);
    m0 = m0 < L->base ? m0 : L->base;
    uint64_t m1 = sat_add(m0, per) < L->base ? sat_add(m0, per) : L->base;
    uint64_t ms = sat_add(m0, L->skip) < m1 ? sat_add(m0, L->skip) : m1;
    uint64_t timed_ns = 0;
    switch (L->phase) {
    case PH_SKIP:
        L->phase = PH_TIMED;
        if (m0 < ms) {
            *a = m0;
            *b = ms;
            break;
        }
        /* fall through */
    case PH_TIMED:
        if (ms < m1) {
            L->phase = PH_TIMING;
            *a = ms;
            *b = m1;
            L->tm = prof_now();
            break;
        }
        L->phase = PH_XCHG;
        goto xchg;
    case PH_TIMING:
        timed_ns = prof_now() - L->tm;
        /* fall through */
    case PH_XCHG:
    xchg:
        if (L->base >= L->n) {
            /* The measurement took every iteration: nothing to split, the
             * next execution measures again. */
            prof_finish(L);
            return 0;
        }
        prof_exchange(L, timed_ns, m1 - ms);
        L->next = 0;
        if (prof_ck_start(L)) {
            L->phase = PH_CK;
            goto ck;
        }
        L->phase = PH_RUN;
        /* fall through */
    case PH_RUN: {
        struct sched_prof_part p = {L->base, L->n, L->chunk, L->nthreads,
                                    prof_thr(L)->vec};
        if (!sched_profiled_range(&p, L->tid, L->next++, a, b)) {
            prof_finish(L);
            return 0;
        }
        break;
    }
    case PH_CK:
    ck: {
        /* Pieces of this thread's part until its deadline; then its
         * record, and pieces of its reserve until every record of the
         * round is in (blocking only when the reserve has run out); then
         * the split, and the next deadline or the last part. */
        struct rt_prof_thr *ps = prof_thr(L);
        uint64_t now = prof_now();
        if (ps->ck_pending) {
            if (!ck_complete(L)) {
                uint64_t pc = ps->ck_rpiece < ps->ck_piece ? ps->ck_rpiece
                                                           : ps->ck_piece;
                if (prof_ck_range(L, pc, a, b)) {
                    ps->ck_it += *b - *a;
                    break;
                }
                prof_ck_block(L);
                now = prof_now();
            }
            prof_ck_split(L, now);
            if (!ps->ck_last)
                goto ck;
            L->phase = PH_CKRUN;
            goto ckrun;
        }
        if ((now < ps->ck_at || prof_ck_reserved(ps)) &&
            prof_ck_range(L, ps->ck_piece, a, b)) {
            ps->ck_it += *b - *a;
            break;
        }
        prof_ck_publish(L, now);
        goto ck;
    }
        /* fall through */
    case PH_CKRUN:
    ckrun:
        if (!prof_ck_range(L, UINT64_MAX, a, b)) {
            prof_finish(L);
            return 0;
        }
        break;
    default:
        return 0;
    }
    L->iters += *b - *a;
    return 1;
}

/* The barrier record of a profiled loop: one per thread, concatenated. */
struct prof_rec {
    int32_t tid, pad;
    uint64_t ns, iters;
    uint64_t stall; /* its run delay outside the loop body (prof_stall)
                     * and outside barriers */
    uint64_t bar_stall, bar_ns; /* its run delay and time in its previous
                                 * profiled loop-end barrier */
    uint64_t out_bar_ns; /* its node's time in DSM barriers during the
                          * stall's interval */
    uint64_t gap_ns;     /* wall time between its previous profiled
                          * loop-end barrier's exit and this loop's start,
                          * 0 across a region boundary */
};

/* The weights are about to change to a split on trial (kind 1: a move of
 * the sums; 2: static's split against a measured one): the current ones
 * and this window's cost are what prof_judge compares it with. */
static void prof_on_trial(struct rt_prof_site *ps, int nt, double cost,
                          int kind)
{
    memcpy(ps->prev_weight, ps->weight, (size_t)nt * sizeof *ps->weight);
    ps->prev_cost = cost;
    ps->trial = kind;
    prof_acc_settle(ps);
}

/* With OMPDSM_PROFILED_STALLS, before the sums move anything: the move
 * on trial (the last one, or static's split against a measured one) is
 * judged by the cost per execution of this window against the window
 * before it (sched_profiled_keep, margin half of OMPDSM_PROFILED_GAIN),
 * and undone when it did not make the executions faster; after moves
 * undone in a row, windows pass without a move (sched_profiled_backoff).
 * The sums see the DSM's per-node costs, which follow the split (CG A
 * homogeneous: a node given fewer rows took longer for them, as the
 * pages written by both nodes moved), so a split by them can run away
 * from balance; the executions' own time does not lie about that.
 * Returns 1 when it changed the weights or let this window pass (the
 * sums are then spent), 0 when the sums may propose a move. */
static int prof_judge(struct rt_prof_site *ps, int nt, double cost,
                      const double *cur, double scur, double ssp)
{
    double margin = rt_icv.prof_gain > 0 ? rt_icv.prof_gain / 2 : 0;
    int was = ps->trial;
    ps->trial = 0;
    if (was) {
        /* 2: static's split is on trial; the measured one comes back
         * only when it was faster by the margin (a tie goes to static) */
        int keep = was == 2 ? !sched_profiled_keep(cost, ps->prev_cost, margin)
                            : sched_profiled_keep(ps->prev_cost, cost, margin);
        if (was == 1)
            ps->fails = keep ? 0 : ps->fails + 1;
        if (!keep) {
            memcpy(ps->weight, ps->prev_weight, (size_t)nt * sizeof *ps->weight);
            ps->reverts++;
            ps->repartitions++;
            ps->backoff = sched_profiled_backoff(ps->fails);
            prof_acc_settle(ps);
            return 1;
        }
    } else if (ps->backoff > 0) {
        ps->backoff--;
        return 1;
    }
    /* The first window after a measurement: static's split is tried once
     * against the measured one (a measurement's first execution pays its
     * page faults, and its split need not be faster than static's). */
    if (!ps->eq_judged && ps->measured) {
        ps->eq_judged = 1;
        uint64_t vm[nt], ve[nt];
        double eq[nt];
        for (int t = 0; t < nt; t++)
            eq[t] = ssp / nt;
        if (!scur || sched_profiled_vector(0, 1000000, 0, nt, cur, vm) ||
            sched_profiled_vector(0, 1000000, 0, nt, eq, ve) ||
            !memcmp(vm, ve, sizeof vm))
            return 0;
        prof_on_trial(ps, nt, cost, 2);
        memcpy(ps->weight, eq, sizeof eq);
        ps->repartitions++;
        return 1;
    }
    return 0;
}

/* The two windows that judge a measured split against static's are
 * 20 ms each, not 50: the measured split may be far off (CG A's first
 * execution, paying its page faults, measured one node 10-15 times
 * slower), and every execution of the first window runs at it. */
static int prof_first_windows(const struct rt_prof_site *ps)
{
    return (!ps->eq_judged && ps->measured) || ps->trial == 2;
}

/* After a drift: when every thread's executions since the weights last
 * changed add up to PROF_CK_MIN_NS or more (with OMPDSM_PROFILED_STALLS:
 * every time the executions' costs add up to PROF_ACC_MIN_NS, over
 * PROF_ACC_MIN_EXECS executions or more), re-partition by those
 * speeds instead of measuring again.  A loop whose executions are short
 * (CG's rows: 0.2 ms) measures a node throttled in bursts of milliseconds
 * as fast whenever its eval_size iterations fall inside a burst, so a new
 * measurement would be as wrong as the last; the executions' sum is not.
 * Each execution's time counts the thread's stalls outside the loop body
 * (prof_stall), so the sum is progress per wall time.  The shares move
 * half of OMPDSM_PROFILED_STEP of the way from those in use to the speeds, and
 * only when that is predicted to gain more than OMPDSM_PROFILED_GAIN (a
 * homogeneous pair's noise moves nothing).  Returns 0 when some thread's
 * sum is still short, else 1 (re-partitioned or judged not worth it). */
static int prof_acc_split(struct rt_prof_site *ps, int nt)
{
    double sp[nt], cur[nt], w[nt], ssp = 0, scur = 0;
    /* With stalls, the window is 50 ms of the executions' own time (the
     * sum of their longest threads'): a thread given a small share (a
     * measurement's first execution pays its page faults, and CG A's gave
     * one node 6% of the rows) would take hundreds of executions to add
     * up 50 ms of its own, all of them at the split on trial. */
    if (rt_icv.prof_stalls &&
        (ps->acc_execs < PROF_ACC_MIN_EXECS ||
         ps->acc_cost < (double)(prof_first_windows(ps) ? PROF_CK_MIN_NS
                                                         : PROF_ACC_MIN_NS)))
        return 0;
    for (int t = 0; t < nt; t++) {
        if (!ps->acc_it[t])
            return 0;
        if (!rt_icv.prof_stalls && ps->acc_ns[t] < PROF_CK_MIN_NS)
            return 0;
        sp[t] = (double)ps->acc_it[t] / (double)ps->acc_ns[t];
        ssp += sp[t];
        cur[t] = ps->weight[t] > 0 ? ps->weight[t] : 0;
        scur += cur[t];
    }
    /* per execution of the site, less the window's longest record: one
     * descheduling on a shared machine (tens of ms in a 20 ms window)
     * must not decide */
    double cost = ps->acc_execs > 1 ? (ps->acc_cost - ps->acc_cmax) /
                                          (double)(ps->acc_execs - 1)
                                    : 0;
    if (rt_icv.prof_stalls && prof_judge(ps, nt, cost, cur, scur, ssp)) {
        prof_acc_reset(ps, nt);
        memcpy(ps->speed, sp, sizeof sp);
        prof_group_give(ps);
        return 1;
    }
    /* Half of OMPDSM_PROFILED_STEP: the sums come every 20 ms of each
     * thread's time, and a window that short on a shared machine is
     * noisy (another job's burst, a fixed cost per execution); half a
     * step each averages the windows (weights 1/2, 1/4, ...) instead of
     * following the last one (seen: a stalled node's share jumping
     * between 22 and 144 of 200 over 16 executions with full steps). */
    double step = prof_step() / 2, t_cur = 0, t_new = 0, sw = 0;
    for (int t = 0; t < nt; t++) {
        double c = scur > 0 ? cur[t] / scur : 1.0 / nt;
        w[t] = (1 - step) * c + step * sp[t] / ssp;
        sw += w[t];
        double tc = c / sp[t];
        t_cur = tc > t_cur ? tc : t_cur;
    }
    for (int t = 0; t < nt; t++) {
        double tw = w[t] / sw / sp[t];
        t_new = tw > t_new ? tw : t_new;
    }
    double gain = rt_icv.prof_gain > 0 ? rt_icv.prof_gain : 0;
    prof_acc_reset(ps, nt);
    memcpy(ps->speed, sp, sizeof sp);
    if (!(t_cur > t_new * (1 + gain))) {
        prof_group_give(ps);
        return 1;
    }
    /* (weights are relative: scaled like the speeds, so that a step of 1
     * gives the speeds themselves) */
    if (rt_icv.prof_stalls)
        prof_on_trial(ps, nt, cost, 1); /* until the next window (prof_judge) */
    for (int t = 0; t < nt; t++)
        ps->weight[t] = w[t] / sw * ssp;
    ps->repartitions++;
    ps->acc_splits++;
    prof_group_give(ps);
    return 1;
}

/* Whether an execution's times (loop time, plus the stalls outside it
 * when stalls) stray from the prediction by the measured speeds by more
 * than OMPDSM_PROFILED_DRIFT.  The prediction is iterations / speed,
 * scaled to this execution's total so that only the split is judged, not
 * the absolute speed.  Executions shorter than 50 us are not judged:
 * clock noise. */
static int prof_stray(const struct rt_prof_site *ps, const struct prof_rec *r,
                      int nt, int stalls)
{
    double p[nt], sp = 0, so = 0, maxo = 0;
    for (int t = 0; t < nt; t++) {
        double o = (double)r[t].ns + (stalls ? (double)r[t].stall : 0);
        p[t] = !r[t].iters ? 0
               : ps->speed[t] > 0 ? (double)r[t].iters / ps->speed[t]
                                  : INFINITY;
        sp += p[t];
        so += o;
        if (o > maxo)
            maxo = o;
    }
    if (!(sp > 0) || !isfinite(sp) || maxo < 50e3)
        return 0;
    double maxp = 0, worst = 0;
    for (int t = 0; t < nt; t++) {
        double o = (double)r[t].ns + (stalls ? (double)r[t].stall : 0);
        double pt = p[t] * (so / sp);
        if (pt > maxp)
            maxp = pt;
        double d = fabs(o - pt);
        if (d > worst)
            worst = d;
    }
    return worst > rt_icv.prof_drift * maxp;
}

/* Each node's time against the prediction from the measured speeds
 * (prof_stray).  Two executions in a row must stray before the next one
 * measures: one node descheduled once by a shared machine is not a slow
 * node. */
static void prof_drift(struct rt_prof_site *ps, const struct prof_rec *r,
                       int nt, int measuring)
{
    /* Every thread's iterations and time since the weights last changed:
     * the speeds the executions themselves show (every node sees the same
     * records, so every node sums the same).  The time counts the
     * thread's stalls outside the loop body: a node throttled while it
     * releases its pages at the barrier or spins there progresses at
     * half speed though its loop bodies run at full speed.  In a group,
     * every loop's records go to the owner's sums: the loops share one
     * partition, so the group's progress per wall time is what to split
     * by, and the stalls land where they land (CG A: mostly between its
     * matrix-vector loop and the next, at that barrier's release of q). */
    struct rt_prof_site *acc = ps->grp && ps->grp->owner ? ps->grp->owner
                                                         : ps;
    if (acc->nthreads != nt)
        acc = ps;
    /* A stall in the previous loop-end barrier counts only beyond the
     * thread's wait there (its time in it less the shortest time of any
     * thread, the last to arrive): a thread that finished early and was
     * preempted while it waited delayed nobody, and counting that made a
     * small share look slower still on a loaded machine (seen: CG A
     * homogeneous, 74 rows of 14,000 left on one node). */
    struct prof_rec x[nt];
    memcpy(x, r, sizeof x);
    uint64_t minb = UINT64_MAX, mino = UINT64_MAX;
    for (int t = 0; t < nt; t++) {
        minb = r[t].bar_ns < minb ? r[t].bar_ns : minb;
        mino = r[t].out_bar_ns < mino ? r[t].out_bar_ns : mino;
    }
    /* The same for the stall between the loops: what exceeds the
     * thread's wait in the barriers there (its node's time in them less
     * the shortest of any thread's). */
    for (int t = 0; t < nt; t++) {
        uint64_t wait = r[t].out_bar_ns - mino;
        x[t].stall = r[t].stall > wait ? r[t].stall - wait : 0;
    }
    for (int t = 0; t < nt && minb; t++) {
        uint64_t wait = r[t].bar_ns - minb;
        x[t].stall += r[t].bar_stall > wait ? r[t].bar_stall - wait : 0;
    }
    /* The execution's cost, what a move is judged by (prof_judge): the
     * wall time from the previous profiled loop-end barrier's entry to
     * this one's (that barrier, what ran between, this loop), the longest
     * of any thread's; summed over a window, the window's wall time, stalls
     * wherever they land included.  Across a region boundary only the
     * loop's time: the serial part between is no partition's.  Not a
     * measuring execution's (its first pays the pages' faults). */
    uint64_t longest = 0;
    for (int t = 0; t < nt; t++) {
        uint64_t c = r[t].ns + (r[t].gap_ns ? r[t].gap_ns + r[t].bar_ns : 0);
        longest = c > longest ? c : longest;
    }
    r = x;
    int settle = acc->settle;
    if (settle && acc == ps)
        acc->settle = 0;
    for (int t = 0; t < nt; t++) {
        if (!settle) {
            acc->acc_it[t] += r[t].iters;
            acc->acc_ns[t] += r[t].ns + r[t].stall;
        }
        ps->stall_ns += r[t].stall;
    }
    if (!measuring && !settle) {
        acc->acc_cost += (double)longest;
        acc->acc_execs += acc == ps;
        acc->acc_cmax = (double)longest > acc->acc_cmax ? (double)longest
                                                        : acc->acc_cmax;
    }
    if (!ps->measured || ps->brief || !(rt_icv.prof_drift > 0))
        return;
    /* In a group, only the loop whose measurement the weights are judges
     * them: another loop's iterations may cost differently per node (CG's
     * copy rows against its matrix rows), so its times stray from them for
     * ever, and each re-measurement would re-partition the whole group
     * (seen: CG A re-measured every other execution, 2x slower). */
    if (ps->grp && ps->grp->owner && ps->grp->owner != ps)
        return;
    int stray = prof_stray(ps, r, nt, rt_icv.prof_stalls);
    ps->drifts += stray != 0;
    ps->drift_run = stray ? ps->drift_run + 1 : 0;
    if (rt_icv.prof_stalls) {
        /* The sums decide, every time they are long enough, stray or not
         * (a gradual step, only for a predicted gain), and never a new
         * measurement: once the split is by the sums, a slow node's loop
         * bodies run faster than its speed says (its stalls are
         * elsewhere), so its loop times stray for ever, and a measurement
         * of its loop body would undo the split. */
        if (prof_acc_split(ps, nt))
            ps->drift_run = 0;
        return;
    }
    if (ps->drift_run < 2)
        return;
    ps->drift_run = 0;
    if (prof_acc_split(ps, nt))
        return;
    /* (in a group, the owner measures again, and its new weights
     * re-partition the group) */
    ps->measure = 1;
}

static void prof_end(struct rt_loop *L, int nowait)
{
    uint64_t s0 = prof_stall(), t0 = prof_now();
    stall_mark = s0;
    stall_mark_t = t0;
    if (nowait)
        return;
    /* OMPDSM_loop_end's barrier, carrying every thread's time. */
    struct prof_rec mine = {L->tid, 0, L->tm, L->iters,
                            prof_thr(L)->stall_out, stall_bar, stall_bar_ns,
                            prof_thr(L)->stall_bw, prof_thr(L)->gap_ns};
    struct comm_buf recs = {0};
    rt_team_barrier_rec(&mine, sizeof mine, &recs);
    /* the stall in this barrier, for the next record; the next stall_out
     * counts from its end */
    stall_mark = prof_stall();
    stall_mark_t = prof_now();
    stall_bar = stall_mark >= s0 ? stall_mark - s0 : 0;
    stall_bar_ns = stall_mark_t - t0;
    prof_dsm_marks(&stall_forks, &stall_bns);
    int nt = L->nthreads;
    struct prof_rec all[nt];
    int seen = 0;
    memset(all, 0xff, sizeof all);
    for (size_t i = 0; i + sizeof mine <= recs.len; i += sizeof mine) {
        struct prof_rec x;
        memcpy(&x, (const char *)recs.data + i, sizeof x);
        if (x.tid >= 0 && x.tid < nt && all[x.tid].tid < 0) {
            all[x.tid] = x;
            seen++;
        }
    }
    /* (the node's other threads wait for the leader's start of the next
     * execution, which comes after this) */
    if (seen == nt && !L->frozen && prof_leader())
        prof_drift(L->ps, all, nt, L->base > 0);
    comm_buf_free(&recs);
}
