/* sched/sched.h - loop schedules: how a loop's iterations 0..n-1 are split
 * among a team's threads.  Pure arithmetic for static schedules; claims
 * with remote atomics on a word of the instance (dynamic: a fetch-add per
 * chunk, a compare-swap only to reset a word left by an older instance;
 * guided and single: compare-swap), never a central lock; the profiled
 * schedule's partition by measured speed, also pure arithmetic. */
#ifndef OMPDSM_SCHED_H
#define OMPDSM_SCHED_H

#include <stdint.h>

/* ---- static.c: static schedules ---- */
/* static without chunk: the block of thread tid of nthreads, as libgomp
 * splits it (the first n % nthreads threads get one more). */
void sched_static_block(uint64_t n, int tid, int nthreads, uint64_t *lo,
                        uint64_t *hi);
/* static with chunk: round r of thread tid; 0 when past the end. */
int sched_static_chunk(uint64_t n, uint64_t chunk, int tid, int nthreads,
                       uint64_t round, uint64_t *lo, uint64_t *hi);

/* ---- dynamic.c: claims of dynamic, guided and single ---- */
/* A claim word: an instance's generation in the top 24 bits, a value (the
 * next chunk or iteration, or iterations completed) in the low 40.  The one
 * encoding of the dynamic, guided, single and ordered words. */
#define SCHED_WORD_VAL_BITS 40
#define SCHED_WORD_VAL_MASK ((1ull << SCHED_WORD_VAL_BITS) - 1)
#define SCHED_WORD_GEN_MASK 0xffffffull
static inline uint64_t sched_word(uint64_t gen, uint64_t val)
{
    return (gen & SCHED_WORD_GEN_MASK) << SCHED_WORD_VAL_BITS |
           (val & SCHED_WORD_VAL_MASK);
}
static inline uint64_t sched_word_gen(uint64_t word)
{
    return word >> SCHED_WORD_VAL_BITS;
}
static inline uint64_t sched_word_val(uint64_t word)
{
    return word & SCHED_WORD_VAL_MASK;
}

struct sched_claim {
    int node;      /* where the word lives */
    int region;    /* comm region id */
    uint64_t off;  /* offset of the word */
    uint64_t gen;  /* this instance's generation */
    uint64_t *local; /* non-NULL: the word is in this process's memory
                        (a nested team's, runtime/nest.c): CPU atomics on
                        it, node/region/off unused */
};
/* dynamic: claims the next chunk index; returns 0 when the instance's
 * chunks are exhausted (nchunks). */
int sched_dynamic_next(const struct sched_claim *c, uint64_t nchunks,
                       uint64_t *chunk_index);
/* dynamic with one share of the chunks per node of the team (nodes
 * 0..nodes-1, this one self), counted by the word at c->off on each node:
 * own share first, then the others'.  *cursor starts at 0 per instance and
 * thread.  c->node is ignored. */
int sched_dynamic_next_spread(const struct sched_claim *c, int nodes, int self,
                              uint64_t nchunks, uint64_t *cursor,
                              uint64_t *chunk_index);
/* guided: claims [lo, hi) of at least min_chunk iterations, about
 * remaining / nthreads; 0 when done. */
int sched_guided_next(const struct sched_claim *c, uint64_t n,
                      uint64_t min_chunk, int nthreads, uint64_t *lo,
                      uint64_t *hi);
/* single: 1 for the first thread to claim the instance. */
int sched_single_claim(const struct sched_claim *c);

/* ---- profiled.c: the profiled schedule's arithmetic ---- */
/* The iterations [base, n) split among nthreads by a vector: with chunk 0
 * one block per thread in thread order, vec[t] iterations each (they sum
 * to n - base); with a chunk, cyclic rounds in which thread t takes the
 * next vec[t] iterations (0: none at all). */
enum { SCHED_PROF_MAX_THREADS = 4096 };
struct sched_prof_part {
    uint64_t base, n;
    uint64_t chunk;
    int nthreads;
    const uint64_t *vec;
};
/* The vector for weights (speeds; a weight that is not finite and positive
 * counts as 0; all 0 splits evenly).  Block: counts proportional to weight
 * (largest remainder, ties to the lower thread).  Cyclic: the slowest
 * thread with weight gets chunk a round, the others chunk x their weight
 * ratio to it, rounded, at least 1.  In both, a thread with weight gets
 * at least one iteration when there are as many as such threads, so that
 * its speed stays observable.  0 or -EINVAL. */
int sched_profiled_vector(uint64_t base, uint64_t n, uint64_t chunk,
                          int nthreads, const double *weight, uint64_t *vec);
/* Round `round` of thread tid (block: round 0 only): [*lo, *hi), or 0 when
 * the thread has no more. */
int sched_profiled_range(const struct sched_prof_part *p, int tid,
                         uint64_t round, uint64_t *lo, uint64_t *hi);
/* How many iterations thread tid runs in all. */
uint64_t sched_profiled_count(const struct sched_prof_part *p, int tid);
/* Predicted time of the partition: the longest count / speed (infinite when
 * a thread without speed has iterations). */
double sched_profiled_time(const struct sched_prof_part *p,
                           const double *speed);
/* Steps (1b)-(1e): should [base, n) be re-partitioned by the measured
 * speeds instead of the weights in use?  Yes when the predicted time with
 * the weights in use exceeds the one with the speeds by more than the
 * factor 1 + gain. */
struct sched_prof_in {
    uint64_t base, n, chunk;
    int nthreads;
    const double *speed;      /* measured, iterations per unit of time */
    const double *cur_weight; /* the partition in use */
    double gain;              /* threshold, e.g. 0.05; INFINITY: never */
    /* Gradual re-partitioning: the fraction of the way from the weights
     * in use to the measured speeds (both as shares of their sums) that a
     * re-partition goes; 0 or from 1 up: all the way. */
    double step;
};
struct sched_prof_out {
    int repartition;
    double t_old, t_new; /* predicted, in the speeds' unit of time */
    uint64_t *vec;       /* [nthreads]: the vector to use */
    double *weight;      /* [nthreads]: the weights it came from */
};
int sched_profiled_decide(const struct sched_prof_in *in,
                          struct sched_prof_out *out);
/* A re-partition judged by its result (the executions' sums of
 * OMPDSM_PROFILED_STALLS): the cost per execution (each execution's
 * longest thread time, stalls included) of the window after the move
 * against the window before it.  1: keep the move, when it made the
 * executions faster by more than the fraction margin (a move that only
 * chased noise, or a per-node cost that follows the split, is undone);
 * a cost before that is not positive and finite (none measured) keeps
 * it, a cost after that is not finite undoes it. */
int sched_profiled_keep(double cost_before, double cost_after, double margin);
/* The verdict on a split on trial, by the cost per execution of the
 * window after it (cost_now) against the window before it (cost_before,
 * the one before the move for trial 3 too).  trial 1, a move of the
 * sums: SCHED_PROF_CONFIRM when faster by more than margin (the move
 * stays, and the next window confirms it), else SCHED_PROF_UNDO.  trial
 * 3, a move on confirmation: SCHED_PROF_KEEP when this window too was
 * faster than the one before the move (by anything), else UNDO: one
 * window alone kept moves by luck where the cost is noise (a core shared
 * with a CPU hog).  trial 2, static's split on trial against a measured
 * one: KEEP (static's) unless the measured one was faster by the margin
 * (UNDO: back to it; a tie goes to static). */
enum { SCHED_PROF_KEEP, SCHED_PROF_UNDO, SCHED_PROF_CONFIRM };
/* How much longer the split by share[nthreads] (fractions summing to 1)
 * takes than the split by the speeds: max over threads of share / speed,
 * times the speeds' sum (1: balanced; INFINITY when a thread with a
 * share has no speed).  A move of the executions' sums is made when this
 * exceeds 1 + OMPDSM_PROFILED_GAIN, though it goes only half of
 * OMPDSM_PROFILED_STEP of the way: judged by the half step's gain, a
 * split within twice the gain of balance never moved (a node at 0.63 of
 * the other's speed kept 41.5% of the iterations, 13% longer than the
 * other, half a step to 38.7% promising 3.5%). */
double sched_profiled_imbalance(int nthreads, const double *share,
                                const double *speed);
int sched_profiled_judge(int trial, double cost_before, double cost_now,
                         double margin);
/* Windows of executions' sums to let pass without a move after `fails`
 * undone moves in a row: none after one (a noisy window), then
 * 2^(fails-1) - 1, at most SCHED_PROF_BACKOFF_MAX, so
 * that a pair whose per-node costs follow the split stops trying while
 * a node that becomes slow later is still re-balanced. */
enum { SCHED_PROF_BACKOFF_MAX = 15 };
int sched_profiled_backoff(int fails);
/* The speed estimate of the executions' sums: each window's per-thread
 * speeds go into a history of the last SCHED_PROF_HIST windows, and the
 * estimate is each thread's median over them, so that one window that a
 * burst dominated (another job's few milliseconds on a node's core, a
 * window of 20 ms) decides nothing, while a slowness that lasts, bursty
 * or steady, shows in most windows and is followed.  `hist` holds
 * SCHED_PROF_HIST rows of nthreads speeds; *n counts the windows in it
 * (at most SCHED_PROF_HIST), *next the row the next one goes to. */
enum { SCHED_PROF_HIST = 3 };
void sched_profiled_hist_add(double *hist, int *n, int *next, int nthreads,
                             const double *speed);
/* The estimate into est[nthreads]: 1 when the history is full, else 0
 * (too few windows to tell a burst from a slowness: no move yet). */
int sched_profiled_hist_estimate(const double *hist, int n, int nthreads,
                                 double *est);

#endif
