/* runtime/profiled_ck.c - the checkpoints of a profiled loop's measuring
 * execution (OMPDSM_PROFILED_CHECK): each thread's part is handed out in
 * pieces until a deadline; then each thread publishes a record of what it
 * ran into the runtime area of every team node, runs a reserve while the
 * others' records come, and what is left is split again by the speeds
 * they show; again while what is left is long enough (docs/design.md,
 * "The checkpoint"). */
#include "rt.h"
#include "sched/sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pieces a node's block is handed out in before the checkpoint: the
 * checkpoint can come that late after its deadline. */
#define PROF_CK_PIECES 64
/* Checkpoints of one execution, at most (each takes a quarter of what is
 * left, and none comes when that is under RT_PROF_CK_MIN_NS: about 20
 * for a rest of 4 s). */
#define PROF_CK_MAX_ROUNDS 48
/* Checkpoint record slots per node of the job (rt_prof_ck_len): a team
 * of more threads than that many per node runs without checkpoints. */
#define PROF_CK_TPN 64

/* OMPDSM_PROFILED_CHECK: when, as a fraction of the rest's predicted
 * time, a measuring execution re-measures; 0: never (one measurement, as
 * the Omni/SCASH paper has it). */
static double prof_check(void)
{
    static double frac = -1;
    return rt_prof_fraction(&frac, "OMPDSM_PROFILED_CHECK", 0.25, 1,
                            "[0, 1), such as 0.25 (0: no checkpoint)");
}

/* Arms the next checkpoint: this thread's ranges are handed out in pieces
 * until frac of pred (the rest's predicted time, ns) has passed. */
static void prof_ck_arm(struct rt_loop *L, double pred, double speed)
{
    struct rt_prof_thr *ps = rt_prof_thr(L);
    double win = prof_check() * pred;
    double piece = speed * win / PROF_CK_PIECES;
    ps->ck_piece = piece >= 1 ? (uint64_t)piece : 1;
    ps->ck_t0 = rt_prof_now();
    ps->ck_at = ps->ck_t0 + (uint64_t)win;
    ps->ck_it = 0;
}

/* Whether a rest predicted to take pred ns gets another checkpoint. */
static int prof_ck_more(const struct rt_prof_thr *ps, double pred)
{
    return pred >= RT_PROF_CK_MIN_NS && isfinite(pred) &&
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
int rt_prof_ck_start(struct rt_loop *L)
{
    struct rt_prof_thr *ps = rt_prof_thr(L);
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
    struct rt_prof_thr *ps = rt_prof_thr(L);
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
    L->xchg_ns += rt_prof_now() - now;
}

/* A checkpoint's second half, when every record of the round is in: the
 * ranges, concatenated in thread order, are split by the speeds just
 * measured when that is predicted to gain more than OMPDSM_PROFILED_GAIN
 * (and gives no thread more than RT_CK_RANGES ranges), else each thread
 * keeps its own.  Every node computes it from the same records.  A window
 * shorter than RT_PROF_CK_MIN_NS is judged by the speeds since the first
 * checkpoint phase began: a few ms of a throttled node are its quota's
 * bursts, not its speed.  Those cumulative speeds persist: later
 * executions split by them. */
static void prof_ck_split(struct rt_loop *L, uint64_t now)
{
    struct rt_prof_thr *ps = rt_prof_thr(L);
    struct rt_prof_site *site = L->ps;
    int nt = L->nthreads;
    struct ck_rec *all = rt_prof_alloc((size_t)nt * sizeof *all);
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
        sp[t] = all[t].ns >= RT_PROF_CK_MIN_NS && all[t].it
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
    if (rt_prof_leader()) {
        site->checks++;
        site->check_splits += split != 0;
        memcpy(site->speed, cum, sizeof cum);
        if (split)
            memcpy(site->weight, cum, sizeof cum);
        sched_profiled_vector(0, L->n, 0, nt, site->weight, site->vec);
        rt_prof_group_give(site);
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
    uint64_t spent = rt_prof_now() - now;
    L->xchg_ns += spent;
    if (rt_prof_leader())
        site->measure_ns += spent;
}

/* Waits for the rest of a round's records: this thread's reserve ran out
 * before the others reached their checkpoint.  Counted, and timed. */
static void prof_ck_block(struct rt_loop *L)
{
    struct rt_prof_thr *ps = rt_prof_thr(L);
    uint64_t t = rt_prof_now();
    if (comm_wait_until(ck_complete, L) < 0)
        ompdsm_fatal("schedule(profiled): waiting for the checkpoint's "
                     "records failed: the job is failing");
    uint64_t w = rt_prof_now() - t;
    ps->ck_blk += w;
    L->xchg_ns += w;
    __atomic_fetch_add(&L->ps->ck_waits, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&L->ps->ck_wait_ns, w, __ATOMIC_RELAXED);
    if (rt_prof_leader())
        L->ps->measure_ns += w;
}

/* The next range of this thread's part: a piece of at most max
 * iterations, from the reserve first. */
int rt_prof_ck_range(struct rt_loop *L, uint64_t max, uint64_t *a,
                     uint64_t *b)
{
    struct rt_prof_thr *ps = rt_prof_thr(L);
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

/* The checkpoint phase of an execution (rt_prof_next): 1 with the next
 * range in [*a, *b); 0 after the last split, when the thread's last part
 * follows (rt_prof_ck_range). */
int rt_prof_ck_next(struct rt_loop *L, uint64_t *a, uint64_t *b)
{
    /* Pieces of this thread's part until its deadline; then its
     * record, and pieces of its reserve until every record of the
     * round is in (blocking only when the reserve has run out); then
     * the split, and the next deadline or the last part. */
    struct rt_prof_thr *ps = rt_prof_thr(L);
    for (;;) {
        uint64_t now = rt_prof_now();
        if (ps->ck_pending) {
            if (!ck_complete(L)) {
                uint64_t pc = ps->ck_rpiece < ps->ck_piece ? ps->ck_rpiece
                                                           : ps->ck_piece;
                if (rt_prof_ck_range(L, pc, a, b)) {
                    ps->ck_it += *b - *a;
                    return 1;
                }
                prof_ck_block(L);
                now = rt_prof_now();
            }
            prof_ck_split(L, now);
            if (!ps->ck_last)
                continue;
            return 0;
        }
        if ((now < ps->ck_at || prof_ck_reserved(ps)) &&
            rt_prof_ck_range(L, ps->ck_piece, a, b)) {
            ps->ck_it += *b - *a;
            return 1;
        }
        prof_ck_publish(L, now);
    }
}
