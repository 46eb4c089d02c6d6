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
 * The shapes of the public test suites' slow tests (issue 36), R
 * repetitions of each:
 *   ordered    a collapse(2) schedule(static,1) ordered nest of N x N
 *              iterations whose ordered region checks and sets a shared
 *              static and adds to a shared sum
 *   cpcrit     N times: single copyprivate of a threadprivate, a critical
 *              adding it to a shared total, a barrier
 *   guided     a schedule(guided) nowait loop of N iterations where each
 *              iteration publishes its number under a critical and its
 *              thread then polls with flushes and 0.1 ms sleeps until
 *              another thread publishes a larger one (at most 5 ms)
 *   static     the same with schedule(static,7) and 0.5 ms sleeps (at
 *              most 10 ms)
 *   tasks      one thread creates 25 tasks with firstprivate and 25 with
 *              private data, each summing N terms with a flush per term
 *   atomic     parallel loops of N iterations, each an omp atomic on a
 *              shared variable: += and -= on int and double, *= and /=,
 *              ++ and --, &=, |=, ^=, <<= and >>=
 *   testpoll   a loop of N iterations, each polling omp_test_lock, two
 *              flushes and shared counters under the lock
 *
 * usage: small NAME [R] [N]
 * Prints "NAME secs=S check=C": the wall time of the construct's loop on
 * thread 0, and a value the program checks itself (exit 1 when wrong). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

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

static int last_i;

static int bench_ordered(int reps, int n, long *check)
{
    long bad = 0, total = 0;
    for (int r = 0; r < reps; r++) {
        long sum = 0;
        last_i = 0;
#pragma omp parallel reduction(+ : bad)
        {
            int ok = 1;
#pragma omp for collapse(2) schedule(static, 1) ordered
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
#pragma omp ordered
                    {
                        ok = ok && i >= last_i;
                        last_i = i;
                        sum += i;
                    }
                }
            bad += !ok;
        }
        bad += sum != (long)n * n * (n - 1) / 2;
        total += sum;
    }
    *check = total;
    return bad == 0;
}

static int tp_j;
#pragma omp threadprivate(tp_j)

static int bench_cpcrit(int reps, int n, long *check)
{
    long bad = 0, total = 0;
    for (int r = 0; r < reps; r++) {
        long result = 0;
        int singles = 0;
#pragma omp parallel
        {
            for (int i = 0; i < n; i++) {
#pragma omp single copyprivate(tp_j)
                {
                    singles++;
                    tp_j = i;
                }
#pragma omp critical
                result += tp_j - i;
#pragma omp barrier
            }
        }
        bad += result != 0 || singles != n;
        total += singles;
    }
    *check = total;
    return bad == 0;
}

static void sleep_s(double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

/* One iteration of the handshake of guided and static: publish j as the
 * largest iteration begun, then wait (flushing) for another thread to
 * begin a larger one, at most max_s. */
static void handshake(int j, int *maxiter, int *notout, double nap,
                      double max_s)
{
    double waited = 0;
#pragma omp flush
    if (j > *maxiter) {
#pragma omp critical
        *maxiter = j;
    }
#pragma omp flush
    while (*notout && waited < max_s && *maxiter == j) {
#pragma omp flush
        sleep_s(nap);
        waited += nap;
    }
}

static int bench_handshake(int reps, int n, int guided, long *check)
{
    int *tids = malloc(sizeof(int) * (size_t)n);
    long bad = 0, total = 0;
    for (int r = 0; r < reps; r++) {
        int maxiter = 0, notout = 1;
        for (int j = 0; j < n; j++)
            tids[j] = -1;
#pragma omp parallel
        {
            int tid = omp_get_thread_num();
            if (guided) {
#pragma omp for nowait schedule(guided)
                for (int j = 0; j < n; j++) {
                    handshake(j, &maxiter, &notout, 0.0001, 0.005);
                    tids[j] = tid;
                }
            } else {
#pragma omp for nowait schedule(static, 7)
                for (int j = 0; j < n; j++) {
                    handshake(j, &maxiter, &notout, 0.0005, 0.01);
                    tids[j] = tid;
                }
            }
            notout = 0;
#pragma omp flush
        }
        for (int j = 0; j < n; j++) {
            bad += tids[j] < 0;
            total += tids[j];
        }
    }
    free(tids);
    *check = total;
    return bad == 0;
}

/* (Left out of the build without tasks: a program with a task construct
 * anywhere sends every barrier of every region through the task arrival
 * phase, and each public suite test is a program of its own.) */
#ifndef SMALL_NO_TASKS
static int bench_tasks(int reps, int n, long *check)
{
    long want = (long)n * (n + 1) / 2, wrong = 0;
    for (int r = 0; r < reps; r++) {
        long sum = 1234;
#pragma omp parallel
#pragma omp single
        {
            for (int t = 0; t < 25; t++) {
#pragma omp task firstprivate(sum)
                {
                    for (int j = 0; j <= n; j++) {
#pragma omp flush
                        sum += j;
                    }
                    if (sum != 1234 + want) {
#pragma omp atomic
                        wrong++;
                    }
                }
#pragma omp task private(sum)
                {
                    sum = 0;
                    for (int j = 0; j <= n; j++) {
#pragma omp flush
                        sum += j;
                    }
                    if (sum != want) {
#pragma omp atomic
                        wrong++;
                    }
                }
            }
        }
    }
    *check = wrong;
    return wrong == 0;
}
#endif

static int bench_atomic(int reps, int n, long *check)
{
    long bad = 0;
    int *bits = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < reps; r++) {
        int sum = 0, diff = 0, x = 0, prod = 1, band = 1, bor = 0, bxor = 0;
        double dsum = 0, ddiv = 5.0e5;
        for (int i = 0; i < n; i++)
            bits[i] = i == n / 2;
#pragma omp parallel
        {
#pragma omp for
            for (int i = 1; i <= n; i++) {
#pragma omp atomic
                sum += i;
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                diff -= i;
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                dsum += 0.5;
            }
#pragma omp for
            for (int i = 1; i <= 10; i++) {
#pragma omp atomic
                prod *= i;
            }
#pragma omp for
            for (int i = 1; i <= 10; i++) {
#pragma omp atomic
                ddiv /= i;
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                x++;
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                x--;
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                band &= !bits[i];
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                bor |= bits[i];
            }
#pragma omp for
            for (int i = 0; i < n; i++) {
#pragma omp atomic
                bxor ^= bits[i];
            }
#pragma omp for
            for (int i = 0; i < 10; i++) {
#pragma omp atomic
                x <<= 1;
            }
        }
        bad += sum != n * (n + 1) / 2 || diff != -(n * (n - 1) / 2) ||
               dsum != 0.5 * n || prod != 3628800 ||
               ddiv < 0.1377 || ddiv > 0.1378 || x != 0 ||
               band != (n <= n / 2) || bor != (n > n / 2) ||
               bxor != (n > n / 2);
        *check += sum;
    }
    free(bits);
    return bad == 0;
}

static omp_lock_t poll_lock;

static int bench_testpoll(int reps, int n, long *check)
{
    long bad = 0, total = 0;
    for (int r = 0; r < reps; r++) {
        int inside = 0, iters = 0, result = 0;
        omp_init_lock(&poll_lock);
#pragma omp parallel
        {
#pragma omp for
            for (int i = 0; i < n; i++) {
                while (!omp_test_lock(&poll_lock)) {
                    /* poll */
                }
#pragma omp flush
                inside++;
#pragma omp flush
                iters++;
                inside--;
                result += inside;
                omp_unset_lock(&poll_lock);
            }
        }
        omp_destroy_lock(&poll_lock);
        bad += result != 0 || iters != n;
        total += iters;
    }
    *check = total;
    return bad == 0;
}

static int run_copyprivate(int reps, int n, long *check)
{
    (void)n;
    return bench_copyprivate(reps, check);
}
static int run_testlock(int reps, int n, long *check)
{
    (void)n;
    return bench_testlock(reps, check);
}
static int run_guided(int reps, int n, long *check)
{
    return bench_handshake(reps, n, 1, check);
}
static int run_static(int reps, int n, long *check)
{
    return bench_handshake(reps, n, 0, check);
}

static const struct {
    const char *name;
    int (*run)(int reps, int n, long *check);
} benches[] = {
    {"collapse", bench_collapse},   {"loops", bench_loops},
    {"copyprivate", run_copyprivate}, {"testlock", run_testlock},
    {"nested", bench_nested},       {"ordered", bench_ordered},
    {"cpcrit", bench_cpcrit},       {"guided", run_guided},
    {"static", run_static},
#ifndef SMALL_NO_TASKS
    {"tasks", bench_tasks},
#endif
    {"atomic", bench_atomic},       {"testpoll", bench_testpoll},
};
enum { NBENCH = sizeof benches / sizeof benches[0] };

static void usage(const char *what)
{
    fprintf(stderr, "small: %s; usage: small NAME [REPS] [N], NAME one of:",
            what);
    for (int i = 0; i < NBENCH; i++)
        fprintf(stderr, " %s", benches[i].name);
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage("no benchmark named");
        return 2;
    }
    const char *name = argv[1];
    int reps = argc > 2 ? atoi(argv[2]) : 1000;
    int n = argc > 3 ? atoi(argv[3]) : 32;
    long check = 0;
    int b = 0;
    while (b < NBENCH && strcmp(name, benches[b].name))
        b++;
    if (b == NBENCH) {
        usage("unknown benchmark");
        return 2;
    }
    double t0 = omp_get_wtime();
    int ok = benches[b].run(reps, n, &check);
    double secs = omp_get_wtime() - t0;
    printf("%s secs=%.6f check=%ld reps=%d n=%d\n", name, secs, check, reps, n);
    if (!ok) {
        printf("%s: FAILED self-check\n", name);
        return 1;
    }
    return 0;
}
