/* comm/util/base.c - messages, fatal errors, the debug trace, strict
 * environment parsing, clocks and full reads/writes. */
#include "base.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int ompdsm_log_rank = -1;
unsigned ompdsm_trace_mask;
int (*ompdsm_fatal_hook)(int status, const char *msg);

static void vmessage(const char *kind, const char *fmt, va_list ap,
                     char *out, size_t outlen)
{
    char body[1024];
    vsnprintf(body, sizeof body, fmt, ap);
    if (ompdsm_log_rank >= 0)
        snprintf(out, outlen, "ompdsm: node %d: %s%s\n", ompdsm_log_rank,
                 kind, body);
    else
        snprintf(out, outlen, "ompdsm: %s%s\n", kind, body);
}

/* One write(2) per message so lines from several threads do not mix. */
static void emit(const char *line)
{
    (void)!write(2, line, strlen(line));
}

void ompdsm_fatal(const char *fmt, ...)
{
    static volatile int in_fatal;
    char body[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (__sync_lock_test_and_set(&in_fatal, 1)) {
        /* A second failure while reporting the first: just leave. */
        _exit(1);
    }
    /* Under a launcher the launcher prints the one line naming the node
     * and the reason; print it here only when nobody else will. */
    if (!ompdsm_fatal_hook || ompdsm_fatal_hook(1, body) < 0) {
        if (ompdsm_log_rank >= 0)
            snprintf(line, sizeof line, "ompdsm: node %d: %s\n", ompdsm_log_rank,
                     body);
        else
            snprintf(line, sizeof line, "ompdsm: %s\n", body);
        emit(line);
    }
    _exit(1);
}

void ompdsm_warn(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vmessage("warning: ", fmt, ap, line, sizeof line);
    va_end(ap);
    emit(line);
}

void ompdsm_err(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vmessage("", fmt, ap, line, sizeof line);
    va_end(ap);
    emit(line);
}

void ompdsm_trace_out(const char *fmt, ...)
{
    char body[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "[%.6f n%d] %s\n", ompdsm_now(),
             ompdsm_log_rank, body);
    emit(line);
}

void ompdsm_trace_init(void)
{
    static const struct {
        const char *name;
        unsigned bit;
    } cats[] = {
        {"comm", OMPDSM_TR_COMM}, {"coll", OMPDSM_TR_COLL},
        {"dsm", OMPDSM_TR_DSM},   {"fault", OMPDSM_TR_FAULT},
        {"lock", OMPDSM_TR_LOCK}, {"rt", OMPDSM_TR_RT},
        {"sched", OMPDSM_TR_SCHED}, {"boot", OMPDSM_TR_BOOT},
        {"all", ~0u},
    };
    const char *v = getenv("OMPDSM_TRACE");
    if (!v || !*v)
        return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    unsigned mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < OMPDSM_ARRAY_LEN(cats); i++)
            if (!strcasecmp(tok, cats[i].name))
                break;
        if (i == OMPDSM_ARRAY_LEN(cats))
            ompdsm_fatal("OMPDSM_TRACE: unknown category '%s' (use comm, "
                         "coll, dsm, fault, lock, rt, sched, boot or all)",
                         tok);
        mask |= cats[i].bit;
    }
    ompdsm_trace_mask = mask;
}

int ompdsm_parse_u64(const char *s, int allow_suffix, uint64_t *out)
{
    if (!s)
        return -EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -EINVAL;
    if (allow_suffix && *end) {
        unsigned shift = 0;
        switch (toupper((unsigned char)*end)) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        default: return -EINVAL;
        }
        end++;
        if (toupper((unsigned char)*end) == 'B' ||
            (toupper((unsigned char)end[0]) == 'I' &&
             toupper((unsigned char)end[1]) == 'B'))
            end += (*end == 'B' || *end == 'b') ? 1 : 2;
        if (v > (~0ull >> shift))
            return -EINVAL;
        v <<= shift;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

uint64_t ompdsm_env_u64(const char *name, uint64_t def, uint64_t min,
                        uint64_t max, int allow_suffix)
{
    const char *v = getenv(name);
    uint64_t x;
    if (!v || !*v)
        return def;
    if (ompdsm_parse_u64(v, allow_suffix, &x) < 0 || x < min || x > max)
        ompdsm_fatal("%s='%s' is not valid: expected an integer%s from %llu "
                     "to %llu",
                     name, v, allow_suffix ? " (suffix K, M, G or T allowed)" : "",
                     (unsigned long long)min, (unsigned long long)max);
    return x;
}

int ompdsm_env_choice(const char *name, const char *const *choices, int n,
                      int def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    for (int i = 0; i < n; i++)
        if (!strcasecmp(v, choices[i]))
            return i;
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n)
            strncat(list, i + 2 == n ? " or " : ", ",
                    sizeof list - strlen(list) - 1);
    }
    ompdsm_fatal("%s='%s' is not valid: expected %s", name, v, list);
}

uint64_t ompdsm_spin_us(int oversubscribed)
{
    static const char *const pol[] = {"active", "passive"};
    int p = ompdsm_env_choice("OMP_WAIT_POLICY", pol, 2, -1);
    uint64_t def = p == 1 ? 0
                   : p == 0 ? (oversubscribed ? 2 : 100000)
                            : (oversubscribed ? 2 : 50);
    return ompdsm_env_u64("OMPDSM_SPIN_US", def, 0, 10000000, 0);
}

int ompdsm_env_bool(const char *name, int def)
{
    static const char *const choices[] = {"0", "false", "no", "off",
                                          "1", "true", "yes", "on"};
    int i = ompdsm_env_choice(name, choices, 8, -1);
    if (i < 0)
        return def;
    return i >= 4;
}

double ompdsm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t ompdsm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t ompdsm_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* write(2), or send(2) with flags on a socket. */
static int out_full(int fd, const void *buf, size_t len, int sock)
{
    const char *p = buf;
    while (len) {
        ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int ompdsm_write_full(int fd, const void *buf, size_t len)
{
    return out_full(fd, buf, len, 0);
}

int ompdsm_send_full(int fd, const void *buf, size_t len)
{
    return out_full(fd, buf, len, 1);
}

int ompdsm_read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t n = read(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EPIPE;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
