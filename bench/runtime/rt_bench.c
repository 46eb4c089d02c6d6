/* bench/runtime/rt_bench.c - costs of the OpenMP runtime on the active
 * transport, written against the ABI directly (no translator), all timed
 * on node 0 and each the median of --reps repetitions:
 *
 *   region     fork + join of an empty parallel region (back to back,
 *              --regions per repetition)
 *   barrier    OMPDSM_barrier inside a region (--barriers back to back)
 *   chunk_*    per-chunk cost of schedule(static,1), (dynamic,1) and
 *              (guided,1) on a loop of --chunks iterations whose body
 *              busy-waits --body-us: the threads' total time in the loop
 *              outside the bodies divided by the total number of chunks
 *   ep_*       an EP-like loop (ep_work.h: --ep-batches batches of
 *              --ep-steps floating-point steps, no shared data, one sum
 *              reduction) under schedule(static), (dynamic) and (guided):
 *              (chunk --ep-chunk for dynamic and guided, default none):
 *              wall time from a barrier before the loop to the loop's end
 *
 * Output: one line per repetition, then machine-readable lines
 *   RESULT transport=T nodes=N name=X unit=U median=.. min=.. max=.. reps=K
 * and the ratios of this run (region/barrier, ep_dynamic/ep_static,
 * ep_guided/ep_static) as RATIO lines.  bench/runtime/run.py runs the
 * matrix and prints the tables. */
#include "ompdsm_abi.h"
#include "omp.h"
#include "ep_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXREPS = 64 };

struct opts {
    int reps, regions, barriers, chunks, body_us, ep_batches, ep_steps;
    int ep_chunk; /* chunk of the EP-like loop's dynamic and guided; 0: none */
};

/* ---- regions and their frames ---- */
static void region_empty(void *fp) { (void)fp; }

struct frame_bar {
    int n;
    double *out; /* shared local: seconds per barrier, from thread 0 */
};
static void region_barrier(void *fp)
{
    struct frame_bar *f = fp;
    OMPDSM_barrier();
    double t0 = omp_get_wtime();
    for (int i = 0; i < f->n; i++)
        OMPDSM_barrier();
    if (omp_get_thread_num() == 0)
        *f->out = (omp_get_wtime() - t0) / f->n;
}

static OMPDSM_loop_site site_chunks = {"rt_bench.c", 60, "region_chunks", 0};
struct frame_chunks {
    int sched;
    unsigned long long n;
    double body_us;       /* busy time per chunk */
    double *secs;         /* reduction: the threads' time outside bodies */
    long long *chunks;    /* reduction: chunks run by all threads */
};
/* Each chunk (one iteration) busy-waits body_us, so that every thread takes
 * part.  Each thread times its whole claiming loop (including its last,
 * empty claim) minus its bodies; the cost per chunk is the threads' total
 * over the total number of chunks. */
static void region_chunks(void *fp)
{
    struct frame_chunks *f = fp;
    double secs, body = 0;
    long long c;
    OMPDSM_reduce_init(&secs, OMPDSM_TY_F64, OMPDSM_OP_ADD);
    OMPDSM_reduce_init(&c, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_barrier();
    double t0 = omp_get_wtime();
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site_chunks, f->n, f->sched, 1, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi)) {
        c++;
        double b0 = omp_get_wtime(), b1;
        do
            b1 = omp_get_wtime();
        while ((b1 - b0) * 1e6 < f->body_us * (double)(hi - lo));
        body += b1 - b0;
    }
    secs = omp_get_wtime() - t0 - body;
    OMPDSM_red r[2] = {{f->secs, &secs, OMPDSM_TY_F64, OMPDSM_OP_ADD},
                       {f->chunks, &c, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 2);
    OMPDSM_loop_end(&L, 0);
}

static OMPDSM_loop_site site_ep = {"rt_bench.c", 90, "region_ep", 0};
struct frame_ep {
    int sched;
    int chunk;
    int batches, steps;
    double *sum;   /* reduction target */
    double *secs;  /* wall time seen by thread 0 */
};
static void region_ep(void *fp)
{
    struct frame_ep *f = fp;
    OMPDSM_barrier();
    double t0 = omp_get_wtime();
    double s;
    OMPDSM_reduce_init(&s, OMPDSM_TY_F64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site_ep, (unsigned long long)f->batches, f->sched,
                     f->sched == OMPDSM_SCHED_STATIC ? 0 : f->chunk, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            s += ep_batch((long)k, f->steps);
    OMPDSM_red r[1] = {{f->sum, &s, OMPDSM_TY_F64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
    OMPDSM_loop_end(&L, 0);
    if (omp_get_thread_num() == 0)
        *f->secs = omp_get_wtime() - t0;
}

static OMPDSM_region rd_empty = {region_empty, "rt_bench.c:40 (main)", 0};
static OMPDSM_region rd_barrier = {region_barrier, "rt_bench.c:45 (main)", 0};
static OMPDSM_region rd_chunks = {region_chunks, "rt_bench.c:60 (main)", 0};
static OMPDSM_region rd_ep = {region_ep, "rt_bench.c:90 (main)", 0};
static OMPDSM_region *regions[] = {&rd_empty, &rd_barrier, &rd_chunks, &rd_ep};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_bench.c", 0, 0, 0, regions,
                           4, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

/* ---- statistics ---- */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *transport;
static int nodes;
static double med_of[16];

static void result(int idx, const char *name, const char *unit_, double *v,
                   int n, double scale)
{
    printf("%-12s", name);
    for (int i = 0; i < n; i++)
        printf(" %.3f", v[i] * scale);
    printf("  (%s)\n", unit_);
    double m = median(v, n) * scale;
    med_of[idx] = m;
    printf("RESULT transport=%s nodes=%d name=%s unit=%s median=%.4f min=%.4f "
           "max=%.4f reps=%d\n", transport, nodes, name, unit_, m,
           v[0] * scale, v[n - 1] * scale, n);
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)envp;
    struct opts o = {7, 400, 400, 2000, 20, EP_BATCHES, EP_STEPS, 0};
    for (int i = 1; i < argc; i++) {
        int *dst = !strcmp(argv[i], "--reps") ? &o.reps
                 : !strcmp(argv[i], "--regions") ? &o.regions
                 : !strcmp(argv[i], "--barriers") ? &o.barriers
                 : !strcmp(argv[i], "--chunks") ? &o.chunks
                 : !strcmp(argv[i], "--body-us") ? &o.body_us
                 : !strcmp(argv[i], "--ep-batches") ? &o.ep_batches
                 : !strcmp(argv[i], "--ep-steps") ? &o.ep_steps
                 : !strcmp(argv[i], "--ep-chunk") ? &o.ep_chunk : NULL;
        if (!dst || i + 1 >= argc || (*dst = atoi(argv[++i])) < 0 ||
            (*dst == 0 && dst != &o.ep_chunk)) {
            fprintf(stderr, "usage: rt_bench [--reps K] [--regions R] "
                            "[--barriers B] [--chunks N] [--body-us U] "
                            "[--ep-batches NB] [--ep-steps S] "
                            "[--ep-chunk C]\n");
            return 2;
        }
    }
    if (o.reps > MAXREPS)
        o.reps = MAXREPS;
    transport = getenv("OMPDSM_TRANSPORT") ? getenv("OMPDSM_TRANSPORT") : "auto";
    nodes = omp_get_max_threads();
    printf("rt_bench: transport=%s nodes=%d reps=%d regions=%d barriers=%d "
           "chunks=%d body=%dus ep=%dx%d ep_chunk=%d\n", transport, nodes,
           o.reps, o.regions, o.barriers, o.chunks, o.body_us, o.ep_batches,
           o.ep_steps, o.ep_chunk);

    double *out = OMPDSM_local_alloc(sizeof(double), 8, 0);
    long long *c0 = OMPDSM_local_alloc(sizeof(long long), 8, 0);
    double *sum = OMPDSM_local_alloc(sizeof(double), 8, 0);
    double v[MAXREPS];

    /* warm-up: pages, connections, code */
    for (int i = 0; i < 20; i++)
        OMPDSM_parallel(&rd_empty, NULL, 0, 0, 1);

    for (int r = 0; r < o.reps; r++) {
        double t0 = omp_get_wtime();
        for (int i = 0; i < o.regions; i++)
            OMPDSM_parallel(&rd_empty, NULL, 0, 0, 1);
        v[r] = (omp_get_wtime() - t0) / o.regions;
    }
    result(0, "region", "us", v, o.reps, 1e6);

    for (int r = 0; r < o.reps; r++) {
        struct frame_bar f = {o.barriers, out};
        OMPDSM_parallel(&rd_barrier, &f, sizeof f, 0, 1);
        v[r] = *out;
    }
    result(1, "barrier", "us", v, o.reps, 1e6);

    static const struct { int sched; const char *name; } sch[3] = {
        {OMPDSM_SCHED_STATIC, "chunk_static"},
        {OMPDSM_SCHED_DYNAMIC, "chunk_dynamic"},
        {OMPDSM_SCHED_GUIDED, "chunk_guided"},
    };
    for (int s = 0; s < 3; s++) {
        long long chunks = 0;
        for (int r = 0; r < o.reps; r++) {
            *out = 0;
            *c0 = 0;
            struct frame_chunks f = {sch[s].sched, (unsigned long long)o.chunks,
                                     (double)o.body_us, out, c0};
            OMPDSM_parallel(&rd_chunks, &f, sizeof f, 0, 1);
            chunks = *c0;
            v[r] = chunks ? *out / (double)chunks : 0;
        }
        result(2 + s, sch[s].name, "us", v, o.reps, 1e6);
        printf("  (%s: %lld chunks for %d iterations)\n", sch[s].name,
               chunks, o.chunks);
    }

    static const struct { int sched; const char *name; } eps[3] = {
        {OMPDSM_SCHED_STATIC, "ep_static"},
        {OMPDSM_SCHED_DYNAMIC, "ep_dynamic"},
        {OMPDSM_SCHED_GUIDED, "ep_guided"},
    };
    /* The schedules take turns within each repetition, so that a change in
     * the machine's load hits all three alike. */
    double sums[3] = {0, 0, 0}, ev[3][MAXREPS];
    for (int r = 0; r < o.reps; r++)
        for (int s = 0; s < 3; s++) {
            *sum = 0;
            struct frame_ep f = {eps[s].sched, o.ep_chunk, o.ep_batches,
                                 o.ep_steps, sum, out};
            OMPDSM_parallel(&rd_ep, &f, sizeof f, 0, 1);
            ev[s][r] = *out;
            sums[s] = *sum;
        }
    for (int s = 0; s < 3; s++)
        result(5 + s, eps[s].name, "ms", ev[s], o.reps, 1e3);
    printf("ep checksums: static %.12g dynamic %.12g guided %.12g\n", sums[0],
           sums[1], sums[2]);
    int bad = fabs(sums[1] - sums[0]) > 1e-9 * fabs(sums[0]) ||
              fabs(sums[2] - sums[0]) > 1e-9 * fabs(sums[0]);
    printf("RATIO transport=%s nodes=%d region_per_barrier=%.3f "
           "ep_dynamic_per_static=%.4f ep_guided_per_static=%.4f\n", transport,
           nodes, med_of[0] / med_of[1], med_of[6] / med_of[5],
           med_of[7] / med_of[5]);
    if (bad)
        printf("ERROR: the schedules' checksums differ\n");
    OMPDSM_local_free(&sum);
    OMPDSM_local_free(&c0);
    OMPDSM_local_free(&out);
    return bad;
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
