/*
 * is.c - integer sort (ranking) kernel, written for ompdsm from the NPB
 * specification (Bailey et al., RNR-94-007, kernel IS; classes as in the
 * NPB 2 report NAS-95-020).
 *
 * What it computes: N integer keys in [0, BMAX) are generated as
 *     k_i = floor(BMAX * (r_{4i+1} + r_{4i+2} + r_{4i+3} + r_{4i+4}) / 4)
 * from the specification's pseudorandom generator (seed 314159265, a = 5^13),
 * which gives a roughly Gaussian key distribution.  Then, for iteration
 * it = 1..10, keys it and it+10 are replaced by it and BMAX-it and all keys
 * are ranked: rank_of[v] = number of keys smaller than v, so key i has rank
 * rank_of[key[i]] (equal keys share the first position of their run).
 * Ranking is a two-level counting sort: keys are counted and scattered into
 * NBUCKET buckets by their high bits, then each bucket (a disjoint range of
 * key values) is counted exactly and prefix-summed on its own.  The keys are
 * roughly Gaussian, so buckets near the middle hold far more keys than those
 * at the ends: the per-bucket loop is deliberately unbalanced, which is what
 * makes its schedule worth choosing.
 *
 * Verification (all outside the timed region):
 *  - full: the keys are placed by their ranks (ties in index order); every
 *    key must land inside its value's rank range, every slot must be filled
 *    exactly once, and the placed sequence must be non-decreasing;
 *  - partial, per iteration: the ranks found for seven test keys (five fixed
 *    positions plus the two keys modified in that iteration) are compared to
 *    a brute-force count of smaller keys, an independent method.  The NPB
 *    specification documents we could find do not list per-class reference
 *    ranks, so no published rank values are used (see README.md).
 *
 * Build:  gcc -O2 -fopenmp -DCLASS=S is.c -o is -lm     (CLASS = S|W|A)
 * The per-bucket ranking loop is "schedule(runtime)"; the two loops over the
 * keys must be "schedule(static)" because the scatter relies on each thread
 * seeing the same keys it counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <omp.h>
#include "kernel.h"

#if CLASS_ID(CLASS) == 1
#define LOG_N 16
#define LOG_B 11
#elif CLASS_ID(CLASS) == 2
#define LOG_N 20
#define LOG_B 16
#elif CLASS_ID(CLASS) == 3
#define LOG_N 23
#define LOG_B 19
#else
#error "CLASS must be one of S, W, A"
#endif

#define NKEYS (1L << LOG_N)
#define BMAX (1 << LOG_B)
#define IMAX 10
#define NTEST 7
#define GEN_BLOCK 4096L          /* keys per generation task */

/* ---- the specification's pseudorandom generator (see ep.c) --------------- */
#define LCG_MASK ((1ULL << 46) - 1ULL)
#define LCG_A 1220703125ULL
#define TWO_M46 1.4210854715202004e-14

static unsigned long long lcg_mul(unsigned long long a, unsigned long long x)
{
    return (a * x) & LCG_MASK;
}

static unsigned long long lcg_pow(unsigned long long a, unsigned long long n)
{
    unsigned long long r = 1ULL;
    while (n) {
        if (n & 1ULL)
            r = lcg_mul(r, a);
        a = lcg_mul(a, a);
        n >>= 1;
    }
    return r;
}

static int key[NKEYS];
static int rank_of[BMAX + 1];   /* rank_of[v] = #keys < v; rank_of[BMAX] = N */
/* Buckets by the high bits of the key: 1024 of them, or one per key value
 * when there are fewer values than that. */
#if LOG_B > 10
#define LOG_NBUCKET 10
#else
#define LOG_NBUCKET LOG_B
#endif
#define NBUCKET (1 << LOG_NBUCKET)
#define BSHIFT (LOG_B - LOG_NBUCKET)
#define MAXTHREADS 256

static int key_buff2[NKEYS];                  /* keys grouped by bucket */
static int bucket_cnt[MAXTHREADS][NBUCKET];   /* per-thread bucket counts */
static int bucket_ptr[MAXTHREADS][NBUCKET];   /* per-thread scatter cursors */
static int bucket_base[NBUCKET + 1];          /* first slot of each bucket */
static int orig_head[2 * IMAX + 1];

/* Fixed test positions, away from the first 2*IMAX+1 modified keys. */
static const long test_pos[5] = {NKEYS / 7 + 3, NKEYS / 3 + 11, NKEYS / 2 + 5,
                                 (2 * NKEYS) / 3 + 17, NKEYS - 1 - NKEYS / 11};

static void make_keys(void)
{
    long b;
#pragma omp parallel for schedule(static)
    for (b = 0; b < NKEYS / GEN_BLOCK; b++) {
        /* Key i uses numbers 4i+1 .. 4i+4, so block b starts after 4*b*GEN_BLOCK. */
        unsigned long long x =
            lcg_mul(lcg_pow(LCG_A, 4ULL * (unsigned long long)(b * GEN_BLOCK)), 314159265ULL);
        long i;
        for (i = b * GEN_BLOCK; i < (b + 1) * GEN_BLOCK; i++) {
            double s = 0.0;
            int j;
            for (j = 0; j < 4; j++) {
                x = lcg_mul(LCG_A, x);
                s += (double)x * TWO_M46;
            }
            /* The sum of four 46-bit fractions is exact in double, so this
             * floor is reproducible everywhere. */
            key[i] = (int)(BMAX * (s / 4.0));
        }
    }
}

/* One ranking pass over the current keys. */
static void rank_keys(int it)
{
    key[it] = it;
    key[it + IMAX] = BMAX - it;

#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int *cnt = bucket_cnt[t], *ptr = bucket_ptr[t];
        long i;
        int b, tt;

        for (b = 0; b < NBUCKET; b++)
            cnt[b] = 0;
        /* Each thread counts only into its own row, so no barrier is
         * needed between clearing and counting. */
#pragma omp for schedule(static)
        for (i = 0; i < NKEYS; i++)
            cnt[key[i] >> BSHIFT]++;

        /* Bucket sizes, then (serially, NBUCKET steps) their start slots. */
#pragma omp for schedule(static)
        for (b = 0; b < NBUCKET; b++) {
            int c = 0;
            for (tt = 0; tt < nt; tt++)
                c += bucket_cnt[tt][b];
            bucket_base[b + 1] = c;
        }
#pragma omp single
        {
            bucket_base[0] = 0;
            for (b = 0; b < NBUCKET; b++)
                bucket_base[b + 1] += bucket_base[b];
        }
        /* Within a bucket, thread tt's keys follow those of threads < tt. */
#pragma omp for schedule(static)
        for (b = 0; b < NBUCKET; b++) {
            int pos = bucket_base[b];
            for (tt = 0; tt < nt; tt++) {
                bucket_ptr[tt][b] = pos;
                pos += bucket_cnt[tt][b];
            }
        }
        /* Same static schedule as the counting loop: every thread scatters
         * exactly the keys it counted. */
#pragma omp for schedule(static)
        for (i = 0; i < NKEYS; i++) {
            int k = key[i];
            key_buff2[ptr[k >> BSHIFT]++] = k;
        }

        /* Exact ranks, one bucket (a disjoint range of key values) at a time. */
#pragma omp for schedule(runtime)
        for (b = 0; b < NBUCKET; b++) {
            int lo = b << BSHIFT, hi = (b + 1) << BSHIFT, v, j, acc, c;
            for (v = lo; v < hi; v++)
                rank_of[v] = 0;
            for (j = bucket_base[b]; j < bucket_base[b + 1]; j++)
                rank_of[key_buff2[j]]++;
            acc = bucket_base[b];
            for (v = lo; v < hi; v++) {
                c = rank_of[v];
                rank_of[v] = acc;
                acc += c;
            }
        }
#pragma omp single
        rank_of[BMAX] = bucket_base[NBUCKET];
    }
}

/* Key value at position i as it was during iteration it (positions 1..it
 * and IMAX+1..IMAX+it have been overwritten by then). */
static int key_at(long i, int it)
{
    if (i >= 1 && i <= it)
        return (int)i;
    if (i > IMAX && i <= IMAX + it)
        return BMAX - (int)(i - IMAX);
    if (i <= 2 * IMAX)
        return orig_head[i];
    return key[i];
}

int main(void)
{
    int it, tt, nthreads = 1, ok = 1, partial_fail = 0;
    long i;
    long test_rank[IMAX + 1][NTEST], test_idx[IMAX + 1][NTEST];
    double t0, tm, mops;
    const char *sched = schedule_in_use();

    printf("\n\n NPB-specification IS kernel (ompdsm, OpenMP C)\n\n");
    printf(" Size: %ld (class %s)\n Iterations: %d\n", NKEYS, STR(CLASS), IMAX);

#pragma omp parallel
#pragma omp master
    nthreads = omp_get_num_threads();
    if (omp_get_max_threads() > MAXTHREADS) {
        fprintf(stderr, "at most %d threads are supported\n", MAXTHREADS);
        return 1;
    }

    make_keys();
    for (i = 0; i <= 2 * IMAX; i++)
        orig_head[i] = key[i];

    /* Untimed pass to touch all data; it sets exactly what iteration 1 sets. */
    rank_keys(1);

    t0 = omp_get_wtime();
    for (it = 1; it <= IMAX; it++) {
        rank_keys(it);
        /* Record (cheaply) the ranks of the test keys for later checking. */
        for (tt = 0; tt < 5; tt++)
            test_idx[it][tt] = test_pos[tt];
        test_idx[it][5] = it;
        test_idx[it][6] = it + IMAX;
        for (tt = 0; tt < NTEST; tt++)
            test_rank[it][tt] = rank_of[key[test_idx[it][tt]]];
    }
    tm = omp_get_wtime() - t0;
    if (tm <= 0.0) /* below clock resolution; keeps Mop/s finite */
        tm = 1.0e-9;

    /* Partial verification: brute-force count of smaller keys. */
    for (it = 1; it <= IMAX; it++) {
        long cnt[NTEST];
        int tv[NTEST];
        for (tt = 0; tt < NTEST; tt++) {
            cnt[tt] = 0;
            tv[tt] = key_at(test_idx[it][tt], it);
        }
        for (i = 0; i < NKEYS; i++) {
            int kv = key_at(i, it);
            for (tt = 0; tt < NTEST; tt++)
                cnt[tt] += (kv < tv[tt]);
        }
        for (tt = 0; tt < NTEST; tt++)
            if (cnt[tt] != test_rank[it][tt] && ++partial_fail <= 10) {
                printf(" Partial verification failed: iteration %d key %ld"
                       " rank %ld expected %ld\n",
                       it, test_idx[it][tt], test_rank[it][tt], cnt[tt]);
            }
    }
    printf(" Partial verification: %d of %d ranks wrong\n", partial_fail, IMAX * NTEST);
    if (partial_fail)
        ok = 0;

    /* Full verification: place every key by its rank. */
    {
        int *sorted = (int *)malloc(sizeof(int) * (size_t)NKEYS);
        int *next = (int *)malloc(sizeof(int) * (size_t)(BMAX + 1));
        long bad = 0;
        if (sorted == NULL || next == NULL) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        if (rank_of[BMAX] != NKEYS)
            bad++;
        for (i = 0; i < NKEYS; i++)
            sorted[i] = -1;
        for (i = 0; i <= BMAX; i++)
            next[i] = rank_of[i];
        for (i = 0; i < NKEYS && bad == 0; i++) {
            int v = key[i], pos = next[v]++;
            if (v < 0 || v >= BMAX || pos >= rank_of[v + 1] || pos >= NKEYS || sorted[pos] != -1)
                bad++;
            else
                sorted[pos] = v;
        }
        for (i = 0; i < NKEYS && bad == 0; i++)
            if (sorted[i] < 0 || (i > 0 && sorted[i - 1] > sorted[i]))
                bad++;
        printf(" Full verification: %s\n", bad ? "keys NOT sorted by rank" : "keys sorted by rank");
        if (bad)
            ok = 0;
        free(sorted);
        free(next);
    }

    mops = (double)IMAX * NKEYS / tm / 1.0e6;
    printf("\n IS Benchmark Completed.\n");
    printf("Class = %s\n", STR(CLASS));
    printf("Size = %ld\n", NKEYS);
    printf("Iterations = %d\n", IMAX);
    printf("Threads = %d\n", nthreads);
    printf("Schedule = %s\n", sched);
    printf("Time in seconds = %.6f\n", tm);
    printf("Mop/s total = %.2f\n", mops);
    printf("Operation type = keys ranked\n");
    printf("Verification = %s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
    return ok ? 0 : 1;
}
