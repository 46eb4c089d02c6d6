/* tests/launch/testnode.c - the node program the launcher tests start: each
 * mode is one behaviour (print the environment, exit or die on one rank,
 * write many lines, read stdin, wait for a signal) or one use of the
 * bootstrap protocol of comm/boot_proto.h, spoken directly after the job
 * key's handshake (comm/util/auth.h), correct or deliberately wrong, and
 * connections that do not hold the key or replay a handshake.  Usage:
 * testnode MODE [ARGS...]; see usage(). */
#include "comm/util/base.h"
#include "comm/util/auth.h"
#include "comm/boot_proto.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int rank = -1, size = -1;
static unsigned char key[OMPDSM_KEY_LEN]; /* OMPDSM_JOB_KEY */
static int has_key;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "testnode %d: ", rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void msleep(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void __attribute__((noreturn)) sleep_forever(void)
{
    for (;;)
        pause();
}

static void ready(void)
{
    printf("ready rank=%d pid=%d pgid=%d\n", rank, (int)getpid(),
           (int)getpgrp());
    fflush(stdout);
}

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v ? v : def;
}

static void cpus_allowed(char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[512];
    snprintf(buf, len, "?");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            char *p = line + 18;
            while (*p == ' ' || *p == '\t')
                p++;
            p[strcspn(p, "\n")] = 0;
            snprintf(buf, len, "%.200s", p);
        }
    fclose(f);
}

static int mode_info(int argc, char **argv)
{
    char cpus[256];
    cpus_allowed(cpus, sizeof cpus);
    int persona = personality(0xffffffff);
    printf("info rank=%s size=%s local_rank=%s local_size=%s jobid=%s "
           "boot=%s pid=%d pgid=%d cpus=%s norandom=%d sigint=%s args=",
           env_or("OMPDSM_RANK", "-"), env_or("OMPDSM_SIZE", "-"),
           env_or("OMPDSM_LOCAL_RANK", "-"), env_or("OMPDSM_LOCAL_SIZE", "-"),
           env_or("OMPDSM_JOBID", "-"), env_or("OMPDSM_BOOT", "-"),
           (int)getpid(), (int)getpgrp(), cpus,
           persona != -1 && (persona & ADDR_NO_RANDOMIZE) ? 1 : 0,
           signal(SIGINT, SIG_DFL) == SIG_IGN ? "ign" : "dfl");
    for (int i = 2; i < argc; i++)
        printf("%s%s", i > 2 ? "|" : "", argv[i]);
    printf("\n");
    return 0;
}

/* Lines "R:S:I:payload" written in small random pieces, to stdout and
 * stderr alternately; the payload is derivable from R, S and I. */
static int mode_spew(int argc, char **argv)
{
    if (argc < 4)
        die("spew LINES LEN");
    long lines = atol(argv[2]), len = atol(argv[3]);
    char *buf = malloc((size_t)len + 64);
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)(rank + 1);
    for (long i = 0; i < lines; i++) {
        int fd = (i & 1) ? 2 : 1;
        int n = snprintf(buf, 64, "%d:%d:%ld:", rank, fd, i);
        for (long j = 0; j < len; j++)
            buf[n + j] = (char)('a' + (rank * 7 + i + j) % 26);
        buf[n + len] = '\n';
        size_t total = (size_t)n + (size_t)len + 1, off = 0;
        while (off < total) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t piece = 1 + x % 97;
            if (piece > total - off)
                piece = total - off;
            if (ompdsm_write_full(fd, buf + off, piece) < 0)
                die("write: %s", strerror(errno));
            off += piece;
        }
    }
    free(buf);
    return 0;
}

static int mode_stdin(void)
{
    char buf[4096];
    uint64_t h = 1469598103934665603ull, total = 0;
    for (;;) {
        ssize_t r = read(0, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            die("read stdin: %s", strerror(errno));
        if (r == 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
        total += (uint64_t)r;
    }
    printf("stdin rank=%d bytes=%llu fnv=%016llx\n", rank,
           (unsigned long long)total, (unsigned long long)h);
    return 0;
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

static int mode_usr1(void)
{
    signal(SIGUSR1, on_usr1);
    ready();
    for (int i = 0; i < 2000 && !got_usr1; i++)
        msleep(5);
    if (!got_usr1)
        die("no SIGUSR1 within 10 s");
    printf("usr1 rank=%d\n", rank);
    return 0;
}

/* ---- bootstrap protocol, spoken directly ---- */

/* A connection to OMPDSM_BOOT that has not authenticated. */
static int boot_connect_raw(void)
{
    const char *addr = getenv("OMPDSM_BOOT");
    if (!addr)
        die("OMPDSM_BOOT is not set");
    char host[128];
    snprintf(host, sizeof host, "%s", addr);
    char *colon = strrchr(host, ':');
    if (!colon)
        die("OMPDSM_BOOT='%s' has no port", addr);
    *colon = 0;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc)
        die("getaddrinfo %s: %s", addr, gai_strerror(rc));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0)
        die("connect %s: %s", addr, strerror(errno));
    freeaddrinfo(res);
    return fd;
}

static int boot_connect(void)
{
    int fd = boot_connect_raw();
    char why[256];
    if (!has_key)
        die("OMPDSM_JOB_KEY is not set");
    if (ompdsm_auth_client(fd, OMPDSM_AUTH_BOOT, key, 10000, why,
                           sizeof why) < 0)
        die("the launcher's handshake failed: %s", why);
    return fd;
}

static void boot_send(int fd, uint32_t type, const void *body, uint32_t len)
{
    struct boot_hdr h = {type, len};
    if (ompdsm_write_full(fd, &h, sizeof h) < 0 ||
        (len && ompdsm_write_full(fd, body, len) < 0))
        die("send type %u: %s", type, strerror(errno));
}

static void boot_hello_as(int fd, uint32_t magic, uint32_t version, int r,
                          int s)
{
    struct boot_hello h = {magic, version, r, s, (int32_t)getpid(), 0,
                           "", "", "", ""};
    boot_send(fd, BOOT_HELLO, &h, sizeof h);
}

static int boot_hello(void)
{
    int fd = boot_connect();
    boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size);
    return fd;
}

static void boot_fini(int fd)
{
    boot_send(fd, BOOT_FINI, NULL, 0);
}

/* Returns the N*len result of one round, checking its header. */
static unsigned char *boot_allgather(int fd, const void *mine, uint32_t len)
{
    boot_send(fd, BOOT_ALLGATHER, mine, len);
    struct boot_hdr h;
    int rc = ompdsm_read_full(fd, &h, sizeof h);
    if (rc < 0)
        die("reading allgather result: %s", strerror(-rc));
    if (h.type != BOOT_ALLGATHER_RESULT || h.len != len * (uint32_t)size)
        die("allgather result type %u len %u (expected %u, %u)", h.type,
            h.len, BOOT_ALLGATHER_RESULT, len * (uint32_t)size);
    unsigned char *all = malloc(h.len ? h.len : 1);
    if (h.len && (rc = ompdsm_read_full(fd, all, h.len)) < 0)
        die("reading allgather body: %s", strerror(-rc));
    return all;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The bytes rank r contributes to round k: random, yet any node can
 * recompute them to check the result. */
static void round_bytes(uint64_t seed, int k, int r, unsigned char *p,
                        uint32_t len)
{
    uint64_t x = mix(seed * 1000003u + (uint64_t)k * 7919u + (uint64_t)r);
    for (uint32_t i = 0; i < len; i++) {
        if (i % 8 == 0)
            x = mix(x + i);
        p[i] = (unsigned char)(x >> (8 * (i % 8)));
    }
}

static uint32_t round_len(uint64_t seed, int k)
{
    if (k == 2)
        return 256 * 1024; /* results larger than socket buffers */
    return (uint32_t)(mix(seed + (uint64_t)k) % 4096) * (k % 5 != 3);
}

static int mode_gather(int argc, char **argv)
{
    if (argc < 4)
        die("gather ROUNDS SEED");
    int rounds = atoi(argv[2]);
    uint64_t seed = strtoull(argv[3], NULL, 10);
    int fd = boot_hello();
    for (int k = 0; k < rounds; k++) {
        uint32_t len = round_len(seed, k);
        unsigned char *mine = malloc(len + 1), *want = malloc(len + 1);
        round_bytes(seed, k, rank, mine, len);
        unsigned char *all = boot_allgather(fd, mine, len);
        for (int r = 0; r < size; r++) {
            round_bytes(seed, k, r, want, len);
            if (memcmp(all + (size_t)r * len, want, len))
                die("round %d: the bytes of rank %d are wrong", k, r);
        }
        free(mine);
        free(want);
        free(all);
    }
    boot_fini(fd);
    /* Rank 0 keeps its connection until exit: both orders must work. */
    if (rank != 0)
        close(fd);
    printf("gather ok rank=%d rounds=%d\n", rank, rounds);
    return 0;
}

/* Every node says HELLO and prints ready; RANK then sleeps while the
 * others wait in an allgather round it never joins: the test kills RANK
 * or its agent mid-bootstrap. */
static int mode_gatherhold(int argc, char **argv)
{
    if (argc < 4)
        die("gatherhold RANK MARKER");
    int fd = boot_hello();
    ready();
    if (rank == atoi(argv[2]))
        for (;;)
            msleep(1000);
    unsigned char mine[8] = {0};
    free(boot_allgather(fd, mine, sizeof mine));
    die("allgather round 0 completed without rank %s", argv[2]);
}

/* then_exit: like ompdsm_fatal, exit 1 right after the ABORT, which the
 * launcher must still prefer to the exit status. */
static int mode_abort(int argc, char **argv, int then_exit)
{
    if (argc < 5)
        die("abort RANK STATUS MSG");
    int fd = boot_hello();
    ready();
    if (rank == atoi(argv[2])) {
        msleep(100);
        size_t mlen = strlen(argv[4]);
        char *body = malloc(sizeof(struct boot_abort) + mlen);
        struct boot_abort a = {atoi(argv[3]), 0, -1, -1};
        memcpy(body, &a, sizeof a);
        memcpy(body + sizeof a, argv[4], mlen);
        boot_send(fd, BOOT_ABORT, body, (uint32_t)(sizeof a + mlen));
        if (then_exit)
            _exit(1);
    }
    sleep_forever();
}

static int mode_nofini(int argc, char **argv, int then_exit)
{
    if (argc < 3)
        die("nofini RANK");
    int fd = boot_hello();
    ready();
    if (rank == atoi(argv[2])) {
        msleep(100);
        if (then_exit)
            exit(0); /* the kernel closes the connection */
        close(fd);
    }
    sleep_forever();
}

/* Rank 1 breaks the protocol in the named way; the others wait. */
static int mode_proto(int argc, char **argv)
{
    if (argc < 3)
        die("proto KIND");
    const char *kind = argv[2];
    if (rank != 1) {
        char b[16] = {0};
        int fd = boot_hello();
        ready();
        /* Contributions that wait for a result which never comes. */
        if (!strcmp(kind, "mismatch"))
            boot_send(fd, BOOT_ALLGATHER, b, 16);
        else if (!strcmp(kind, "finiskip"))
            boot_send(fd, BOOT_ALLGATHER, b, 8);
        sleep_forever();
    }
    int fd = boot_connect();
    ready();
    msleep(100);
    struct boot_hdr h;
    char buf[16] = {0};
    if (!strcmp(kind, "badmagic")) {
        boot_hello_as(fd, 0x12345678u, BOOT_VERSION, rank, size);
    } else if (!strcmp(kind, "badversion")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION + 7, rank, size);
    } else if (!strcmp(kind, "badrank")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, size + 5, size);
    } else if (!strcmp(kind, "badsize")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size + 1);
    } else if (!strcmp(kind, "duprank")) {
        msleep(200); /* let rank 0 claim its rank first */
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, 0, size);
    } else if (!strcmp(kind, "early")) {
        boot_send(fd, BOOT_ALLGATHER, buf, 8);
    } else if (!strcmp(kind, "oversize")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size);
        h = (struct boot_hdr){BOOT_ALLGATHER, BOOT_MSG_MAX + 1};
        (void)!ompdsm_write_full(fd, &h, sizeof h);
    } else if (!strcmp(kind, "badtype")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size);
        boot_send(fd, BOOT_ALLGATHER_RESULT, buf, 8);
    } else if (!strcmp(kind, "mismatch")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size);
        boot_send(fd, BOOT_ALLGATHER, buf, 8);
    } else if (!strcmp(kind, "twice")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size);
        boot_send(fd, BOOT_ALLGATHER, buf, 8);
        boot_send(fd, BOOT_ALLGATHER, buf, 8);
    } else if (!strcmp(kind, "finiskip")) {
        boot_hello_as(fd, BOOT_MAGIC, BOOT_VERSION, rank, size);
        msleep(200); /* the others are in round 0 by now */
        boot_fini(fd);
    } else {
        die("unknown proto kind '%s'", kind);
    }
    sleep_forever();
}

/* Rank 0, before it joins the job as the others do (mode gather): four
 * connections to the bootstrap socket that must each be refused with one
 * line while the job goes on: bytes that are no answer, a HELLO without
 * the handshake, an answer made with another key, and the answer of its
 * own authenticated connection replayed on a new one. */
static int mode_intrude(int argc, char **argv)
{
    if (rank == 0) {
        unsigned char ch[OMPDSM_AUTH_CHALLENGE_LEN];
        unsigned char resp[OMPDSM_AUTH_RESPONSE_LEN];
        unsigned char proof[OMPDSM_AUTH_PROOF_LEN], other[OMPDSM_KEY_LEN];
        struct ompdsm_auth a;
        int fd = boot_connect_raw();
        unsigned char junk[64];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)(i * 37 + 11);
        (void)!ompdsm_write_full(fd, junk, sizeof junk);
        int fd2 = boot_connect_raw();
        boot_hello_as(fd2, BOOT_MAGIC, BOOT_VERSION, 1, size);
        int fd3 = boot_connect_raw();
        memset(other, 0x5a, sizeof other);
        if (ompdsm_read_full(fd3, ch, sizeof ch) < 0 ||
            ompdsm_auth_respond(&a, OMPDSM_AUTH_BOOT, other, ch, resp) < 0)
            die("no challenge on the bootstrap socket");
        (void)!ompdsm_write_full(fd3, resp, sizeof resp);
        /* The replay: a right answer, to another connection's challenge. */
        int good = boot_connect_raw();
        if (ompdsm_read_full(good, ch, sizeof ch) < 0 ||
            ompdsm_auth_respond(&a, OMPDSM_AUTH_BOOT, key, ch, resp) < 0 ||
            ompdsm_write_full(good, resp, sizeof resp) < 0 ||
            ompdsm_read_full(good, proof, sizeof proof) < 0 ||
            ompdsm_auth_confirm(&a, key, proof) < 0)
            die("the launcher's handshake failed");
        int fd4 = boot_connect_raw();
        if (ompdsm_read_full(fd4, ch, sizeof ch) < 0)
            die("no challenge on the bootstrap socket");
        (void)!ompdsm_write_full(fd4, resp, sizeof resp);
        /* Each is refused: the launcher closes it. */
        int fds[] = {fd, fd2, fd3, fd4};
        for (int i = 0; i < 4; i++) {
            char c;
            ssize_t n;
            while ((n = read(fds[i], &c, 1)) > 0)
                ;
            printf("intruder %d closed\n", i);
            close(fds[i]);
        }
        fflush(stdout);
        close(good);
    }
    return mode_gather(argc, argv);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: testnode MODE [ARGS...]\n"
            "  info [ARGS...]              print environment, cpus, args\n"
            "  sleep MARKER                print ready, sleep forever\n"
            "  ignterm MARKER              same, ignoring SIGTERM\n"
            "  grandchild MARKER           fork a sleeping child, then sleep\n"
            "  exitif RANK CODE MARKER     RANK exits CODE, others sleep\n"
            "  exitcode RANK CODE          RANK exits CODE, others exit 0\n"
            "  killif RANK SIG MARKER      RANK dies of SIG, others sleep\n"
            "  ticks COUNT MS              COUNT sleeps of MS, then exit 0\n"
            "  spew LINES LEN              write LINES long lines in pieces\n"
            "  stdin                       hash stdin until EOF\n"
            "  usr1                        wait for SIGUSR1\n"
            "  gather ROUNDS SEED          bootstrap allgather, verified\n"
            "  intrude ROUNDS SEED         rank 0 tries four connections that\n"
            "                              must be refused, then as gather\n"
            "  gatherhold RANK MARKER      all but RANK wait in an allgather\n"
            "  abort RANK STATUS MSG       RANK sends BOOT_ABORT\n"
            "  abortexit RANK STATUS MSG   same, then exits 1 at once\n"
            "  nofini RANK                 RANK closes its connection\n"
            "  exitnofini RANK             RANK exits 0 without FINI\n"
            "  proto KIND                  rank 1 breaks the protocol\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    rank = atoi(env_or("OMPDSM_RANK", "-1"));
    size = atoi(env_or("OMPDSM_SIZE", "-1"));
    has_key = ompdsm_key_from_env(key) == 1;
    const char *m = argv[1];

    if (!strcmp(m, "info"))
        return mode_info(argc, argv);
    if (!strcmp(m, "sleep")) {
        ready();
        sleep_forever();
    }
    if (!strcmp(m, "ignterm")) {
        signal(SIGTERM, SIG_IGN);
        ready();
        sleep_forever();
    }
    if (!strcmp(m, "grandchild")) {
        pid_t pid = fork();
        if (pid == 0)
            sleep_forever();
        printf("grandchild rank=%d pid=%d\n", rank, (int)pid);
        ready();
        sleep_forever();
    }
    if (!strcmp(m, "exitif") || !strcmp(m, "exitcode") ||
        !strcmp(m, "killif")) {
        if (argc < 4)
            usage();
        int sleepers = strcmp(m, "exitcode") != 0;
        if (sleepers)
            ready();
        if (rank != atoi(argv[2])) {
            if (sleepers)
                sleep_forever();
            return 0;
        }
        msleep(200);
        if (!strcmp(m, "killif")) {
            int sig = atoi(argv[3]);
            struct rlimit no_core = {0, 0};
            setrlimit(RLIMIT_CORE, &no_core);
            signal(sig, SIG_DFL);
            raise(sig);
        }
        return atoi(argv[3]);
    }
    if (!strcmp(m, "ticks")) {
        if (argc < 4)
            usage();
        ready();
        for (int i = 0; i < atoi(argv[2]); i++)
            msleep(atol(argv[3]));
        printf("done rank=%d\n", rank);
        return 0;
    }
    if (!strcmp(m, "spew"))
        return mode_spew(argc, argv);
    if (!strcmp(m, "stdin"))
        return mode_stdin();
    if (!strcmp(m, "usr1"))
        return mode_usr1();
    if (!strcmp(m, "gather"))
        return mode_gather(argc, argv);
    if (!strcmp(m, "intrude"))
        return mode_intrude(argc, argv);
    if (!strcmp(m, "gatherhold"))
        return mode_gatherhold(argc, argv);
    if (!strcmp(m, "abort"))
        return mode_abort(argc, argv, 0);
    if (!strcmp(m, "abortexit"))
        return mode_abort(argc, argv, 1);
    if (!strcmp(m, "nofini"))
        return mode_nofini(argc, argv, 0);
    if (!strcmp(m, "exitnofini"))
        return mode_nofini(argc, argv, 1);
    if (!strcmp(m, "proto"))
        return mode_proto(argc, argv);
    usage();
}
