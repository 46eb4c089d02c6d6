/* bench/comm/comm_bench.c - latency of the comm layer on the active
 * transport, with the physical floors measured in the same run.
 *
 * Run under ompdsmrun (N >= 2); OMPDSM_TRANSPORT picks the transport.
 * Measured on node 0 (against node 1 where there is a peer):
 *   rtt8      8-byte round trip: notify ping-pong between nodes 0 and 1
 *   get4k     comm_get of 4 KiB from node 1 (the same 4 KiB each time:
 *             cache-warm on shm)
 *   get4kcold the same, cycling through 64 MiB of node 1's memory
 *   get64k    comm_get of 64 KiB from node 1 (one DSM page; the same each
 *             time)
 *   fadd      comm_fetch_add on a word of node 1
 *   barrier   comm_barrier over all N nodes (back to back)
 *   raw8      raw loopback TCP ping-pong of 8 bytes, node 0 <-> node 1,
 *             blocking sockets, TCP_NODELAY (the floor for tcp)
 *   raw4k     the same with 4 KiB each way
 *   raw8poll, raw4kpoll  the same with both sides busy-polling
 *             (non-blocking reads in a loop): no wake-up in the path
 *   memcpy4k  a 4 KiB memcpy (the floor for shm)
 * For each: min, median, p99, max, mean and a histogram (as the SR2201 soft-barrier paper shows
 * the barrier's), then one machine-readable line per measure:
 *   RESULT transport=T nodes=N name=X n=.. min=.. med=.. p99=.. max=.. mean=..
 * (microseconds).  bench/comm/run.sh runs the matrix and prints a table.
 *
 * usage: comm_bench [--iters N] [--barrier-iters N] [--bind|--pin] [--no-hist]
 *   --bind  binds node r (all its threads) to CPU r mod CPUs, as
 *           ompdsmrun's core binding does;
 *   --pin   binds only node r's application thread (after comm_connect:
 *           the transport's service thread stays free). */
#include "comm/comm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The comm layer alone: this program's one region takes the first free id. */
enum { USER_REG = COMM_REG_FIRST };

enum {
    W_PING = 0, W_PONG = 1, W_FADD = 2, /* words */
    DATA_OFF = 4096,                    /* the 4 KiB that get4k reads */
    COLD_OFF = 64 * 1024,               /* pages that get4kcold cycles through */
    COLD_LEN = 64 * 1024 * 1024,
    REGION_LEN = COLD_OFF + COLD_LEN,
};

static int rank, nodes;
static long iters = 20000, bar_iters = 10000;
static int hist = 1;
static char *user;
static double *samples; /* microseconds */

static void die(const char *what, int rc)
{
    fprintf(stderr, "comm_bench: node %d: %s failed (%d)\n", rank, what, rc);
    exit(1);
}
#define OK(call)                                                               \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ < 0)                                                           \
            die(#call, rc_);                                                   \
    } while (0)

static inline uint64_t now_ns(void) { return ompdsm_now_ns(); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A bin width of 1, 2 or 5 times a power of ten giving about 20 bins. */
static double nice_width(double span)
{
    double w = span / 20, p = 0.001;
    while (p * 10 <= w)
        p *= 10;
    return w <= p ? p : w <= 2 * p ? 2 * p : w <= 5 * p ? 5 * p : 10 * p;
}

static void report(const char *name, const char *what, double *s, long n)
{
    if (rank != 0 || n <= 0)
        return;
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += s[i];
    double min = s[0], med = s[n / 2], p99 = s[(long)(n * 0.99)], max = s[n - 1];
    printf("\n== %s (%s, %d nodes): %ld samples, us: min %.2f  median %.2f  "
           "p99 %.2f  max %.2f  mean %.2f\n", what, comm_transport_name(), nodes,
           n, min, med, p99, max, sum / n);
    if (hist) {
        /* Bins over min..p99, but no wider than 4 x the median: a noisy
         * tail (other load) would make the bins useless; it goes into the
         * last bin instead. */
        double top = p99 < 4 * med ? p99 : 4 * med;
        double w = nice_width(top - min > 0 ? top - min : min / 10 + 0.001);
        double lo = (double)(long)(min / w) * w;
        long bins[21] = {0};
        for (long i = 0; i < n; i++) {
            long b = (long)((s[i] - lo) / w);
            bins[b < 20 ? b : 20]++;
        }
        for (int b = 0; b <= 20; b++) {
            if (!bins[b])
                continue;
            double pc = 100.0 * bins[b] / n;
            char bar[61];
            int len = (int)(pc * 0.6 + 0.5);
            memset(bar, '#', (size_t)len);
            bar[len] = 0;
            if (b < 20)
                printf("  %9.2f - %9.2f us %6.2f%% %s\n", lo + b * w,
                       lo + (b + 1) * w, pc, bar);
            else
                printf("  %9.2f - %9.2f us %6.2f%% %s\n", lo + b * w, max, pc,
                       bar);
        }
    }
    printf("RESULT transport=%s nodes=%d name=%s n=%ld min=%.3f med=%.3f "
           "p99=%.3f max=%.3f mean=%.3f\n", comm_transport_name(), nodes, name,
           n, min, med, p99, max, sum / n);
    fflush(stdout);
}

static uint64_t *word(int w) { return (uint64_t *)user + w; }

static void bench_rtt8(void)
{
    long warm = iters / 10;
    for (long i = 1; i <= warm + iters; i++) {
        if (rank == 0) {
            uint64_t t0 = now_ns();
            OK(comm_notify(1, USER_REG, W_PING * 8, (uint64_t)i));
            OK(comm_wait_ge(word(W_PONG), (uint64_t)i));
            if (i > warm)
                samples[i - warm - 1] = (now_ns() - t0) / 1e3;
        } else if (rank == 1) {
            OK(comm_wait_ge(word(W_PING), (uint64_t)i));
            OK(comm_notify(0, USER_REG, W_PONG * 8, (uint64_t)i));
        } else {
            break;
        }
    }
    OK(comm_barrier(COMM_WORLD));
    report("rtt8", "8-byte round trip (notify ping-pong, node 0 <-> 1)", samples, iters);
}

/* comm_get of len bytes at off of node 1, the same bytes each time. */
static void bench_get_same(const char *name, const char *what, uint64_t off,
                           size_t len)
{
    char *buf = aligned_alloc(4096, len);
    long warm = iters / 10;
    if (rank == 0)
        for (long i = 0; i < warm + iters; i++) {
            uint64_t t0 = now_ns();
            OK(comm_get(1, USER_REG, off, buf, len));
            if (i >= warm)
                samples[i - warm] = (now_ns() - t0) / 1e3;
        }
    OK(comm_barrier(COMM_WORLD));
    report(name, what, samples, iters);
    free(buf);
}

static void bench_get4k_cold(void)
{
    char *buf = aligned_alloc(4096, 4096);
    long warm = iters / 10, pages = COLD_LEN / 4096;
    if (rank == 0)
        for (long i = 0; i < warm + iters; i++) {
            /* a stride that is not a power of two: no cache-set aliasing */
            uint64_t off = COLD_OFF + (uint64_t)((i * 4099) % pages) * 4096;
            uint64_t t0 = now_ns();
            OK(comm_get(1, USER_REG, off, buf, 4096));
            if (i >= warm)
                samples[i - warm] = (now_ns() - t0) / 1e3;
        }
    OK(comm_barrier(COMM_WORLD));
    report("get4kcold", "4 KiB get from node 1, cycling through 64 MiB",
           samples, iters);
    free(buf);
}

static void bench_fadd(void)
{
    long warm = iters / 10;
    if (rank == 0)
        for (long i = 0; i < warm + iters; i++) {
            uint64_t old, t0 = now_ns();
            OK(comm_fetch_add(1, USER_REG, W_FADD * 8, 1, &old));
            if (i >= warm)
                samples[i - warm] = (now_ns() - t0) / 1e3;
        }
    OK(comm_barrier(COMM_WORLD));
    report("fadd", "remote fetch-add on node 1", samples, iters);
}

static void bench_barrier(void)
{
    long warm = bar_iters / 10;
    for (long i = 0; i < warm + bar_iters; i++) {
        uint64_t t0 = now_ns();
        OK(comm_barrier(COMM_WORLD));
        if (i >= warm && rank == 0)
            samples[i - warm] = (now_ns() - t0) / 1e3;
    }
    char what[64];
    snprintf(what, sizeof what, "barrier over %d nodes", nodes);
    report("barrier", what, samples, bar_iters);
}

static int full_io(int fd, void *buf, size_t len, int out, int poll_)
{
    char *p = buf;
    while (len) {
        ssize_t n = out ? write(fd, p, len)
                        : recv(fd, p, len, poll_ ? MSG_DONTWAIT : 0);
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Raw blocking TCP ping-pong between nodes 0 and 1 over loopback. */
static void bench_raw(void)
{
    int32_t port = 0;
    int lfd = -1, fd = -1, one = 1;
    if (rank == 1) {
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof sa;
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
            listen(lfd, 1) < 0 || getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0)
            die("raw tcp listen", -errno);
        port = ntohs(sa.sin_port);
    }
    OK(comm_bcast(COMM_WORLD, 1, &port, sizeof port));
    if (rank == 0) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                 .sin_port = htons((uint16_t)port)};
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
            die("raw tcp connect", -errno);
    } else if (rank == 1) {
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            die("raw tcp accept", -errno);
        close(lfd);
    }
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static char buf[4096];
    static const struct {
        size_t size;
        int poll;
        const char *name, *what;
    } runs[4] = {
        {8, 0, "raw8", "raw TCP ping-pong, 8 bytes each way (blocking, loopback)"},
        {4096, 0, "raw4k", "raw TCP ping-pong, 4 KiB each way (blocking, loopback)"},
        {8, 1, "raw8poll", "raw TCP ping-pong, 8 bytes, both sides busy-polling"},
        {4096, 1, "raw4kpoll", "raw TCP ping-pong, 4 KiB, both sides busy-polling"},
    };
    for (int k = 0; k < 4; k++) {
        size_t sz = runs[k].size;
        int pl = runs[k].poll;
        long warm = iters / 10;
        for (long i = 0; fd >= 0 && i < warm + iters; i++) {
            if (rank == 0) {
                uint64_t t0 = now_ns();
                if (full_io(fd, buf, sz, 1, pl) || full_io(fd, buf, sz, 0, pl))
                    die("raw tcp ping", -EPIPE);
                if (i >= warm)
                    samples[i - warm] = (now_ns() - t0) / 1e3;
            } else if (full_io(fd, buf, sz, 0, pl) || full_io(fd, buf, sz, 1, pl)) {
                die("raw tcp pong", -EPIPE);
            }
        }
        OK(comm_barrier(COMM_WORLD));
        report(runs[k].name, runs[k].what, samples, iters);
    }
    if (fd >= 0)
        close(fd);
}

static void bench_memcpy(void)
{
    char *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
    memset(a, 1, 4096);
    memset(b, 2, 4096);
    if (rank == 0)
        for (long i = 0; i < iters; i++) {
            uint64_t t0 = now_ns();
            memcpy(i & 1 ? a : b, i & 1 ? b : a, 4096);
            __asm__ __volatile__("" ::: "memory");
            samples[i] = (now_ns() - t0) / 1e3;
        }
    report("memcpy4k", "4 KiB memcpy (cache-warm, includes one clock read)",
           samples, iters);
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 1000; i++) {
        uint64_t t0 = now_ns(), t1 = now_ns();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    if (rank == 0)
        printf("(clock read overhead: %llu ns)\n", (unsigned long long)best);
    free(a);
    free(b);
}

static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (e)
        fprintf(stderr, "comm_bench: cannot bind to CPU %d: %s\n", cpu,
                strerror(e));
}

static void describe_machine(void)
{
    if (rank != 0)
        return;
    char model[600] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            snprintf(model, sizeof model, "%s", c ? c + 2 : line);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f)
        fclose(f);
    struct utsname u;
    uname(&u);
    printf("machine: %ld CPUs (%s), Linux %s; %d nodes over %s; %ld iterations "
           "(%ld for barriers)\n", sysconf(_SC_NPROCESSORS_ONLN), model,
           u.release, nodes, comm_transport_name(), iters, bar_iters);
}

int main(int argc, char **argv)
{
    int pin = 0, bind = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--barrier-iters") && i + 1 < argc)
            bar_iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--pin"))
            pin = 1;
        else if (!strcmp(argv[i], "--bind"))
            bind = 1;
        else if (!strcmp(argv[i], "--no-hist"))
            hist = 0;
        else {
            fprintf(stderr, "usage: %s [--iters N] [--barrier-iters N] "
                    "[--bind|--pin] [--no-hist]\n", argv[0]);
            return 2;
        }
    }
    if (iters < 10 || bar_iters < 10) {
        fprintf(stderr, "comm_bench: at least 10 iterations\n");
        return 2;
    }
    if (bind) {
        /* Before comm_init: every thread of the node inherits it. */
        const char *r = getenv("OMPDSM_RANK");
        pin_to((r ? atoi(r) : 0) % (int)sysconf(_SC_NPROCESSORS_ONLN));
    }
    OK(comm_init());
    rank = comm_rank();
    nodes = comm_size();
    if (nodes < 2) {
        fprintf(stderr, "comm_bench: run it on 2 or more nodes "
                "(ompdsmrun -np 2 %s)\n", argv[0]);
        comm_fini();
        return 2;
    }
    int fd = memfd_create("comm-bench", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, REGION_LEN) < 0)
        die("memfd", -errno);
    user = mmap(NULL, REGION_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (user == MAP_FAILED)
        die("mmap", -errno);
    memset(user + DATA_OFF, rank, 4096);
    if (rank == 1)
        memset(user + COLD_OFF, 1, COLD_LEN);
    OK(comm_register(USER_REG, user, REGION_LEN, fd));
    OK(comm_connect());
    if (pin) /* after comm_connect: not the transport's threads */
        pin_to(rank % (int)sysconf(_SC_NPROCESSORS_ONLN));
    long most = iters > bar_iters ? iters : bar_iters;
    samples = calloc((size_t)most, sizeof *samples);
    describe_machine();
    OK(comm_barrier(COMM_WORLD));
    bench_raw();
    bench_memcpy();
    bench_rtt8();
    bench_get_same("get4k", "4 KiB get from node 1", DATA_OFF, 4096);
    bench_get4k_cold();
    bench_get_same("get64k", "64 KiB get from node 1 (one DSM page)",
                   COLD_OFF, 65536);
    bench_fadd();
    bench_barrier();
    comm_fini();
    free(samples);
    return 0;
}
