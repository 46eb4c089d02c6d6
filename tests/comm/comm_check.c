/* tests/comm/comm_check.c - multi-node checks of the comm layer, run under
 * ompdsmrun on any transport: one-sided operations against independently
 * computed patterns, remote atomics, a compare-swap lock, notify ordering,
 * barriers, collectives, control messages and several threads per node.
 * This file is the driver (set-up, group selection, the failure tests'
 * barrier loop) and the helpers comm_check.h declares; each group is in
 * comm_check_GROUP.c.
 *
 * usage: comm_check GROUP   (onesided, atomics, barrier, coll, send,
 *                            threads, stream, all)
 *        comm_check peers    (prints "node R: peer P TRANSPORT same-host"
 *                            for every peer: the multi-host tests check
 *                            the choice of transport with it)
 *        comm_check barrier-loop DIR   (failure tests: writes DIR/pid.R,
 *                            then runs barriers until killed or failed)
 * Exit status 0 when every node's checks passed; every node reports its own
 * failures ("node R: FAIL file:line: ..."). */
#include "comm_check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A second build of this program (comm_check_b, -DCOMM_CHECK_VARIANT=\"b\")
 * differs in this string only: the multi-host tests run the two builds on
 * two hosts, which must refuse to run together. */
#ifndef COMM_CHECK_VARIANT
#define COMM_CHECK_VARIANT "a"
#endif
__attribute__((used)) static const char variant[] = "comm_check " COMM_CHECK_VARIANT;

int rank, nodes;
char *user;
static size_t user_len;
long failures;

/* ---- deterministic randomness and byte patterns ---- */

static uint64_t rnd(struct rng *r) { return mix64(r->s++); }
uint64_t rnd_below(struct rng *r, uint64_t n) { return rnd(r) % n; }
size_t rnd_size(struct rng *r, size_t max)
{
    int bits = 0;
    while ((1ull << bits) < max)
        bits++;
    size_t hi = 1ull << rnd_below(r, (uint64_t)bits + 1);
    size_t s = hi / 2 + 1 + rnd_below(r, hi - hi / 2);
    return s > max ? max : s;
}
struct rng rng_for(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    struct rng r = {mix64(a * 1000003 + mix64(b * 7919 + mix64(c * 31 + d)))};
    return r;
}

void pat_fill(void *dst, uint64_t seed, uint64_t off, size_t len)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < len; i++)
        d[i] = pat(seed, off + i);
}
long pat_cmp(const void *src, uint64_t seed, uint64_t off, size_t len)
{
    const uint8_t *s = src;
    for (size_t i = 0; i < len; i++)
        if (s[i] != pat(seed, off + i))
            return (long)i;
    return -1;
}

/* ---- layout of USER_REG ---- */

size_t off_getarea, off_putarea, off_nslot, off_tslot;

uint64_t *word(int w) { return (uint64_t *)user + w; }
uint64_t wload(int w) { return __atomic_load_n(word(w), __ATOMIC_ACQUIRE); }

static void layout(void)
{
    off_getarea = WORDS * 8;
    off_putarea = off_getarea + GETAREA_LEN;
    off_nslot = off_putarea + (size_t)nodes * WIN;
    off_tslot = off_nslot + (size_t)nodes * NSLOT;
    user_len = off_tslot + (size_t)nodes * THREADS * TSLOT;
}

static void side_open(void);

static void setup(void)
{
    OK(comm_init());
    rank = comm_rank();
    nodes = comm_size();
    layout();
    int fd = memfd_create("comm-check", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)user_len) < 0) {
        perror("memfd");
        exit(1);
    }
    user = mmap(NULL, user_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (user == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    OK(comm_register(USER_REG, user, user_len, fd));
    OK(comm_connect());
    side_open();
}

void barrier(void) { OK(comm_barrier(COMM_WORLD)); }

enum { WAIT_LIMIT_S = 20 };
struct timed {
    int (*pred)(void *);
    void *arg;
    double deadline;
};
static int timed_pred(void *a)
{
    struct timed *t = a;
    return t->pred(t->arg) || ompdsm_now() > t->deadline;
}
int wait_timed(int (*pred)(void *), void *arg, const char *what)
{
    struct timed t = {pred, arg, ompdsm_now() + WAIT_LIMIT_S};
    OK(comm_wait_until(timed_pred, &t));
    if (!pred(arg)) {
        FAIL("waited %d s for %s", WAIT_LIMIT_S, what);
        return 0;
    }
    return 1;
}
struct ge_arg {
    const uint64_t *p;
    uint64_t v;
};
static int ge_pred(void *a)
{
    struct ge_arg *g = a;
    return __atomic_load_n(g->p, __ATOMIC_ACQUIRE) >= g->v;
}
int wait_ge(const uint64_t *p, uint64_t v, const char *what)
{
    struct ge_arg g = {p, v};
    return wait_timed(ge_pred, &g, what);
}

/* The side channel (comm_check.h): set up here, for test_fence and
 * group_threads. */
uint64_t *side;
pid_t node0_pid;

static void side_open(void)
{
    if (!comm_all_local())
        return;
    int32_t who[2] = {(int32_t)getpid(), -1};
    if (rank == 0) {
        who[1] = memfd_create("comm-check-side", MFD_CLOEXEC);
        if (who[1] < 0 || ftruncate(who[1], 4096) < 0)
            who[1] = -1;
    }
    OK(comm_bcast(COMM_WORLD, 0, who, sizeof who));
    node0_pid = who[0];
    if (who[1] < 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", who[0], who[1]);
    int fd = rank == 0 ? who[1] : open(path, O_RDWR | O_CLOEXEC);
    void *p = fd < 0 ? MAP_FAILED
                     : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int ok = p != MAP_FAILED;
    int64_t all = ok;
    OK(comm_allreduce(COMM_WORLD, &all, 1, COMM_INT64, COMM_MIN));
    if (all)
        side = p;
    barrier(); /* node 0 keeps its fd until everyone has mapped */
}

/* ---- the driver ---- */

static void barrier_loop(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    double t0 = ompdsm_now();
    for (long k = 0; ompdsm_now() - t0 < 120; k++) {
        int rc = comm_barrier(COMM_WORLD);
        if (rc < 0) {
            fprintf(stderr, "node %d: barrier %ld failed (%d): the job failed\n",
                    rank, k, rc);
            /* As the runtime's fatal hook does (comm.c): linger before our
             * connections close, or a survivor that has not yet read the
             * report naming the dead node blames us for closing. */
            usleep(COMM_FAILURE_LINGER_MS * 1000);
            exit(3);
        }
    }
    fprintf(stderr, "node %d: nobody was killed in 120 s\n", rank);
    exit(4);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s onesided|atomics|barrier|coll|send|threads|"
                "stream|all | peers | barrier-loop DIR\n", argv[0]);
        return 2;
    }
    setup();
    if (!strcmp(argv[1], "barrier-loop") && argc == 3)
        barrier_loop(argv[2]);
    if (!strcmp(argv[1], "peers")) {
        for (int p = 0; p < nodes; p++)
            if (p != rank)
                printf("node %d: peer %d %s %s\n", rank, p,
                       comm_peer_transport(p),
                       comm_same_host(p) ? "same-host" : "other-host");
        fflush(stdout);
        barrier();
        comm_fini();
        return 0;
    }
    static const struct {
        const char *name;
        void (*fn)(void);
    } groups[] = {
        {"onesided", group_onesided}, {"atomics", group_atomics},
        {"barrier", group_barrier},   {"coll", group_coll},
        {"send", group_send},         {"threads", group_threads},
        {"stream", group_stream},
    };
    int any = 0;
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(groups); i++) {
        if (strcmp(argv[1], "all") && strcmp(argv[1], groups[i].name))
            continue;
        any = 1;
        double t0 = ompdsm_now();
        groups[i].fn();
        if (rank == 0)
            fprintf(stderr, "comm_check %s: %d nodes over %s: %.2f s\n",
                    groups[i].name, nodes, comm_transport_name(),
                    ompdsm_now() - t0);
    }
    if (!any) {
        fprintf(stderr, "comm_check: unknown group '%s'\n", argv[1]);
        comm_fini();
        return 2;
    }
    int64_t bad = __atomic_load_n(&failures, __ATOMIC_RELAXED);
    OK(comm_allreduce(COMM_WORLD, &bad, 1, COMM_INT64, COMM_SUM));
    /* Every node arrives here together: the orderly end must be quick. */
    double t0 = ompdsm_now();
    comm_fini();
    double dt = ompdsm_now() - t0;
    if (dt > 3.0) {
        fprintf(stderr, "node %d: FAIL comm_fini took %.1f s\n", rank, dt);
        bad++;
    }
    if (bad && rank == 0)
        fprintf(stderr, "comm_check %s: %" PRId64 " failed checks\n", argv[1], bad);
    return bad ? 1 : 0;
}
