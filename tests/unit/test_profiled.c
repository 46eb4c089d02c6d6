/* tests/unit/test_profiled.c - the profiled schedule's arithmetic
 * (sched/profiled.c): the chunk vectors of the example in the paper's
 * figure 2 (3 threads at speeds 3:1:2), cyclic and block; the gain
 * threshold on and off; edge cases (zero-trip, fewer iterations than
 * threads, 64-bit spaces, zero and equal speeds); on seeded random inputs,
 * that the ranges cover [base, n) exactly once, each thread's in increasing
 * order, against an owner-per-iteration model; determinism; the rule
 * that judges a move by its result and the windows let pass after moves
 * undone; the claim word's one encoding; and the speed estimate over
 * several windows, fed windows with bursts: one burst moves nothing, a
 * lasting slowness (bursty or not) moves the split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <cmocka.h>

#include "sched/sched.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void vec_of(uint64_t base, uint64_t n, uint64_t chunk, int nt,
                   const double *w, uint64_t *vec)
{
    assert_int_equal(sched_profiled_vector(base, n, chunk, nt, w, vec), 0);
}

/* Every range of every thread; checks each iteration of [base, n) is owned
 * exactly once (n - base <= 4096), each thread's ranges increase, and the
 * per-thread totals match sched_profiled_count. */
static void check_partition(const struct sched_prof_part *p)
{
    enum { MAXN = 4096 };
    static int owner[MAXN];
    uint64_t r = p->n > p->base ? p->n - p->base : 0;
    assert_true(r <= MAXN);
    memset(owner, 0xff, sizeof owner);
    for (int t = 0; t < p->nthreads; t++) {
        uint64_t lo, hi, prev = p->base, cnt = 0;
        for (uint64_t round = 0; sched_profiled_range(p, t, round, &lo, &hi);
             round++) {
            assert_true(lo >= prev && lo < hi && hi <= p->n);
            for (uint64_t k = lo; k < hi; k++) {
                assert_int_equal(owner[k - p->base], -1);
                owner[k - p->base] = t;
            }
            cnt += hi - lo;
            prev = hi;
            assert_true(round <= r);
        }
        assert_int_equal(cnt, sched_profiled_count(p, t));
    }
    for (uint64_t k = 0; k < r; k++)
        assert_int_not_equal(owner[k], -1);
}

/* The model: who owns iteration base + k, walked one iteration at a time. */
static int model_owner(const struct sched_prof_part *p, uint64_t k)
{
    if (!p->chunk) {
        for (int t = 0; t < p->nthreads; t++) {
            if (k < p->vec[t])
                return t;
            k -= p->vec[t];
        }
        return -1;
    }
    uint64_t len = 0;
    for (int t = 0; t < p->nthreads; t++)
        len += p->vec[t];
    k %= len;
    for (int t = 0; t < p->nthreads; t++) {
        if (k < p->vec[t])
            return t;
        k -= p->vec[t];
    }
    return -1;
}

static void check_against_model(const struct sched_prof_part *p)
{
    for (int t = 0; t < p->nthreads; t++) {
        uint64_t lo, hi;
        for (uint64_t round = 0; sched_profiled_range(p, t, round, &lo, &hi);
             round++)
            for (uint64_t k = lo; k < hi; k++)
                assert_int_equal(model_owner(p, k - p->base), t);
    }
}

static void test_figure2_cyclic(void **st)
{
    (void)st;
    const double s[3] = {3, 1, 2};
    uint64_t v[3];
    vec_of(0, 12, 1, 3, s, v);
    assert_int_equal(v[0], 3);
    assert_int_equal(v[1], 1);
    assert_int_equal(v[2], 2);
    struct sched_prof_part p = {0, 12, 1, 3, v};
    uint64_t lo, hi;
    assert_true(sched_profiled_range(&p, 0, 0, &lo, &hi));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 3);
    assert_true(sched_profiled_range(&p, 1, 0, &lo, &hi));
    assert_int_equal(lo, 3);
    assert_int_equal(hi, 4);
    assert_true(sched_profiled_range(&p, 2, 1, &lo, &hi));
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 12);
    assert_false(sched_profiled_range(&p, 0, 2, &lo, &hi));
    check_partition(&p);
    /* chunk 2: the base unit doubles every share. */
    vec_of(0, 100, 2, 3, s, v);
    assert_int_equal(v[0], 6);
    assert_int_equal(v[1], 2);
    assert_int_equal(v[2], 4);
    /* Speeds given in any unit: 0.3:0.1:0.2 is the same. */
    const double s2[3] = {0.3, 0.1, 0.2};
    uint64_t v2[3];
    vec_of(0, 100, 2, 3, s2, v2);
    assert_memory_equal(v, v2, sizeof v);
}

static void test_figure2_block(void **st)
{
    (void)st;
    const double s[3] = {3, 1, 2};
    uint64_t v[3];
    vec_of(0, 12, 0, 3, s, v);
    assert_int_equal(v[0], 6);
    assert_int_equal(v[1], 2);
    assert_int_equal(v[2], 4);
    struct sched_prof_part p = {0, 12, 0, 3, v};
    uint64_t lo, hi;
    assert_true(sched_profiled_range(&p, 1, 0, &lo, &hi));
    assert_int_equal(lo, 6);
    assert_int_equal(hi, 8);
    assert_false(sched_profiled_range(&p, 1, 1, &lo, &hi));
    check_partition(&p);
    /* 13 left after 5 measured: 6.5, 2.17, 4.33 -> the odd one to the
     * largest remainder (thread 0); the space starts at 5. */
    vec_of(5, 18, 0, 3, s, v);
    assert_int_equal(v[0], 7);
    assert_int_equal(v[1], 2);
    assert_int_equal(v[2], 4);
    struct sched_prof_part q = {5, 18, 0, 3, v};
    assert_true(sched_profiled_range(&q, 2, 0, &lo, &hi));
    assert_int_equal(lo, 14);
    assert_int_equal(hi, 18);
    check_partition(&q);
}

static void test_threshold(void **st)
{
    (void)st;
    const double s[3] = {3, 1, 2}, eq[3] = {1, 1, 1};
    uint64_t vec[3];
    double w[3];
    struct sched_prof_in in = {0, 600, 0, 3, s, eq, 0.05};
    struct sched_prof_out out = {0, 0, 0, vec, w};
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    /* Even split: the slow thread runs 200 at speed 1; by speed: 100 each
     * thread-time unit.  Predicted gain 2x. */
    assert_true(fabs(out.t_old - 200) < 1e-9);
    assert_true(fabs(out.t_new - 100) < 1e-9);
    assert_true(out.repartition);
    assert_int_equal(vec[0], 300);
    assert_int_equal(vec[1], 100);
    assert_int_equal(vec[2], 200);
    assert_true(w[0] == 3 && w[1] == 1 && w[2] == 2);
    /* A threshold above the gain: keep the even split and its weights. */
    in.gain = 1.5;
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    assert_false(out.repartition);
    assert_int_equal(vec[0], 200);
    assert_int_equal(vec[1], 200);
    assert_int_equal(vec[2], 200);
    assert_true(w[0] == 1 && w[1] == 1 && w[2] == 1);
    /* An infinite threshold (a measurement too short to trust) never
     * re-partitions, not even for a 2x gain. */
    in.gain = INFINITY;
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    assert_false(out.repartition);
    assert_int_equal(vec[1], 200);
    in.speed = (const double[3]){0, 0, 0};
    in.n = 0;
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    assert_false(out.repartition);
    in.n = 600;
    in.speed = s;
    /* Just above and just below a 5% gain. */
    const double s2[2] = {1.2, 1}, e2[2] = {1, 1};
    uint64_t v2[2];
    double w2[2];
    struct sched_prof_in i2 = {0, 2200, 0, 2, s2, e2, 0.05};
    struct sched_prof_out o2 = {0, 0, 0, v2, w2};
    assert_int_equal(sched_profiled_decide(&i2, &o2), 0);
    assert_true(o2.repartition); /* 1100 vs 1000: 10% */
    const double s3[2] = {1.04, 1};
    i2.speed = s3;
    assert_int_equal(sched_profiled_decide(&i2, &o2), 0);
    assert_false(o2.repartition); /* 1100 vs 1078: 2% */
    /* The partition in use already fits the speeds: nothing to gain. */
    i2.speed = s2;
    i2.cur_weight = s2;
    assert_int_equal(sched_profiled_decide(&i2, &o2), 0);
    assert_false(o2.repartition);
    assert_int_equal(v2[0], 1200);
    assert_int_equal(v2[1], 1000);
    /* Cyclic decides the same way. */
    i2.cur_weight = e2;
    i2.chunk = 4;
    assert_int_equal(sched_profiled_decide(&i2, &o2), 0);
    assert_true(o2.repartition);
    assert_int_equal(v2[0], 5);
    assert_int_equal(v2[1], 4);
}

/* Gradual re-partitioning: a step of 0.5 from an even split of two
 * threads measured at 3:1 goes half the way, to shares 0.625 and 0.375;
 * the predicted time is judged with the measured speeds; step 0 and 1
 * go all the way. */
static void test_step(void **st)
{
    (void)st;
    const double s[2] = {3, 1}, eq[2] = {1, 1};
    uint64_t vec[2];
    double w[2];
    struct sched_prof_in in = {0, 800, 0, 2, s, eq, 0.05, 0.5};
    struct sched_prof_out out = {0, 0, 0, vec, w};
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    assert_true(out.repartition);
    assert_int_equal(vec[0], 500);
    assert_int_equal(vec[1], 300);
    assert_true(fabs(w[0] - 0.625) < 1e-12 && fabs(w[1] - 0.375) < 1e-12);
    assert_true(fabs(out.t_old - 400) < 1e-9); /* 400 iterations at speed 1 */
    assert_true(fabs(out.t_new - 300) < 1e-9);
    /* The next step starts from those weights: 0.625 + (0.75 - 0.625) / 2. */
    in.cur_weight = w;
    double w2[2];
    out.weight = w2;
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    assert_true(fabs(w2[0] - 0.6875) < 1e-12);
    assert_int_equal(vec[0], 550);
    in.cur_weight = eq;
    out.weight = w;
    for (int k = 0; k < 2; k++) {
        in.step = k; /* 0, then 1 */
        assert_int_equal(sched_profiled_decide(&in, &out), 0);
        assert_int_equal(vec[0], 600);
        assert_int_equal(vec[1], 200);
    }
}

/* A move judged by its result (sched_profiled_keep): kept only when the
 * executions after it were faster by more than the margin; undone when
 * they were as fast, slower, or not measured; kept when there is nothing
 * to compare with.  And the windows let pass after undone moves. */
static void test_judge(void **st)
{
    (void)st;
    /* 10% faster with a 2.5% margin: kept; 2% faster: undone. */
    assert_true(sched_profiled_keep(1.0, 0.90, 0.025));
    assert_false(sched_profiled_keep(1.0, 0.98, 0.025));
    /* as fast or slower: undone (a split that chases the DSM's per-node
     * costs makes the executions slower, not faster) */
    assert_false(sched_profiled_keep(1.0, 1.0, 0.025));
    assert_false(sched_profiled_keep(1.0, 1.6, 0.025));
    /* just past the margin either way */
    assert_true(sched_profiled_keep(1.0, 0.974, 0.025));
    assert_false(sched_profiled_keep(1.0, 0.976, 0.025));
    /* no margin (OMPDSM_PROFILED_GAIN 0): any improvement; a NaN or
     * negative margin counts as 0, one of 1 or more too */
    assert_true(sched_profiled_keep(1.0, 0.999, 0));
    assert_true(sched_profiled_keep(1.0, 0.999, NAN));
    assert_true(sched_profiled_keep(1.0, 0.999, -1));
    assert_true(sched_profiled_keep(1.0, 0.5, 1));
    assert_false(sched_profiled_keep(1.0, 1.0, 0));
    /* nothing measured before the move: it stands */
    assert_true(sched_profiled_keep(0, 5.0, 0.025));
    assert_true(sched_profiled_keep(NAN, 5.0, 0.025));
    assert_true(sched_profiled_keep(INFINITY, 5.0, 0.025));
    /* the time after it unusable: undone */
    assert_false(sched_profiled_keep(1.0, INFINITY, 0.025));
    assert_false(sched_profiled_keep(1.0, NAN, 0.025));
    assert_false(sched_profiled_keep(1.0, -1, 0.025));
    /* Windows to let pass: none while at most one move in a row was
     * undone (one noisy window), then 1, 3, 7, 15, and 15 from then on. */
    assert_int_equal(sched_profiled_backoff(-1), 0);
    assert_int_equal(sched_profiled_backoff(0), 0);
    assert_int_equal(sched_profiled_backoff(1), 0);
    assert_int_equal(sched_profiled_backoff(2), 1);
    assert_int_equal(sched_profiled_backoff(3), 3);
    assert_int_equal(sched_profiled_backoff(4), 7);
    assert_int_equal(sched_profiled_backoff(5), SCHED_PROF_BACKOFF_MAX);
    assert_int_equal(sched_profiled_backoff(6), SCHED_PROF_BACKOFF_MAX);
    assert_int_equal(sched_profiled_backoff(1 << 30), SCHED_PROF_BACKOFF_MAX);
}

/* The verdict on a split on trial (sched_profiled_judge): a move of the
 * sums (trial 1) faster by the margin is only confirmed, then kept when
 * the next window (trial 3) is faster than the one before the move too;
 * static's split (trial 2) stays unless the measured one was faster by
 * the margin.  Fails when one window keeps a move (CONFIRM never
 * returned) or a confirmation window slower than before keeps it. */
static void test_judge_verdict(void **st)
{
    (void)st;
    assert_int_equal(sched_profiled_judge(1, 1.0, 0.90, 0.025), SCHED_PROF_CONFIRM);
    assert_int_equal(sched_profiled_judge(1, 1.0, 0.98, 0.025), SCHED_PROF_UNDO);
    /* the confirmation compares with the window before the move */
    assert_int_equal(sched_profiled_judge(3, 1.0, 0.99, 0.025), SCHED_PROF_KEEP);
    assert_int_equal(sched_profiled_judge(3, 1.0, 1.01, 0.025), SCHED_PROF_UNDO);
    assert_int_equal(sched_profiled_judge(3, 1.0, 1.0, 0.025), SCHED_PROF_UNDO);
    /* a lucky window then a slow one, as under a CPU hog: undone */
    assert_int_equal(sched_profiled_judge(1, 11.26, 10.47, 0.025), SCHED_PROF_CONFIRM);
    assert_int_equal(sched_profiled_judge(3, 11.26, 23.95, 0.025), SCHED_PROF_UNDO);
    /* static's split on trial (cost_before: the measured split's) */
    assert_int_equal(sched_profiled_judge(2, 1.0, 0.99, 0.025), SCHED_PROF_KEEP);
    assert_int_equal(sched_profiled_judge(2, 1.0, 1.02, 0.025), SCHED_PROF_KEEP);
    assert_int_equal(sched_profiled_judge(2, 1.0, 1.10, 0.025), SCHED_PROF_UNDO);
    /* nothing measured before: a move stands to be confirmed */
    assert_int_equal(sched_profiled_judge(1, 0, 5.0, 0.025), SCHED_PROF_CONFIRM);
    assert_int_equal(sched_profiled_judge(3, 1.0, NAN, 0.025), SCHED_PROF_UNDO);
}

/* The imbalance a move of the sums is judged by
 * (sched_profiled_imbalance): the split in use against the speeds'
 * split, not the half step's.  The case seen: shares 58.5 / 41.5 with
 * speeds 5.81 / 3.66 is 7.3% longer than balance (a move), where half a
 * step promised 3.5% (none). */
static void test_imbalance(void **st)
{
    (void)st;
    double sp[2] = {5.81, 3.66}, sh[2] = {0.585, 0.415}, eq[2] = {0.5, 0.5};
    double bal[2] = {5.81 / 9.47, 3.66 / 9.47};
    assert_true(sched_profiled_imbalance(2, sh, sp) > 1.05);
    assert_true(fabs(sched_profiled_imbalance(2, sh, sp) - 1.0735) < 0.001);
    assert_true(fabs(sched_profiled_imbalance(2, bal, sp) - 1.0) < 1e-9);
    assert_true(fabs(sched_profiled_imbalance(2, eq, sp) - 0.5 * 9.47 / 3.66) < 1e-9);
    /* a thread with a share and no speed; a thread without a share */
    double sp0[2] = {1.0, 0}, sh0[2] = {1.0, 0};
    assert_true(isinf(sched_profiled_imbalance(2, eq, sp0)));
    assert_true(fabs(sched_profiled_imbalance(2, sh0, sp0) - 1.0) < 1e-9);
    double none[2] = {0, 0};
    assert_true(isinf(sched_profiled_imbalance(2, eq, none)));
}

static void test_edges(void **st)
{
    (void)st;
    const double s[5] = {1, 2, 3, 4, 5};
    uint64_t v[5], lo, hi;
    /* Zero-trip, block and cyclic. */
    for (uint64_t chunk = 0; chunk < 3; chunk++) {
        vec_of(7, 7, chunk, 5, s, v);
        struct sched_prof_part p = {7, 7, chunk, 5, v};
        for (int t = 0; t < 5; t++) {
            assert_false(sched_profiled_range(&p, t, 0, &lo, &hi));
            assert_int_equal(sched_profiled_count(&p, t), 0);
        }
        assert_true(sched_profiled_time(&p, s) == 0);
        /* base past n (the measurement took everything): nothing. */
        vec_of(9, 7, chunk, 5, s, v);
        struct sched_prof_part q = {9, 7, chunk, 5, v};
        assert_false(sched_profiled_range(&q, 0, 0, &lo, &hi));
    }
    /* Fewer iterations than threads. */
    for (uint64_t chunk = 0; chunk < 3; chunk++)
        for (uint64_t n = 1; n < 5; n++) {
            vec_of(0, n, chunk, 5, s, v);
            struct sched_prof_part p = {0, n, chunk, 5, v};
            check_partition(&p);
        }
    /* Equal speeds, block: exactly static's split. */
    const double eq[4] = {2.5, 2.5, 2.5, 2.5};
    uint64_t ve[4];
    for (uint64_t n = 0; n < 40; n++) {
        vec_of(0, n, 0, 4, eq, ve);
        struct sched_prof_part p = {0, n, 0, 4, ve};
        for (int t = 0; t < 4; t++) {
            uint64_t a, b;
            sched_static_block(n, t, 4, &a, &b);
            if (a < b) {
                assert_true(sched_profiled_range(&p, t, 0, &lo, &hi));
                assert_int_equal(lo, a);
                assert_int_equal(hi, b);
            } else {
                assert_false(sched_profiled_range(&p, t, 0, &lo, &hi));
            }
        }
    }
    /* Equal speeds, cyclic: static's chunks. */
    vec_of(0, 50, 3, 4, eq, ve);
    for (int t = 0; t < 4; t++)
        assert_int_equal(ve[t], 3);
    /* A speed of zero (or not a number, or negative): no iterations. */
    const double z[3] = {0, 2, NAN};
    uint64_t vz[3];
    for (uint64_t chunk = 0; chunk < 3; chunk++) {
        vec_of(0, 100, chunk, 3, z, vz);
        assert_int_equal(vz[0], 0);
        assert_int_equal(vz[2], 0);
        struct sched_prof_part p = {0, 100, chunk, 3, vz};
        assert_int_equal(sched_profiled_count(&p, 1), 100);
        check_partition(&p);
        const double sp[3] = {1, 1, 1};
        assert_true(isinf(sched_profiled_time(&(struct sched_prof_part){0, 100, chunk, 3, (uint64_t[]){50, 0, 50}}, z)));
        (void)sp;
    }
    /* Every speed zero: even split, as static. */
    const double allz[3] = {0, -1, INFINITY};
    vec_of(0, 10, 0, 3, allz, vz);
    assert_int_equal(vz[0], 4);
    assert_int_equal(vz[1], 3);
    assert_int_equal(vz[2], 3);
    /* Bad arguments. */
    assert_int_equal(sched_profiled_vector(0, 1, 0, 0, s, v), -EINVAL);
    assert_int_equal(sched_profiled_vector(0, 1, 0, SCHED_PROF_MAX_THREADS + 1, s, v), -EINVAL);
    /* A decision with no usable speed keeps the split in use. */
    uint64_t dv[3];
    double dw[3];
    const double cur[3] = {1, 1, 1};
    struct sched_prof_in in = {0, 99, 0, 3, allz, cur, 0.05};
    struct sched_prof_out out = {0, 0, 0, dv, dw};
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    assert_false(out.repartition);
    assert_int_equal(dv[0] + dv[1] + dv[2], 99);
}

/* 64-bit spaces: the last iteration of the unsigned range, counts that sum
 * exactly, and cyclic rounds at the very end without overflow. */
static void test_huge(void **st)
{
    (void)st;
    const double s[3] = {3, 1, 2};
    uint64_t v[3], lo, hi;
    const uint64_t N = UINT64_MAX;
    vec_of(0, N, 0, 3, s, v);
    assert_true(v[0] + v[1] + v[2] == N);
    struct sched_prof_part p = {0, N, 0, 3, v};
    uint64_t prev = 0;
    for (int t = 0; t < 3; t++) {
        assert_true(sched_profiled_range(&p, t, 0, &lo, &hi));
        assert_true(lo == prev);
        prev = hi;
        /* Within a few ulps of the ratio. */
        double want = (double)N * s[t] / 6;
        assert_true(fabs((double)v[t] - want) < want * 1e-12 + 4096);
    }
    assert_true(prev == N);
    /* Weights far apart: 1e300 : 1 does not overflow a count, and the
     * slow thread keeps one iteration. */
    const double far[2] = {1e300, 1};
    uint64_t vf[2];
    vec_of(0, N, 0, 2, far, vf);
    assert_true(vf[0] + vf[1] == N);
    assert_true(vf[1] == 1);
    /* 30 iterations at 1000:1: 29 and 1, not 30 and 0; with fewer
     * iterations than threads that have a speed, no floor. */
    const double skew[3] = {1000, 1, 0};
    uint64_t vs[3];
    vec_of(0, 30, 0, 3, skew, vs);
    assert_int_equal(vs[0], 29);
    assert_int_equal(vs[1], 1);
    assert_int_equal(vs[2], 0);
    vec_of(0, 1, 0, 3, skew, vs);
    assert_int_equal(vs[0], 1);
    assert_int_equal(vs[1], 0);
    vec_of(0, N, 5, 2, far, vf);
    assert_true(vf[1] == 5 && vf[0] <= N);
    /* Cyclic near 2^64: the last round is clipped at n, the one after it
     * is empty. */
    vec_of(N - 100, N, 7, 3, s, v);
    struct sched_prof_part q = {N - 100, N, 7, 3, v};
    check_partition(&q);
    check_against_model(&q);
    assert_false(sched_profiled_range(&q, 0, UINT64_MAX / 2, &lo, &hi));
    /* A count of the full space, cyclic. */
    vec_of(0, N, 1, 3, s, v);
    struct sched_prof_part r = {0, N, 1, 3, v};
    uint64_t c0 = sched_profiled_count(&r, 0), c1 = sched_profiled_count(&r, 1),
             c2 = sched_profiled_count(&r, 2);
    assert_true(c0 + c1 + c2 == N);
    /* Thread 2's last round: N = 6q + 3, so it gets [N - 1 - ..] nothing past. */
    uint64_t last = N / 6;
    assert_true(sched_profiled_range(&r, 2, last - 1, &lo, &hi));
    assert_false(sched_profiled_range(&r, 2, last + 1, &lo, &hi));
}

static void test_random_partition(void **st)
{
    (void)st;
    for (int it = 0; it < 3000; it++) {
        int nt = 1 + (int)(rnd() % 9);
        double sp[9];
        for (int t = 0; t < nt; t++) {
            uint64_t k = rnd() % 10;
            sp[t] = k == 0 ? 0 : k == 1 ? (double)(rnd() % 1000) / 7.0
                                        : 0.5 + (double)(rnd() % 100) / 10;
        }
        uint64_t base = rnd() % 50, n = base + rnd() % 700;
        if (rnd() % 8 == 0)
            n = base; /* zero-trip */
        uint64_t chunk = rnd() % 3 ? rnd() % 6 : 0;
        uint64_t v[9];
        vec_of(base, n, chunk, nt, sp, v);
        struct sched_prof_part p = {base, n, chunk, nt, v};
        check_partition(&p);
        check_against_model(&p);
        if (!chunk) {
            uint64_t sum = 0;
            for (int t = 0; t < nt; t++)
                sum += v[t];
            assert_true(sum == n - base);
        }
    }
}

/* The same inputs give the same vector and decision, whatever came before
 * (every node computes it alone from the exchanged speeds). */
static void test_determinism(void **st)
{
    (void)st;
    for (int it = 0; it < 200; it++) {
        double sp[8], cur[8];
        for (int t = 0; t < 8; t++) {
            sp[t] = 0.1 + (double)(rnd() % 10000) / 997.0;
            cur[t] = 1;
        }
        uint64_t n = rnd() % 1000000, chunk = rnd() % 4;
        uint64_t va[8], vb[8];
        double wa[8], wb[8];
        struct sched_prof_in in = {n / 10, n, chunk, 8, sp, cur, 0.05};
        struct sched_prof_out oa = {0, 0, 0, va, wa}, ob = {0, 0, 0, vb, wb};
        assert_int_equal(sched_profiled_decide(&in, &oa), 0);
        for (int k = 0; k < 5; k++)
            rnd();
        double sp2[8], cur2[8];
        memcpy(sp2, sp, sizeof sp);
        memcpy(cur2, cur, sizeof cur);
        struct sched_prof_in in2 = {n / 10, n, chunk, 8, sp2, cur2, 0.05};
        assert_int_equal(sched_profiled_decide(&in2, &ob), 0);
        assert_int_equal(oa.repartition, ob.repartition);
        assert_memory_equal(va, vb, sizeof va);
        assert_memory_equal(wa, wb, sizeof wa);
    }
}

static void test_claim_word(void **st)
{
    (void)st;
    uint64_t w = sched_word(5, 123);
    assert_int_equal(sched_word_gen(w), 5);
    assert_int_equal(sched_word_val(w), 123);
    /* The value keeps its 40 bits, the generation its 24, neither spills. */
    w = sched_word(SCHED_WORD_GEN_MASK, SCHED_WORD_VAL_MASK);
    assert_true(w == UINT64_MAX);
    w = sched_word(SCHED_WORD_GEN_MASK + 2, SCHED_WORD_VAL_MASK + 3);
    assert_int_equal(sched_word_gen(w), 1);
    assert_int_equal(sched_word_val(w), 2);
    assert_int_equal(sched_word_gen(sched_word(0x123456, 0)), 0x123456);
    assert_true(sched_word(1, 0) == 1ull << 40);
    /* A fetch-add of 1 on a word moves its value only. */
    w = sched_word(77, 41);
    assert_int_equal(sched_word_gen(w + 1), 77);
    assert_int_equal(sched_word_val(w + 1), 42);
}

/* ---- the speed estimate that a burst cannot swing ---- */
/* One window of the executions' sums for one thread: nexec executions of
 * `iters` iterations, each taking exec_ns, plus burst_ns of stalls (another
 * job's slice on its core) landing inside the window; iterations per ns. */
static double window_speed(int nexec, double iters, double exec_ns,
                           double burst_ns)
{
    return nexec * iters / (nexec * exec_ns + burst_ns);
}

/* Whether the executions' sums move a 2-thread split now at equal
 * weights, by the estimate `sp`, as prof_acc_split does: half of the
 * default step, the default gain. */
static int moves_split(const double *sp)
{
    const double eq[2] = {1, 1};
    uint64_t vec[2];
    double w[2];
    struct sched_prof_in in = {0, 200000, 0, 2, sp, eq, 0.05, 0.5};
    struct sched_prof_out out = {0, 0, 0, vec, w};
    assert_int_equal(sched_profiled_decide(&in, &out), 0);
    return out.repartition;
}

/* A homogeneous pair: windows of 20 ms (8 executions of 2.5 ms, CG's
 * mat-vec), and in the third window one burst of 5 ms on thread 1.  That
 * window's own speeds make thread 1 look 20% slower and would move the
 * split (the estimator of the last window: the decisions that went wrong
 * under a CPU-bound competitor); the median of the last three windows
 * keeps both threads equal and moves nothing, and neither does a burst in
 * every third window. */
static void test_burst_estimate(void **st)
{
    (void)st;
    double hist[SCHED_PROF_HIST * 2], est[2], sp[2];
    int n = 0, next = 0;
    for (int w = 0; w < 9; w++) {
        sp[0] = window_speed(8, 12500, 2.5e6, 0);
        sp[1] = window_speed(8, 12500, 2.5e6, w % 3 == 2 ? 5e6 : 0);
        sched_profiled_hist_add(hist, &n, &next, 2, sp);
        if (w < SCHED_PROF_HIST - 1) {
            /* too few windows to tell a burst from a slowness */
            assert_int_equal(sched_profiled_hist_estimate(hist, n, 2, est), 0);
            continue;
        }
        assert_int_equal(sched_profiled_hist_estimate(hist, n, 2, est), 1);
        if (w % 3 == 2) {
            assert_true(sp[1] < 0.85 * sp[0]);
            assert_true(moves_split(sp)); /* the last window alone: moved */
        }
        assert_true(fabs(est[1] / est[0] - 1) < 1e-12);
        assert_false(moves_split(est));
    }
}

/* A node that shares its core with a CPU-bound process all the time:
 * every window holds its bursts (half of the window in stalls, in slices
 * of a few ms), one lucky window fewer.  The median follows the slowness
 * and the split moves towards it; a slowness that starts later is
 * followed from the second window that shows it. */
static void test_burst_steady(void **st)
{
    (void)st;
    double hist[SCHED_PROF_HIST * 2], est[2], sp[2];
    int n = 0, next = 0;
    for (int w = 0; w < 6; w++) {
        sp[0] = window_speed(8, 12500, 2.5e6, 0);
        sp[1] = window_speed(8, 12500, 2.5e6, w == 4 ? 3e6 : 20e6);
        sched_profiled_hist_add(hist, &n, &next, 2, sp);
        if (sched_profiled_hist_estimate(hist, n, 2, est)) {
            assert_true(fabs(est[1] / est[0] - 0.5) < 1e-12);
            assert_true(moves_split(est));
        }
    }
    n = next = 0;
    for (int w = 0; w < 5; w++) {
        sp[0] = window_speed(8, 12500, 2.5e6, 0);
        sp[1] = window_speed(8, 12500, 2.5e6, w >= 2 ? 20e6 : 0);
        sched_profiled_hist_add(hist, &n, &next, 2, sp);
        int full = sched_profiled_hist_estimate(hist, n, 2, est);
        assert_int_equal(full, w >= 2);
        if (full)
            assert_int_equal(moves_split(est), w >= 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figure2_cyclic),
        cmocka_unit_test(test_figure2_block),
        cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_step),
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_judge_verdict),
        cmocka_unit_test(test_imbalance),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_random_partition),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_claim_word),
        cmocka_unit_test(test_burst_estimate),
        cmocka_unit_test(test_burst_steady),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
