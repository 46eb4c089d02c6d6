/* tests/comm/comm_check_send.c - comm_check's group "send": control
 * messages in order and intact from every node, echoes sent from a
 * handler on the service thread, and puts with notifies issued from a
 * handler. */
#include "comm_check.h"

#include <string.h>

enum { NSMALL = 2000, NBIG = 16, NECHO = 200, NPUTBACK = 50 };

struct msg_hdr {
    int32_t src;
    uint32_t seq;
};
static uint64_t rx_count[256], rx_echoed[256];
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

void group_send(void)
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
