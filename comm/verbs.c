/* comm/verbs.c - the RDMA transport over libibverbs reliable-connected
 * queue pairs, one per peer: the device, the context, the queue pairs'
 * connection, and the service thread (the operations are in
 * verbs_ops.c, work requests and credits in verbs_wr.c).
 *
 * Set-up follows rdma-core's rc_pingpong: one context owns device, PD,
 * completion channel, CQs, MRs and QPs, made in that order by
 * comm_verbs_prepare before the card exchange (the card carries the QP
 * numbers and rkeys) and unwound in reverse by one ladder (ctx_destroy);
 * verbs_qp_connect moves a QP through INIT->RTR->RTS.
 *
 * The service thread polls both CQs briefly, then arms them and blocks on
 * the completion channel; it runs the control-message handlers. */
#include "verbs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static struct verbs_ctx *prepared; /* between prepare and start */
static int served(int r) { return comm_serves(r, COMM_TRANSPORT_VERBS); }

/* ------------------------------------------------------------------------ */
/* The context: created in dependency order, destroyed in reverse          */

static void ctx_destroy(struct verbs_ctx *c)
{
    if (!c)
        return;
    if (c->peers) {
        for (int p = 0; p < c->size; p++) {
            struct verbs_peer *vp = &c->peers[p];
            if (vp->qp)
                ibv_destroy_qp(vp->qp);
            while (vp->pend_head) {
                struct verbs_pending *n = vp->pend_head->next;
                free(vp->pend_head);
                vp->pend_head = n;
            }
            pthread_mutex_destroy(&vp->lock);
            for (int r = 0; r < COMM_REG_MAX; r++)
                free(vp->view[r].key);
        }
        free(c->peers);
    }
    if (c->rbuf_mr)
        ibv_dereg_mr(c->rbuf_mr);
    free(c->rbufs);
    if (c->stage_mr)
        ibv_dereg_mr(c->stage_mr);
    free(c->stage);
    for (int r = COMM_REG_MAX - 1; r >= 0; r--) {
        for (uint32_t i = 0; c->reg[r].mr && i < c->reg[r].nchunks; i++)
            if (c->reg[r].mr[i])
                ibv_dereg_mr(c->reg[r].mr[i]);
        free(c->reg[r].mr);
    }
    if (c->recv_cq)
        ibv_destroy_cq(c->recv_cq);
    if (c->send_cq)
        ibv_destroy_cq(c->send_cq);
    if (c->chan)
        ibv_destroy_comp_channel(c->chan);
    if (c->pd)
        ibv_dealloc_pd(c->pd);
    if (c->dev)
        ibv_close_device(c->dev);
    if (c->list)
        ibv_free_device_list(c->list);
    pthread_mutex_destroy(&c->reg_lock);
    free(c);
}

static const char *host_name(void)
{
    static char h[64];
    if (!h[0] && gethostname(h, sizeof h - 1) < 0)
        strcpy(h, "?");
    return h;
}

/* OMPDSM_IB_DEVICE names one; unset, the first device whose port is up. */
static int open_device(struct verbs_ctx *c, int required)
{
    int n = 0;
    c->list = ibv_get_device_list(&n);
    if (!c->list || n == 0) {
        if (required)
            ompdsm_err("OMPDSM_TRANSPORT=verbs: no RDMA device on host %s "
                       "(ibv_get_device_list found none); use tcp, or load a "
                       "driver as docs/rdma.md says", host_name());
        return -ENODEV;
    }
    const char *want = getenv("OMPDSM_IB_DEVICE");
    char skipped[160] = ""; /* why a device was passed over: one line in all */
    c->port = (uint8_t)ompdsm_env_u64("OMPDSM_IB_PORT", 1, 1, 255, 0);
    for (int i = 0; i < n; i++) {
        const char *name = ibv_get_device_name(c->list[i]);
        if (want && *want && strcmp(want, name) != 0)
            continue;
        struct ibv_context *d = ibv_open_device(c->list[i]);
        if (!d) {
            if (want && *want) {
                ompdsm_err("verbs: cannot open device %s: %s", name,
                           strerror(errno));
                return -ENODEV;
            }
            snprintf(skipped, sizeof skipped, " (cannot open %s: %s)", name,
                     strerror(errno));
            continue;
        }
        struct ibv_port_attr pa;
        if (ibv_query_port(d, c->port, &pa) == 0 &&
            pa.state == IBV_PORT_ACTIVE) {
            c->dev = d;
            c->mtu = (uint8_t)pa.active_mtu;
            /* RoCE has no LIDs: every packet needs a GRH and so a GID. */
            c->use_grh = pa.link_layer == IBV_LINK_LAYER_ETHERNET ||
                         getenv("OMPDSM_IB_GID_INDEX");
            OMPDSM_TRACE(OMPDSM_TR_COMM, "verbs: device %s port %u lid %u "
                         "mtu %u", name, c->port, pa.lid, 128u << pa.active_mtu);
            return 0;
        }
        ibv_close_device(d);
        if (want && *want) {
            ompdsm_err("verbs: device %s port %u is not active; set "
                       "OMPDSM_IB_PORT or OMPDSM_IB_DEVICE", name, c->port);
            return -ENODEV;
        }
    }
    if (want && *want)
        ompdsm_err("verbs: no RDMA device named %s (OMPDSM_IB_DEVICE); "
                   "ibv_devices lists them", want);
    else if (required)
        ompdsm_err("OMPDSM_TRANSPORT=verbs: no RDMA device with port %u "
                   "active%s; set OMPDSM_IB_PORT or use tcp", c->port,
                   skipped);
    return -ENODEV;
}

static const int reg_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                              IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

/* Registers len bytes at p, counting them against the cap on pinned
 * memory (not with on-demand paging, which pins nothing); caller holds
 * reg_lock or runs before any other thread. */
static struct ibv_mr *reg_pinned(struct verbs_ctx *c, int r, void *p,
                                 uint64_t len, int odp)
{
    char msg[320];
    if (!odp && verbs_pin_check(c->pinned, len, c->pin_cap, c->rank, r, msg,
                                sizeof msg) < 0) {
        ompdsm_err("%s", msg);
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_mr *mr = ibv_reg_mr(c->pd, p, len,
                                   reg_access | (odp ? IBV_ACCESS_ON_DEMAND : 0));
    if (!mr) {
        int e = errno;
        ompdsm_err("node %d: verbs: cannot register %llu KiB of region %d%s: "
                   "%s%s", c->rank, (unsigned long long)(len >> 10), r,
                   odp ? " (on demand)" : "", strerror(e),
                   e == ENOMEM || e == EPERM ? "; raise ulimit -l (unlimited)"
                                             : "");
        errno = e;
        return NULL;
    }
    if (!odp)
        c->pinned += len;
    return mr;
}

struct ibv_mr *verbs_local_mr(struct verbs_ctx *c, int r, uint32_t i)
{
    struct verbs_local *l = &c->reg[r];
    if (i >= l->nchunks)
        return NULL;
    struct ibv_mr *mr = __atomic_load_n(&l->mr[i], __ATOMIC_ACQUIRE);
    if (mr)
        return mr;
    pthread_mutex_lock(&c->reg_lock);
    mr = l->mr[i];
    if (!mr) {
        mr = reg_pinned(c, r, (char *)comm_g.reg[r].base + ((uint64_t)i << l->shift),
                        verbs_chunk_len(comm_g.reg[r].len, l->shift, i), 0);
        if (mr) {
            __atomic_store_n(&l->mr[i], mr, __ATOMIC_RELEASE);
            OMPDSM_TRACE(OMPDSM_TR_COMM, "verbs: region %d chunk %u registered "
                         "(%llu KiB pinned)", r, i,
                         (unsigned long long)(c->pinned >> 10));
        }
    }
    pthread_mutex_unlock(&c->reg_lock);
    return mr;
}

/* How the regions are registered (OMPDSM_IB_REG):
 *  - on-demand paging, where the device has it for RC reads, writes,
 *    atomics, sends and receives: the device faults pages in as it touches
 *    them, so a heap of many GiB costs nothing until used;
 *  - otherwise in chunks of OMPDSM_IB_CHUNK bytes, each pinned when an
 *    operation first touches it (a region of at most one chunk is pinned
 *    at once, sparing the small ones a key request);
 *  - or each region pinned whole ("whole", the first version's way). */
static int reg_regions(struct verbs_ctx *c)
{
    static const char *const modes[] = {"auto", "chunks", "whole"};
    int mode = ompdsm_env_choice("OMPDSM_IB_REG", modes, 3, 0);
    uint64_t chunk = ompdsm_env_u64("OMPDSM_IB_CHUNK",
                                    1ull << VERBS_CHUNK_SHIFT_DEFAULT,
                                    1ull << COMM_VERBS_CHUNK_SHIFT_MIN,
                                    1ull << COMM_VERBS_CHUNK_SHIFT_MAX, 1);
    if (chunk & (chunk - 1)) {
        ompdsm_err("OMPDSM_IB_CHUNK=%llu is not a power of two (64M, say)",
                   (unsigned long long)chunk);
        return -EINVAL;
    }
    unsigned shift = (unsigned)__builtin_ctzll(chunk);
    /* The staging and receive buffers, registered next, are pinned too. */
    c->pinned = (uint64_t)VERBS_SLOTS * VERBS_SLOT +
                (uint64_t)c->size * VERBS_RECV_DEPTH * VERBS_MSG_BUF;
    struct rlimit rl;
    c->pin_cap = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                 ? (uint64_t)rl.rlim_cur : UINT64_MAX;
    struct ibv_device_attr_ex ax;
    memset(&ax, 0, sizeof ax);
    int odp = 0;
    uint32_t need = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE |
                    IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SEND |
                    IBV_ODP_SUPPORT_RECV;
    if (ibv_query_device_ex(c->dev, NULL, &ax) == 0) {
        odp = (ax.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
              (ax.odp_caps.per_transport_caps.rc_odp_caps & need) == need;
        c->hw_atomics = ax.orig_attr.atomic_cap == IBV_ATOMIC_GLOB;
    }
    odp = odp && mode == 0;
    OMPDSM_TRACE(OMPDSM_TR_COMM, "verbs: regions registered %s",
                 odp ? "on demand" : mode == 2 ? "whole" : "in chunks");
    for (int r = 0; r < COMM_REG_MAX; r++) {
        uint64_t len = comm_g.reg[r].len;
        if (!comm_g.reg[r].base || !len)
            continue;
        struct verbs_local *l = &c->reg[r];
        l->shift = odp || mode == 2 || len <= chunk ? 0 : shift;
        l->nchunks = verbs_chunk_count(len, l->shift);
        if (!(l->mr = calloc(l->nchunks, sizeof(struct ibv_mr *))))
            return -ENOMEM;
        if (!l->shift &&
            !(l->mr[0] = reg_pinned(c, r, comm_g.reg[r].base, len, odp)))
            return -ENOMEM;
    }
    return 0;
}

/* A QP for every other node, created in INIT (rc_pingpong's order). */
static int make_qps(struct verbs_ctx *c)
{
    c->peers = calloc((size_t)c->size, sizeof *c->peers);
    size_t rlen = (size_t)c->size * VERBS_RECV_DEPTH * VERBS_MSG_BUF;
    c->rbufs = aligned_alloc(4096, OMPDSM_ALIGN_UP(rlen, (size_t)4096));
    if (!c->peers || !c->rbufs)
        return -ENOMEM;
    c->rbuf_mr = ibv_reg_mr(c->pd, c->rbufs, rlen, IBV_ACCESS_LOCAL_WRITE);
    if (!c->rbuf_mr) {
        ompdsm_err("verbs: cannot register %zu bytes of receive buffers: %s",
                   rlen, strerror(errno));
        return -ENOMEM;
    }
    for (int p = 0; p < c->size; p++) {
        struct verbs_peer *vp = &c->peers[p];
        pthread_mutex_init(&vp->lock, NULL);
        verbs_credit_init(&vp->credit, VERBS_RECV_DEPTH);
        vp->rbuf = c->rbufs + (size_t)p * VERBS_RECV_DEPTH * VERBS_MSG_BUF;
        if (p == c->rank)
            continue;
        struct ibv_qp_init_attr ia = {
            .send_cq = c->send_cq,
            .recv_cq = c->recv_cq,
            .cap = {.max_send_wr = VERBS_SQ_DEPTH,
                    .max_recv_wr = VERBS_RECV_DEPTH,
                    .max_send_sge = 1, .max_recv_sge = 1},
            .qp_type = IBV_QPT_RC,
            .sq_sig_all = 0,
        };
        vp->qp = ibv_create_qp(c->pd, &ia);
        if (!vp->qp) {
            ompdsm_err("verbs: cannot create the queue pair for node %d: %s",
                       p, strerror(errno));
            return -ENOMEM;
        }
        struct ibv_qp_attr a = {
            .qp_state = IBV_QPS_INIT,
            .pkey_index = 0,
            .port_num = c->port,
            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                               IBV_ACCESS_REMOTE_ATOMIC,
        };
        int e = ibv_modify_qp(vp->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                             IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        if (e) {
            ompdsm_err("verbs: queue pair for node %d to INIT: %s", p,
                       strerror(e));
            return -e;
        }
        for (int i = 0; i < VERBS_RECV_DEPTH; i++) {
            struct ibv_sge s = {
                .addr = (uint64_t)(uintptr_t)(vp->rbuf + (size_t)i * VERBS_MSG_BUF),
                .length = VERBS_MSG_BUF, .lkey = c->rbuf_mr->lkey};
            struct ibv_recv_wr w = {.wr_id = (uint64_t)p << 16 | (uint64_t)i,
                                    .sg_list = &s, .num_sge = 1}, *bad;
            if ((e = ibv_post_recv(vp->qp, &w, &bad))) {
                ompdsm_err("verbs: posting receives for node %d: %s", p,
                           strerror(e));
                return -e;
            }
        }
    }
    return 0;
}

static int ctx_create(struct verbs_ctx **out, int required)
{
    struct verbs_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    pthread_mutex_init(&c->reg_lock, NULL);
    c->size = comm_g.size;
    c->rank = comm_g.rank;
    c->gid_index = (int)ompdsm_env_u64("OMPDSM_IB_GID_INDEX", 0, 0, 255, 0);
    int rc = open_device(c, required);
    if (rc < 0)
        goto fail;
    rc = -ENOMEM;
    if (!(c->pd = ibv_alloc_pd(c->dev))) {
        ompdsm_err("verbs: ibv_alloc_pd: %s", strerror(errno));
        goto fail;
    }
    if (!(c->chan = ibv_create_comp_channel(c->dev))) {
        ompdsm_err("verbs: ibv_create_comp_channel: %s", strerror(errno));
        goto fail;
    }
    fcntl(c->chan->fd, F_SETFL, fcntl(c->chan->fd, F_GETFL) | O_NONBLOCK);
    int ncq_s = c->size * VERBS_SQ_DEPTH, ncq_r = c->size * VERBS_RECV_DEPTH;
    if (!(c->send_cq = ibv_create_cq(c->dev, ncq_s, NULL, c->chan, 0)) ||
        !(c->recv_cq = ibv_create_cq(c->dev, ncq_r, NULL, c->chan, 0))) {
        ompdsm_err("verbs: ibv_create_cq (%d and %d entries): %s", ncq_s,
                   ncq_r, strerror(errno));
        goto fail;
    }
    if ((rc = reg_regions(c)) < 0)
        goto fail;
    rc = -ENOMEM;
    c->stage = aligned_alloc(4096, (size_t)VERBS_SLOTS * VERBS_SLOT);
    if (!c->stage ||
        !(c->stage_mr = ibv_reg_mr(c->pd, c->stage,
                                   (size_t)VERBS_SLOTS * VERBS_SLOT,
                                   IBV_ACCESS_LOCAL_WRITE))) {
        ompdsm_err("verbs: cannot register the staging buffers: %s",
                   strerror(errno));
        goto fail;
    }
    if ((rc = make_qps(c)) < 0)
        goto fail;
    *out = c;
    return 0;
fail:
    ctx_destroy(c);
    return rc;
}

int comm_verbs_prepare(struct comm_card_verbs *part, uint32_t *qpn,
                       int required)
{
    struct verbs_ctx *c;
    int rc = ctx_create(&c, required);
    if (rc == -ENODEV && !required) {
        OMPDSM_TRACE(OMPDSM_TR_COMM, "verbs: no usable device; tcp between "
                     "hosts");
        return 0;
    }
    if (rc < 0 && !required) {
        /* auto must still work on a host whose device cannot be set up
         * (too little locked memory, say): its card says no device, so
         * its peers use tcp with it. */
        ompdsm_warn("the RDMA device could not be set up (above); tcp is "
                    "used between hosts (OMPDSM_TRANSPORT=auto)");
        return 0;
    }
    if (rc < 0)
        return rc;
    struct ibv_port_attr pa;
    union ibv_gid gid;
    memset(&gid, 0, sizeof gid);
    if (ibv_query_port(c->dev, c->port, &pa) ||
        (c->use_grh && ibv_query_gid(c->dev, c->port, c->gid_index, &gid))) {
        ompdsm_err("verbs: cannot read port %u's LID or GID %d%s", c->port,
                   c->gid_index, required ? "" : "; tcp is used between hosts");
        ctx_destroy(c);
        return required ? -EIO : 0;
    }
    part->present = 1;
    part->lid = pa.lid;
    part->port = c->port;
    part->mtu = c->mtu;
    /* Any 24-bit start works; a different one per job keeps a stale packet
     * of an earlier job from looking like ours. */
    c->psn = (uint32_t)(ompdsm_now_ns() ^ (uint64_t)getpid() << 8) & 0xffffff;
    part->psn = c->psn;
    part->gid_index = (uint32_t)c->gid_index;
    memcpy(part->gid, gid.raw, sizeof part->gid);
    for (int r = 0; r < COMM_REG_MAX; r++) {
        const struct verbs_local *l = &c->reg[r];
        if (!l->mr)
            continue;
        part->region[r].addr = (uint64_t)(uintptr_t)comm_g.reg[r].base;
        if (l->shift) {
            part->region[r].flags = COMM_VERBS_REG_CHUNKS |
                                    l->shift << COMM_VERBS_REG_SHIFT;
        } else {
            part->region[r].rkey = l->mr[0]->rkey;
            part->region[r].flags = COMM_VERBS_REG_WHOLE;
        }
    }
    for (int p = 0; p < c->size; p++)
        qpn[p] = c->peers[p].qp ? c->peers[p].qp->qp_num : 0;
    prepared = c;
    return 0;
}

void comm_verbs_release(void)
{
    ctx_destroy(prepared);
    prepared = NULL;
}

/* INIT -> RTR -> RTS against the peer's card (rc_pingpong's
 * pp_connect_ctx): the path MTU is the smaller of the two ports'. */
static int verbs_qp_connect(struct verbs_ctx *c, int p)
{
    const struct comm_card_verbs *v = &comm_g.cards[p].verbs;
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = (enum ibv_mtu)(v->mtu < c->mtu ? v->mtu : c->mtu),
        .dest_qp_num = comm_g.card_qpn[(size_t)p * (size_t)c->size + (size_t)c->rank],
        .rq_psn = v->psn,
        .max_dest_rd_atomic = 1,
        .min_rnr_timer = 12,
        .ah_attr = {.is_global = 0, .dlid = v->lid, .sl = 0,
                    .src_path_bits = 0, .port_num = c->port},
    };
    if (c->use_grh) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.hop_limit = 1;
        memcpy(a.ah_attr.grh.dgid.raw, v->gid, sizeof v->gid);
        a.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
    }
    int e = ibv_modify_qp(c->peers[p].qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (e) {
        ompdsm_err("verbs: queue pair to node %d to RTR: %s", p, strerror(e));
        return -e;
    }
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = c->psn;
    a.max_rd_atomic = 1;
    e = ibv_modify_qp(c->peers[p].qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                      IBV_QP_MAX_QP_RD_ATOMIC);
    if (e) {
        ompdsm_err("verbs: queue pair to node %d to RTS: %s", p, strerror(e));
        return -e;
    }
    return 0;
}

/* The peer's regions as its card describes them (checked on decoding):
 * one rkey, or chunks whose rkeys it will be asked for. */
static int peer_views(struct verbs_ctx *c, int p)
{
    const struct comm_card *card = &comm_g.cards[p];
    for (int r = 0; r < COMM_REG_MAX; r++) {
        struct verbs_chunks *v = &c->peers[p].view[r];
        uint32_t f = card->verbs.region[r].flags;
        if (!card->region_len[r])
            continue;
        v->addr = card->verbs.region[r].addr;
        v->len = card->region_len[r];
        v->shift = f == COMM_VERBS_REG_WHOLE ? 0 : f >> COMM_VERBS_REG_SHIFT;
        v->nchunks = verbs_chunk_count(v->len, v->shift);
        if (!(v->key = calloc(v->nchunks, sizeof *v->key)))
            return -ENOMEM;
        if (!v->shift)
            verbs_chunk_set_rkey(v, 0, card->verbs.region[r].rkey);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The service thread                                                       */

/* Polls briefly, then arms both CQs and sleeps on the completion channel
 * (a poll() timeout bounds how long a stop or failure goes unnoticed). */
static void *service_main(void *arg)
{
    struct comm_transport *t = arg;
    struct verbs_ctx *c = t->ctx;
    int idle = 0;
    while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
        if (verbs_poll_recv(t) + verbs_poll_send(t)) {
            idle = 0;
            continue;
        }
        if (++idle < VERBS_SERVICE_SPIN)
            continue;
        if (ibv_req_notify_cq(c->recv_cq, 0) || ibv_req_notify_cq(c->send_cq, 0)) {
            comm_set_failed("node %d: verbs: ibv_req_notify_cq failed",
                            comm_g.rank);
            break;
        }
        /* A completion that came before the arming raises no event. */
        if (verbs_poll_recv(t) + verbs_poll_send(t)) {
            idle = 0;
            continue;
        }
        struct pollfd pf = {.fd = c->chan->fd, .events = POLLIN};
        if (poll(&pf, 1, COMM_FAILURE_POLL_MS) > 0) {
            struct ibv_cq *cq;
            void *ctx;
            while (ibv_get_cq_event(c->chan, &cq, &ctx) == 0)
                ibv_ack_cq_events(cq, 1);
        }
        idle = 0;
    }
    return NULL;
}

static void verbs_stop(struct comm_transport *t)
{
    if (!t)
        return;
    if (t->service_started) {
        __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
        pthread_join(t->service, NULL);
    }
    ctx_destroy(t->ctx);
    pthread_mutex_destroy(&t->slot_lock);
    pthread_mutex_destroy(&t->cq_lock);
    free(t);
}

static int verbs_start(struct comm_transport **out)
{
    if (!prepared) {
        ompdsm_err("verbs: no device was opened before the card exchange");
        return -ENODEV;
    }
    struct comm_transport *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->ctx = prepared;
    prepared = NULL;
    pthread_mutex_init(&t->slot_lock, NULL);
    pthread_mutex_init(&t->cq_lock, NULL);
    t->slot_free = ~0ull >> (64 - VERBS_SLOTS);
    for (int p = 0; p < t->ctx->size; p++) {
        if (!served(p))
            continue;
        if (!comm_g.cards[p].verbs.present) {
            ompdsm_err("OMPDSM_TRANSPORT=verbs: node %d (host %s) has no RDMA "
                       "device", p, comm_g.cards[p].host);
            verbs_stop(t);
            return -ENODEV;
        }
        int rc = peer_views(t->ctx, p);
        if (rc == 0)
            rc = verbs_qp_connect(t->ctx, p);
        if (rc < 0) {
            verbs_stop(t);
            return rc;
        }
    }
    int e = pthread_create(&t->service, NULL, service_main, t);
    if (e) {
        ompdsm_err("verbs: cannot start the service thread: %s", strerror(e));
        verbs_stop(t);
        return -e;
    }
    t->service_started = 1;
    *out = t;
    return 0;
}

const struct comm_transport_ops comm_verbs_ops = {
    .name = "verbs",
    .start = verbs_start,
    .stop = verbs_stop,
    .put = verbs_put,
    .putv = verbs_putv,
    .get = verbs_get,
    .fetch_add = verbs_fetch_add,
    .cas = verbs_cas,
    .notify = verbs_notify,
    .fence = verbs_fence,
    .send = verbs_send,
};

