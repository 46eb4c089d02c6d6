/* comm/verbs_wr.c - the device-free half of the verbs transport: building
 * send work-request chains, checking control messages, credit-based flow
 * control, and the messages printed for bad completions. */
#include "verbs_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- control messages ---- */

int verbs_msg_check(const struct verbs_msg *m, size_t len, char *why,
                    size_t whylen)
{
    if (len < sizeof *m) {
        snprintf(why, whylen, "message of %zu bytes, shorter than its header",
                 len);
        return -EPROTO;
    }
    if (m->type == 0 || m->type >= VMSG_TYPES) {
        snprintf(why, whylen, "message type %u is unknown", m->type);
        return -EPROTO;
    }
    if (m->len != len - sizeof *m || m->len > COMM_MSG_MAX ||
        (m->type != VMSG_SEND && m->len)) {
        snprintf(why, whylen, "message type %u says %u payload bytes, %zu "
                 "arrived", m->type, m->len, len - sizeof *m);
        return -EPROTO;
    }
    if (m->credits > VERBS_RECV_DEPTH) {
        snprintf(why, whylen, "message returns %u credits (at most %d)",
                 m->credits, VERBS_RECV_DEPTH);
        return -EPROTO;
    }
    if (m->type == VMSG_SEND && m->tag >= COMM_TAG_MAX) {
        snprintf(why, whylen, "message tag %u (at most %d)", m->tag,
                 COMM_TAG_MAX - 1);
        return -EPROTO;
    }
    if (m->type == VMSG_RKEY &&
        (m->region < 0 || m->region >= COMM_REG_MAX || m->off > UINT32_MAX)) {
        snprintf(why, whylen, "key request for region %d chunk %llu",
                 m->region, (unsigned long long)m->off);
        return -EPROTO;
    }
    if ((m->type == VMSG_NOTIFY || m->type == VMSG_ATOMIC) &&
        (m->region < 0 || m->region >= COMM_REG_MAX || (m->off & 7))) {
        snprintf(why, whylen, "region %d offset %llu is not an aligned word "
                 "of a region", m->region, (unsigned long long)m->off);
        return -EPROTO;
    }
    if (m->type == VMSG_ATOMIC && m->tag > VATOM_CAS) {
        snprintf(why, whylen, "atomic kind %u is unknown", m->tag);
        return -EPROTO;
    }
    return 0;
}

/* ---- credits ---- */

void verbs_credit_init(struct verbs_credit *c, uint32_t depth)
{
    c->depth = depth;
    c->avail = depth;
    c->owed = 0;
}

int verbs_credit_take(struct verbs_credit *c, int credit_only)
{
    if (c->avail > 1 || (credit_only && c->avail == 1)) {
        c->avail--;
        return 0;
    }
    return -EAGAIN;
}

int verbs_credit_grant(struct verbs_credit *c, uint32_t n)
{
    if (n > c->depth - c->avail)
        return -EPROTO;
    c->avail += n;
    return 0;
}

void verbs_credit_reposted(struct verbs_credit *c)
{
    c->owed++;
}

uint32_t verbs_credit_piggyback(struct verbs_credit *c)
{
    uint32_t n = c->owed;
    c->owed = 0;
    return n;
}

int verbs_credit_should_return(const struct verbs_credit *c)
{
    return c->owed >= c->depth / 2;
}

/* ---- registration in chunks ---- */

uint32_t verbs_chunk_count(uint64_t len, unsigned shift)
{
    if (!len)
        return 0;
    if (!shift)
        return 1;
    return (uint32_t)(((len - 1) >> shift) + 1);
}

uint32_t verbs_chunk_index(unsigned shift, uint64_t off)
{
    return shift ? (uint32_t)(off >> shift) : 0;
}

uint64_t verbs_chunk_len(uint64_t len, unsigned shift, uint32_t i)
{
    if (!shift)
        return i == 0 ? len : 0;
    uint64_t start = (uint64_t)i << shift;
    if (start >= len)
        return 0;
    uint64_t n = len - start;
    return n < (1ull << shift) ? n : 1ull << shift;
}

uint64_t verbs_chunk_piece(unsigned shift, uint64_t off, uint64_t n)
{
    if (!shift)
        return n;
    uint64_t left = (1ull << shift) - (off & ((1ull << shift) - 1));
    return n < left ? n : left;
}

int64_t verbs_chunk_missing(const struct verbs_chunks *v, uint64_t off,
                            uint64_t n)
{
    if (!n)
        return -1;
    uint32_t last = verbs_chunk_index(v->shift, off + n - 1);
    for (uint32_t i = verbs_chunk_index(v->shift, off); i <= last; i++)
        if (!(__atomic_load_n(&v->key[i], __ATOMIC_ACQUIRE) & VERBS_KEY_VALID))
            return i;
    return -1;
}

uint32_t verbs_chunk_rkey(const struct verbs_chunks *v, uint64_t off)
{
    return (uint32_t)__atomic_load_n(&v->key[verbs_chunk_index(v->shift, off)],
                                     __ATOMIC_ACQUIRE);
}

void verbs_chunk_set_rkey(struct verbs_chunks *v, uint32_t chunk, uint32_t rkey)
{
    __atomic_store_n(&v->key[chunk], VERBS_KEY_VALID | rkey, __ATOMIC_RELEASE);
}

int verbs_pin_check(uint64_t pinned, uint64_t add, uint64_t cap, int me,
                    int region, char *msg, size_t msglen)
{
    if (cap == UINT64_MAX || (pinned <= cap && add <= cap - pinned))
        return 0;
    snprintf(msg, msglen, "node %d: verbs: registering %llu KiB more of region "
             "%d would pin %llu KiB, over ulimit -l (%llu KiB) and the device "
             "has no on-demand paging: raise ulimit -l (unlimited), or lower "
             "OMPDSM_HEAP_SIZE or OMPDSM_IB_CHUNK", me,
             (unsigned long long)(add >> 10), region,
             (unsigned long long)((pinned + add) >> 10),
             (unsigned long long)(cap >> 10));
    return -ENOMEM;
}

/* ---- work requests ---- */

static struct ibv_send_wr *wr_add(struct verbs_chain *c, enum ibv_wr_opcode op,
                                  const void *local, uint32_t lkey,
                                  uint32_t len)
{
    if (c->n >= VERBS_CHAIN_MAX)
        return NULL;
    struct ibv_send_wr *w = &c->wr[c->n];
    struct ibv_sge *s = &c->sge[c->n];
    c->n++;
    memset(w, 0, sizeof *w);
    s->addr = (uint64_t)(uintptr_t)local;
    s->length = len;
    s->lkey = lkey;
    w->opcode = op;
    w->sg_list = s;
    w->num_sge = 1;
    return w;
}

static struct ibv_send_wr *wr_rdma(struct verbs_chain *c,
                                   enum ibv_wr_opcode op, const void *local,
                                   uint32_t lkey, uint64_t raddr,
                                   uint32_t rkey, uint32_t len)
{
    struct ibv_send_wr *w = wr_add(c, op, local, lkey, len);
    if (w) {
        w->wr.rdma.remote_addr = raddr;
        w->wr.rdma.rkey = rkey;
    }
    return w;
}

struct ibv_send_wr *verbs_wr_read(struct verbs_chain *c, void *dst,
                                  uint32_t lkey, uint64_t raddr,
                                  uint32_t rkey, uint32_t len)
{
    return wr_rdma(c, IBV_WR_RDMA_READ, dst, lkey, raddr, rkey, len);
}

struct ibv_send_wr *verbs_wr_write(struct verbs_chain *c, const void *src,
                                   uint32_t lkey, uint64_t raddr,
                                   uint32_t rkey, uint32_t len)
{
    return wr_rdma(c, IBV_WR_RDMA_WRITE, src, lkey, raddr, rkey, len);
}

struct ibv_send_wr *verbs_wr_fetch_add(struct verbs_chain *c, uint64_t *res,
                                       uint32_t lkey, uint64_t raddr,
                                       uint32_t rkey, uint64_t add)
{
    struct ibv_send_wr *w = wr_add(c, IBV_WR_ATOMIC_FETCH_AND_ADD, res, lkey, 8);
    if (w) {
        w->wr.atomic.remote_addr = raddr;
        w->wr.atomic.rkey = rkey;
        w->wr.atomic.compare_add = add;
    }
    return w;
}

struct ibv_send_wr *verbs_wr_cas(struct verbs_chain *c, uint64_t *res,
                                 uint32_t lkey, uint64_t raddr, uint32_t rkey,
                                 uint64_t expect, uint64_t desired)
{
    struct ibv_send_wr *w = wr_add(c, IBV_WR_ATOMIC_CMP_AND_SWP, res, lkey, 8);
    if (w) {
        w->wr.atomic.remote_addr = raddr;
        w->wr.atomic.rkey = rkey;
        w->wr.atomic.compare_add = expect;
        w->wr.atomic.swap = desired;
    }
    return w;
}

struct ibv_send_wr *verbs_wr_send(struct verbs_chain *c, const void *msg,
                                  uint32_t lkey, uint32_t len)
{
    return wr_add(c, IBV_WR_SEND, msg, lkey, len);
}

size_t verbs_wr_putv(struct verbs_chain *c, char *stage, size_t cap,
                     uint32_t lkey, const void *src,
                     const struct comm_run *runs, size_t nruns, size_t *next,
                     size_t *done, const struct verbs_chunks *rv,
                     uint64_t base)
{
    size_t used = 0;
    while (*next < nruns && used < cap && c->n < VERBS_CHAIN_MAX) {
        const struct comm_run *r = &runs[*next];
        size_t take = r->len - *done;
        if (take > cap - used)
            take = cap - used;
        uint64_t off = (uint64_t)r->off + *done;
        take = (size_t)verbs_chunk_piece(rv->shift, base + off, take);
        memcpy(stage + used, (const char *)src + off, take);
        verbs_wr_write(c, stage + used, lkey, rv->addr + base + off,
                       verbs_chunk_rkey(rv, base + off), (uint32_t)take);
        used += take;
        *done += take;
        if (*done == r->len) {
            ++*next;
            *done = 0;
        }
    }
    return used;
}

struct ibv_send_wr *verbs_wr_finish(struct verbs_chain *c, uint64_t wr_id)
{
    if (!c->n)
        return NULL;
    for (int i = 0; i < c->n; i++)
        c->wr[i].next = i + 1 < c->n ? &c->wr[i + 1] : NULL;
    c->wr[c->n - 1].send_flags |= IBV_SEND_SIGNALED;
    c->wr[c->n - 1].wr_id = wr_id;
    return &c->wr[0];
}

/* ---- messages ---- */

const char *verbs_op_name(enum ibv_wr_opcode op, int msg_type)
{
    switch (op) {
    case IBV_WR_RDMA_READ:
        return "RDMA READ (get)";
    case IBV_WR_RDMA_WRITE:
        return "RDMA WRITE (put)";
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return "atomic fetch-add";
    case IBV_WR_ATOMIC_CMP_AND_SWP:
        return "atomic compare-swap";
    case IBV_WR_SEND:
        switch (msg_type) {
        case VMSG_SEND:
            return "SEND (control message)";
        case VMSG_NOTIFY:
            return "SEND (notify)";
        case VMSG_CREDIT:
            return "SEND (credit return)";
        case VMSG_ATOMIC:
            return "SEND (atomic request)";
        case VMSG_ATOMIC_REP:
            return "SEND (atomic reply)";
        case VMSG_RKEY:
            return "SEND (key request)";
        case VMSG_RKEY_REP:
            return "SEND (key reply)";
        default:
            return "SEND";
        }
    default:
        return "work request";
    }
}

const char *verbs_wc_message(char *buf, size_t len, int me, int peer,
                             const char *op, enum ibv_wc_status status,
                             uint32_t vendor_err)
{
    const char *hint = "";
    if (status == IBV_WC_RETRY_EXC_ERR || status == IBV_WC_RNR_RETRY_EXC_ERR)
        hint = "; the peer is gone or unreachable";
    else if (status == IBV_WC_REM_ACCESS_ERR || status == IBV_WC_LOC_PROT_ERR)
        hint = "; an address outside the registered memory";
    snprintf(buf, len, "node %d: verbs %s %s node %d failed: %s (status %d, "
             "vendor error 0x%x)%s", me, op,
             strstr(op, "READ") ? "from" : "to", peer,
             ibv_wc_status_str(status), (int)status, vendor_err, hint);
    return buf;
}
