/* bench/harness/duty.c - a slower CPU for the heterogeneous benchmarks:
 * a real-time duty cycle that takes a fixed share of one CPU in slices
 * short against a loop's execution (slownode.py, method "duty").
 *
 *   bench_duty CPU PERIOD_US BUSY_US
 *
 * Bound to CPU, at SCHED_FIFO priority 1, it busy-waits BUSY_US at the
 * start of every PERIOD_US and sleeps (an absolute-time clock_nanosleep)
 * for the rest, so whatever else is bound to CPU (node 1 of a run, or
 * native thread 1) gets PERIOD_US - BUSY_US of every PERIOD_US: with 200
 * of 400 us, half the CPU in 200 us slices, so every execution of a loop
 * of 1 ms or more runs at about half speed, as on a slower CPU.  A cgroup
 * quota (method "cgroup") gives the same share over its 10 ms period in
 * one piece: a loop runs at full speed until the quota is used, then
 * stops for up to 5 ms, wherever it is (docs/performance.md, "A slower
 * CPU").  A thread that sleeps loses nothing to it, as on a slower CPU.
 *
 * Needs CAP_SYS_NICE (root) for SCHED_FIFO: without it, it says so and
 * exits 1 (the harness then stops).  It dies with its parent
 * (PR_SET_PDEATHSIG) and on SIGTERM/SIGKILL.  Not a test. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long arg(const char *s, const char *what, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "bench_duty: %s must be an integer from %ld to %ld, not '%s'\n",
                what, lo, hi, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_duty CPU PERIOD_US BUSY_US\n");
        return 2;
    }
    int cpu = (int)arg(argv[1], "CPU", 0, CPU_SETSIZE - 1);
    long long period = arg(argv[2], "PERIOD_US", 50, 1000000) * 1000LL;
    long long busy = arg(argv[3], "BUSY_US", 1, 1000000) * 1000LL;
    if (busy >= period) {
        fprintf(stderr, "bench_duty: BUSY_US must be less than PERIOD_US\n");
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 0; /* the parent is already gone */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        fprintf(stderr, "bench_duty: cannot bind to CPU %d: %s\n", cpu, strerror(errno));
        return 1;
    }
    struct sched_param sp = {.sched_priority = 1};
    if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
        fprintf(stderr, "bench_duty: SCHED_FIFO refused (%s): run as root, or use "
                        "--slow-method cgroup or hog\n", strerror(errno));
        return 1;
    }
    mlockall(MCL_CURRENT | MCL_FUTURE); /* best effort: no page fault inside a slice */
    long long next = now_ns();
    for (;;) {
        long long start = next;
        while (now_ns() < start + busy)
            ;
        next += period;
        long long t = now_ns();
        if (next < t)
            next = t; /* woken late: no catching up, the share stays busy/period */
        struct timespec ts = {(time_t)(next / 1000000000LL), (long)(next % 1000000000LL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
}
