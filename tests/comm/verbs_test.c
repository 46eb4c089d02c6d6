/* tests/comm/verbs_test.c - unit tests of what the verbs transport does
 * without a device: the contact card on the wire (round trip, every
 * malformed input), control-message checks, credit accounting (including
 * two nodes that run out at once), work-request chains for every
 * operation, and the messages printed for bad completions. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/verbs_int.h"

enum { NODES = 4, RANK = 2 };

/* A valid card of node RANK with a device and two regions. */
static void good_card(struct comm_card *c, uint32_t *qpn)
{
    memset(c, 0, sizeof *c);
    c->magic = COMM_CARD_MAGIC;
    c->rank = RANK;
    c->pid = 1234;
    c->transport = COMM_TRANSPORT_VERBS;
    strcpy(c->exe_id, "0123abcd");
    strcpy(c->lib_id, "4567ef01");
    strcpy(c->host, "node-a");
    strcpy(c->boot_id, "b0075");
    c->netns = 4026531992ull;
    for (int r = 0; r < COMM_REG_MAX; r++)
        c->shm.fd[r] = -1;
    c->shm.fd[0] = 7;
    c->region_len[0] = 1 << 20;
    c->region_len[3] = 16ull << 30;
    c->tcp.addr = 0x0100007f;
    c->tcp.port = 0x3930;
    c->verbs.present = 1;
    c->verbs.lid = 17;
    c->verbs.port = 1;
    c->verbs.mtu = 3;
    c->verbs.psn = 0xabcdef;
    c->verbs.gid[15] = 1;
    c->verbs.region[0].addr = 0x7f0000001000ull;
    c->verbs.region[0].rkey = 0x1111;
    c->verbs.region[0].flags = COMM_VERBS_REG_WHOLE;
    c->verbs.region[3].addr = 0x200000000000ull;
    c->verbs.region[3].rkey = 0x3333;
    c->verbs.region[3].flags = COMM_VERBS_REG_WHOLE;
    for (int p = 0; p < NODES; p++)
        qpn[p] = p == RANK ? 0 : 0x100 + (uint32_t)p;
}

static int decode(const struct comm_card *c, const uint32_t *qpn)
{
    unsigned char buf[sizeof *c + NODES * 4];
    comm_card_encode(c, qpn, NODES, buf);
    struct comm_card out;
    uint32_t oq[NODES];
    return comm_card_decode(buf, sizeof buf, RANK, NODES, &out, oq);
}

static void test_card_round_trip(void **state)
{
    (void)state;
    struct comm_card c, out;
    uint32_t qpn[NODES], oq[NODES];
    good_card(&c, qpn);
    unsigned char buf[sizeof c + NODES * 4];
    assert_int_equal(comm_card_wire_len(NODES), sizeof buf);
    comm_card_encode(&c, qpn, NODES, buf);
    /* the table follows the card, in host order */
    uint32_t q1;
    memcpy(&q1, buf + sizeof c + 4, 4);
    assert_int_equal(q1, 0x101);
    assert_int_equal(comm_card_decode(buf, sizeof buf, RANK, NODES, &out, oq), 0);
    assert_memory_equal(&out, &c, sizeof c);
    assert_memory_equal(oq, qpn, sizeof qpn);
    assert_int_equal(out.tcp.port, 0x3930);
    assert_int_equal(out.verbs.region[3].rkey, 0x3333);

    /* A node without a device: an all-zero verbs part and table. */
    memset(&c.verbs, 0, sizeof c.verbs);
    memset(qpn, 0, sizeof qpn);
    assert_int_equal(decode(&c, qpn), 0);
}

static void test_card_malformed_common(void **state)
{
    (void)state;
    struct comm_card c, out;
    uint32_t qpn[NODES], oq[NODES];
    unsigned char buf[sizeof c + NODES * 4 + 8];

    good_card(&c, qpn);
    comm_card_encode(&c, qpn, NODES, buf);
    /* wrong length, both ways, and a table for another job size */
    assert_int_equal(comm_card_decode(buf, sizeof c + NODES * 4 - 1, RANK,
                                      NODES, &out, oq), -EPROTO);
    assert_int_equal(comm_card_decode(buf, sizeof c + NODES * 4 + 4, RANK,
                                      NODES, &out, oq), -EPROTO);
    assert_int_equal(comm_card_decode(buf, sizeof c + NODES * 4, RANK,
                                      NODES + 1, &out, oq), -EPROTO);
    assert_int_equal(comm_card_decode(buf, sizeof c + NODES * 4, RANK + 1,
                                      NODES, &out, oq), -EPROTO); /* rank */

    good_card(&c, qpn);
    c.magic = 0x6f6d7064u; /* the layout without parts */
    assert_int_equal(decode(&c, qpn), -EPROTO);
    good_card(&c, qpn);
    c.transport = COMM_TRANSPORT_KINDS;
    assert_int_equal(decode(&c, qpn), -EPROTO);
    good_card(&c, qpn);
    memset(c.host, 'x', sizeof c.host);
    assert_int_equal(decode(&c, qpn), -EPROTO);
    good_card(&c, qpn);
    memset(c.exe_id, 'x', sizeof c.exe_id);
    assert_int_equal(decode(&c, qpn), -EPROTO);
    good_card(&c, qpn);
    memset(c.lib_id, 'x', sizeof c.lib_id);
    assert_int_equal(decode(&c, qpn), -EPROTO);
    good_card(&c, qpn);
    memset(c.boot_id, 'x', sizeof c.boot_id);
    assert_int_equal(decode(&c, qpn), -EPROTO);
    good_card(&c, qpn);
    c.shm.fd[5] = 9; /* a memfd for a region that is not registered */
    assert_int_equal(decode(&c, qpn), -EPROTO);
}

static void test_card_malformed_verbs(void **state)
{
    (void)state;
    struct comm_card c;
    uint32_t qpn[NODES];
#define BAD(stmt)                                                              \
    do {                                                                       \
        good_card(&c, qpn);                                                    \
        assert_int_equal(decode(&c, qpn), 0);                                  \
        stmt;                                                                  \
        assert_int_equal(decode(&c, qpn), -EPROTO);                            \
    } while (0)
    BAD(c.verbs.present = 2);
    BAD(c.verbs.present = 0);                 /* fields set without a device */
    BAD((memset(&c.verbs, 0, sizeof c.verbs))); /* table set without one */
    BAD(c.verbs.port = 0);
    BAD(c.verbs.mtu = 0);
    BAD(c.verbs.mtu = 6);
    BAD(c.verbs.psn = 0x1000000);
    BAD((c.verbs.lid = 0, memset(c.verbs.gid, 0, 16)));
    BAD(qpn[RANK] = 5);                       /* a queue pair to itself */
    BAD(qpn[0] = 0);
    BAD(qpn[1] = 1);
    BAD(qpn[3] = 0x1000000);
    BAD(c.verbs.region[0].flags = 0);
    BAD(c.verbs.region[0].flags = 2);
    BAD(c.verbs.region[0].addr = 0);
    BAD(c.verbs.region[3].addr = ~0ull - 100); /* wraps around */
    BAD(c.verbs.region[1].rkey = 5);          /* a key for no region */
    BAD(c.verbs.region[1].addr = 0x1000);
    BAD(c.verbs.region[1].flags = COMM_VERBS_REG_WHOLE);
    /* registered in chunks: a shift in bounds, no rkey in the card */
    BAD(c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS | 26 << COMM_VERBS_REG_SHIFT);
    BAD((c.verbs.region[3].rkey = 0, c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS));
    BAD((c.verbs.region[3].rkey = 0,
         c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS | 11 << COMM_VERBS_REG_SHIFT));
    BAD((c.verbs.region[3].rkey = 0,
         c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS | 41 << COMM_VERBS_REG_SHIFT));
    BAD((c.verbs.region[3].rkey = 0,
         c.verbs.region[3].flags = COMM_VERBS_REG_WHOLE | COMM_VERBS_REG_CHUNKS |
                                   26 << COMM_VERBS_REG_SHIFT));
    BAD(c.verbs.region[1].flags = COMM_VERBS_REG_CHUNKS | 26 << COMM_VERBS_REG_SHIFT);
#undef BAD
    good_card(&c, qpn);
    c.verbs.region[3].rkey = 0;
    c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS | 26 << COMM_VERBS_REG_SHIFT;
    assert_int_equal(decode(&c, qpn), 0);
    c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS | 12 << COMM_VERBS_REG_SHIFT;
    assert_int_equal(decode(&c, qpn), 0);
    c.verbs.region[3].flags = COMM_VERBS_REG_CHUNKS | 40 << COMM_VERBS_REG_SHIFT;
    assert_int_equal(decode(&c, qpn), 0);
    /* LID alone (InfiniBand) and GID alone (RoCE) are both fine. */
    good_card(&c, qpn);
    memset(c.verbs.gid, 0, 16);
    assert_int_equal(decode(&c, qpn), 0);
    good_card(&c, qpn);
    c.verbs.lid = 0;
    assert_int_equal(decode(&c, qpn), 0);
}

static void test_msg_check(void **state)
{
    (void)state;
    char why[160];
    struct verbs_msg m = {.type = VMSG_SEND, .tag = 3, .len = 10};
    assert_int_equal(verbs_msg_check(&m, sizeof m + 10, why, sizeof why), 0);
    assert_int_equal(verbs_msg_check(&m, sizeof m + 9, why, sizeof why), -EPROTO);
    assert_int_equal(verbs_msg_check(&m, sizeof m - 1, why, sizeof why), -EPROTO);
    m.tag = COMM_TAG_MAX;
    assert_int_equal(verbs_msg_check(&m, sizeof m + 10, why, sizeof why), -EPROTO);
    m.tag = 3;
    m.credits = VERBS_RECV_DEPTH + 1;
    assert_int_equal(verbs_msg_check(&m, sizeof m + 10, why, sizeof why), -EPROTO);
    struct verbs_msg k = {.type = VMSG_RKEY, .region = 1, .off = 255};
    assert_int_equal(verbs_msg_check(&k, sizeof k, why, sizeof why), 0);
    k.region = COMM_REG_MAX;
    assert_int_equal(verbs_msg_check(&k, sizeof k, why, sizeof why), -EPROTO);
    k.region = -1;
    assert_int_equal(verbs_msg_check(&k, sizeof k, why, sizeof why), -EPROTO);
    k.region = 1;
    k.off = 1ull << 32; /* chunk numbers are 32 bits */
    assert_int_equal(verbs_msg_check(&k, sizeof k, why, sizeof why), -EPROTO);
    struct verbs_msg n = {.type = VMSG_NOTIFY, .region = 1, .off = 64};
    assert_int_equal(verbs_msg_check(&n, sizeof n, why, sizeof why), 0);
    n.off = 65;
    assert_int_equal(verbs_msg_check(&n, sizeof n, why, sizeof why), -EPROTO);
    n.off = 64;
    n.region = COMM_REG_MAX;
    assert_int_equal(verbs_msg_check(&n, sizeof n, why, sizeof why), -EPROTO);
    n.region = 1;
    n.len = 4; /* a notify carries no payload */
    assert_int_equal(verbs_msg_check(&n, sizeof n + 4, why, sizeof why), -EPROTO);
    struct verbs_msg a = {.type = VMSG_ATOMIC, .tag = VATOM_CAS, .region = 2};
    assert_int_equal(verbs_msg_check(&a, sizeof a, why, sizeof why), 0);
    a.tag = 2;
    assert_int_equal(verbs_msg_check(&a, sizeof a, why, sizeof why), -EPROTO);
    struct verbs_msg t = {.type = 0};
    assert_int_equal(verbs_msg_check(&t, sizeof t, why, sizeof why), -EPROTO);
    t.type = VMSG_TYPES;
    assert_int_equal(verbs_msg_check(&t, sizeof t, why, sizeof why), -EPROTO);
    struct verbs_msg big = {.type = VMSG_SEND, .len = COMM_MSG_MAX + 1};
    assert_int_equal(verbs_msg_check(&big, sizeof big + COMM_MSG_MAX + 1, why,
                                     sizeof why), -EPROTO);
}

static void test_credit_basic(void **state)
{
    (void)state;
    struct verbs_credit c;
    verbs_credit_init(&c, 8);
    /* seven ordinary messages; the eighth credit is the reserve */
    for (int i = 0; i < 7; i++)
        assert_int_equal(verbs_credit_take(&c, 0), 0);
    assert_int_equal(verbs_credit_take(&c, 0), -EAGAIN);
    assert_int_equal(verbs_credit_take(&c, 1), 0);
    assert_int_equal(verbs_credit_take(&c, 1), -EAGAIN);
    assert_int_equal(c.avail, 0);
    /* the peer cannot return more than it was given */
    assert_int_equal(verbs_credit_grant(&c, 9), -EPROTO);
    assert_int_equal(c.avail, 0);
    assert_int_equal(verbs_credit_grant(&c, 3), 0);
    assert_int_equal(c.avail, 3);
    assert_int_equal(verbs_credit_grant(&c, 6), -EPROTO);
    assert_int_equal(verbs_credit_grant(&c, 5), 0);
    assert_int_equal(c.avail, 8);
    assert_int_equal(verbs_credit_grant(&c, 1), -EPROTO);
    /* returning: worth a message at depth/2 */
    for (int i = 0; i < 3; i++)
        verbs_credit_reposted(&c);
    assert_false(verbs_credit_should_return(&c));
    verbs_credit_reposted(&c);
    assert_true(verbs_credit_should_return(&c));
    assert_int_equal(verbs_credit_piggyback(&c), 4);
    assert_int_equal(verbs_credit_piggyback(&c), 0);
    assert_false(verbs_credit_should_return(&c));
}

/* Two nodes each sending as fast as credits allow, with the receiver's
 * rules of verbs.c (re-post; send what is queued, which carries the credits
 * owed; else a credit message when they are worth one), messages in flight
 * delivered in a random interleaving (many seeds): every message arrives,
 * none finds its receive missing, and neither node is left with messages
 * queued while both wait. */
struct sim_msg {
    uint32_t credits;
    int data;
};
struct sim_node {
    struct verbs_credit cr;   /* toward the other node */
    int posted;               /* receives posted for the other node */
    int queued;               /* data messages waiting for credits */
    int got;                  /* data messages received */
};
enum { SIM_DEPTH = 4, SIM_MSGS = 300 };

static void sim_post(struct sim_node *a, struct sim_node *b,
                     struct sim_msg *fifo, int *tail, int data)
{
    assert_true(b->posted > 0);
    b->posted--;
    fifo[(*tail)++] = (struct sim_msg){verbs_credit_piggyback(&a->cr), data};
}

/* Sends what credits allow from a's queue. */
static void sim_flush(struct sim_node *a, struct sim_node *b,
                      struct sim_msg *fifo, int *tail)
{
    while (a->queued && verbs_credit_take(&a->cr, 0) == 0) {
        sim_post(a, b, fifo, tail, 1);
        a->queued--;
    }
}

static int sim_run(unsigned seed)
{
    static struct sim_msg fifo[2][4 * SIM_MSGS];
    struct sim_node n[2];
    int head[2] = {0, 0}, tail[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        verbs_credit_init(&n[i].cr, SIM_DEPTH);
        n[i].posted = SIM_DEPTH;
        n[i].queued = SIM_MSGS;
        n[i].got = 0;
    }
    sim_flush(&n[0], &n[1], fifo[0], &tail[0]);
    sim_flush(&n[1], &n[0], fifo[1], &tail[1]);
    for (;;) {
        int can0 = head[0] != tail[0], can1 = head[1] != tail[1];
        if (!can0 && !can1)
            break;
        seed = seed * 1103515245u + 12345u;
        int i = can0 && can1 ? (int)(seed >> 16) & 1 : can0 ? 0 : 1;
        /* deliver the oldest message from i to the other node */
        struct sim_node *a = &n[i], *b = &n[1 - i];
        struct sim_msg m = fifo[i][head[i]++];
        assert_int_equal(verbs_credit_grant(&b->cr, m.credits), 0);
        b->got += m.data;
        b->posted++;
        verbs_credit_reposted(&b->cr);
        sim_flush(b, a, fifo[1 - i], &tail[1 - i]);
        if (verbs_credit_should_return(&b->cr) &&
            verbs_credit_take(&b->cr, 1) == 0)
            sim_post(b, a, fifo[1 - i], &tail[1 - i], 0);
    }
    /* nothing in flight: a node with messages queued would wait forever */
    return n[0].queued == 0 && n[1].queued == 0 && n[0].got == SIM_MSGS &&
           n[1].got == SIM_MSGS;
}

static void test_credit_two_nodes(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 200; seed++)
        if (!sim_run(seed))
            fail_msg("seed %u: the nodes stopped with messages queued", seed);
}

static void test_wr_single_ops(void **state)
{
    (void)state;
    struct verbs_chain c = {.n = 0};
    char buf[64];
    uint64_t res;
    struct ibv_send_wr *w = verbs_wr_read(&c, buf, 0x11, 0x7000, 0x22, 48);
    assert_non_null(w);
    assert_int_equal(w->opcode, IBV_WR_RDMA_READ);
    assert_int_equal(w->wr.rdma.remote_addr, 0x7000);
    assert_int_equal(w->wr.rdma.rkey, 0x22);
    assert_int_equal(w->num_sge, 1);
    assert_ptr_equal((void *)(uintptr_t)w->sg_list->addr, buf);
    assert_int_equal(w->sg_list->length, 48);
    assert_int_equal(w->sg_list->lkey, 0x11);

    w = verbs_wr_write(&c, buf + 8, 0x12, 0x8000, 0x23, 16);
    assert_int_equal(w->opcode, IBV_WR_RDMA_WRITE);
    assert_int_equal(w->wr.rdma.remote_addr, 0x8000);
    assert_int_equal(w->wr.rdma.rkey, 0x23);
    assert_ptr_equal((void *)(uintptr_t)w->sg_list->addr, buf + 8);

    w = verbs_wr_fetch_add(&c, &res, 0x13, 0x9008, 0x24, 5);
    assert_int_equal(w->opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
    assert_int_equal(w->wr.atomic.remote_addr, 0x9008);
    assert_int_equal(w->wr.atomic.rkey, 0x24);
    assert_int_equal(w->wr.atomic.compare_add, 5);
    assert_int_equal(w->sg_list->length, 8);
    assert_ptr_equal((void *)(uintptr_t)w->sg_list->addr, &res);

    w = verbs_wr_cas(&c, &res, 0x14, 0xa010, 0x25, 7, 9);
    assert_int_equal(w->opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
    assert_int_equal(w->wr.atomic.compare_add, 7);
    assert_int_equal(w->wr.atomic.swap, 9);
    assert_int_equal(w->sg_list->length, 8);

    w = verbs_wr_send(&c, buf, 0x15, 40);
    assert_int_equal(w->opcode, IBV_WR_SEND);
    assert_int_equal(w->sg_list->length, 40);

    /* finish: linked in order, one completion at the end, with its id */
    struct ibv_send_wr *h = verbs_wr_finish(&c, 0xfeed);
    assert_ptr_equal(h, &c.wr[0]);
    int n = 0;
    for (struct ibv_send_wr *p = h; p; p = p->next, n++) {
        assert_ptr_equal(p->sg_list, &c.sge[n]);
        if (p->next)
            assert_int_equal(p->send_flags & IBV_SEND_SIGNALED, 0);
        else {
            assert_int_equal(p->send_flags & IBV_SEND_SIGNALED,
                             IBV_SEND_SIGNALED);
            assert_int_equal(p->wr_id, 0xfeed);
        }
    }
    assert_int_equal(n, 5);

    struct verbs_chain e = {.n = 0};
    assert_null(verbs_wr_finish(&e, 1));
    for (int i = 0; i < VERBS_CHAIN_MAX; i++)
        assert_non_null(verbs_wr_write(&e, buf, 1, 0, 1, 1));
    assert_null(verbs_wr_write(&e, buf, 1, 0, 1, 1));
}

/* A vectored put: every run's bytes land in the stage once, in order, and
 * each WRITE targets base + run offset; runs split where the stage or the
 * chain fills up and continue in the next chain. */
static void test_wr_putv(void **state)
{
    (void)state;
    enum { SRC = 4096 };
    static char src[SRC];
    for (int i = 0; i < SRC; i++)
        src[i] = (char)(i * 7 + 1);
    struct comm_run runs[] = {{0, 10}, {100, 50}, {1000, 300}, {2000, 5}};
    size_t nruns = 4, next = 0, done = 0, total = 365;
    char stage[128];
    char remote[SRC];
    memset(remote, 0, sizeof remote);
    size_t written = 0;
    int chains = 0;
    uint64_t wkey = VERBS_KEY_VALID | 0x41;
    struct verbs_chunks whole = {.addr = 0x100000, .len = SRC, .shift = 0,
                                 .nchunks = 1, .key = &wkey};
    while (next < nruns) {
        struct verbs_chain c = {.n = 0};
        size_t used = verbs_wr_putv(&c, stage, sizeof stage, 0x31, src, runs,
                                    nruns, &next, &done, &whole, 0);
        assert_true(used > 0 && used <= sizeof stage);
        struct ibv_send_wr *h = verbs_wr_finish(&c, 9);
        size_t at = 0;
        for (struct ibv_send_wr *w = h; w; w = w->next) {
            assert_int_equal(w->opcode, IBV_WR_RDMA_WRITE);
            assert_int_equal(w->wr.rdma.rkey, 0x41);
            assert_int_equal(w->sg_list->lkey, 0x31);
            assert_ptr_equal((void *)(uintptr_t)w->sg_list->addr, stage + at);
            uint64_t off = w->wr.rdma.remote_addr - 0x100000;
            assert_true(off + w->sg_list->length <= SRC);
            /* "the device" copies stage bytes to the remote address */
            memcpy(remote + off, stage + at, w->sg_list->length);
            at += w->sg_list->length;
        }
        assert_int_equal(at, used);
        written += used;
        chains++;
    }
    assert_int_equal(written, total);
    assert_int_equal(chains, 3); /* 365 bytes through a 128-byte stage */
    for (size_t k = 0; k < nruns; k++)
        assert_memory_equal(remote + runs[k].off, src + runs[k].off,
                            runs[k].len);
    /* nothing outside the runs */
    assert_int_equal(remote[10], 0);
    assert_int_equal(remote[99], 0);
    assert_int_equal(remote[1300], 0);

    /* more runs than a chain holds: the chain stops at VERBS_CHAIN_MAX */
    struct comm_run many[VERBS_CHAIN_MAX + 3];
    for (int i = 0; i < VERBS_CHAIN_MAX + 3; i++)
        many[i] = (struct comm_run){(uint32_t)i * 8, 4};
    struct verbs_chain c = {.n = 0};
    next = done = 0;
    char big[1024];
    verbs_wr_putv(&c, big, sizeof big, 1, src, many, VERBS_CHAIN_MAX + 3,
                  &next, &done, &whole, 0);
    assert_int_equal(c.n, VERBS_CHAIN_MAX);
    assert_int_equal(next, VERBS_CHAIN_MAX);
}

/* Chunk arithmetic: counts, lengths (the last chunk partial), and where
 * a range is split, at and around chunk edges, for zero lengths and for a
 * region covered by one key (shift 0). */
static void test_chunk_arith(void **state)
{
    (void)state;
    enum { SH = 12, CH = 1 << SH };
    assert_int_equal(verbs_chunk_count(0, SH), 0);
    assert_int_equal(verbs_chunk_count(1, SH), 1);
    assert_int_equal(verbs_chunk_count(CH, SH), 1);
    assert_int_equal(verbs_chunk_count(CH + 1, SH), 2);
    assert_int_equal(verbs_chunk_count(3 * CH, SH), 3);
    assert_int_equal(verbs_chunk_count(16ull << 30, 26), 256);
    assert_int_equal(verbs_chunk_count((16ull << 30) + 4096, 26), 257);
    assert_int_equal(verbs_chunk_count(0, 0), 0);
    assert_int_equal(verbs_chunk_count(16ull << 30, 0), 1);

    assert_int_equal(verbs_chunk_index(SH, 0), 0);
    assert_int_equal(verbs_chunk_index(SH, CH - 1), 0);
    assert_int_equal(verbs_chunk_index(SH, CH), 1);
    assert_int_equal(verbs_chunk_index(0, 12345678), 0);

    /* a region of 2.5 chunks: the last is half a chunk, none past it */
    uint64_t len = 2 * CH + CH / 2;
    assert_int_equal(verbs_chunk_len(len, SH, 0), CH);
    assert_int_equal(verbs_chunk_len(len, SH, 1), CH);
    assert_int_equal(verbs_chunk_len(len, SH, 2), CH / 2);
    assert_int_equal(verbs_chunk_len(len, SH, 3), 0);
    assert_int_equal(verbs_chunk_len(len, 0, 0), len);
    assert_int_equal(verbs_chunk_len(len, 0, 1), 0);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < verbs_chunk_count(len, SH); i++)
        sum += verbs_chunk_len(len, SH, i);
    assert_int_equal(sum, len);

    assert_int_equal(verbs_chunk_piece(SH, 0, CH), CH);       /* one whole */
    assert_int_equal(verbs_chunk_piece(SH, 0, CH + 1), CH);   /* one byte over */
    assert_int_equal(verbs_chunk_piece(SH, CH - 1, 8), 1);    /* last byte */
    assert_int_equal(verbs_chunk_piece(SH, CH, 8), 8);        /* at an edge */
    assert_int_equal(verbs_chunk_piece(SH, CH + 100, 10), 10);
    assert_int_equal(verbs_chunk_piece(SH, 100, 0), 0);
    assert_int_equal(verbs_chunk_piece(0, 100, 1ull << 40), 1ull << 40);
    /* pieces of a range spanning three chunks add up, each in one chunk */
    uint64_t off = CH - 10, n = 2 * CH + 20, at = off;
    int pieces = 0;
    while (at < off + n) {
        uint64_t k = verbs_chunk_piece(SH, at, off + n - at);
        assert_true(k > 0);
        assert_int_equal(verbs_chunk_index(SH, at), verbs_chunk_index(SH, at + k - 1));
        at += k;
        pieces++;
    }
    assert_int_equal(at, off + n);
    assert_int_equal(pieces, 4); /* 10, CH, CH, 10 */
}

/* Which rkeys a range needs: none for zero bytes, the one chunk of a range
 * ending or starting at an edge, both of a range across it; the rkey of
 * each offset once set; one key for a region registered whole. */
static void test_chunk_keys(void **state)
{
    (void)state;
    enum { SH = 12, CH = 1 << SH };
    uint64_t keys[3] = {0, 0, 0};
    struct verbs_chunks v = {.addr = 0x10000000, .len = 2 * CH + 100,
                             .shift = SH, .nchunks = 3, .key = keys};
    assert_int_equal(verbs_chunk_missing(&v, 0, 0), -1);
    assert_int_equal(verbs_chunk_missing(&v, CH, 0), -1);
    assert_int_equal(verbs_chunk_missing(&v, 0, CH), 0);
    assert_int_equal(verbs_chunk_missing(&v, CH - 8, 8), 0);
    assert_int_equal(verbs_chunk_missing(&v, CH, 8), 1);
    assert_int_equal(verbs_chunk_missing(&v, 2 * CH + 92, 8), 2); /* last word */
    verbs_chunk_set_rkey(&v, 0, 0);   /* a key of 0 is a key */
    assert_int_equal(verbs_chunk_missing(&v, 0, CH), -1);
    assert_int_equal(verbs_chunk_missing(&v, CH - 8, 16), 1);
    verbs_chunk_set_rkey(&v, 1, 0x2222);
    assert_int_equal(verbs_chunk_missing(&v, CH - 8, 16), -1);
    assert_int_equal(verbs_chunk_missing(&v, 0, 2 * CH + 1), 2);
    verbs_chunk_set_rkey(&v, 2, 0x3333);
    assert_int_equal(verbs_chunk_missing(&v, 0, 2 * CH + 100), -1);
    assert_int_equal(verbs_chunk_rkey(&v, 0), 0);
    assert_int_equal(verbs_chunk_rkey(&v, CH - 1), 0);
    assert_int_equal(verbs_chunk_rkey(&v, CH), 0x2222);
    assert_int_equal(verbs_chunk_rkey(&v, 2 * CH + 99), 0x3333);

    uint64_t one = 0;
    struct verbs_chunks w = {.addr = 0x1000, .len = 1ull << 34, .shift = 0,
                             .nchunks = 1, .key = &one};
    assert_int_equal(verbs_chunk_missing(&w, (1ull << 34) - 8, 8), 0);
    verbs_chunk_set_rkey(&w, 0, 0x77);
    assert_int_equal(verbs_chunk_missing(&w, 0, 1ull << 34), -1);
    assert_int_equal(verbs_chunk_rkey(&w, (1ull << 34) - 8), 0x77);
}

/* A vectored put whose runs cross an edge of the peer's chunks: the WRITE
 * is split there, each part carries its own chunk's rkey, and every byte
 * lands once at the right address. */
static void test_wr_putv_chunks(void **state)
{
    (void)state;
    enum { SH = 12, CH = 1 << SH, LEN = 4 * CH };
    static char src[LEN], remote[LEN];
    for (int i = 0; i < LEN; i++)
        src[i] = (char)(i * 13 + 5);
    memset(remote, 0, sizeof remote);
    uint64_t keys[4] = {VERBS_KEY_VALID | 0xa0, VERBS_KEY_VALID | 0xa1,
                        VERBS_KEY_VALID | 0xa2, VERBS_KEY_VALID | 0xa3};
    struct verbs_chunks v = {.addr = 0x40000000, .len = LEN, .shift = SH,
                             .nchunks = 4, .key = keys};
    uint64_t base = CH - 200;
    struct comm_run runs[] = {
        {0, 10},                      /* inside chunk 0 */
        {50, 100},                    /* inside chunk 0 */
        {170, 60},                    /* across the edge at CH: 2 WRITEs */
        {300, CH - 100},              /* ends exactly at 2 CH */
        {CH + 200, 8},                /* starts exactly at 2 CH */
        {CH + 300, CH + 200},         /* across the edge at 3 CH: 2 */
    };
    size_t nruns = 6, next = 0, done = 0;
    size_t total = 10 + 100 + 60 + (CH - 100) + 8 + (CH + 200);
    static char stage[3 * CH];
    struct verbs_chain c = {.n = 0};
    size_t used = verbs_wr_putv(&c, stage, sizeof stage, 0x31, src, runs,
                                nruns, &next, &done, &v, base);
    assert_int_equal(used, total);
    assert_int_equal(next, nruns);
    assert_int_equal(c.n, 8);
    size_t at = 0;
    for (struct ibv_send_wr *w = verbs_wr_finish(&c, 1); w; w = w->next) {
        uint64_t off = w->wr.rdma.remote_addr - v.addr;
        uint32_t len = w->sg_list->length;
        assert_true(len > 0);
        assert_true(off + len <= LEN);
        assert_int_equal(off >> SH, (off + len - 1) >> SH);   /* one chunk */
        assert_int_equal(w->wr.rdma.rkey, 0xa0 + (off >> SH));
        memcpy(remote + off, stage + at, len);
        at += len;
    }
    assert_int_equal(at, total);
    for (size_t k = 0; k < nruns; k++)
        assert_memory_equal(remote + base + runs[k].off, src + runs[k].off,
                            runs[k].len);
    assert_int_equal(remote[base + 10], 0);
    assert_int_equal(remote[base + 169], 0);
    assert_int_equal(remote[base + 230], 0);
}

/* The cap on pinned memory: up to it is fine, a byte over is not and says
 * to raise ulimit -l; no cap when unlimited; no wrap-around. */
static void test_pin_check(void **state)
{
    (void)state;
    char msg[320] = "";
    assert_int_equal(verbs_pin_check(0, 64 << 20, 64 << 20, 1, 1, msg, sizeof msg), 0);
    assert_int_equal(verbs_pin_check(8 << 20, 56 << 20, 64 << 20, 1, 1, msg,
                                     sizeof msg), 0);
    assert_int_equal(verbs_pin_check(8 << 20, (56 << 20) + 1, 64 << 20, 1, 1,
                                     msg, sizeof msg), -ENOMEM);
    assert_non_null(strstr(msg, "ulimit -l"));
    assert_non_null(strstr(msg, "node 1:"));
    assert_null(strchr(msg, '\n'));
    assert_int_equal(verbs_pin_check(UINT64_MAX - 5, 1ull << 40, UINT64_MAX, 0,
                                     1, msg, sizeof msg), 0);
    assert_int_equal(verbs_pin_check(1ull << 20, UINT64_MAX - 10, 1ull << 30,
                                     0, 1, msg, sizeof msg), -ENOMEM);
    assert_int_equal(verbs_pin_check(2ull << 30, 0, 1ull << 30, 0, 1, msg,
                                     sizeof msg), -ENOMEM);
}

static void test_wc_messages(void **state)
{
    (void)state;
    char buf[320];
    verbs_wc_message(buf, sizeof buf, 1, 3, verbs_op_name(IBV_WR_RDMA_READ, 0),
                     IBV_WC_RETRY_EXC_ERR, 0x81);
    assert_non_null(strstr(buf, "node 1: verbs RDMA READ (get) from node 3 "
                                "failed: "));
    assert_non_null(strstr(buf, ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR)));
    assert_non_null(strstr(buf, "vendor error 0x81"));
    assert_non_null(strstr(buf, "gone or unreachable"));
    verbs_wc_message(buf, sizeof buf, 0, 2, verbs_op_name(IBV_WR_RDMA_WRITE, 0),
                     IBV_WC_REM_ACCESS_ERR, 0);
    assert_non_null(strstr(buf, "RDMA WRITE (put) to node 2"));
    assert_non_null(strstr(buf, ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR)));
    assert_non_null(strstr(buf, "outside the registered memory"));
    assert_null(strchr(buf, '\n'));
    /* every operation has a name of its own */
    const char *names[] = {
        verbs_op_name(IBV_WR_RDMA_READ, 0), verbs_op_name(IBV_WR_RDMA_WRITE, 0),
        verbs_op_name(IBV_WR_ATOMIC_FETCH_AND_ADD, 0),
        verbs_op_name(IBV_WR_ATOMIC_CMP_AND_SWP, 0),
        verbs_op_name(IBV_WR_SEND, VMSG_SEND),
        verbs_op_name(IBV_WR_SEND, VMSG_NOTIFY),
        verbs_op_name(IBV_WR_SEND, VMSG_CREDIT),
        verbs_op_name(IBV_WR_SEND, VMSG_ATOMIC),
        verbs_op_name(IBV_WR_SEND, VMSG_ATOMIC_REP)};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(names); i++)
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(names[i], names[j]);
    /* every status the library knows maps to its own text */
    for (int s = IBV_WC_SUCCESS + 1; s <= IBV_WC_GENERAL_ERR; s++) {
        verbs_wc_message(buf, sizeof buf, 0, 1, "op", (enum ibv_wc_status)s, 0);
        assert_non_null(strstr(buf, ibv_wc_status_str((enum ibv_wc_status)s)));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_card_round_trip),
        cmocka_unit_test(test_card_malformed_common),
        cmocka_unit_test(test_card_malformed_verbs),
        cmocka_unit_test(test_msg_check),
        cmocka_unit_test(test_credit_basic),
        cmocka_unit_test(test_credit_two_nodes),
        cmocka_unit_test(test_wr_single_ops),
        cmocka_unit_test(test_wr_putv),
        cmocka_unit_test(test_chunk_arith),
        cmocka_unit_test(test_chunk_keys),
        cmocka_unit_test(test_wr_putv_chunks),
        cmocka_unit_test(test_pin_check),
        cmocka_unit_test(test_wc_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
