/* runtime/profiled.c - the profiled schedule's driver (its arithmetic is
 * sched/profiled.c).  The schedule of "Implementation and Evaluation of
 * Dynamic Load Balancing Using Loop Re-partitioning on Omni/SCASH": an
 * execution that measures gives each thread a block of eval_skip +
 * eval_size iterations at the start of the space (the first eval_skip run
 * plainly, the next eval_size timed), exchanges the times once (an
 * allgather among the team), and splits the rest by speed
 * (sched_profiled_decide).  The weights persist in the loop's site, so
 * later executions split the whole space by them and measure nothing;
 * each execution's per-node times ride on the loop-end barrier, and when
 * they stray from what the weights predict by more than
 * OMPDSM_PROFILED_DRIFT the next execution measures again.  Speeds,
 * weights and vectors are per thread (a team of nodes x T threads splits
 * by thread); the site's state is the node's, written by its
 * leader, and each thread's part of an execution is in ps->thr.
 *
 * Here: each loop site's state and the groups of loops that share a
 * partition, the clock and PAPI's counters, the measuring execution and
 * its exchange of speeds, and the hand-out of iterations by phase.  The
 * checkpoints of a measuring execution are profiled_ck.c; the loop-end
 * records, stalls, drift and the judging of moves profiled_drift.c. */
#include "rt.h"
#include "sched/sched.h"
#include "ompdsm_config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if OMPDSM_HAVE_PAPI
#include <papi.h>
#endif

enum { PH_SKIP, PH_TIMED, PH_TIMING, PH_XCHG, PH_RUN, PH_CK, PH_CKRUN,
       PH_DONE };
/* The shortest measurement (eval_size iterations on one node) trusted. */
#define PROF_MIN_MEASURE_NS 100000

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
uint64_t rt_prof_now(void)
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

const struct rt_prof_override *rt_prof_override(const OMPDSM_loop_site *s,
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

void *rt_prof_alloc(size_t n)
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
        ps = rt_prof_alloc(sizeof *ps);
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
        ps->speed = rt_prof_alloc(nt * sizeof *ps->speed);
        ps->weight = rt_prof_alloc(nt * sizeof *ps->weight);
        ps->vec = rt_prof_alloc(nt * sizeof *ps->vec);
        free(ps->acc_it);
        free(ps->acc_ns);
        ps->acc_it = rt_prof_alloc(nt * sizeof *ps->acc_it);
        ps->acc_ns = rt_prof_alloc(nt * sizeof *ps->acc_ns);
        free(ps->prev_weight);
        ps->prev_weight = rt_prof_alloc(nt * sizeof *ps->prev_weight);
        free(ps->hist);
        ps->hist = rt_prof_alloc(SCHED_PROF_HIST * nt * sizeof *ps->hist);
        ps->hist_n = ps->hist_next = 0;
        ps->trial = ps->fails = ps->backoff = ps->eq_judged = 0;
        ps->acc_cost = 0;
        ps->acc_execs = 0;
        ps->thr = rt_prof_alloc((size_t)nthr * sizeof *ps->thr);
        for (int i = 0; i < nthr; i++) {
            ps->thr[i].speed = rt_prof_alloc(nt * sizeof *ps->speed);
            ps->thr[i].vec = rt_prof_alloc(nt * sizeof *ps->vec);
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
        g = rt_prof_alloc(sizeof *g);
        g->n = n;
        g->chunk = chunk;
        g->nthreads = ps->nthreads;
        g->speed = rt_prof_alloc(nt * sizeof *g->speed);
        g->weight = rt_prof_alloc(nt * sizeof *g->weight);
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
void rt_prof_group_give(struct rt_prof_site *ps)
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

/* This thread's part of the current execution. */
struct rt_prof_thr *rt_prof_thr(const struct rt_loop *L)
{
    return &L->ps->thr[rt_self.local > 0 ? rt_self.local : 0];
}

/* Whether this thread writes the node's shared state of the loop. */
int rt_prof_leader(void)
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

void rt_prof_init(struct rt_loop *L, long long eval_size,
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
    } else if (rt_prof_leader()) {
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
        memcpy(rt_prof_thr(L)->vec, L->ps->vec,
               (size_t)L->nthreads * sizeof *L->ps->vec);
    if (shared && rt_self.local > 0) {
        __atomic_fetch_add(&pn.took, 1, __ATOMIC_SEQ_CST);
        rt_word_wake(&pn.took, &pn.took_sleep);
    }
    L->t0 = rt_prof_now();
    /* the stalls since this thread's last profiled execution ended */
    rt_prof_stall_start(rt_prof_thr(L), L->t0);
}

/* A fraction from the environment, read once into *cache (negative until
 * then); every node reads the same.  zero_ok: 0 is allowed, 1 is not (a
 * fraction in [0, 1)); else (0, 1]. */
double rt_prof_fraction(double *cache, const char *name, double dflt,
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
double rt_prof_step(void)
{
    static double step = -1;
    return rt_prof_fraction(&step, "OMPDSM_PROFILED_STEP", 1, 0,
                            "(0, 1], such as 0.5");
}

/* Steps (1a)-(1e): every thread's time for its eval_size iterations, one
 * allgather, and the same decision on every node. */
static void prof_exchange(struct rt_loop *L, uint64_t timed_ns,
                          uint64_t timed_iters)
{
    struct rt_prof_site *ps = L->ps;
    struct rt_prof_thr *th = rt_prof_thr(L);
    int nt = L->nthreads;
    uint64_t t = rt_prof_now();
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
                               rt_prof_step()};
    struct sched_prof_out out = {0, 0, 0, vec, w};
    if (sched_profiled_decide(&in, &out) < 0)
        ompdsm_fatal("schedule(profiled): no partition for %d threads", nt);
    memcpy(th->speed, speed, sizeof speed);
    memcpy(th->vec, vec, sizeof vec);
    L->xchg_ns = rt_prof_now() - t;
    if (!rt_prof_leader())
        return;
    ps->brief = brief;
    memcpy(ps->speed, speed, sizeof speed);
    memcpy(ps->weight, w, sizeof w);
    memcpy(ps->vec, vec, sizeof vec);
    ps->measured = 1;
    ps->measure = 0;
    ps->measurements++;
    rt_prof_acc_reset(ps, nt);
    /* a new measured split: judged against static's once, and no earlier
     * move is on trial */
    ps->eq_judged = brief;
    ps->trial = 0;
    rt_prof_acc_settle(ps);
    if (rt_icv.prof_stalls && !brief) {
        /* With stalls, a measurement shorter than 20 ms on some thread
         * splits only the rest of its own execution; the executions after
         * it start from static's split and the sums move it from there.
         * Such a measurement of a loop's first execution is its page
         * faults, and trying it for a window before static's cost more
         * than it gained (docs/design.md, "Moves judged by their
         * result"). */
        int shortm = 0;
        for (int i = 0; i < nt; i++)
            shortm |= all[i].ns < RT_PROF_CK_MIN_NS;
        if (shortm) {
            for (int i = 0; i < nt; i++)
                ps->weight[i] = 1;
            ps->eq_judged = 1;
        }
    }
    ps->repartitions += out.repartition != 0;
    rt_prof_group_give(ps);
    ps->measure_ns += L->xchg_ns;
}

/* This thread is done: its work time (without the exchange) for the
 * report and the drift check. */
static void prof_finish(struct rt_loop *L)
{
    struct rt_prof_site *ps = L->ps;
    uint64_t now = rt_prof_now();
    uint64_t work = now - L->t0 - L->xchg_ns;
    L->tm = work; /* kept for rt_prof_end */
    L->phase = PH_DONE;
    L->done = 1;
    if (!rt_prof_leader())
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

int rt_prof_next(struct rt_loop *L, uint64_t *a, uint64_t *b)
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
            L->tm = rt_prof_now();
            break;
        }
        L->phase = PH_XCHG;
        goto xchg;
    case PH_TIMING:
        timed_ns = rt_prof_now() - L->tm;
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
        if (rt_prof_ck_start(L)) {
            L->phase = PH_CK;
            goto ck;
        }
        L->phase = PH_RUN;
        /* fall through */
    case PH_RUN: {
        struct sched_prof_part p = {L->base, L->n, L->chunk, L->nthreads,
                                    rt_prof_thr(L)->vec};
        if (!sched_profiled_range(&p, L->tid, L->next++, a, b)) {
            prof_finish(L);
            return 0;
        }
        break;
    }
    case PH_CK:
    ck:
        if (rt_prof_ck_next(L, a, b))
            break;
        L->phase = PH_CKRUN;
        /* fall through */
    case PH_CKRUN:
        if (!rt_prof_ck_range(L, UINT64_MAX, a, b)) {
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
