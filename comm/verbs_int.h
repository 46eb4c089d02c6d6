/* comm/verbs_int.h - what the verbs transport's files share: verbs.c
 * (device, context, queue pairs, service thread), verbs_ops.c (operations,
 * completions, control messages) and verbs_wr.c (work requests, message
 * checks, credits, failure messages).  The verbs_wr.c half needs no
 * device, so the unit tests (tests/comm/verbs_test.c) drive it directly. */
#ifndef OMPDSM_COMM_VERBS_INT_H
#define OMPDSM_COMM_VERBS_INT_H

#include "transport.h"
#include "card.h"
#include "verbs.h"

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum {
    /* Receives kept posted per peer, and so the credits a sender starts
     * with: enough for a burst of notifies without a credit round trip. */
    VERBS_RECV_DEPTH = 16,
    /* Send queue entries per queue pair (work requests in flight). */
    VERBS_SQ_DEPTH = 128,
    /* Registered staging memory for puts, control messages and atomics
     * results: VERBS_SLOTS slots of VERBS_SLOT bytes (one bit each in a
     * 64-bit mask).  A slot holds one control message. */
    VERBS_SLOT = 128 * 1024,
    VERBS_SLOTS = 64,
    /* Work requests in one chain (a vectored put of more runs is posted
     * as several chains). */
    VERBS_CHAIN_MAX = 32,
    /* Completions taken per ibv_poll_cq. */
    VERBS_POLL_BATCH = 16,
    /* Service thread: empty polls before it arms the channel and sleeps. */
    VERBS_SERVICE_SPIN = 200,
    /* Registration in chunks (no on-demand paging): OMPDSM_IB_CHUNK's
     * default, 64 MiB (bounds: COMM_VERBS_CHUNK_SHIFT_MIN/MAX). */
    VERBS_CHUNK_SHIFT_DEFAULT = 26,
};

/* ---- control messages (SEND/RECV) ---- */

/* Every message starts with this header; payload (VMSG_SEND) follows. */
enum verbs_msg_type {
    VMSG_SEND = 1,   /* comm_send: tag, len, payload */
    VMSG_NOTIFY,     /* comm_notify: region, off, value */
    VMSG_CREDIT,     /* only returns credits */
    VMSG_ATOMIC,     /* atomic done by the owner's CPU: id, region, off, a, b */
    VMSG_ATOMIC_REP, /* its answer: id, value (a), status */
    VMSG_RKEY,       /* register chunk off of region, tell its rkey: id */
    VMSG_RKEY_REP,   /* its answer: id, rkey (a), status */
    VMSG_TYPES
};
enum { VATOM_FADD = 0, VATOM_CAS = 1 };
struct verbs_msg {
    uint8_t type;      /* enum verbs_msg_type */
    uint8_t tag;       /* VMSG_SEND: comm tag; VMSG_ATOMIC: VATOM_* */
    uint16_t credits;  /* receives the sender re-posted for the receiver */
    uint32_t len;      /* payload bytes after the header */
    int32_t region;
    int32_t status;    /* VMSG_ATOMIC_REP: 0 or -errno */
    uint64_t off;
    uint64_t a, b;     /* value / add / expect, desired */
    uint64_t id;       /* VMSG_ATOMIC(_REP): the requester's operation */
};
enum { VERBS_MSG_BUF = sizeof(struct verbs_msg) + COMM_MSG_MAX };

/* Checks a received message of len bytes from a peer; 0 or -EPROTO with
 * why. */
int verbs_msg_check(const struct verbs_msg *m, size_t len, char *why,
                    size_t whylen);

/* ---- flow control: credits of one direction of one queue pair ----
 * A sender may post a message only while the receiver has a receive
 * posted for it.  avail counts those; owed counts receives this node
 * re-posted for the peer and not yet told.  The last credit is kept for a
 * message that returns credits, so that two nodes that both run out can
 * always tell each other (a credit message carries at least depth/2). */
struct verbs_credit {
    uint32_t depth;  /* receives per peer (VERBS_RECV_DEPTH) */
    uint32_t avail;  /* messages this node may still send the peer */
    uint32_t owed;   /* credits to return to the peer */
};
void verbs_credit_init(struct verbs_credit *c, uint32_t depth);
/* Takes a credit for a message (credit_only: one that carries nothing but
 * credits, which may use the reserve); 0, or -EAGAIN when none is left. */
int verbs_credit_take(struct verbs_credit *c, int credit_only);
/* The peer returned n credits; -EPROTO if that is more than it can owe. */
int verbs_credit_grant(struct verbs_credit *c, uint32_t n);
/* A receive from the peer was consumed and posted again. */
void verbs_credit_reposted(struct verbs_credit *c);
/* The credits to carry in the next message to the peer (then owed 0). */
uint32_t verbs_credit_piggyback(struct verbs_credit *c);
/* Whether the credits owed are worth a message of their own. */
int verbs_credit_should_return(const struct verbs_credit *c);

/* ---- registration in chunks ----
 * A device without on-demand paging must pin what it registers, and a
 * heap of many GiB cannot be pinned whole (ulimit -l).  A region larger
 * than one chunk is then registered a chunk at a time, when an operation
 * first touches it: locally by the node itself, remotely by the owner when
 * asked (VMSG_RKEY), since heap allocation is not collective (any node
 * takes chunks with a fetch-add on node 0), so no node knows when another
 * starts using a part of a region.  Chunk i of a region of len bytes
 * covers [i << shift, min((i + 1) << shift, len)); shift 0 means one chunk
 * covering the whole region. */
uint32_t verbs_chunk_count(uint64_t len, unsigned shift);
uint32_t verbs_chunk_index(unsigned shift, uint64_t off);
/* Bytes of chunk i (the last one may be partial; 0 past the end). */
uint64_t verbs_chunk_len(uint64_t len, unsigned shift, uint32_t i);
/* Bytes of [off, off+n) that lie in off's chunk (an operation spanning a
 * chunk edge is split there). */
uint64_t verbs_chunk_piece(unsigned shift, uint64_t off, uint64_t n);

/* A peer's region as this node addresses it: one rkey, or one per chunk,
 * learnt from the owner on first use. */
#define VERBS_KEY_VALID (1ull << 32)
struct verbs_chunks {
    uint64_t addr;     /* the region's address in the owner */
    uint64_t len;
    unsigned shift;    /* 0: one key covers the region */
    uint32_t nchunks;
    uint64_t *key;     /* nchunks: VERBS_KEY_VALID | rkey, 0 unknown (atomic) */
};
/* The first chunk of [off, off+n) whose rkey is unknown, or -1 (n 0: -1). */
int64_t verbs_chunk_missing(const struct verbs_chunks *v, uint64_t off,
                            uint64_t n);
/* The rkey covering off (known: verbs_chunk_missing said so). */
uint32_t verbs_chunk_rkey(const struct verbs_chunks *v, uint64_t off);
void verbs_chunk_set_rkey(struct verbs_chunks *v, uint32_t chunk,
                          uint32_t rkey);

/* Whether pinning add more bytes stays within cap (the RLIMIT_MEMLOCK this
 * node had at start; UINT64_MAX: unlimited): 0, or -ENOMEM and the one-line
 * message saying what to do in msg. */
int verbs_pin_check(uint64_t pinned, uint64_t add, uint64_t cap, int me,
                    int region, char *msg, size_t msglen);

/* ---- work requests ----
 * A chain is built by the verbs_wr_* calls, then verbs_wr_finish links it
 * and asks for one completion, at its last request: a queue pair completes
 * its requests in order, so that completion covers the whole chain. */
struct verbs_chain {
    struct ibv_send_wr wr[VERBS_CHAIN_MAX];
    struct ibv_sge sge[VERBS_CHAIN_MAX];
    int n;
};
/* Each returns the request added, or NULL when the chain is full. */
struct ibv_send_wr *verbs_wr_read(struct verbs_chain *c, void *dst,
                                  uint32_t lkey, uint64_t raddr,
                                  uint32_t rkey, uint32_t len);
struct ibv_send_wr *verbs_wr_write(struct verbs_chain *c, const void *src,
                                   uint32_t lkey, uint64_t raddr,
                                   uint32_t rkey, uint32_t len);
struct ibv_send_wr *verbs_wr_fetch_add(struct verbs_chain *c, uint64_t *res,
                                       uint32_t lkey, uint64_t raddr,
                                       uint32_t rkey, uint64_t add);
struct ibv_send_wr *verbs_wr_cas(struct verbs_chain *c, uint64_t *res,
                                 uint32_t lkey, uint64_t raddr, uint32_t rkey,
                                 uint64_t expect, uint64_t desired);
struct ibv_send_wr *verbs_wr_send(struct verbs_chain *c, const void *msg,
                                  uint32_t lkey, uint32_t len);
/* Copies the runs of a vectored put, from run *next on, into stage (cap
 * bytes, lkey) and adds one RDMA WRITE per run (part of a run when the
 * stage or the chain fills up, or at an edge of the peer's chunks); *next
 * and *done (bytes of run *next already added) advance.  The runs start
 * at offset base of the peer's region rv, whose rkeys for them must be
 * known.  Returns the bytes of stage used. */
size_t verbs_wr_putv(struct verbs_chain *c, char *stage, size_t cap,
                     uint32_t lkey, const void *src,
                     const struct comm_run *runs, size_t nruns, size_t *next,
                     size_t *done, const struct verbs_chunks *rv,
                     uint64_t base);
/* Links the chain, marks its last request signaled with wr_id; returns the
 * head (NULL for an empty chain). */
struct ibv_send_wr *verbs_wr_finish(struct verbs_chain *c, uint64_t wr_id);

/* ---- the transport's state (verbs.c, verbs_ops.c) ---- */

/* One request of this node in flight: the wr_id of a chain's signaled
 * request.  Puts allocate it and the completion frees it; waited-for
 * requests (get, atomics, fence) keep it on the waiter's stack. */
struct verbs_op {
    int peer;
    int nwr;             /* send queue entries the chain used */
    int msg_type;        /* VMSG_* for sends, for messages */
    enum ibv_wr_opcode opcode;
    uint64_t slots;      /* staging slots to free on completion */
    int owned;           /* freed by the completion (fire and forget) */
    volatile int done;   /* 1 once completed (release) */
    int status;          /* 0 or -errno */
    uint64_t value;      /* VMSG_ATOMIC_REP: the old value */
};

/* A control message waiting for credits, in send order. */
struct verbs_pending {
    struct verbs_pending *next;
    size_t len;
    struct verbs_msg msg; /* then payload */
};

struct verbs_peer {
    struct ibv_qp *qp;
    pthread_mutex_t lock;        /* credits, pending, sq_used, posting */
    struct verbs_credit credit;
    struct verbs_pending *pend_head, *pend_tail;
    int sq_used;                 /* send queue entries in flight (atomic:
                                    completions lower it without lock) */
    char *rbuf;                  /* VERBS_RECV_DEPTH receive buffers */
    struct verbs_chunks view[COMM_REG_MAX]; /* the peer's regions */
};

/* One of this node's regions: one MR, or one per chunk made on demand. */
struct verbs_local {
    unsigned shift;       /* 0: mr[0] covers the region */
    uint32_t nchunks;
    struct ibv_mr **mr;   /* nchunks; NULL until registered (atomic) */
};

/* The context: everything the device gives us, in creation order. */
struct verbs_ctx {
    struct ibv_device **list;
    struct ibv_context *dev;
    struct ibv_pd *pd;
    struct ibv_comp_channel *chan;
    struct ibv_cq *send_cq, *recv_cq;
    struct verbs_local reg[COMM_REG_MAX]; /* comm_register's regions */
    pthread_mutex_t reg_lock;            /* registering a chunk */
    uint64_t pinned;                     /* bytes registered without ODP */
    uint64_t pin_cap;                    /* RLIMIT_MEMLOCK (UINT64_MAX: none) */
    char *stage;                         /* VERBS_SLOTS * VERBS_SLOT */
    struct ibv_mr *stage_mr;
    char *rbufs;                         /* every peer's receive buffers */
    struct ibv_mr *rbuf_mr;
    struct verbs_peer *peers;            /* size entries */
    int size, rank;
    uint8_t port;
    uint8_t mtu;
    int gid_index;
    int use_grh;
    int hw_atomics;                      /* device atomics are CPU-atomic */
    uint32_t psn;
};

struct comm_transport {
    struct verbs_ctx *ctx;
    pthread_t service;
    int service_started;
    volatile int stop;
    pthread_mutex_t slot_lock;
    uint64_t slot_free;          /* bit i: staging slot i is free */
    pthread_mutex_t cq_lock;     /* one poller of the send CQ at a time */
};


/* ---- verbs.c ---- */
/* The MR of chunk i of this node's region r, registering it first if
 * needed (the cap on pinned memory checked); NULL after printing why. */
struct ibv_mr *verbs_local_mr(struct verbs_ctx *c, int r, uint32_t i);

/* ---- verbs_ops.c ---- */
/* Handle what the send or receive CQ holds (one batch); return how many
 * completions were handled.  verbs_poll_send may be called from any
 * thread (one at a time gets in); verbs_poll_recv only from the service
 * thread, since it runs the message handlers. */
int verbs_poll_send(struct comm_transport *t);
int verbs_poll_recv(struct comm_transport *t);
/* The operations of comm_verbs_ops (transport.h's contracts). */
int verbs_put(struct comm_transport *t, int peer, int region, uint64_t off,
              const void *src, size_t len);
int verbs_putv(struct comm_transport *t, int peer, int region, uint64_t base,
               const void *src, const struct comm_run *runs, size_t nruns);
int verbs_get(struct comm_transport *t, int peer, int region, uint64_t off,
              void *dst, size_t len);
int verbs_fetch_add(struct comm_transport *t, int peer, int region,
                    uint64_t off, uint64_t add, uint64_t *old);
int verbs_cas(struct comm_transport *t, int peer, int region, uint64_t off,
              uint64_t expect, uint64_t desired, uint64_t *old);
int verbs_notify(struct comm_transport *t, int peer, int region, uint64_t off,
                 uint64_t value);
int verbs_fence(struct comm_transport *t, int peer);
int verbs_send(struct comm_transport *t, int peer, int tag, const void *buf,
               size_t len);

/* ---- messages for failures (verbs_wr.c) ---- */
/* "node 1: verbs RDMA READ (get) from node 3 failed: transport retry
 * counter exceeded (status 12, vendor error 0x81)"; returns buf. */
const char *verbs_wc_message(char *buf, size_t len, int me, int peer,
                             const char *op, enum ibv_wc_status status,
                             uint32_t vendor_err);
/* The operation of a send request, for messages ("RDMA WRITE (put)"). */
const char *verbs_op_name(enum ibv_wr_opcode op, int msg_type);

#endif
