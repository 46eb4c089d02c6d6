/* comm/verbs_ops.c - the verbs transport's operations: RDMA READ, WRITE
 * (chains for vectored puts) and atomics, control messages under credits,
 * and reaping completions.
 *
 * Ordering, as comm.h promises, rests on the RC rule that a responder
 * executes the requests of one queue pair in the order they were posted,
 * and that a SEND's receive completes only after the data of every
 * earlier WRITE on that queue pair is placed:
 *  - get after puts to the same peer: the READ goes on the same QP behind
 *    the WRITEs, so the responder reads after it placed them;
 *  - notify after puts: the notify is a SEND on the same QP, applied by
 *    the owner's service thread (store-release, doorbell) when its receive
 *    completes, so a waiter that sees the value sees the puts;
 *  - fence: an 8-byte READ behind the WRITEs, waited for.
 *
 * Completions: a thread waiting for its own request polls the send CQ
 * while comm_wait_until spins, then sleeps on the doorbell, which the
 * service thread (verbs.c) rings for every completion it handles.  A bad
 * completion fails the job with ibv_wc_status_str, the peer and the
 * operation (verbs_wc_message). */
#include "verbs_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Completions                                                              */

static void slots_free(struct comm_transport *t, uint64_t mask)
{
    if (!mask)
        return;
    pthread_mutex_lock(&t->slot_lock);
    t->slot_free |= mask;
    pthread_mutex_unlock(&t->slot_lock);
}

static void send_done(struct comm_transport *t, const struct ibv_wc *wc)
{
    struct verbs_op *op = (struct verbs_op *)(uintptr_t)wc->wr_id;
    __atomic_fetch_sub(&t->ctx->peers[op->peer].sq_used, op->nwr,
                       __ATOMIC_RELEASE);
    slots_free(t, op->slots);
    /* A credit return can race the peer's normal exit (it tears its queue
     * pairs down right after the last barrier): its loss alone fails
     * nothing, and a peer that really died fails the next operation. */
    if (wc->status != IBV_WC_SUCCESS && op->msg_type == VMSG_CREDIT) {
        OMPDSM_TRACE(OMPDSM_TR_COMM, "verbs: credit return to node %d: %s",
                     op->peer, ibv_wc_status_str(wc->status));
    } else if (wc->status != IBV_WC_SUCCESS) {
        char msg[320];
        if (wc->status != IBV_WC_WR_FLUSH_ERR || !comm_g.failed)
            comm_set_failed("%s", verbs_wc_message(msg, sizeof msg, comm_g.rank,
                                                   op->peer, verbs_op_name(op->opcode, op->msg_type),
                                                   wc->status, wc->vendor_err));
        op->status = -EIO;
    }
    if (op->owned)
        free(op);
    else
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
}

/* Polls the send CQ once (trylock: one poller at a time); returns the
 * number of completions handled. */
int verbs_poll_send(struct comm_transport *t)
{
    if (pthread_mutex_trylock(&t->cq_lock))
        return 0;
    struct ibv_wc wc[VERBS_POLL_BATCH];
    int n = ibv_poll_cq(t->ctx->send_cq, VERBS_POLL_BATCH, wc);
    for (int i = 0; i < n; i++)
        send_done(t, &wc[i]);
    pthread_mutex_unlock(&t->cq_lock);
    if (n > 0)
        comm_doorbell_ring();
    return n > 0 ? n : 0;
}

struct op_wait {
    struct comm_transport *t;
    struct verbs_op *op;
};

static int op_done_pred(void *arg)
{
    struct op_wait *w = arg;
    if (__atomic_load_n(&w->op->done, __ATOMIC_ACQUIRE))
        return 1;
    verbs_poll_send(w->t);
    return __atomic_load_n(&w->op->done, __ATOMIC_ACQUIRE);
}

static int op_wait(struct comm_transport *t, struct verbs_op *op)
{
    struct op_wait w = {t, op};
    int rc = comm_wait_until(op_done_pred, &w);
    if (rc < 0)
        return rc;
    return op->status;
}

/* ------------------------------------------------------------------------ */
/* Posting                                                                  */

struct slot_wait {
    struct comm_transport *t;
    int want;
    uint64_t got;
};

static int slot_pred(void *arg)
{
    struct slot_wait *w = arg;
    verbs_poll_send(w->t);
    pthread_mutex_lock(&w->t->slot_lock);
    uint64_t f = w->t->slot_free;
    if (__builtin_popcountll(f) >= w->want) {
        for (int i = 0; i < w->want; i++) {
            uint64_t bit = f & -f;
            w->got |= bit;
            f &= ~bit;
        }
        w->t->slot_free = f;
    }
    pthread_mutex_unlock(&w->t->slot_lock);
    return w->got != 0;
}

/* Takes one staging slot (waiting for completions to free one). */
static int slot_take(struct comm_transport *t, char **p)
{
    struct slot_wait w = {t, 1, 0};
    int rc = comm_wait_until(slot_pred, &w);
    if (rc < 0)
        return rc;
    *p = t->ctx->stage + (size_t)__builtin_ctzll(w.got) * VERBS_SLOT;
    return __builtin_ctzll(w.got);
}

struct sq_wait {
    struct comm_transport *t;
    struct verbs_peer *vp;
    int n;
};

static int sq_pred(void *arg)
{
    struct sq_wait *w = arg;
    verbs_poll_send(w->t);
    int used = __atomic_load_n(&w->vp->sq_used, __ATOMIC_ACQUIRE);
    while (used + w->n <= VERBS_SQ_DEPTH)
        if (__atomic_compare_exchange_n(&w->vp->sq_used, &used, used + w->n, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

/* Posts a finished chain on peer's queue pair once the send queue has
 * room for it (completions make room without any lock of ours, so this
 * may wait with vp->lock held). */
static int post_chain(struct comm_transport *t, int peer, struct verbs_chain *ch,
                      struct verbs_op *op)
{
    struct verbs_peer *vp = &t->ctx->peers[peer];
    op->peer = peer;
    op->nwr = ch->n;
    op->opcode = ch->wr[ch->n - 1].opcode;
    struct sq_wait w = {t, vp, ch->n};
    int rc = comm_wait_until(sq_pred, &w);
    if (rc < 0)
        return rc;
    struct ibv_send_wr *bad;
    int e = ibv_post_send(vp->qp, verbs_wr_finish(ch, (uint64_t)(uintptr_t)op),
                          &bad);
    if (e) {
        __atomic_fetch_sub(&vp->sq_used, ch->n, __ATOMIC_RELEASE);
        comm_set_failed("node %d: verbs %s to node %d: ibv_post_send: %s",
                        comm_g.rank, verbs_op_name(op->opcode, op->msg_type),
                        peer, strerror(e));
        return -e;
    }
    return 0;
}

/* Posts a chain that reads from staging slot s, which the completion
 * frees; on failure the slot is freed here. */
static int post_staged(struct comm_transport *t, int peer,
                       struct verbs_chain *ch, int s)
{
    struct verbs_op *op = calloc(1, sizeof *op);
    if (!op) {
        slots_free(t, 1ull << s);
        return -ENOMEM;
    }
    op->owned = 1;
    op->slots = 1ull << s;
    int rc = post_chain(t, peer, ch, op);
    if (rc < 0) {
        slots_free(t, op->slots);
        free(op);
    }
    return rc;
}

static int send_msg(struct comm_transport *t, int peer, struct verbs_msg *m,
                    const void *payload, size_t plen);

/* Peer's region as this node addresses it, after checking [off, off+len)
 * against the size every node registered; NULL after saying why. */
static struct verbs_chunks *remote(struct comm_transport *t, int peer,
                                   int region, uint64_t off, size_t len,
                                   const char *what)
{
    if (region < 0 || region >= COMM_REG_MAX ||
        !t->ctx->peers[peer].view[region].key ||
        off > comm_g.cards[peer].region_len[region] ||
        len > comm_g.cards[peer].region_len[region] - off) {
        ompdsm_err("verbs %s to node %d: region %d offset %llu length %zu is "
                   "outside its registered memory", what, peer, region,
                   (unsigned long long)off, len);
        return NULL;
    }
    return &t->ctx->peers[peer].view[region];
}

/* Makes sure the rkeys of every chunk of [off, off+len) in peer's region
 * are known, asking the owner to register those it has not told us of
 * (VMSG_RKEY).  Never called on the service thread: the reply is handled
 * there (handlers do not block on other nodes, comm.h). */
static int remote_keys(struct comm_transport *t, int peer, int region,
                       struct verbs_chunks *v, uint64_t off, size_t len,
                       const char *what)
{
    int64_t i;
    while ((i = verbs_chunk_missing(v, off, len)) >= 0) {
        struct verbs_op op = {.slots = 0};
        struct verbs_msg m = {.type = VMSG_RKEY, .region = region,
                              .off = (uint64_t)i,
                              .id = (uint64_t)(uintptr_t)&op};
        int rc = send_msg(t, peer, &m, NULL, 0);
        if (rc == 0)
            rc = op_wait(t, &op);
        if (rc < 0) {
            if (op.done)
                comm_set_failed("node %d: verbs %s: node %d could not register "
                                "chunk %lld of region %d (its message says "
                                "why)", comm_g.rank, what, peer, (long long)i,
                                region);
            return rc;
        }
        verbs_chunk_set_rkey(v, (uint32_t)i, (uint32_t)op.value);
        OMPDSM_TRACE(OMPDSM_TR_COMM, "verbs: node %d region %d chunk %lld: "
                     "rkey 0x%x", peer, region, (long long)i,
                     (unsigned)op.value);
    }
    return 0;
}

int verbs_put(struct comm_transport *t, int peer, int region,
                     uint64_t off, const void *src, size_t len)
{
    struct verbs_chunks *v = remote(t, peer, region, off, len, "put");
    if (!v)
        return -EFAULT;
    int rc = remote_keys(t, peer, region, v, off, len, "put");
    /* Staged in slot-sized pieces (src may be reused once we return), each
     * inside one of the peer's chunks. */
    size_t n = 0;
    for (size_t done = 0; !rc && done < len; done += n) {
        n = len - done < VERBS_SLOT ? len - done : VERBS_SLOT;
        n = (size_t)verbs_chunk_piece(v->shift, off + done, n);
        char *stage;
        int s = slot_take(t, &stage);
        if (s < 0)
            return s;
        memcpy(stage, (const char *)src + done, n);
        struct verbs_chain ch = {.n = 0};
        verbs_wr_write(&ch, stage, t->ctx->stage_mr->lkey,
                       v->addr + off + done, verbs_chunk_rkey(v, off + done),
                       (uint32_t)n);
        rc = post_staged(t, peer, &ch, s);
    }
    return rc;
}

int verbs_putv(struct comm_transport *t, int peer, int region,
                      uint64_t base, const void *src,
                      const struct comm_run *runs, size_t nruns)
{
    const struct comm_run *last = &runs[nruns - 1];
    size_t span = (size_t)last->off + last->len;
    struct verbs_chunks *v = remote(t, peer, region, base, span, "put");
    if (!v)
        return -EFAULT;
    int rc = remote_keys(t, peer, region, v, base, span, "put");
    size_t next = 0, done = 0;
    while (!rc && next < nruns) {
        char *stage;
        int s = slot_take(t, &stage);
        if (s < 0)
            return s;
        struct verbs_chain ch = {.n = 0};
        verbs_wr_putv(&ch, stage, VERBS_SLOT, t->ctx->stage_mr->lkey, src, runs,
                      nruns, &next, &done, v, base);
        rc = post_staged(t, peer, &ch, s);
    }
    return rc;
}

/* When [p, p+len) lies inside one of this node's regions (a get straight
 * into the DSM's memory): 1, the local key of p's chunk (registered if
 * need be), and in *n how much of the range that chunk holds; 0 with *n
 * len otherwise (the get goes through staging).  -ENOMEM when the chunk
 * cannot be registered (said why). */
static int local_key(struct verbs_ctx *c, const void *p, size_t len,
                     uint32_t *lkey, size_t *n)
{
    *lkey = 0;
    *n = len;
    for (int r = 0; r < COMM_REG_MAX; r++) {
        const char *b = comm_g.reg[r].base;
        if (!c->reg[r].mr || (const char *)p < b ||
            (size_t)((const char *)p - b) >= comm_g.reg[r].len ||
            len > comm_g.reg[r].len - (size_t)((const char *)p - b))
            continue;
        uint64_t off = (uint64_t)((const char *)p - b);
        struct ibv_mr *mr =
            verbs_local_mr(c, r, verbs_chunk_index(c->reg[r].shift, off));
        if (!mr)
            return -ENOMEM;
        *lkey = mr->lkey;
        *n = (size_t)verbs_chunk_piece(c->reg[r].shift, off, len);
        return 1;
    }
    return 0;
}

int verbs_get(struct comm_transport *t, int peer, int region,
                     uint64_t off, void *dst, size_t len)
{
    struct verbs_chunks *v = remote(t, peer, region, off, len, "get");
    if (!v)
        return -EFAULT;
    int rc = remote_keys(t, peer, region, v, off, len, "get");
    if (rc < 0)
        return rc;
    for (size_t done = 0; done < len;) {
        uint32_t lkey;
        size_t n;
        int direct = local_key(t->ctx, (char *)dst + done, len - done, &lkey,
                               &n);
        if (direct < 0)
            return direct;
        char *stage = NULL;
        int s = -1;
        if (!direct) {
            if ((s = slot_take(t, &stage)) < 0)
                return s;
            n = n < VERBS_SLOT ? n : VERBS_SLOT;
        } else if (n > (1u << 30)) {
            n = 1u << 30;
        }
        /* One READ stays inside one chunk of each side. */
        n = (size_t)verbs_chunk_piece(v->shift, off + done, n);
        struct verbs_chain ch = {.n = 0};
        verbs_wr_read(&ch, stage ? stage : (char *)dst + done,
                      stage ? t->ctx->stage_mr->lkey : lkey,
                      v->addr + off + done, verbs_chunk_rkey(v, off + done),
                      (uint32_t)n);
        struct verbs_op op = {.slots = 0};
        rc = post_chain(t, peer, &ch, &op);
        if (!rc)
            rc = op_wait(t, &op);
        if (!rc && stage)
            memcpy((char *)dst + done, stage, n);
        if (s >= 0)
            slots_free(t, 1ull << s);
        if (rc < 0)
            return rc;
        done += n;
    }
    return 0;
}


/* Device atomics when they are atomic with the owner's CPU
 * (IBV_ATOMIC_GLOB); otherwise the owner's service thread performs them
 * (VMSG_ATOMIC), as comm.h promises atomicity with C11 atomics there. */
static int atomic_op(struct comm_transport *t, int peer, int region,
                     uint64_t off, int kind, uint64_t a, uint64_t b,
                     uint64_t *old)
{
    const char *what = kind == VATOM_CAS ? "compare-swap" : "fetch-add";
    struct verbs_chunks *v = remote(t, peer, region, off, 8, what);
    if (!v)
        return -EFAULT;
    int rc;
    struct verbs_op op = {.slots = 0};
    if (!t->ctx->hw_atomics) {
        struct verbs_msg m = {.type = VMSG_ATOMIC, .tag = (uint8_t)kind,
                              .region = region, .off = off, .a = a, .b = b,
                              .id = (uint64_t)(uintptr_t)&op};
        /* The reply, not the send's completion, finishes op. */
        if ((rc = send_msg(t, peer, &m, NULL, 0)) < 0 ||
            (rc = op_wait(t, &op)) < 0)
            return rc;
        *old = op.value;
        return 0;
    }
    /* An aligned word never spans two chunks. */
    if ((rc = remote_keys(t, peer, region, v, off, 8, what)) < 0)
        return rc;
    uint64_t raddr = v->addr + off;
    uint32_t rkey = verbs_chunk_rkey(v, off);
    char *stage;
    int s = slot_take(t, &stage);
    if (s < 0)
        return s;
    struct verbs_chain ch = {.n = 0};
    if (kind == VATOM_CAS)
        verbs_wr_cas(&ch, (uint64_t *)stage, t->ctx->stage_mr->lkey, raddr,
                     rkey, a, b);
    else
        verbs_wr_fetch_add(&ch, (uint64_t *)stage, t->ctx->stage_mr->lkey,
                           raddr, rkey, a);
    rc = post_chain(t, peer, &ch, &op);
    if (!rc)
        rc = op_wait(t, &op);
    if (!rc)
        memcpy(old, stage, 8);
    slots_free(t, 1ull << s);
    return rc;
}

int verbs_fetch_add(struct comm_transport *t, int peer, int region,
                           uint64_t off, uint64_t add, uint64_t *old)
{
    return atomic_op(t, peer, region, off, VATOM_FADD, add, 0, old);
}

int verbs_cas(struct comm_transport *t, int peer, int region,
                     uint64_t off, uint64_t expect, uint64_t desired,
                     uint64_t *old)
{
    return atomic_op(t, peer, region, off, VATOM_CAS, expect, desired, old);
}

/* A READ behind the earlier WRITEs on the queue pair returns only after
 * the responder placed them. */
int verbs_fence(struct comm_transport *t, int peer)
{
    struct verbs_chunks *v = remote(t, peer, COMM_REG_SYNC, 0, 8, "fence");
    if (!v)
        return -EFAULT;
    int rc = remote_keys(t, peer, COMM_REG_SYNC, v, 0, 8, "fence");
    if (rc < 0)
        return rc;
    char *stage;
    int s = slot_take(t, &stage);
    if (s < 0)
        return s;
    struct verbs_chain ch = {.n = 0};
    verbs_wr_read(&ch, stage, t->ctx->stage_mr->lkey, v->addr,
                  verbs_chunk_rkey(v, 0), 8);
    struct verbs_op op = {.slots = 0};
    rc = post_chain(t, peer, &ch, &op);
    if (!rc)
        rc = op_wait(t, &op);
    slots_free(t, 1ull << s);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Control messages                                                         */

/* Posts one message (header + payload) with the credits owed; caller
 * holds vp->lock and took a credit. */
static int post_msg_locked(struct comm_transport *t, int peer,
                           struct verbs_peer *vp, struct verbs_msg *m,
                           const void *payload, size_t plen)
{
    /* Slots come back only through completions, which need no lock of
     * ours: waiting here for one with vp->lock held cannot deadlock. */
    char *stage;
    int s = slot_take(t, &stage);
    if (s < 0)
        return s;
    m->credits = (uint16_t)verbs_credit_piggyback(&vp->credit);
    m->len = (uint32_t)plen;
    memcpy(stage, m, sizeof *m);
    if (plen)
        memcpy(stage + sizeof *m, payload, plen);
    struct verbs_chain ch = {.n = 0};
    verbs_wr_send(&ch, stage, t->ctx->stage_mr->lkey,
                  (uint32_t)(sizeof *m + plen));
    struct verbs_op *op = calloc(1, sizeof *op);
    if (!op) {
        slots_free(t, 1ull << s);
        return -ENOMEM;
    }
    op->owned = 1;
    op->slots = 1ull << s;
    op->msg_type = m->type;
    int rc = post_chain(t, peer, &ch, op);
    if (rc < 0) {
        slots_free(t, op->slots);
        free(op);
    }
    return rc;
}

/* Sends what credits allow from the pending list (caller holds vp->lock). */
static int flush_pending(struct comm_transport *t, int peer,
                         struct verbs_peer *vp)
{
    while (vp->pend_head && verbs_credit_take(&vp->credit, 0) == 0) {
        struct verbs_pending *q = vp->pend_head;
        int rc = post_msg_locked(t, peer, vp, &q->msg, &q->msg + 1,
                                 q->len);
        if (rc < 0)
            return rc;
        vp->pend_head = q->next;
        if (!vp->pend_head)
            vp->pend_tail = NULL;
        free(q);
    }
    return 0;
}

/* Never waits for the peer: without a credit the message is queued, in
 * order, and sent when credits come back (handlers may send). */
static int send_msg(struct comm_transport *t, int peer, struct verbs_msg *m,
                    const void *payload, size_t plen)
{
    struct verbs_peer *vp = &t->ctx->peers[peer];
    int rc = 0;
    pthread_mutex_lock(&vp->lock);
    if (!vp->pend_head && verbs_credit_take(&vp->credit, 0) == 0) {
        rc = post_msg_locked(t, peer, vp, m, payload, plen);
    } else {
        struct verbs_pending *q = malloc(sizeof *q + plen);
        if (!q) {
            rc = -ENOMEM;
        } else {
            q->next = NULL;
            q->len = plen;
            q->msg = *m;
            if (plen)
                memcpy(&q->msg + 1, payload, plen);
            if (vp->pend_tail)
                vp->pend_tail->next = q;
            else
                vp->pend_head = q;
            vp->pend_tail = q;
        }
    }
    pthread_mutex_unlock(&vp->lock);
    return rc;
}

int verbs_send(struct comm_transport *t, int peer, int tag,
                      const void *buf, size_t len)
{
    struct verbs_msg m = {.type = VMSG_SEND, .tag = (uint8_t)tag};
    return send_msg(t, peer, &m, buf, len);
}

int verbs_notify(struct comm_transport *t, int peer, int region,
                        uint64_t off, uint64_t value)
{
    if (!remote(t, peer, region, off, 8, "notify"))
        return -EFAULT;
    struct verbs_msg m = {.type = VMSG_NOTIFY, .region = region, .off = off,
                          .a = value};
    return send_msg(t, peer, &m, NULL, 0);
}

/* A message arrived from peer (service thread): act on it, post the
 * receive again, return credits. */
static void handle_recv(struct comm_transport *t, const struct ibv_wc *wc)
{
    struct verbs_ctx *c = t->ctx;
    int peer = (int)(wc->wr_id >> 16), slot = (int)(wc->wr_id & 0xffff);
    if (wc->status != IBV_WC_SUCCESS) {
        char msg[320];
        if (wc->status != IBV_WC_WR_FLUSH_ERR || !comm_g.failed)
            comm_set_failed("%s", verbs_wc_message(msg, sizeof msg, comm_g.rank,
                                                   peer, "receive", wc->status,
                                                   wc->vendor_err));
        return;
    }
    struct verbs_peer *vp = &c->peers[peer];
    char *buf = vp->rbuf + (size_t)slot * VERBS_MSG_BUF;
    const struct verbs_msg *m = (const struct verbs_msg *)buf;
    char why[160];
    if (verbs_msg_check(m, wc->byte_len, why, sizeof why) < 0) {
        comm_set_failed("node %d: verbs: node %d broke the protocol: %s",
                        comm_g.rank, peer, why);
        return;
    }
    pthread_mutex_lock(&vp->lock);
    int bad = verbs_credit_grant(&vp->credit, m->credits);
    pthread_mutex_unlock(&vp->lock);
    if (bad) {
        comm_set_failed("node %d: verbs: node %d returned %u credits it did "
                        "not owe", comm_g.rank, peer, m->credits);
        return;
    }
    switch (m->type) {
    case VMSG_SEND:
        comm_dispatch(peer, m->tag, m + 1, m->len);
        break;
    case VMSG_NOTIFY:
        if (comm_local_check(m->region, m->off, 8, "notify", peer) == 0)
            comm_local_notify(m->region, m->off, m->a);
        break;
    case VMSG_ATOMIC: {
        struct verbs_msg r = {.type = VMSG_ATOMIC_REP, .id = m->id};
        r.status = comm_local_check(m->region, m->off, 8, "atomic", peer);
        if (!r.status) {
            uint64_t *w = (uint64_t *)((char *)comm_g.reg[m->region].base + m->off);
            if (m->tag == VATOM_CAS) {
                uint64_t e = m->a;
                __atomic_compare_exchange_n(w, &e, m->b, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST);
                r.a = e;
            } else {
                r.a = __atomic_fetch_add(w, m->a, __ATOMIC_SEQ_CST);
            }
        }
        send_msg(t, peer, &r, NULL, 0);
        break;
    }
    case VMSG_RKEY: {
        struct verbs_msg r = {.type = VMSG_RKEY_REP, .id = m->id};
        struct ibv_mr *mr = NULL;
        if (c->reg[m->region].shift &&
            m->off < c->reg[m->region].nchunks) {
            mr = verbs_local_mr(c, m->region, (uint32_t)m->off);
            r.status = mr ? 0 : -ENOMEM;
        } else {
            ompdsm_err("verbs: node %d asked for chunk %llu of region %d, "
                       "which is not registered in chunks", peer,
                       (unsigned long long)m->off, m->region);
            r.status = -EINVAL;
        }
        r.a = mr ? mr->rkey : 0;
        send_msg(t, peer, &r, NULL, 0);
        break;
    }
    case VMSG_RKEY_REP:
    case VMSG_ATOMIC_REP: {
        struct verbs_op *op = (struct verbs_op *)(uintptr_t)m->id;
        op->value = m->a;
        op->status = m->status;
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
        comm_doorbell_ring();
        break;
    }
    default:
        break;
    }
    struct ibv_sge s = {.addr = (uint64_t)(uintptr_t)buf,
                        .length = VERBS_MSG_BUF, .lkey = c->rbuf_mr->lkey};
    struct ibv_recv_wr w = {.wr_id = wc->wr_id, .sg_list = &s, .num_sge = 1},
                       *badw;
    int e = ibv_post_recv(vp->qp, &w, &badw);
    if (e) {
        comm_set_failed("node %d: verbs: posting a receive for node %d: %s",
                        comm_g.rank, peer, strerror(e));
        return;
    }
    pthread_mutex_lock(&vp->lock);
    verbs_credit_reposted(&vp->credit);
    int rc = flush_pending(t, peer, vp);
    /* Messages just sent carried the credits; if none could go (queued
     * ones wait for credits too), a credit message must, or two nodes
     * that both ran out would wait for each other. */
    if (!rc && verbs_credit_should_return(&vp->credit) &&
        verbs_credit_take(&vp->credit, 1) == 0) {
        struct verbs_msg cm = {.type = VMSG_CREDIT};
        post_msg_locked(t, peer, vp, &cm, NULL, 0);
    }
    pthread_mutex_unlock(&vp->lock);
}


int verbs_poll_recv(struct comm_transport *t)
{
    struct ibv_wc wc[VERBS_POLL_BATCH];
    int n = ibv_poll_cq(t->ctx->recv_cq, VERBS_POLL_BATCH, wc);
    for (int i = 0; i < n; i++)
        handle_recv(t, &wc[i]);
    return n > 0 ? n : 0;
}

