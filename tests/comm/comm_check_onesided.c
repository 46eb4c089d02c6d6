/* tests/comm/comm_check_onesided.c - comm_check's groups "onesided" and
 * "stream": gets and puts of random sizes and offsets checked byte for byte
 * against the writers' patterns, a fence that must not return before its
 * put is done at the target, notify ordering after puts, and a known
 * volume between every pair of nodes for the network counters. */
#include "comm_check.h"

#include <sched.h>
#include <string.h>

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

/* A fence must not return before the put is done at the target.  The
 * target learns that the fence returned through a path that cannot wait
 * behind the put: the side channel (one host), or else a flag on a third
 * node.  (A get from the writer would not do: its reply is ordered after
 * the writer's earlier puts, test_reply_order.)  ThreadSanitizer reports the final
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

/* A reply is ordered after the replier's earlier puts to the requester:
 * each round a node puts a 1 MiB block into the next node's window (256
 * puts), then
 * stores the round in its own memory (no fence); the next node polls that
 * word with gets and, once it reads the round, must find the whole block
 * in its window.  Over tcp the put and the reply travel on the two
 * sockets of the pair, and the get waits for the service thread to have
 * applied the puts its reply counts (comm/tcp_int.h, ff_done): without
 * that wait the reader finds old bytes.  This is what the notice logs'
 * pushed positions rely on (dsm/noticelog.c), which verbs peers never
 * use. */
static void test_reply_order(void)
{
    /* (verbs does not promise it: an RDMA read's response is not ordered
     * after the responder's writes; comm.h) */
    if (nodes == 1 || strstr(comm_transport_name(), "verbs"))
        return;
    char *src = malloc(WIN);
    int to = (rank + 1) % nodes, from = (rank + nodes - 1) % nodes;
    int rounds = nodes > 4 ? 12 : 24;
    for (uint64_t k = 1; k <= (uint64_t)rounds; k++) {
        pat_fill(src, 2400 + k * 64 + rank, 0, WIN);
        /* (in 4 KiB puts: the socket takes them all at once, and the
         * service thread there has many frames to apply) */
        for (size_t o = 0; o < WIN; o += 4096)
            OK(comm_put(to, USER_REG, off_putarea + (size_t)rank * WIN + o,
                        src + o, 4096));
        __atomic_store_n(word(W_RO), k, __ATOMIC_RELEASE);
        uint64_t seen = 0;
        for (int spin = 0; seen < k; spin++) {
            OK(comm_get(from, USER_REG, (uint64_t)W_RO * 8, &seen, 8));
            if (seen < k && spin > 100)
                sched_yield();
        }
        const char *win = user + off_putarea + (size_t)from * WIN;
        long bad = pat_cmp(win, 2400 + k * 64 + from, 0, WIN);
        CHECK(bad < 0, "round %d: a get's reply from node %d came before its "
              "earlier put was done here (byte %ld differs)", (int)k, from, bad);
        /* The block is read: the writer may put the next one. */
        OK(comm_notify(from, USER_REG, (uint64_t)(W_RO + 1 + rank) * 8, k));
        if (!wait_ge(word(W_RO + 1 + to), k, "a reader's ack"))
            exit(1);
    }
    free(src);
    barrier();
}

void group_onesided(void)
{
    test_get();
    test_put();
    test_fence();
    test_notify();
    test_reply_order();
}

/* stream: a known volume between every pair, so that a test can hold the
 * network's byte counters against it: every node puts STREAM_ROUNDS times
 * WIN bytes into its window at every other node (STREAM_ROUNDS MiB per
 * ordered pair), each round checked by the receiver. */
enum { STREAM_ROUNDS = 4 };

void group_stream(void)
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
