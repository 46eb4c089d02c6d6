/* bench/runtime/ep_omp.c - the EP-like loop of rt_bench (ep_work.h) as a
 * plain OpenMP program built with gcc -fopenmp (libgomp), for reference:
 * the same batches under schedule(static), (dynamic) and (guided) through
 * schedule(runtime), OMP_NUM_THREADS threads, the median of --reps
 * repetitions.  Prints the same RESULT lines as rt_bench with
 * transport=gcc-openmp and nodes = the number of threads. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep_work.h"

enum { MAXREPS = 64 };

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = 7, batches = EP_BATCHES, steps = EP_STEPS;
    for (int i = 1; i < argc; i++) {
        int *dst = !strcmp(argv[i], "--reps") ? &reps
                 : !strcmp(argv[i], "--ep-batches") ? &batches
                 : !strcmp(argv[i], "--ep-steps") ? &steps : NULL;
        if (!dst || i + 1 >= argc || (*dst = atoi(argv[++i])) < 1) {
            fprintf(stderr, "usage: ep_omp [--reps K] [--ep-batches NB] "
                            "[--ep-steps S]\n");
            return 2;
        }
    }
    if (reps > MAXREPS)
        reps = MAXREPS;
    int threads = omp_get_max_threads();
    printf("ep_omp: threads=%d reps=%d ep=%dx%d\n", threads, reps, batches,
           steps);
    static const struct { omp_sched_t kind; const char *name; } sch[3] = {
        {omp_sched_static, "ep_static"},
        {omp_sched_dynamic, "ep_dynamic"},
        {omp_sched_guided, "ep_guided"},
    };
    /* The schedules take turns within each repetition (as in rt_bench). */
    double med[3], sums[3], v[3][MAXREPS];
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < 3; s++) {
            omp_set_schedule(sch[s].kind, 0);
            double sum = 0, t0 = omp_get_wtime();
#pragma omp parallel for schedule(runtime) reduction(+ : sum)
            for (int k = 0; k < batches; k++)
                sum += ep_batch(k, steps);
            v[s][r] = omp_get_wtime() - t0;
            sums[s] = sum;
        }
    for (int s = 0; s < 3; s++) {
        printf("%-12s", sch[s].name);
        for (int r = 0; r < reps; r++)
            printf(" %.3f", v[s][r] * 1e3);
        printf("  (ms)\n");
        qsort(v[s], (size_t)reps, sizeof *v[s], cmp_d);
        med[s] = reps % 2 ? v[s][reps / 2]
                          : (v[s][reps / 2 - 1] + v[s][reps / 2]) / 2;
        printf("RESULT transport=gcc-openmp nodes=%d name=%s unit=ms "
               "median=%.4f min=%.4f max=%.4f reps=%d\n", threads, sch[s].name,
               med[s] * 1e3, v[s][0] * 1e3, v[s][reps - 1] * 1e3, reps);
    }
    printf("ep checksums: static %.12g dynamic %.12g guided %.12g\n", sums[0],
           sums[1], sums[2]);
    printf("RATIO transport=gcc-openmp nodes=%d ep_dynamic_per_static=%.4f "
           "ep_guided_per_static=%.4f\n", threads, med[1] / med[0],
           med[2] / med[0]);
    return fabs(sums[1] - sums[0]) > 1e-9 * fabs(sums[0]) ||
           fabs(sums[2] - sums[0]) > 1e-9 * fabs(sums[0]);
}
