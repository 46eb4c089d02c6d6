/* comm/util/base.h - process-wide basics every layer uses, and ompdsmrun
 * too: messages, fatal errors, the debug trace, strict environment parsing,
 * clocks, full reads and writes, and small helpers.  Built once as its own
 * static library (comm/util/meson.build) that libompdsm's comm library and
 * the launcher both link.
 *
 * Naming: lowercase layer prefixes for internals (comm_, dsm_, sched_, rt_);
 * ompdsm_ for these shared basics.  Nothing here is exported from
 * libompdsm. */
#ifndef OMPDSM_COMM_UTIL_BASE_H
#define OMPDSM_COMM_UTIL_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#define OMPDSM_HIDDEN __attribute__((visibility("hidden")))
#define OMPDSM_LIKELY(x) __builtin_expect(!!(x), 1)
#define OMPDSM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define OMPDSM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define OMPDSM_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define OMPDSM_CACHELINE 64

/* Rank of this node for message prefixes; -1 before bootstrap. */
extern int ompdsm_log_rank;

/* Prints "ompdsm: node R: <msg>" on stderr, asks the launcher (if any) to
 * end the job, and exits with status 1.  For failures an OpenMP program
 * cannot recover from: lost peers, exhausted heap, bad environment. */
void ompdsm_fatal(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));
/* Prints "ompdsm: node R: warning: <msg>" on stderr. */
void ompdsm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "ompdsm: node R: <msg>" on stderr (reasons for returned errors). */
void ompdsm_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Hook called by ompdsm_fatal before exiting, so the bootstrap layer can tell
 * the launcher which node failed and why (the launcher then prints it);
 * returns 0 if the launcher got the message, -1 if the node must print it
 * itself.  Set by comm_init. */
extern int (*ompdsm_fatal_hook)(int status, const char *msg);

/* ---- debug trace: one macro, off by default, enabled by OMPDSM_TRACE ---- */
enum {
    OMPDSM_TR_COMM = 1u << 0,
    OMPDSM_TR_COLL = 1u << 1,
    OMPDSM_TR_DSM = 1u << 2,
    OMPDSM_TR_FAULT = 1u << 3,
    OMPDSM_TR_LOCK = 1u << 4,
    OMPDSM_TR_RT = 1u << 5,
    OMPDSM_TR_SCHED = 1u << 6,
    OMPDSM_TR_BOOT = 1u << 7,
};
extern unsigned ompdsm_trace_mask;
void ompdsm_trace_init(void); /* parses OMPDSM_TRACE=comm,dsm,...|all */
void ompdsm_trace_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define OMPDSM_TRACE(cat, ...)                                                  \
    do {                                                                       \
        if (OMPDSM_UNLIKELY(ompdsm_trace_mask & (cat)))                        \
            ompdsm_trace_out(__VA_ARGS__);                                     \
    } while (0)

/* ---- strict environment parsing: a bad value is one clear fatal message ---- */
/* Unsigned integer with optional K/M/G/T suffix (powers of 1024) when
 * allow_suffix; returns def when unset or empty.  Values outside
 * [min, max] or with trailing garbage are fatal, naming the variable. */
uint64_t ompdsm_env_u64(const char *name, uint64_t def, uint64_t min,
                        uint64_t max, int allow_suffix);
/* One of choices (case-insensitive); returns the index or def when unset. */
int ompdsm_env_choice(const char *name, const char *const *choices, int n,
                      int def);
/* true/false/1/0/yes/no/on/off; def when unset. */
int ompdsm_env_bool(const char *name, int def);
/* How long a waiter spins before it sleeps, in microseconds: OMPDSM_SPIN_US
 * when set; else by OMP_WAIT_POLICY: passive 0, active 100 ms while every
 * waiting thread has a CPU of its own (oversubscribed: 0 when threads
 * outnumber the CPUs); unset: 50, or 2 when oversubscribed.  A waiter
 * never spins for ever: it sleeps after that. */
uint64_t ompdsm_spin_us(int oversubscribed);
/* Parses a number with optional suffix; 0 on success, -EINVAL otherwise. */
int ompdsm_parse_u64(const char *s, int allow_suffix, uint64_t *out);

/* ---- time ---- */
double ompdsm_now(void);        /* seconds, CLOCK_MONOTONIC */
uint64_t ompdsm_now_ns(void);   /* nanoseconds, CLOCK_MONOTONIC */
/* nanoseconds, CLOCK_MONOTONIC_COARSE: a few ns to read against 25 here,
 * one tick (1-4 ms) coarse and at most a tick behind ompdsm_now_ns */
uint64_t ompdsm_coarse_ns(void);

/* ---- robust I/O on file descriptors ---- */
/* Writes/reads exactly len bytes, retrying on EINTR and short transfers.
 * Return 0, or -errno (-EPIPE on EOF for reads). */
int ompdsm_write_full(int fd, const void *buf, size_t len);
int ompdsm_read_full(int fd, void *buf, size_t len);
/* ompdsm_write_full on a socket with MSG_NOSIGNAL: a peer that went away
 * must not kill us with SIGPIPE (-EPIPE instead). */
int ompdsm_send_full(int fd, const void *buf, size_t len);

/* CPU relax hint for spin loops. */
static inline void ompdsm_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
