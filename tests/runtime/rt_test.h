/* tests/runtime/rt_test.h - scaffolding shared by the runtime ABI tests: a
 * failure counter in shared memory (its own translation unit, registered
 * the way ompcc registers one), check macros, a watchdog, and the summary.
 *
 * Every test is a hand-written program in the shape ompcc generates
 * (shared globals as pointers in an OMPDSM_unit, outlined regions taking a
 * frame, OMPDSM_main).  A failed check on any node prints a `FAIL:` line
 * at once and adds one to the shared counter with OMPDSM_atomic; node 0
 * reads the counter after the last join, prints one summary line and
 * returns 1 if anything failed.  run_rt.py also fails a run whose output
 * holds a `FAIL:` line, so a broken counter cannot hide a failure. */
#ifndef RT_TEST_H
#define RT_TEST_H

#include "ompdsm_abi.h"
#include "omp.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the shared failure counter: a unit of its own ---- */
static long long *rtt_fails_g;
static OMPDSM_global rtt_globals[] = {
    {(void **)&rtt_fails_g, sizeof(long long), __alignof__(long long),
     "rtt_fails"},
};
static OMPDSM_unit rtt_unit = {OMPDSM_ABI_VERSION, "rt_test.h", rtt_globals, 1,
                               0, 0, 0, 0, 0, 0};
__attribute__((constructor)) static void rtt_register(void)
{
    OMPDSM_register_unit(&rtt_unit);
}

extern char *program_invocation_short_name;
static const char *rtt_name;
static long rtt_local_fails; /* this node's */
static long rtt_checks;      /* this node's */
static volatile const char *rtt_phase_name = "start";
static unsigned rtt_watchdog_s;

static void rtt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rtt_fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rtt_local_fails++ < 25) {
        const char *rank = getenv("OMPDSM_RANK");
        /* Only node 0 knows the phase (the serial part names it). */
        printf("FAIL: %s [node %s, thread %d%s%s]: %s\n",
               rtt_name ? rtt_name : program_invocation_short_name,
               rank ? rank : "0", omp_get_thread_num(),
               rtt_name ? ", phase " : "",
               rtt_name ? (const char *)rtt_phase_name : "", msg);
        fflush(stdout);
    }
    long long one = 1;
    OMPDSM_atomic(rtt_fails_g, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
}

/* CHECK(cond, fmt, ...): counts the check, reports it when false. */
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        rtt_checks++;                                                          \
        if (!(cond))                                                           \
            rtt_fail(__VA_ARGS__);                                             \
    } while (0)
#define CHECK_EQ_LL(got, want, what)                                           \
    do {                                                                       \
        long long g_ = (long long)(got), w_ = (long long)(want);               \
        CHECK(g_ == w_, "%s: got %lld, expected %lld", (what), g_, w_);        \
    } while (0)
#define CHECK_EQ_ULL(got, want, what)                                          \
    do {                                                                       \
        unsigned long long g_ = (unsigned long long)(got),                     \
                           w_ = (unsigned long long)(want);                    \
        CHECK(g_ == w_, "%s: got %llu, expected %llu", (what), g_, w_);        \
    } while (0)

static void rtt_on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "FAIL: %s: watchdog: phase '%s' did not finish within "
                     "%u s (hang)\n",
                     rtt_name, (const char *)rtt_phase_name, rtt_watchdog_s);
    if (n > 0)
        (void)!write(1, msg, (size_t)n);
    _exit(1);
}

/* Node 0, serial part: names the test and arms the watchdog. */
static void rtt_begin(const char *name, unsigned seconds)
{
    rtt_name = name;
    rtt_watchdog_s = seconds;
    signal(SIGALRM, rtt_on_alarm);
    alarm(seconds);
}

/* Names the phase the watchdog reports if it fires. */
static void rtt_phase(const char *phase)
{
    rtt_phase_name = phase;
}

/* Node 0, serial part, after the last join: the summary and exit status. */
static int rtt_end(const char *details)
{
    alarm(0);
    long long fails = *rtt_fails_g;
    if (!fails && rtt_local_fails)
        fails = rtt_local_fails;
    if (fails)
        printf("%s: np=%d %s: FAILED (%lld failed checks)\n", rtt_name,
               omp_get_thread_limit(), details ? details : "", fails);
    else
        printf("%s: np=%d %s: ok\n", rtt_name, omp_get_thread_limit(),
               details ? details : "");
    fflush(stdout);
    return fails ? 1 : 0;
}

/* Node number (0 .. nodes-1) of the calling process. */
static inline int rtt_node(void)
{
    const char *r = getenv("OMPDSM_RANK");
    return r ? atoi(r) : 0;
}

#endif
