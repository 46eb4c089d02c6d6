/* bench/runtime/small.c - small OpenMP constructs executed very often, as
 * one OpenMP program built twice (by ompcc and by gcc -fopenmp) so that the
 * two can be timed side by side (bench/runtime/small.py):
 *
 *   collapse   R executions of a collapse(2) schedule(static,5) loop of
 *              N x N iterations whose body increments a shared element
 *              (the threads' chunks interleave within one page) and adds
 *              to a reduction
 *   loops      R short work-sharing loops (N iterations each, writing a
 *              shared array) with their implicit barriers
 *   copyprivate R single constructs with copyprivate of a private int
 *   testlock   every thread takes a lock R times by polling omp_test_lock
 *              and increments a shared counter under it
 *   nested     every thread of the team runs R nested parallel regions of
 *              2 threads (omp_set_nested(1)), each with a loop of N
 *              iterations summed in a reduction (the fork, the loop's
 *              barrier and the join of a team inside the node)
 *
 * usage: small NAME [R] [N]
 * Prints "NAME secs=S check=C": the wall time of the construct's loop on
 * thread 0, and a value the program checks itself (exit 1 when wrong). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double shared_a[4096];
static long counter;

static int hits[64][64];

static int bench_collapse(int reps, int n, long *check)
{
    if (n > 64)
        n = 64;
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        for (int r = 0; r < reps; r++) {
#pragma omp for collapse(2) schedule(static, 5)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    hits[i][j]++;
                    total += i ^ j;
                }
        }
    }
    long want = 0, bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            want += i ^ j;
            bad += hits[i][j] != reps;
        }
    *check = total;
    return total == want * reps && !bad;
}

static int bench_loops(int reps, int n, long *check)
{
    if (n > 4096)
        n = 4096;
#pragma omp parallel
    {
        for (int r = 0; r < reps; r++) {
#pragma omp for
            for (int i = 0; i < n; i++)
                shared_a[i] += 1.0;
        }
    }
    long s = 0;
    for (int i = 0; i < n; i++)
        s += (long)shared_a[i];
    *check = s;
    return s == (long)reps * n;
}

static int bench_copyprivate(int reps, long *check)
{
    long bad = 0, sum = 0;
#pragma omp parallel reduction(+ : bad, sum)
    {
        for (int r = 0; r < reps; r++) {
            int x;
#pragma omp single copyprivate(x)
            x = r * 3 + 1;
            if (x != r * 3 + 1)
                bad++;
            sum += x;
        }
    }
    *check = sum;
    return bad == 0;
}

static int bench_testlock(int reps, long *check)
{
    omp_lock_t l;
    int team = 1;
    omp_init_lock(&l);
    counter = 0;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
        for (int r = 0; r < reps; r++) {
            while (!omp_test_lock(&l)) {
                /* poll */
            }
            counter = counter + 1;
            omp_unset_lock(&l);
        }
    }
    omp_destroy_lock(&l);
    *check = counter;
    return counter == (long)reps * team;
}

static int bench_nested(int reps, int n, long *check)
{
    long total = 0, bad = 0;
    omp_set_nested(1);
    omp_set_max_active_levels(2);
#pragma omp parallel reduction(+ : total, bad)
    {
        for (int r = 0; r < reps; r++) {
            long s = 0;
#pragma omp parallel num_threads(2) reduction(+ : s)
            {
                if (omp_get_num_threads() != 2)
                    s += 1000000000L;
#pragma omp for
                for (int i = 0; i < n; i++)
                    s += i;
            }
            bad += s != (long)n * (n - 1) / 2;
            total += s;
        }
    }
    *check = total;
    return bad == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: small collapse|loops|copyprivate|testlock|"
                        "nested [REPS] [N]\n");
        return 2;
    }
    const char *name = argv[1];
    int reps = argc > 2 ? atoi(argv[2]) : 1000;
    int n = argc > 3 ? atoi(argv[3]) : 32;
    long check = 0;
    int ok;
    double t0 = omp_get_wtime();
    if (!strcmp(name, "collapse"))
        ok = bench_collapse(reps, n, &check);
    else if (!strcmp(name, "loops"))
        ok = bench_loops(reps, n, &check);
    else if (!strcmp(name, "copyprivate"))
        ok = bench_copyprivate(reps, &check);
    else if (!strcmp(name, "testlock"))
        ok = bench_testlock(reps, &check);
    else if (!strcmp(name, "nested"))
        ok = bench_nested(reps, n, &check);
    else {
        fprintf(stderr, "small: unknown benchmark '%s' (collapse, loops, "
                        "copyprivate, testlock, nested)\n", name);
        return 2;
    }
    double secs = omp_get_wtime() - t0;
    printf("%s secs=%.6f check=%ld reps=%d n=%d\n", name, secs, check, reps, n);
    if (!ok) {
        printf("%s: FAILED self-check\n", name);
        return 1;
    }
    return 0;
}
