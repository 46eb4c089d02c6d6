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
 * The shapes of issue 34 (lock and flush hand-offs between nodes):
 *   lockarray  NPB UA's mortar-point updates: N x 1024 counters, each
 *              with its own lock, split in blocks between the threads; in
 *              each of R rounds (a loop with its barrier) a thread adds 1
 *              under its lock to every counter of its block, and for one
 *              counter in 16 also to the counter at the same place in the
 *              next thread's block, so those locks go from thread to
 *              thread (node to node) twice a round
 *   wavefront  NPB LU's pipeline (sync_left/sync_right): R planes of N
 *              columns of 512 longs, the columns split in blocks between
 *              the threads; thread t waits with flushes for the flag
 *              thread t-1 sets after it computed its block of the plane,
 *              computes its own block from the plane before and its left
 *              neighbour's last column, and sets its own flag for t+1;
 *              a barrier every 30 planes (LU's sweeps over its 33
 *              planes); checked against the same planes computed
 *              serially
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

static int bench_lockarray(int reps, int n, long *check)
{
    int len = n * 1024;
    long *cnt = calloc((size_t)len, sizeof *cnt);
    omp_lock_t *locks = malloc(sizeof *locks * (size_t)len);
    int team = 1;
    for (int i = 0; i < len; i++)
        omp_init_lock(&locks[i]);
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp master
        team = nt;
        int blk = len / nt;
        for (int r = 0; r < reps; r++) {
#pragma omp for schedule(static)
            for (int i = 0; i < nt * blk; i++) {
                omp_set_lock(&locks[i]);
                cnt[i]++;
                omp_unset_lock(&locks[i]);
                if (i % 16 == 0 && nt > 1) {
                    int o = (i + blk) % (nt * blk);
                    omp_set_lock(&locks[o]);
                    cnt[o]++;
                    omp_unset_lock(&locks[o]);
                }
            }
            (void)t;
        }
    }
    long bad = 0, sum = 0;
    int used = len / team * team;
    for (int i = 0; i < len; i++) {
        long want = i >= used ? 0 : team > 1 && i % 16 == 0 ? 2L * reps : reps;
        bad += cnt[i] != want;
        sum += cnt[i];
        omp_destroy_lock(&locks[i]);
    }
    free(cnt);
    free(locks);
    *check = sum;
    return bad == 0;
}

enum { WF_ROWS = 512, WF_MAXT = 256, WF_PLANES = 3, WF_SWEEP = 30 };
static int wf_flag[WF_MAXT];

/* One cell of the wavefront: from the cell of the plane before and the
 * one to its left in this plane. */
static inline unsigned long wf_cell(unsigned long up, unsigned long left, long i)
{
    return up * 3 + left + (unsigned long)i;
}

/* Plane k of the wavefront's grid, [column][row] as NPB LU's v[k][j][i]
 * (a thread's block of columns is contiguous); three planes in turn,
 * enough for thread t to compute plane k + 2 while thread t + 1 still
 * reads t's last column of plane k. */
static void wf_plane(const unsigned long *up, unsigned long *cur, long c0, long c1)
{
    for (long j = c0; j < c1; j++)
        for (long i = 0; i < WF_ROWS; i++)
            cur[j * WF_ROWS + i] = wf_cell(up[j * WF_ROWS + i],
                                           j ? cur[(j - 1) * WF_ROWS + i] : 0, i);
}

static int bench_wavefront(int reps, int n, long *check)
{
    long cols = n, plane = cols * WF_ROWS;
    unsigned long *g = malloc(sizeof *g * (size_t)(WF_PLANES * plane));
    unsigned long *s = malloc(sizeof *s * (size_t)(WF_PLANES * plane));
    for (long x = 0; x < plane; x++)
        g[x] = s[x] = (unsigned long)x;
    memset(wf_flag, 0, sizeof wf_flag);
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        long c0 = cols * t / nt, c1 = cols * (t + 1) / nt;
        for (int k = 1; nt <= WF_MAXT && k <= reps; k++) {
            if (t > 0) { /* sync_left */
                while (wf_flag[t - 1] == 0) {
#pragma omp flush
                }
                wf_flag[t - 1] = 0;
#pragma omp flush
            }
            wf_plane(g + (k - 1) % WF_PLANES * plane, g + k % WF_PLANES * plane, c0, c1);
            if (t < nt - 1) { /* sync_right */
                while (wf_flag[t] == 1) {
#pragma omp flush
                }
                wf_flag[t] = 1;
#pragma omp flush
            }
            if (k % WF_SWEEP == 0) {
                /* (the end of LU's sweep: the next one starts together) */
#pragma omp barrier
            }
        }
    }
    /* The same planes serially. */
    for (int k = 1; k <= reps; k++)
        wf_plane(s + (k - 1) % WF_PLANES * plane, s + k % WF_PLANES * plane, 0, cols);
    const unsigned long *last = g + reps % WF_PLANES * plane,
                        *want = s + reps % WF_PLANES * plane;
    unsigned long sum = 0;
    long bad = 0;
    for (long x = 0; x < plane; x++) {
        bad += last[x] != want[x];
        sum += last[x];
    }
    free(s);
    free(g);
    *check = (long)(sum & 0x7fffffff);
    return bad == 0 && omp_get_max_threads() <= WF_MAXT;
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
    {"static", run_static},         {"tasks", bench_tasks},
    {"atomic", bench_atomic},       {"testpoll", bench_testpoll},
    {"lockarray", bench_lockarray}, {"wavefront", bench_wavefront},
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
