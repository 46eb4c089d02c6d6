/* sched/sched.h - loop schedules: how a loop's iterations 0..n-1 are split
 * among a team's threads.  Pure arithmetic for static schedules; chunk
 * claims with remote atomics (one compare-swap at the instance's home node,
 * never a central lock) for dynamic and guided.  The profiled schedule of
 * seed 000 lives here too. */
#ifndef OMPDSM_SCHED_H
#define OMPDSM_SCHED_H

#include <stdint.h>

/* static without chunk: the block of thread tid of nthreads, as libgomp
 * splits it (the first n % nthreads threads get one more). */
void sched_static_block(uint64_t n, int tid, int nthreads, uint64_t *lo,
                        uint64_t *hi);
/* static with chunk: round r of thread tid; 0 when past the end. */
int sched_static_chunk(uint64_t n, uint64_t chunk, int tid, int nthreads,
                       uint64_t round, uint64_t *lo, uint64_t *hi);

/* A claim word: generation (24 bits) | value (40 bits). */
struct sched_claim {
    int node;      /* where the word lives */
    int region;    /* comm region id */
    uint64_t off;  /* offset of the word */
    uint64_t gen;  /* this instance's generation */
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

#endif
