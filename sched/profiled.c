/* sched/profiled.c - the profiled schedule's arithmetic: how the iterations
 * left after the measurement are split by the threads' measured speeds, and
 * whether re-partitioning pays.  Pure and deterministic: every node computes
 * the same vector from the same exchanged speeds, so no iteration is lost
 * or run twice.  The runtime (runtime/profiled*.c) measures, exchanges
 * and persists; nothing here communicates or reads a clock.
 *
 * The algorithm is the one of "Implementation and Evaluation of Dynamic
 * Load Balancing Using Loop Re-partitioning on Omni/SCASH" (Sakae et al.),
 * steps (1b)-(1e): the predicted time of the remaining iterations with and
 * without re-partitioning, and re-partitioning only when the gain passes a
 * threshold.  Also the rules that judge a move by its result, and the
 * speed estimate over several windows of executions that a burst cannot
 * swing (sched_profiled_hist_*). */
#include "sched.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A weight the arithmetic can use: finite and positive, else 0. */
static double usable(double w)
{
    return isfinite(w) && w > 0 ? w : 0;
}

/* Block: the largest-remainder apportionment of r iterations by weight,
 * ties to the lower thread number, so the counts sum to r exactly. */
static void block_vector(uint64_t r, int nt, const double *w, double wsum,
                         uint64_t *vec)
{
    uint64_t given = 0;
    for (int t = 0; t < nt; t++) {
        double q = (double)r * (usable(w[t]) / wsum);
        uint64_t c = q >= (double)r ? r : (uint64_t)q;
        vec[t] = c;
        given += c;
    }
    /* Rounding of huge counts may overshoot: take back from the largest. */
    while (given > r) {
        int big = 0;
        for (int t = 1; t < nt; t++)
            if (vec[t] > vec[big])
                big = t;
        uint64_t take = given - r < vec[big] ? given - r : vec[big];
        vec[big] -= take;
        given -= take;
    }
    /* The rest, one each, to the largest fractional parts among the
     * threads with weight (whole rounds first when many are left). */
    int npos = 0;
    for (int t = 0; t < nt; t++)
        npos += usable(w[t]) > 0;
    if (r - given >= (uint64_t)npos) {
        uint64_t each = (r - given) / (uint64_t)npos;
        for (int t = 0; t < nt; t++)
            if (usable(w[t]) > 0) {
                vec[t] += each;
                given += each;
            }
    }
    while (given < r) {
        int best = -1;
        double bestf = -1;
        for (int t = 0; t < nt; t++) {
            if (!(usable(w[t]) > 0))
                continue;
            double q = (double)r * (usable(w[t]) / wsum);
            double f = q - floor(q);
            /* A thread already topped up in this pass ranks last. */
            if ((double)vec[t] > floor(q))
                f = -0.5;
            if (f > bestf) {
                bestf = f;
                best = t;
            }
        }
        vec[best]++;
        given++;
    }
    /* Every thread with a speed keeps at least one iteration when there
     * are enough: a thread with none has no time to observe, so a speed
     * measured wrong (a first execution paying its page faults) could
     * never be noticed and corrected. */
    if (r < (uint64_t)npos)
        return;
    for (int t = 0; t < nt; t++) {
        if (!(usable(w[t]) > 0) || vec[t])
            continue;
        int big = 0;
        for (int u = 1; u < nt; u++)
            if (vec[u] > vec[big])
                big = u;
        vec[big]--;
        vec[t]++;
    }
}

int sched_profiled_vector(uint64_t base, uint64_t n, uint64_t chunk,
                          int nthreads, const double *weight, uint64_t *vec)
{
    if (nthreads < 1 || nthreads > SCHED_PROF_MAX_THREADS || !weight || !vec)
        return -EINVAL;
    uint64_t r = n > base ? n - base : 0;
    double wsum = 0, wmin = 0;
    for (int t = 0; t < nthreads; t++) {
        double w = usable(weight[t]);
        wsum += w;
        if (w > 0 && (wmin == 0 || w < wmin))
            wmin = w;
    }
    /* No usable speed at all: split evenly. */
    double ones[nthreads];
    if (!(wsum > 0) || !isfinite(wsum)) {
        for (int t = 0; t < nthreads; t++)
            ones[t] = 1;
        weight = ones;
        wsum = nthreads;
        wmin = 1;
    }
    if (!chunk) {
        block_vector(r, nthreads, weight, wsum, vec);
        return 0;
    }
    /* Cyclic: the slowest thread with any speed gets chunk iterations a
     * round, the others chunk times their speed ratio to it (rounded, at
     * least 1).  A round longer than the space is capped: it would only
     * make the first round the last. */
    uint64_t cap = r > chunk ? r : chunk;
    for (int t = 0; t < nthreads; t++) {
        double w = usable(weight[t]);
        if (w == 0) {
            vec[t] = 0;
            continue;
        }
        double c = nearbyint((double)chunk * (w / wmin));
        if (c < 1)
            c = 1;
        /* Compared as doubles, assigned as integers: a cap near 2^64
         * rounds up to 2^64 as a double, outside uint64_t. */
        vec[t] = c >= (double)cap ? cap : (uint64_t)c;
    }
    return 0;
}

/* Iterations per round, and thread tid's offset within one; 0 when the
 * sum does not fit. */
static int round_of(const struct sched_prof_part *p, int tid, uint64_t *len,
                    uint64_t *pre)
{
    uint64_t s = 0, before = 0;
    for (int t = 0; t < p->nthreads; t++) {
        if (t == tid)
            before = s;
        if (__builtin_add_overflow(s, p->vec[t], &s))
            return 0;
    }
    *len = s;
    *pre = before;
    return 1;
}

int sched_profiled_range(const struct sched_prof_part *p, int tid,
                         uint64_t round, uint64_t *lo, uint64_t *hi)
{
    if (tid < 0 || tid >= p->nthreads || p->n <= p->base || !p->vec[tid])
        return 0;
    uint64_t len, pre, off;
    if (!round_of(p, tid, &len, &pre))
        return 0;
    if (!p->chunk) {
        if (round)
            return 0;
        off = pre;
    } else if (__builtin_mul_overflow(round, len, &off) ||
               __builtin_add_overflow(off, pre, &off)) {
        return 0;
    }
    uint64_t r = p->n - p->base;
    if (off >= r)
        return 0;
    *lo = p->base + off;
    *hi = p->vec[tid] < r - off ? *lo + p->vec[tid] : p->n;
    return 1;
}

uint64_t sched_profiled_count(const struct sched_prof_part *p, int tid)
{
    uint64_t len, pre;
    if (tid < 0 || tid >= p->nthreads || p->n <= p->base ||
        !round_of(p, tid, &len, &pre))
        return 0;
    uint64_t r = p->n - p->base, v = p->vec[tid];
    if (!p->chunk)
        return pre >= r ? 0 : (v < r - pre ? v : r - pre);
    uint64_t full = r / len, rest = r % len;
    uint64_t part = rest > pre ? rest - pre : 0;
    return full * v + (part < v ? part : v);
}

double sched_profiled_time(const struct sched_prof_part *p,
                           const double *speed)
{
    double worst = 0;
    for (int t = 0; t < p->nthreads; t++) {
        uint64_t c = sched_profiled_count(p, t);
        if (!c)
            continue;
        double s = usable(speed[t]);
        double tt = s > 0 ? (double)c / s : INFINITY;
        if (tt > worst)
            worst = tt;
    }
    return worst;
}

/* The weights a re-partition would use: the measured speeds, or with a
 * step below 1 only that part of the way from the shares in use to the
 * measured ones (the Omni/SCASH paper's section 4.4: one noisy
 * measurement then moves little of the data each node works on, and homes
 * that migrated to their users stay useful). */
static void target_weights(const struct sched_prof_in *in, double *w)
{
    int nt = in->nthreads;
    double ss = 0, sc = 0;
    for (int t = 0; t < nt; t++) {
        ss += usable(in->speed[t]);
        sc += usable(in->cur_weight[t]);
    }
    int gradual = in->step > 0 && in->step < 1 && ss > 0 && sc > 0;
    for (int t = 0; t < nt; t++) {
        double s = usable(in->speed[t]);
        w[t] = gradual ? usable(in->cur_weight[t]) / sc +
                             in->step * (s / ss - usable(in->cur_weight[t]) / sc)
                       : s;
    }
}

int sched_profiled_decide(const struct sched_prof_in *in,
                          struct sched_prof_out *out)
{
    int nt = in->nthreads;
    if (nt < 1 || nt > SCHED_PROF_MAX_THREADS)
        return -EINVAL;
    uint64_t vold[nt];
    double target[nt];
    target_weights(in, target);
    int rc = sched_profiled_vector(in->base, in->n, in->chunk, nt,
                                   in->cur_weight, vold);
    if (!rc)
        rc = sched_profiled_vector(in->base, in->n, in->chunk, nt, target,
                                   out->vec);
    if (rc)
        return rc;
    struct sched_prof_part po = {in->base, in->n, in->chunk, nt, vold};
    struct sched_prof_part pn = {in->base, in->n, in->chunk, nt, out->vec};
    out->t_old = sched_profiled_time(&po, in->speed);
    out->t_new = sched_profiled_time(&pn, in->speed);
    int any = 0;
    for (int t = 0; t < nt; t++)
        any |= usable(in->speed[t]) > 0;
    /* An infinite gain never re-partitions; NaN or negative counts as 0. */
    double gain = in->gain > 0 ? in->gain : 0;
    /* (1d): re-partition only for a predicted gain above the threshold;
     * (1e) otherwise: keep the vector in use. */
    out->repartition = any && isfinite(out->t_new) &&
                       out->t_old > out->t_new * (1 + gain);
    if (!out->repartition)
        memcpy(out->vec, vold, sizeof vold);
    for (int t = 0; t < nt; t++)
        out->weight[t] = out->repartition ? target[t] : in->cur_weight[t];
    return 0;
}

int sched_profiled_keep(double cost_before, double cost_after, double margin)
{
    /* Nothing to compare with: the move stands. */
    if (!(cost_before > 0) || !isfinite(cost_before))
        return 1;
    if (!(cost_after >= 0) || !isfinite(cost_after))
        return 0;
    double m = margin > 0 && margin < 1 ? margin : 0;
    return cost_after < cost_before * (1 - m);
}

int sched_profiled_judge(int trial, double cost_before, double cost_now,
                         double margin)
{
    switch (trial) {
    case 1:
        return sched_profiled_keep(cost_before, cost_now, margin)
                   ? SCHED_PROF_CONFIRM : SCHED_PROF_UNDO;
    case 3:
        return sched_profiled_keep(cost_before, cost_now, 0) ? SCHED_PROF_KEEP
                                                             : SCHED_PROF_UNDO;
    default:
        return sched_profiled_keep(cost_now, cost_before, margin)
                   ? SCHED_PROF_UNDO : SCHED_PROF_KEEP;
    }
}

double sched_profiled_imbalance(int nthreads, const double *share,
                                const double *speed)
{
    double worst = 0, sum = 0;
    for (int t = 0; t < nthreads; t++) {
        double sp = speed[t] > 0 && isfinite(speed[t]) ? speed[t] : 0;
        sum += sp;
        if (share[t] > 0) {
            double tt = sp > 0 ? share[t] / sp : INFINITY;
            worst = tt > worst ? tt : worst;
        }
    }
    return sum > 0 ? worst * sum : INFINITY;
}

int sched_profiled_backoff(int fails)
{
    /* one move undone is as likely one noisy window as a wrong move */
    if (fails <= 1)
        return 0;
    if (fails >= 6)
        return SCHED_PROF_BACKOFF_MAX;
    int w = (1 << (fails - 1)) - 1;
    return w < SCHED_PROF_BACKOFF_MAX ? w : SCHED_PROF_BACKOFF_MAX;
}

void sched_profiled_hist_add(double *hist, int *n, int *next, int nthreads,
                             const double *speed)
{
    memcpy(hist + (size_t)*next * (size_t)nthreads, speed,
           (size_t)nthreads * sizeof *speed);
    *next = (*next + 1) % SCHED_PROF_HIST;
    if (*n < SCHED_PROF_HIST)
        (*n)++;
}

int sched_profiled_hist_estimate(const double *hist, int n, int nthreads,
                                 double *est)
{
    if (n < SCHED_PROF_HIST)
        return 0;
    for (int t = 0; t < nthreads; t++) {
        double v[SCHED_PROF_HIST];
        for (int i = 0; i < SCHED_PROF_HIST; i++) {
            double x = hist[(size_t)i * (size_t)nthreads + (size_t)t];
            int j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        est[t] = v[SCHED_PROF_HIST / 2];
    }
    return 1;
}
