/* tests/comm/comm_check.c - multi-node checks of the comm layer, run under
 * ompdsmrun on any transport: one-sided operations against independently
 * computed patterns, remote atomics, a compare-swap lock, notify ordering,
 * barriers, collectives, control messages and several threads per node.
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
#include "comm/comm.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The comm layer alone: this program's one region takes the first free id. */
enum { USER_REG = COMM_REG_FIRST };

/* A second build of this program (comm_check_b, -DCOMM_CHECK_VARIANT=\"b\")
 * differs in this string only: the multi-host tests run the two builds on
 * two hosts, which must refuse to run together. */
#ifndef COMM_CHECK_VARIANT
#define COMM_CHECK_VARIANT "a"
#endif
__attribute__((used)) static const char variant[] = "comm_check " COMM_CHECK_VARIANT;

static int rank, nodes;
static char *user;          /* this node's USER_REG */
static size_t user_len;
static long failures;       /* this node's failed checks (atomic) */

#define FAIL(...)                                                              \
    do {                                                                       \
        if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < 20) {         \
            char m_[512];                                                      \
            snprintf(m_, sizeof m_, __VA_ARGS__);                              \
            fprintf(stderr, "node %d: FAIL %s:%d: %s\n", rank, __FILE__,       \
                    __LINE__, m_);                                             \
        }                                                                      \
    } while (0)
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            FAIL(__VA_ARGS__);                                                 \
    } while (0)
/* A failing comm call ends the node: its reason is already printed. */
#define OK(call)                                                               \
    do {                                                                       \
        int ok_rc_ = (call);                                                   \
        if (ok_rc_ < 0) {                                                      \
            fprintf(stderr, "node %d: FAIL %s:%d: %s returned %d\n", rank,     \
                    __FILE__, __LINE__, #call, ok_rc_);                        \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* ---- deterministic randomness and byte patterns ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct rng {
    uint64_t s;
};
static uint64_t rnd(struct rng *r) { return mix64(r->s++); }
static uint64_t rnd_below(struct rng *r, uint64_t n) { return rnd(r) % n; }
/* Log-uniform in [1, max]: as many small sizes as large ones. */
static size_t rnd_size(struct rng *r, size_t max)
{
    int bits = 0;
    while ((1ull << bits) < max)
        bits++;
    size_t hi = 1ull << rnd_below(r, (uint64_t)bits + 1);
    size_t s = hi / 2 + 1 + rnd_below(r, hi - hi / 2);
    return s > max ? max : s;
}
static struct rng rng_for(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    struct rng r = {mix64(a * 1000003 + mix64(b * 7919 + mix64(c * 31 + d)))};
    return r;
}

/* Byte at absolute offset off of the pattern named seed. */
static inline uint8_t pat(uint64_t seed, uint64_t off)
{
    return (uint8_t)(mix64(seed * 0x100000001b3ull ^ (off >> 3)) >>
                     ((off & 7) * 8));
}
static void pat_fill(void *dst, uint64_t seed, uint64_t off, size_t len)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < len; i++)
        d[i] = pat(seed, off + i);
}
/* Returns the index of the first byte that differs, or -1. */
static long pat_cmp(const void *src, uint64_t seed, uint64_t off, size_t len)
{
    const uint8_t *s = src;
    for (size_t i = 0; i < len; i++)
        if (s[i] != pat(seed, off + i))
            return (long)i;
    return -1;
}

/* ---- layout of USER_REG (same on every node) ---- */
enum {
    WIN = 1 << 20,            /* largest transfer; a put window */
    GETAREA_LEN = 2 * WIN,
    NSLOT = 256 * 1024,       /* notify test slot per writer */
    THREADS = 4,
    TSLOT = 1 << 20,          /* threads test slot per (node, thread) */
};
/* 8-byte words */
enum {
    W_ONE = 0,        /* fetch-add: one word, on node 0 */
    W_TOTAL = 1,      /* spread fetch-adds: per-target total */
    W_LOCK = 2,       /* CAS lock (node n-1) */
    W_INSIDE = 3,     /* holders of the lock (must stay <= 1) */
    W_COUNTER = 4,    /* lock-protected counter (node 0) */
    W_BAR = 5,        /* barrier test counter */
    W_TH_FADD = 6,    /* threads test */
    W_TH_CAS = 7,
    W_SPREAD = 64,    /* [n]: per-writer spread fetch-adds */
    W_FLAG = 64 + 4096,      /* [n]: notify flags, per writer */
    W_ACK = 64 + 2 * 4096,   /* [n]: notify acks, per reader */
    W_PB = 64 + 3 * 4096,    /* [n]: put-back flags, per writer */
    WORDS = 64 + 4 * 4096,
};
static size_t off_getarea, off_putarea, off_nslot, off_tslot;

static uint64_t *word(int w) { return (uint64_t *)user + w; }
static uint64_t wload(int w) { return __atomic_load_n(word(w), __ATOMIC_ACQUIRE); }

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

static void barrier(void) { OK(comm_barrier(COMM_WORLD)); }

/* Waits with a deadline, so that a lost message fails with a message
 * instead of hanging until the test's timeout. */
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
static int wait_timed(int (*pred)(void *), void *arg, const char *what)
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
static int wait_ge(const uint64_t *p, uint64_t v, const char *what)
{
    struct ge_arg g = {p, v};
    return wait_timed(ge_pred, &g, what);
}

/* ======================================================================== */
/* one-sided: get/put of random sizes and offsets, notify ordering          */

static void test_get(void)
{
    pat_fill(user + off_getarea, 100 + rank, 0, GETAREA_LEN);
    barrier();
    char *buf = malloc(WIN + 64);
    for (int p = 0; p < nodes; p++) {
        struct rng r = rng_for(1, rank, p, 0);
        int k = nodes > 4 ? 16 : 32;
        for (int i = 0; i < k; i++) {
            size_t len = rnd_size(&r, WIN);
            if (i == 0) len = WIN;       /* the extremes, unaligned */
            if (i == 1) len = 1;
            if (i == 2) len = 4096;
            uint64_t off = rnd_below(&r, GETAREA_LEN - len + 1);
            memset(buf, 0xa5, WIN + 64);
            OK(comm_get(p, USER_REG, off_getarea + off, buf + 32, len));
            long bad = pat_cmp(buf + 32, 100 + p, off, len);
            CHECK(bad < 0, "get of %zu bytes at %" PRIu64 " from node %d: "
                  "byte %ld differs", len, off, p, bad);
            for (int g = 0; g < 32; g++)
                CHECK((uint8_t)buf[g] == 0xa5 && (uint8_t)buf[32 + len + g] == 0xa5,
                      "get of %zu bytes from node %d wrote outside its buffer",
                      len, p);
        }
    }
    free(buf);
    barrier();
}

/* Writer w's puts into target p's window w in round k. */
struct put_op {
    uint64_t off;
    size_t len;
};
static int put_ops(int w, int p, int k, struct put_op *ops)
{
    struct rng r = rng_for(2, w, p, k);
    int m = 2 + (int)rnd_below(&r, 9);
    for (int i = 0; i < m; i++) {
        ops[i].len = rnd_size(&r, WIN);
        ops[i].off = rnd_below(&r, WIN - ops[i].len + 1);
    }
    return m;
}

static void test_put(void)
{
    char *src = malloc(WIN);
    unsigned char *mask = malloc(WIN);
    struct put_op ops[10];
    for (int k = 0; k < 4; k++) {
        /* The target's windows start as its own pattern. */
        pat_fill(user + off_putarea, 200 + k * 64 + rank, 0, (size_t)nodes * WIN);
        barrier();
        for (int i = 1; i <= nodes; i++) {
            int p = (rank + i) % nodes;
            int m = put_ops(rank, p, k, ops);
            uint64_t seed = 300 + (uint64_t)k * 4096 + (uint64_t)rank * 64 + p;
            for (int j = 0; j < m; j++) {
                pat_fill(src, seed, ops[j].off, ops[j].len);
                OK(comm_put(p, USER_REG,
                            off_putarea + (size_t)rank * WIN + ops[j].off, src,
                            ops[j].len));
                memset(src, 0x5a, ops[j].len); /* src is ours again */
            }
        }
        OK(comm_fence(-1));
        barrier();
        /* Check every window against the writers' ops, recomputed here. */
        for (int w = 0; w < nodes; w++) {
            int m = put_ops(w, rank, k, ops);
            uint64_t seed = 300 + (uint64_t)k * 4096 + (uint64_t)w * 64 + rank;
            memset(mask, 0, WIN);
            for (int j = 0; j < m; j++)
                memset(mask + ops[j].off, 1, ops[j].len);
            const uint8_t *win = (uint8_t *)user + off_putarea + (size_t)w * WIN;
            long bad = -1;
            for (size_t o = 0; o < WIN && bad < 0; o++) {
                uint8_t want = mask[o] ? pat(seed, o)
                                       : pat(200 + k * 64 + rank, (size_t)w * WIN + o);
                if (win[o] != want)
                    bad = (long)o;
            }
            CHECK(bad < 0, "round %d: window of node %d differs at byte %ld "
                  "(%s)", k, w, bad, bad >= 0 && mask[bad] ? "put" : "untouched");
        }
        barrier();
    }
    free(src);
    free(mask);
}

/* Each round every node puts a block into every peer's slot, then notifies;
 * a reader that sees the flag must see the whole block. */
static void test_notify(void)
{
    char *src = malloc(NSLOT);
    int rounds = nodes > 4 ? 20 : 40;
    for (int k = 1; k <= rounds; k++) {
        for (int i = 1; i < nodes; i++) {
            int p = (rank + i) % nodes;
            struct rng r = rng_for(3, rank, p, k);
            uint64_t len = rnd_size(&r, NSLOT - 8);
            pat_fill(src, 400 + (uint64_t)k * 64 + rank, 0, len);
            size_t slot = off_nslot + (size_t)rank * NSLOT;
            OK(comm_put(p, USER_REG, slot + 8, src, len));
            OK(comm_put(p, USER_REG, slot, &len, 8));
            OK(comm_notify(p, USER_REG, (uint64_t)(W_FLAG + rank) * 8, k));
        }
        for (int i = 1; i < nodes; i++) {
            int w = (rank + nodes - i) % nodes;
            if (!wait_ge(word(W_FLAG + w), (uint64_t)k, "a notify"))
                exit(1);
            struct rng r = rng_for(3, w, rank, k);
            uint64_t len = rnd_size(&r, NSLOT - 8), got;
            const char *slot = user + off_nslot + (size_t)w * NSLOT;
            memcpy(&got, slot, 8);
            CHECK(got == len, "round %d: notify from node %d arrived before "
                  "its length word (%" PRIu64 " != %" PRIu64 ")", k, w, got, len);
            long bad = pat_cmp(slot + 8, 400 + (uint64_t)k * 64 + w, 0, len);
            CHECK(bad < 0, "round %d: notify from node %d arrived before byte "
                  "%ld of its %" PRIu64 "-byte block", k, w, bad, len);
            OK(comm_notify(w, USER_REG, (uint64_t)(W_ACK + rank) * 8, k));
        }
        /* Do not overwrite a slot before its reader is done with it. */
        for (int i = 1; i < nodes; i++)
            if (!wait_ge(word(W_ACK + (rank + i) % nodes), (uint64_t)k,
                         "an acknowledging notify"))
                exit(1);
    }
    free(src);
    barrier();
}

/* A side channel between the nodes of one host, outside the comm layer:
 * node 0's memfd of one word per node, mapped by everyone.  NULL when the
 * nodes are on several hosts. */
static uint64_t *side;
static pid_t node0_pid;

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

/* A fence must not return before the put is done at the target.  The
 * target learns that the fence returned through a path that cannot wait
 * behind the put: the side channel (one host), or else a flag on a third
 * node.  (A get from the writer would not do: over tcp its reply follows
 * the put on the same connection.)  ThreadSanitizer reports the final
 * comparison as a race: the ordering runs through another process. */
static void test_fence(void)
{
    if (nodes == 1 || (!side && nodes < 3))
        return;
    char *src = malloc(WIN);
    int to = (rank + 1) % nodes, from = (rank + nodes - 1) % nodes;
    int relay = (rank + 2) % nodes; /* holds our flag when there is no side */
    for (uint64_t k = 1; k <= 16; k++) {
        pat_fill(src, 1400 + k * 64 + rank, 0, WIN);
        OK(comm_put(to, USER_REG, off_putarea + (size_t)rank * WIN, src, WIN));
        OK(comm_fence(to));
        if (side)
            __atomic_store_n(&side[rank], k, __ATOMIC_RELEASE);
        else
            OK(comm_put(relay, USER_REG, (W_FLAG + rank) * 8, &k, 8));
        uint64_t flag = 0;
        for (int spin = 0; flag < k; spin++) {
            if (side)
                flag = __atomic_load_n(&side[from], __ATOMIC_ACQUIRE);
            else
                OK(comm_get((from + 2) % nodes, USER_REG,
                            (W_FLAG + from) * 8, &flag, 8));
            if (flag < k && spin > 100)
                sched_yield();
        }
        /* The end first: an early fence leaves the end missing, and the
         * service thread may still be writing it. */
        const char *win = user + off_putarea + (size_t)from * WIN;
        uint64_t seed = 1400 + k * 64 + from;
        long bad = pat_cmp(win + WIN - 8, seed, WIN - 8, 8);
        if (bad >= 0)
            bad += WIN - 8;
        else
            bad = pat_cmp(win, seed, 0, WIN);
        CHECK(bad < 0, "round %d: node %d's fence returned before its put was "
              "done here (byte %ld differs)", (int)k, from, bad);
        barrier();
    }
    free(src);
    barrier();
    /* The relayed flags are W_FLAG words, which test_notify counts from 0
     * (nodes on several hosts have no side channel). */
    if (!side)
        for (int w = 0; w < nodes; w++)
            __atomic_store_n(word(W_FLAG + w), 0, __ATOMIC_RELEASE);
    barrier();
}

static void group_onesided(void)
{
    test_get();
    test_put();
    test_fence();
    test_notify();
}

/* stream: a known volume between every pair, so that a test can hold the
 * network's byte counters against it: every node puts STREAM_ROUNDS times
 * WIN bytes into its window at every other node (STREAM_ROUNDS MiB per
 * ordered pair), each round checked by the receiver. */
enum { STREAM_ROUNDS = 4 };

static void group_stream(void)
{
    char *src = malloc(WIN);
    if (!src)
        exit(1);
    for (int k = 0; k < STREAM_ROUNDS; k++) {
        for (int i = 1; i < nodes; i++) {
            int to = (rank + i) % nodes;
            pat_fill(src, 5000 + (uint64_t)k * 64 + (uint64_t)rank, 0, WIN);
            OK(comm_put(to, USER_REG, off_putarea + (size_t)rank * WIN,
                        src, WIN));
        }
        OK(comm_fence(-1));
        barrier();
        for (int from = 0; from < nodes; from++) {
            if (from == rank)
                continue;
            long bad = pat_cmp(user + off_putarea + (size_t)from * WIN,
                               5000 + (uint64_t)k * 64 + (uint64_t)from, 0,
                               WIN);
            CHECK(bad < 0, "stream round %d: byte %ld from node %d (%s) is "
                  "wrong", k, bad, from, comm_peer_transport(from));
        }
        barrier();
    }
    free(src);
}

/* ======================================================================== */
/* atomics: fetch-add totals, spread fetch-adds, a compare-swap lock        */

enum { NFADD = 10000 };

static void test_fadd_one(void)
{
    uint64_t prev = 0, sum = 0, max = 0;
    for (int i = 0; i < NFADD; i++) {
        uint64_t old;
        OK(comm_fetch_add(0, USER_REG, W_ONE * 8, 1, &old));
        if (i)
            CHECK(old > prev, "fetch-add returned %" PRIu64 " after %" PRIu64,
                  old, prev);
        prev = old;
        sum += old;
        if (old > max)
            max = old;
    }
    barrier();
    uint64_t total = (uint64_t)NFADD * nodes;
    if (rank == 0)
        CHECK(wload(W_ONE) == total, "one word: %" PRIu64 " after %" PRIu64
              " fetch-adds", wload(W_ONE), total);
    /* Every old value 0..total-1 was returned exactly once. */
    int64_t v[2] = {(int64_t)sum, (int64_t)max};
    OK(comm_allreduce(COMM_WORLD, &v[0], 1, COMM_INT64, COMM_SUM));
    OK(comm_allreduce(COMM_WORLD, &v[1], 1, COMM_INT64, COMM_MAX));
    CHECK((uint64_t)v[0] == total * (total - 1) / 2 &&
          (uint64_t)v[1] == total - 1,
          "old values sum to %" PRId64 ", max %" PRId64 " (not a permutation)",
          v[0], v[1]);
}

static void test_fadd_spread(void)
{
    for (int i = 0; i < NFADD; i++) {
        int p = (rank + i) % nodes;
        uint64_t old;
        OK(comm_fetch_add(p, USER_REG, (W_SPREAD + rank) * 8,
                          (uint64_t)i + 1, &old));
        OK(comm_fetch_add(p, USER_REG, W_TOTAL * 8, 1, &old));
    }
    barrier();
    uint64_t total = 0;
    for (int w = 0; w < nodes; w++) {
        /* i = j*n + d with (w + d) % n == rank */
        int d = ((rank - w) % nodes + nodes) % nodes;
        uint64_t cnt = d < NFADD ? (uint64_t)(NFADD - 1 - d) / nodes + 1 : 0;
        uint64_t want = cnt * (uint64_t)(d + 1) + (uint64_t)nodes * cnt * (cnt - 1) / 2;
        CHECK(wload(W_SPREAD + w) == want, "spread word of node %d: %" PRIu64
              ", expected %" PRIu64, w, wload(W_SPREAD + w), want);
        total += cnt;
    }
    CHECK(wload(W_TOTAL) == total, "spread total %" PRIu64 ", expected %" PRIu64,
          wload(W_TOTAL), total);
}

static void test_cas_lock(void)
{
    int L = nodes - 1, iters = nodes > 4 ? 60 : 150;
    struct rng r = rng_for(4, rank, 0, 0);
    for (int i = 0; i < iters; i++) {
        uint64_t old;
        for (int spin = 0;; spin++) {
            OK(comm_cas(L, USER_REG, W_LOCK * 8, 0, (uint64_t)rank + 1, &old));
            if (old == 0)
                break;
            CHECK(old <= (uint64_t)nodes, "lock word holds %" PRIu64, old);
            if (spin > 2)
                usleep((useconds_t)(rnd_below(&r, 200) + 1));
            else
                sched_yield();
        }
        OK(comm_fetch_add(L, USER_REG, W_INSIDE * 8, 1, &old));
        CHECK(old == 0, "%" PRIu64 " other holders inside the lock", old);
        uint64_t v;
        OK(comm_get(0, USER_REG, W_COUNTER * 8, &v, 8));
        v++;
        OK(comm_put(0, USER_REG, W_COUNTER * 8, &v, 8));
        OK(comm_fence(0));
        OK(comm_fetch_add(L, USER_REG, W_INSIDE * 8, (uint64_t)-1, &old));
        OK(comm_cas(L, USER_REG, W_LOCK * 8, (uint64_t)rank + 1, 0, &old));
        CHECK(old == (uint64_t)rank + 1, "released a lock held by %" PRIu64, old);
    }
    barrier();
    if (rank == 0)
        CHECK(wload(W_COUNTER) == (uint64_t)iters * nodes,
              "lock-protected counter %" PRIu64 ", expected %" PRIu64,
              wload(W_COUNTER), (uint64_t)iters * nodes);
}

static void group_atomics(void)
{
    test_fadd_one();
    test_fadd_spread();
    test_cas_lock();
    barrier();
}

/* ======================================================================== */
/* barriers                                                                 */

static void test_barrier_early(void)
{
    int rounds = nodes > 4 ? 300 : 1000;
    for (int k = 1; k <= rounds; k++) {
        for (int p = 0; p < nodes; p++) {
            uint64_t old;
            OK(comm_fetch_add(p, USER_REG, W_BAR * 8, 1, &old));
        }
        barrier();
        uint64_t v = wload(W_BAR);
        CHECK(v >= (uint64_t)nodes * k && v <= (uint64_t)nodes * (k + 1),
              "after barrier %d the counter is %" PRIu64 " (expected %" PRIu64
              "..%" PRIu64 "): a node passed early", k, v, (uint64_t)nodes * k,
              (uint64_t)nodes * (k + 1));
    }
}

/* Payload up: a record per node (rank, length, bytes); the combine appends. */
struct rec_hdr {
    int32_t rank;
    uint32_t len;
};
static uint32_t up_len(int r, int k)
{
    struct rng g = rng_for(5, r, k, 0);
    /* Sometimes large: the gathered payload then spills. */
    return (uint32_t)(k % 5 == 0 ? rnd_size(&g, 40000) : rnd_below(&g, 200));
}
static uint32_t down_pad(int k) { return (uint32_t)(k % 7 == 3 ? 70000 + k : k * 13); }

static int combine_append(void *ctx, struct comm_buf *acc, const void *in,
                          size_t inlen)
{
    (void)ctx;
    return comm_buf_append(acc, in, inlen);
}

/* At the root: check the gathered records, then broadcast a digest: per
 * rank its length, then a pad of down_pad(k) pattern bytes. */
static int root_digest(void *ctx, struct comm_buf *acc)
{
    int k = *(int *)ctx;
    uint32_t lens[256] = {0};
    int seen[256] = {0}, idx = 0;
    size_t pos = 0;
    while (pos + sizeof(struct rec_hdr) <= acc->len) {
        struct rec_hdr h;
        memcpy(&h, (char *)acc->data + pos, sizeof h);
        pos += sizeof h;
        if (h.rank < 0 || h.rank >= nodes || pos + h.len > acc->len) {
            FAIL("round %d: malformed gathered payload", k);
            return 0;
        }
        CHECK(idx != 0 || h.rank == 0, "round %d: root's own record is not "
              "first", k);
        CHECK(!seen[h.rank]++, "round %d: node %d's record gathered twice", k,
              h.rank);
        CHECK(h.len == up_len(h.rank, k), "round %d: node %d's record has %u "
              "bytes", k, h.rank, h.len);
        long bad = pat_cmp((char *)acc->data + pos, 500 + (uint64_t)k * 64 + h.rank,
                           0, h.len);
        CHECK(bad < 0, "round %d: node %d's record differs at %ld", k, h.rank, bad);
        lens[h.rank] = h.len;
        pos += h.len;
        idx++;
    }
    CHECK(idx == nodes && pos == acc->len, "round %d: gathered %d records", k, idx);
    acc->len = 0;
    comm_buf_append(acc, lens, sizeof(uint32_t) * (size_t)nodes);
    size_t pad = down_pad(k);
    comm_buf_reserve(acc, acc->len + pad);
    pat_fill((char *)acc->data + acc->len, 600 + (uint64_t)k, 0, pad);
    acc->len += pad;
    return 0;
}

static void test_barrier_payload(void)
{
    struct comm_buf up = {0}, down = {0};
    int rounds = nodes > 4 ? 40 : 80;
    for (int k = 0; k < rounds; k++) {
        struct rec_hdr h = {rank, up_len(rank, k)};
        up.len = 0;
        comm_buf_append(&up, &h, sizeof h);
        comm_buf_reserve(&up, up.len + h.len);
        pat_fill((char *)up.data + up.len, 500 + (uint64_t)k * 64 + rank, 0, h.len);
        up.len += h.len;
        OK(comm_barrier_x(COMM_WORLD, up.data, up.len, combine_append,
                          root_digest, &k, &down));
        size_t want = sizeof(uint32_t) * (size_t)nodes + down_pad(k);
        CHECK(down.len == want, "round %d: %zu bytes came down, expected %zu",
              k, down.len, want);
        if (down.len != want)
            continue;
        for (int r = 0; r < nodes; r++) {
            uint32_t l;
            memcpy(&l, (char *)down.data + 4 * r, 4);
            CHECK(l == up_len(r, k), "round %d: digest says node %d sent %u", k,
                  r, l);
        }
        long bad = pat_cmp((char *)down.data + 4 * nodes, 600 + (uint64_t)k, 0,
                           down_pad(k));
        CHECK(bad < 0, "round %d: down payload differs at %ld", k, bad);
    }
    comm_buf_free(&up);
    comm_buf_free(&down);
}

/* A sub-team on channel 1 (ranks 0..n/2-1) while channel 0 stays intact. */
static void test_subgroup(void)
{
    struct comm_group g = {1, nodes / 2 > 0 ? nodes / 2 : 1};
    if (rank < g.nodes) {
        for (int k = 1; k <= 100; k++) {
            int64_t v = rank + k;
            OK(comm_allreduce(g, &v, 1, COMM_INT64, COMM_SUM));
            int64_t want = (int64_t)g.nodes * (g.nodes - 1) / 2 + (int64_t)g.nodes * k;
            CHECK(v == want, "sub-team allreduce %d: %" PRId64 " != %" PRId64,
                  k, v, want);
        }
    }
    barrier();
}

static void group_barrier(void)
{
    test_barrier_early();
    test_barrier_payload();
    test_subgroup();
    barrier();
}

/* ======================================================================== */
/* collectives                                                              */

static void test_allreduce_int(size_t count)
{
    int64_t *v = malloc(count * 8);
    static const enum comm_op ops[] = {COMM_SUM, COMM_MIN, COMM_MAX,
                                       COMM_AND, COMM_OR, COMM_XOR};
    int64_t n = nodes;
    for (size_t o = 0; o < OMPDSM_ARRAY_LEN(ops); o++) {
        int bitwise = ops[o] >= COMM_AND;
        for (size_t i = 0; i < count; i++) {
            int64_t s = (i % 2) ? -1 : 1;
            v[i] = bitwise ? (int64_t)((1ull << rank) | ((uint64_t)i << 32))
                           : s * (int64_t)((rank + i / 2) % nodes + 1) * (int64_t)(i + 1);
        }
        OK(comm_allreduce(COMM_WORLD, v, count, COMM_INT64, ops[o]));
        for (size_t i = 0; i < count; i++) {
            int64_t s = (i % 2) ? -1 : 1, x = (int64_t)i + 1, want = 0;
            uint64_t low = (1ull << nodes) - 1, hi = (uint64_t)i << 32;
            switch (ops[o]) {
            case COMM_SUM: want = s * x * n * (n + 1) / 2; break;
            case COMM_MIN: want = s > 0 ? x : -x * n; break;
            case COMM_MAX: want = s > 0 ? x * n : -x; break;
            case COMM_AND: want = (int64_t)(hi | (nodes == 1 ? 1 : 0)); break;
            case COMM_OR: want = (int64_t)(hi | low); break;
            case COMM_XOR: want = (int64_t)(low | (nodes % 2 ? hi : 0)); break;
            }
            if (v[i] != want) {
                FAIL("allreduce int64 op %d count %zu: [%zu] = %" PRId64
                     ", expected %" PRId64, (int)ops[o], count, i, v[i], want);
                break;
            }
        }
    }
    free(v);
}

static void test_allreduce_double(size_t count)
{
    double *v = malloc(count * 8);
    static const enum comm_op ops[] = {COMM_SUM, COMM_MIN, COMM_MAX};
    double n = nodes;
    for (size_t o = 0; o < 3; o++) {
        for (size_t i = 0; i < count; i++)
            v[i] = ((rank + i / 2) % nodes + 0.5) * (double)(i + 1);
        OK(comm_allreduce(COMM_WORLD, v, count, COMM_DOUBLE, ops[o]));
        for (size_t i = 0; i < count; i++) {
            double x = (double)(i + 1);
            double want = ops[o] == COMM_SUM ? x * n * n / 2
                        : ops[o] == COMM_MIN ? 0.5 * x : (n - 0.5) * x;
            if (v[i] != want) {
                FAIL("allreduce double op %d count %zu: [%zu] = %g, expected %g",
                     (int)ops[o], count, i, v[i], want);
                break;
            }
        }
    }
    free(v);
}

struct maxloc {
    double val;
    int64_t rank;
};
static double maxloc_val(int r, size_t i) { return (double)((r * 5 + (int)i) % (nodes + 3)); }
static void maxloc_fn(void *inout, const void *in, size_t len, void *arg)
{
    (void)arg;
    struct maxloc *a = inout;
    const struct maxloc *b = in;
    for (size_t i = 0; i < len / sizeof *a; i++)
        if (b[i].val > a[i].val || (b[i].val == a[i].val && b[i].rank < a[i].rank))
            a[i] = b[i];
}

static void test_allreduce_user(void)
{
    enum { M = 500 };
    struct maxloc *v = malloc(M * sizeof *v);
    for (size_t i = 0; i < M; i++)
        v[i] = (struct maxloc){maxloc_val(rank, i), rank};
    OK(comm_allreduce_user(COMM_WORLD, v, M * sizeof *v, maxloc_fn, NULL));
    for (size_t i = 0; i < M; i++) {
        struct maxloc want = {-1, -1};
        for (int r = 0; r < nodes; r++)
            if (maxloc_val(r, i) > want.val)
                want = (struct maxloc){maxloc_val(r, i), r};
        if (v[i].val != want.val || v[i].rank != want.rank) {
            FAIL("allreduce_user maxloc [%zu]: (%g, %" PRId64 "), expected "
                 "(%g, %" PRId64 ")", i, v[i].val, v[i].rank, want.val, want.rank);
            break;
        }
    }
    free(v);
}

static void test_allgather(size_t len)
{
    char *mine = malloc(len ? len : 1), *all = malloc(len * nodes + 1);
    pat_fill(mine, 700 + rank, len, len);
    memset(all, 0, len * nodes);
    OK(comm_allgather(COMM_WORLD, mine, len, all));
    for (int r = 0; r < nodes; r++) {
        long bad = pat_cmp(all + (size_t)r * len, 700 + r, len, len);
        CHECK(bad < 0, "allgather of %zu bytes: node %d's part differs at %ld",
              len, r, bad);
    }
    free(mine);
    free(all);
}

static void test_bcast(size_t len, int iter)
{
    char *buf = malloc(len);
    for (int root = 0; root < nodes; root++) {
        uint64_t seed = 800 + (uint64_t)iter * 64 + root;
        if (rank == root)
            pat_fill(buf, seed, 0, len);
        else
            memset(buf, 0x33, len);
        OK(comm_bcast(COMM_WORLD, root, buf, len));
        long bad = pat_cmp(buf, seed, 0, len);
        CHECK(bad < 0, "bcast of %zu bytes from node %d differs at %ld", len,
              root, bad);
    }
    free(buf);
}

static void test_bcast0(size_t len, int iter)
{
    struct comm_buf b = {0};
    uint64_t seed = 900 + (uint64_t)iter;
    if (rank == 0) {
        comm_buf_reserve(&b, len);
        pat_fill(b.data, seed, 0, len);
        b.len = len;
    }
    OK(comm_bcast0(COMM_WORLD, &b));
    CHECK(b.len == len, "bcast0: %zu bytes, expected %zu", b.len, len);
    if (b.len == len) {
        long bad = pat_cmp(b.data, seed, 0, len);
        CHECK(bad < 0, "bcast0 of %zu bytes differs at %ld", len, bad);
    }
    comm_buf_free(&b);
    barrier(); /* required between two broadcasts on a channel */
}

static void group_coll(void)
{
    static const size_t counts[] = {1, 3, 1000, 3000};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(counts); i++) {
        test_allreduce_int(counts[i]);
        test_allreduce_double(counts[i]);
    }
    test_allreduce_int(WIN / 8); /* 1 MiB: the spill path */
    test_allreduce_user();
    static const size_t glens[] = {0, 1, 8, 100, 20000, 256 * 1024};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(glens); i++)
        test_allgather(glens[i]);
    static const size_t blens[] = {1, 8, 5000, 70000, WIN};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(blens); i++)
        test_bcast(blens[i], (int)i);
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(blens); i++)
        test_bcast0(blens[i], (int)i);
    barrier();
}

/* ======================================================================== */
/* control messages                                                         */

enum { TAG_DATA = 3, TAG_ECHO = 4, TAG_ECHOED = 5, TAG_PUTBACK = 6, TAG_THREAD = 7 };
enum { NSMALL = 2000, NBIG = 16, NECHO = 200, NPUTBACK = 50 };

struct msg_hdr {
    int32_t src;
    uint32_t seq;
};
static uint64_t rx_count[256], rx_echoed[256], rx_thread;
static uint32_t rx_next[256];

static size_t msg_len(int src, int dst, uint32_t seq)
{
    if (seq >= NSMALL)
        return COMM_MSG_MAX; /* the largest message there is */
    struct rng r = rng_for(6, src, dst, seq);
    return sizeof(struct msg_hdr) + rnd_below(&r, 80);
}

static void on_data(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag, (void)arg;
    struct msg_hdr h;
    CHECK(len >= sizeof h, "message of %zu bytes from node %d", len, src);
    if (len < sizeof h)
        return;
    memcpy(&h, buf, sizeof h);
    CHECK(h.src == src, "message from node %d claims to come from %d", src, h.src);
    CHECK(h.seq == rx_next[src], "message %u from node %d arrived when %u was "
          "due", h.seq, src, rx_next[src]);
    rx_next[src] = h.seq + 1;
    CHECK(len == msg_len(src, rank, h.seq), "message %u from node %d has %zu "
          "bytes", h.seq, src, len);
    long bad = pat_cmp((const char *)buf + sizeof h,
                       1000 + (uint64_t)src * 65536 + h.seq, 0, len - sizeof h);
    CHECK(bad < 0, "message %u from node %d differs at %ld", h.seq, src, bad);
    __atomic_fetch_add(&rx_count[src], 1, __ATOMIC_RELEASE);
    comm_doorbell_ring();
}

/* Runs on the service thread: answers from there. */
static void on_echo(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag, (void)arg;
    int rc = comm_send(src, TAG_ECHOED, buf, len);
    CHECK(rc == 0, "send from a handler returned %d", rc);
}

static void on_echoed(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag, (void)arg;
    uint32_t seq;
    memcpy(&seq, buf, 4);
    CHECK(len == 4 + seq % 300, "echo %u from node %d has %zu bytes", seq, src, len);
    CHECK(pat_cmp((const char *)buf + 4, 1100 + seq, 0, len - 4) < 0,
          "echo %u from node %d differs", seq, src);
    __atomic_fetch_add(&rx_echoed[src], 1, __ATOMIC_RELEASE);
    comm_doorbell_ring();
}

/* Runs on the service thread: a put and a notify back to the sender. */
static void on_putback(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag, (void)arg;
    uint32_t seq;
    memcpy(&seq, buf, 4);
    char data[3000];
    pat_fill(data, 1200 + (uint64_t)rank * 64 + seq, 0, sizeof data);
    size_t slot = off_nslot + (size_t)rank * NSLOT;
    int rc = comm_put(src, USER_REG, slot, data, sizeof data);
    if (!rc)
        rc = comm_notify(src, USER_REG, (uint64_t)(W_PB + rank) * 8, seq);
    CHECK(rc == 0, "put/notify from a handler returned %d", rc);
}

struct count_arg {
    uint64_t *ctr;
    uint64_t want;
};
static int counts_reached(void *a)
{
    struct count_arg *c = a;
    for (int r = 0; r < nodes; r++)
        if (__atomic_load_n(&c->ctr[r], __ATOMIC_ACQUIRE) < c->want)
            return 0;
    return 1;
}

static void group_send(void)
{
    OK(comm_set_handler(TAG_DATA, on_data, NULL));
    OK(comm_set_handler(TAG_ECHO, on_echo, NULL));
    OK(comm_set_handler(TAG_ECHOED, on_echoed, NULL));
    OK(comm_set_handler(TAG_PUTBACK, on_putback, NULL));
    barrier(); /* handlers are set everywhere */
    char *buf = malloc(COMM_MSG_MAX);
    for (uint32_t seq = 0; seq < NSMALL + NBIG; seq++) {
        for (int i = 0; i < nodes; i++) {
            int p = (rank + i) % nodes;
            size_t len = msg_len(rank, p, seq);
            struct msg_hdr h = {rank, seq};
            memcpy(buf, &h, sizeof h);
            pat_fill(buf + sizeof h, 1000 + (uint64_t)rank * 65536 + seq, 0,
                     len - sizeof h);
            OK(comm_send(p, TAG_DATA, buf, len));
        }
    }
    struct count_arg ca = {rx_count, NSMALL + NBIG};
    if (!wait_timed(counts_reached, &ca, "every control message"))
        exit(1);
    for (uint32_t seq = 0; seq < NECHO; seq++) {
        size_t len = 4 + seq % 300;
        memcpy(buf, &seq, 4);
        pat_fill(buf + 4, 1100 + seq, 0, len - 4);
        for (int i = 1; i < nodes; i++)
            OK(comm_send((rank + i) % nodes, TAG_ECHO, buf, len));
    }
    rx_echoed[rank] = NECHO;
    struct count_arg ce = {rx_echoed, NECHO};
    if (!wait_timed(counts_reached, &ce, "every echo sent by a handler"))
        exit(1);
    /* Put-backs: each peer writes our slot for it and notifies; one at a
     * time, so that a slot is never rewritten before we checked it. */
    for (uint32_t seq = 1; seq <= NPUTBACK; seq++) {
        for (int i = 1; i < nodes; i++)
            OK(comm_send((rank + i) % nodes, TAG_PUTBACK, &seq, 4));
        for (int i = 1; i < nodes; i++) {
            int p = (rank + i) % nodes;
            if (!wait_ge(word(W_PB + p), seq, "a put-back from a handler"))
                exit(1);
            long bad = pat_cmp(user + off_nslot + (size_t)p * NSLOT,
                               1200 + (uint64_t)p * 64 + seq, 0, 3000);
            CHECK(bad < 0, "put-back %u from node %d differs at %ld", seq, p, bad);
        }
    }
    free(buf);
    barrier();
}

/* ======================================================================== */
/* several threads per node                                                 */

static void on_thread_msg(int src, int tag, const void *buf, size_t len,
                          void *arg)
{
    (void)src, (void)tag, (void)buf, (void)len, (void)arg;
    __atomic_fetch_add(&rx_thread, 1, __ATOMIC_RELEASE);
    comm_doorbell_ring();
}

struct thr {
    int id;
    pthread_t th;
    uint64_t fadd_to[256], cas_to[256], msg_to[256];
};

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    struct rng r = rng_for(7, rank, t->id, 0);
    char *src = malloc(TSLOT), *back = malloc(TSLOT);
    /* A flood first: every thread of every node puts and gets whole slots
     * on node 0 and a neighbour at once, so that socket buffers fill up and
     * writes of concurrent frames would interleave if they could. */
    size_t slot = off_tslot + ((size_t)rank * THREADS + t->id) * TSLOT;
    for (int j = 0; j < 8; j++) {
        int p = j % 3 ? 0 : (rank + 1) % nodes;
        uint64_t seed = 1500 + (uint64_t)j * 4096 + rank * 64 + t->id;
        pat_fill(src, seed, 0, TSLOT);
        OK(comm_put(p, USER_REG, slot, src, TSLOT));
        OK(comm_get(p, USER_REG, slot, back, TSLOT));
        long bad = pat_cmp(back, seed, 0, TSLOT);
        CHECK(bad < 0, "thread %d: flood put then get on node %d differs at "
              "%ld", t->id, p, bad);
    }
    int iters = nodes > 4 ? 150 : 300;
    for (int i = 0; i < iters; i++) {
        int p = (int)rnd_below(&r, nodes);
        uint64_t old;
        switch (rnd_below(&r, 5)) {
        case 0:
            OK(comm_fetch_add(p, USER_REG, W_TH_FADD * 8, 1, &old));
            t->fadd_to[p]++;
            break;
        case 1: {
            size_t len = rnd_size(&r, TSLOT);
            uint64_t seed = 1300 + (uint64_t)i * 4096 + rank * 64 + t->id;
            pat_fill(src, seed, 0, len);
            OK(comm_put(p, USER_REG, slot, src, len));
            OK(comm_get(p, USER_REG, slot, back, len));
            long bad = pat_cmp(back, seed, 0, len);
            CHECK(bad < 0, "thread %d: put then get of %zu bytes on node %d "
                  "differs at %ld", t->id, len, p, bad);
            break;
        }
        case 2: {
            uint64_t cur = 0;
            for (;;) {
                OK(comm_cas(p, USER_REG, W_TH_CAS * 8, cur, cur + 1, &old));
                if (old == cur)
                    break;
                cur = old;
            }
            t->cas_to[p]++;
            break;
        }
        case 3: {
            uint64_t x = i;
            OK(comm_send(p, TAG_THREAD, &x, sizeof x));
            t->msg_to[p]++;
            break;
        }
        default:
            OK(comm_fence(p));
            break;
        }
    }
    free(src);
    free(back);
    return NULL;
}

static int thread_msgs_in(void *a)
{
    return __atomic_load_n(&rx_thread, __ATOMIC_ACQUIRE) >= *(uint64_t *)a;
}

static void group_threads(void)
{
    OK(comm_set_handler(TAG_THREAD, on_thread_msg, NULL));
    barrier();
    struct thr *th = calloc(THREADS, sizeof *th);
    for (int i = 0; i < THREADS; i++) {
        th[i].id = i;
        pthread_create(&th[i].th, NULL, thread_main, &th[i]);
    }
    /* Stop node 0 in the middle of the flood (when on one host): its
     * senders' socket buffers fill and writes come back short, and the job
     * must carry on after SIGCONT. */
    if (side && rank == 1) {
        for (int k = 0; k < 5; k++) {
            usleep(2000);
            kill(node0_pid, SIGSTOP);
            usleep(40000);
            kill(node0_pid, SIGCONT);
        }
    }
    int64_t sent[3 * 256] = {0};
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i].th, NULL);
        for (int p = 0; p < nodes; p++) {
            sent[p] += (int64_t)th[i].fadd_to[p];
            sent[nodes + p] += (int64_t)th[i].cas_to[p];
            sent[2 * nodes + p] += (int64_t)th[i].msg_to[p];
        }
    }
    OK(comm_allreduce(COMM_WORLD, sent, 3 * (size_t)nodes, COMM_INT64, COMM_SUM));
    uint64_t want_msgs = (uint64_t)sent[2 * nodes + rank];
    if (!wait_timed(thread_msgs_in, &want_msgs, "the threads' messages"))
        exit(1);
    barrier();
    CHECK(wload(W_TH_FADD) == (uint64_t)sent[rank], "threads: %" PRIu64
          " fetch-adds arrived, %" PRId64 " sent", wload(W_TH_FADD), sent[rank]);
    CHECK(wload(W_TH_CAS) == (uint64_t)sent[nodes + rank], "threads: %" PRIu64
          " compare-swap increments, %" PRId64 " done", wload(W_TH_CAS),
          sent[nodes + rank]);
    CHECK(rx_thread == want_msgs, "threads: %" PRIu64 " messages, %" PRIu64
          " sent", rx_thread, want_msgs);
    free(th);
}

/* ======================================================================== */

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
