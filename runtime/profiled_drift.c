/* runtime/profiled_drift.c - what follows each execution of a profiled
 * loop: the loop-end barrier that carries every thread's record, the
 * stalls outside the loop body those records count
 * (OMPDSM_PROFILED_STALLS), the executions' sums, the drift check that
 * measures again or re-partitions (OMPDSM_PROFILED_DRIFT), and the judging
 * of a move by its result. */
#include "rt.h"
#include "sched/sched.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The executions' sums decide once every thread's reach this (loop time
 * and stalls, prof_acc_split): 5 periods of a cgroup quota's 10 ms, and
 * long enough that another job's bursts on a shared machine average out;
 * 20 ms windows chased them (docs/design.md, "Stalls outside the loop
 * body"). */
#define PROF_ACC_MIN_NS 50000000
/* With OMPDSM_PROFILED_STALLS, a window also has at least this many of
 * the site's executions: a move is judged by one window against the one
 * before, and one execution's time is one sample. */
#define PROF_ACC_MIN_EXECS 3

/* This thread's run delay so far (ns): the time it was runnable but not
 * running, the second field of /proc/thread-self/schedstat.  A node
 * throttled by a cgroup quota or sharing its core with another job
 * accumulates it wherever the stall lands: in a loop body, whose wall
 * time shows it anyway, or outside, in the barrier's release work, its
 * page faults before the loop or its spinning, which a loop timer never
 * sees (a loop of short bodies measured a node at half speed as nearly
 * full speed: docs/design.md, "Stalls outside the loop body").  0 where the file is missing or OMPDSM_PROFILED_STALLS is
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

/* At the start of an execution (t0): the stalls since this thread's last
 * profiled execution ended, for its loop-end record. */
void rt_prof_stall_start(struct rt_prof_thr *th, uint64_t t0)
{
    th->stall0 = prof_stall();
    uint64_t forks, bns;
    prof_dsm_marks(&forks, &bns);
    th->stall_out = stall_mark_t && t0 - stall_mark_t < PROF_STALL_GAP_NS &&
                            th->stall0 >= stall_mark && forks == stall_forks
                        ? th->stall0 - stall_mark : 0;
    th->stall_bw = th->stall_out && bns >= stall_bns ? bns - stall_bns : 0;
    /* (across a region boundary too: prof_drift's cost) */
    th->gap_ns = stall_mark_t && t0 - stall_mark_t < PROF_STALL_GAP_NS
                     ? t0 - stall_mark_t : 0;
}

/* Forgets the executions' sums: the weights just changed. */
void rt_prof_acc_reset(struct rt_prof_site *ps, int nt)
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
void rt_prof_acc_settle(struct rt_prof_site *ps)
{
    ps->settle = rt_icv.prof_stalls;
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
                          * 0 when over PROF_STALL_GAP_NS */
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
    rt_prof_acc_settle(ps);
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
        int v = sched_profiled_judge(was, ps->prev_cost, cost, margin);
        if (v == SCHED_PROF_CONFIRM) {
            /* 3: a move kept is confirmed by the next window before the
             * sums move again.  One window judged alone kept moves by
             * luck where the executions' cost is noise: the banded CG
             * under a CPU hog, each window 3 executions of 6-45 ms, kept
             * 8 of 40 moves that way, each one a step further from
             * static's split, the only one at which the slow node never
             * waits a scheduler slice (docs/design.md, "Moves judged by
             * their result"). */
            ps->trial = 3;
            return 1;
        }
        int keep = v == SCHED_PROF_KEEP;
        if (was != 2)
            ps->fails = keep ? 0 : ps->fails + 1;
        if (!keep) {
            memcpy(ps->weight, ps->prev_weight, (size_t)nt * sizeof *ps->weight);
            ps->reverts++;
            ps->repartitions++;
            ps->backoff = sched_profiled_backoff(ps->fails);
            rt_prof_acc_settle(ps);
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
 * 20 ms each, not 50: the measured split may be far off (a first
 * execution pays its page faults: docs/design.md, "Moves judged by
 * their result"), and every execution of the first window runs at it. */
static int prof_first_windows(const struct rt_prof_site *ps)
{
    return (!ps->eq_judged && ps->measured) || ps->trial == 2;
}

/* After a drift: when every thread's executions since the weights last
 * changed add up to RT_PROF_CK_MIN_NS or more (with OMPDSM_PROFILED_STALLS:
 * every time the executions' costs add up to PROF_ACC_MIN_NS, over
 * PROF_ACC_MIN_EXECS executions or more), re-partition by those
 * speeds instead of measuring again.  A loop whose executions are short
 * (CG's rows) measures a node throttled in bursts of milliseconds
 * as fast whenever its eval_size iterations fall inside a burst, so a new
 * measurement would be as wrong as the last; the executions' sum is not.
 * Each execution's time counts the thread's stalls outside the loop body
 * (prof_stall), so the sum is progress per wall time.  The shares move
 * half of OMPDSM_PROFILED_STEP of the way from those in use to the speeds, and
 * only when that is predicted to gain more than OMPDSM_PROFILED_GAIN (a
 * homogeneous pair's noise moves nothing).  Returns 0 when some thread's
 * sum is still short, else 1 (re-partitioned or judged not worth it). */
/* The sums are spent without a move: their speeds are noted (reported,
 * and given to the group) and the next window starts.  Returns 1. */
static int prof_acc_note(struct rt_prof_site *ps, int nt, const double *sp)
{
    rt_prof_acc_reset(ps, nt);
    memcpy(ps->speed, sp, (size_t)nt * sizeof *sp);
    rt_prof_group_give(ps);
    return 1;
}

static int prof_acc_split(struct rt_prof_site *ps, int nt)
{
    double sp[nt], cur[nt], w[nt], ssp = 0, scur = 0;
    /* With stalls, the window is 50 ms of the executions' own time (the
     * sum of their longest threads'): a thread given a small share (a
     * measurement's first execution pays its page faults: docs/design.md,
     * "Moves judged by their result") would take hundreds of executions
     * to add up 50 ms of its own, all of them at the split on trial. */
    if (rt_icv.prof_stalls &&
        (ps->acc_execs < PROF_ACC_MIN_EXECS ||
         ps->acc_cost < (double)(prof_first_windows(ps) ? RT_PROF_CK_MIN_NS
                                                         : PROF_ACC_MIN_NS)))
        return 0;
    for (int t = 0; t < nt; t++) {
        if (!ps->acc_it[t])
            return 0;
        if (!rt_icv.prof_stalls && ps->acc_ns[t] < RT_PROF_CK_MIN_NS)
            return 0;
        sp[t] = (double)ps->acc_it[t] / (double)ps->acc_ns[t];
        ssp += sp[t];
        cur[t] = ps->weight[t] > 0 ? ps->weight[t] : 0;
        scur += cur[t];
    }
    sched_profiled_hist_add(ps->hist, &ps->hist_n, &ps->hist_next, nt, sp);
    /* per execution of the site, less the window's longest record: one
     * descheduling on a shared machine (tens of ms in a 20 ms window)
     * must not decide */
    double cost = ps->acc_execs > 1 ? (ps->acc_cost - ps->acc_cmax) /
                                          (double)(ps->acc_execs - 1)
                                    : 0;
    if (rt_icv.prof_stalls && prof_judge(ps, nt, cost, cur, scur, ssp)) {
        return prof_acc_note(ps, nt, sp);
    }
    /* With stalls, whose windows come every 50 ms of cost, stray or not,
     * the move follows the median of the last windows' speeds, not this
     * window's: a window that another job's slice of a few ms dominated
     * on one node made it look 10-20% slower and moved the split, and the
     * next window moved it back (docs/design.md, "A speed estimate that a
     * burst cannot swing").  Without, a window ends only at a drift (two
     * executions in a row astray) and spans every execution since the
     * weights changed; a history of such windows would fill only after
     * three drifts, and a node that became slow must be followed at the
     * first. */
    if (rt_icv.prof_stalls) {
        double est[nt];
        if (!sched_profiled_hist_estimate(ps->hist, ps->hist_n, nt, est))
            return prof_acc_note(ps, nt, sp);
        ssp = 0;
        for (int t = 0; t < nt; t++) {
            sp[t] = est[t];
            ssp += sp[t];
        }
    }
    /* Half of OMPDSM_PROFILED_STEP: the sums come every 20 ms of each
     * thread's time, and a window that short on a shared machine is
     * noisy (another job's burst, a fixed cost per execution); half a
     * step each averages the windows (weights 1/2, 1/4, ...) instead of
     * following the last one (with full steps a stalled node's share
     * jumped back and forth: docs/design.md, "Stalls outside the loop
     * body"). */
    double step = rt_prof_step() / 2, sw = 0, c[nt];
    for (int t = 0; t < nt; t++) {
        c[t] = scur > 0 ? cur[t] / scur : 1.0 / nt;
        w[t] = (1 - step) * c[t] + step * sp[t] / ssp;
        sw += w[t];
    }
    /* The gain judged is the split by the speeds', not the half step's
     * (sched_profiled_imbalance). */
    double gain = rt_icv.prof_gain > 0 ? rt_icv.prof_gain : 0;
    rt_prof_acc_reset(ps, nt);
    memcpy(ps->speed, sp, sizeof sp);
    if (!(sched_profiled_imbalance(nt, c, sp) > 1 + gain)) {
        rt_prof_group_give(ps);
        return 1;
    }
    /* (weights are relative: scaled like the speeds, so that a step of 1
     * gives the speeds themselves) */
    if (rt_icv.prof_stalls)
        prof_on_trial(ps, nt, cost, 1); /* until the next window (prof_judge) */
    for (int t = 0; t < nt; t++)
        ps->weight[t] = w[t] / sw * ssp;
    ps->brief = 0; /* the sums' split, no longer static's for want of a
                      measurement */
    ps->repartitions++;
    ps->acc_splits++;
    rt_prof_group_give(ps);
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
     * small share look slower still on a loaded machine (docs/design.md,
     * "Stalls outside the loop body"). */
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
     * wherever they land included.  Across a region boundary too (a
     * `parallel for` a loop) when the gap is under PROF_STALL_GAP_NS:
     * the join's and the fork's waits follow the split (a node given
     * less finishes first and sleeps at the join; on a core shared with
     * another process it then waits a scheduler slice for its CPU when
     * the fork wakes it: the banded CG under a CPU hog kept a move that
     * made its loops 4% faster and its run 3x longer, 9 s of 11 in the
     * region boundaries that no cost counted), and a fixed serial part
     * adds the same to both windows that judge a move.  Not a measuring
     * execution's (its first pays the pages' faults). */
    uint64_t longest = 0;
    for (int t = 0; t < nt; t++) {
        uint64_t c = r[t].ns + (r[t].gap_ns ? r[t].gap_ns + r[t].bar_ns : 0);
        longest = c > longest ? c : longest;
    }
    r = x;
    /* With stalls, the sums' windows are counted in executions of the
     * group's loop executed most often, and decided at its ends: the
     * owner is the loop whose measurement the weights are, and a group
     * whose measurements were all too brief is owned by whichever loop
     * measured last, which may run once per outer iteration (a banded
     * CG's last loop: 24 executions in a run, 3 a window), so that the
     * split moved three times a run.  The windows' cost per execution is
     * then the wall time of a cycle of the group's loops, as it is when
     * the owner runs once a cycle. */
    struct rt_prof_site *lead = acc;
    if (rt_icv.prof_stalls && ps->grp && acc == ps->grp->owner) {
        struct rt_prof_group *g = ps->grp;
        if (!g->lead || g->lead->nthreads != nt ||
            (g->lead != ps && ps->executions > g->lead->executions))
            g->lead = ps;
        lead = g->lead;
    }
    int settle = acc->settle;
    if (settle && lead == ps)
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
        acc->acc_execs += lead == ps;
        acc->acc_cmax = (double)longest > acc->acc_cmax ? (double)longest
                                                        : acc->acc_cmax;
    }
    if (rt_icv.prof_stalls) {
        /* The sums decide, every time they are long enough, stray or not
         * (a gradual step, only for a predicted gain), and never a new
         * measurement: once the split is by the sums, a slow node's loop
         * bodies run faster than its speed says (its stalls are
         * elsewhere), so its loop times stray for ever, and a measurement
         * of its loop body would undo the split.  After a measurement too
         * brief to trust (static's split) too: a loop of cheap iterations
         * (a banded CG's rows) is re-balanced from static's split. */
        if (lead != ps || !acc->measured || !(rt_icv.prof_drift > 0))
            return;
        acc->drifts += prof_stray(acc, r, nt, 1) != 0;
        prof_acc_split(acc, nt);
        acc->drift_run = 0;
        return;
    }
    /* Without stalls a measurement too brief to trust split as static
     * does, and its speeds would be what is judged: nothing is. */
    if (!ps->measured || ps->brief || !(rt_icv.prof_drift > 0))
        return;
    /* In a group, only the loop whose measurement the weights are judges
     * them: another loop's iterations may cost differently per node (CG's
     * copy rows against its matrix rows), so its times stray from them for
     * ever, and each re-measurement would re-partition the whole group
     * (docs/design.md, "Loops that share data"). */
    if (ps->grp && ps->grp->owner && ps->grp->owner != ps)
        return;
    int stray = prof_stray(ps, r, nt, 0);
    ps->drifts += stray != 0;
    ps->drift_run = stray ? ps->drift_run + 1 : 0;
    if (ps->drift_run < 2)
        return;
    ps->drift_run = 0;
    if (prof_acc_split(ps, nt))
        return;
    /* (in a group, the owner measures again, and its new weights
     * re-partition the group) */
    ps->measure = 1;
}

void rt_prof_end(struct rt_loop *L, int nowait)
{
    uint64_t s0 = prof_stall(), t0 = rt_prof_now();
    stall_mark = s0;
    stall_mark_t = t0;
    if (nowait)
        return;
    /* OMPDSM_loop_end's barrier, carrying every thread's time. */
    struct prof_rec mine = {L->tid, 0, L->tm, L->iters,
                            rt_prof_thr(L)->stall_out, stall_bar,
                            stall_bar_ns, rt_prof_thr(L)->stall_bw,
                            rt_prof_thr(L)->gap_ns};
    struct comm_buf recs = {0};
    rt_team_barrier_rec(&mine, sizeof mine, &recs);
    /* the stall in this barrier, for the next record; the next stall_out
     * counts from its end */
    stall_mark = prof_stall();
    stall_mark_t = rt_prof_now();
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
    if (seen == nt && !L->frozen && rt_prof_leader())
        prof_drift(L->ps, all, nt, L->base > 0);
    comm_buf_free(&recs);
}
