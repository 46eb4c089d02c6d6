/* comm/comm.h - the comm layer's interface: bootstrap, registered memory,
 * one-sided operations, control messages, waiting, and collectives.
 *
 * One comm instance per process (a node).  Life cycle:
 *   comm_init()            bootstrap: learns rank and size (launcher, PMIx
 *                          or a single node), parses OMPDSM_TRANSPORT etc.
 *   comm_register() ...    registers symmetric memory regions: every node
 *                          registers the same region ids with the same
 *                          sizes, in any order, before comm_connect
 *   comm_connect()         exchanges contact cards and starts the transport
 *   ... operations ...
 *   comm_fini()            quiesces and tears down
 *
 * Addressing is (peer, region id, byte offset in that region).  Operations
 * on the calling node's own rank are performed locally.  All operations are
 * safe to call from several threads of a node at once.
 *
 * Errors: functions return 0 or a negative errno and have already printed
 * the reason ("node 1: get from node 3: connection closed").  A transport
 * failure is permanent; callers normally make it fatal with COMM_CHECK. */
#ifndef OMPDSM_COMM_H
#define OMPDSM_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "util/base.h"
#include "boot_proto.h"

/* Region ids: small integers that name a registered region on every node.
 * The comm layer owns COMM_REG_SYNC (doorbell, collective slots and spill);
 * the layers above number their own regions from COMM_REG_FIRST up, and
 * what a region holds is their business (dsm.h, dsm_int.h, rt.h). */
enum comm_region_id {
    COMM_REG_SYNC = 0,
    COMM_REG_FIRST = 1,
    COMM_REG_MAX = 8,
};

/* OMPDSM_TRANSPORT.  AUTO (the default) chooses per peer: shm with the
 * nodes of this host, tcp with the others; the other kinds force one
 * transport for every peer. */
enum comm_transport_kind {
    COMM_TRANSPORT_AUTO = 0,
    COMM_TRANSPORT_SHM,
    COMM_TRANSPORT_TCP,
    COMM_TRANSPORT_VERBS,
    COMM_TRANSPORT_KINDS
};

/* ---- life cycle ---- */
int comm_init(void);
int comm_rank(void);
int comm_size(void);
/* Registers [base, base+len) as region id.  fd >= 0 is a memfd backing the
 * region at offset 0, which the shm transport maps into the peers; regions
 * without an fd cannot be used with shm.  The memory must stay valid until
 * comm_fini. */
int comm_register(int region, void *base, size_t len, int fd);
int comm_connect(void);
void comm_fini(void);
/* Name of the transports in use: "shm", "tcp", "verbs", "self" (one node),
 * or several joined by '+' ("shm+tcp") when peers use different ones. */
const char *comm_transport_name(void);
/* Name of the transport that serves peer ("self" for this node). */
const char *comm_peer_transport(int peer);
/* True when every node runs on this host (shm possible). */
int comm_all_local(void);
/* True when peer runs on this host: same kernel (boot id), same network
 * namespace and same host name.  Valid after comm_connect. */
int comm_same_host(int peer);

/* ---- one-sided operations ---- */
/* Copies len bytes to peer's region at off.  src may be reused on return;
 * the data is visible at the peer after a later comm_fence(peer) returns,
 * and before any later comm_notify to the same peer takes effect. */
int comm_put(int peer, int region, uint64_t off, const void *src, size_t len);
/* A run of bytes at offset off (relative to a base) of length len. */
struct comm_run {
    uint32_t off;
    uint32_t len;
};
/* Vectored put: for each run, copies len bytes from src + off to peer's
 * region at base + off; runs in increasing order of offset, not
 * overlapping.  One message on transports that send messages.  Same
 * completion rules as comm_put. */
int comm_putv(int peer, int region, uint64_t base, const void *src,
              const struct comm_run *runs, size_t nruns);
/* Copies len bytes from peer's region at off into dst; blocks.  Ordered
 * after every earlier put of this node to the same peer, as by a full
 * fence between them: if a thread of the peer stores, fences, then loads a
 * byte that such a put wrote and does not see it, the get sees that
 * thread's stores (the DSM's fetch marks rely on it).  Over tcp and shm,
 * the get (and an atomic, below) also returns only once every put,
 * notify and send the peer made to this node before executing it is
 * done here: the peer puts, then stores a flag; a get that reads the
 * flag finds the put (the notice logs' pushed positions rely on it;
 * verbs does not promise it). */
int comm_get(int peer, int region, uint64_t off, void *dst, size_t len);
/* 64-bit atomics on an 8-byte aligned word of peer's region; *old receives
 * the previous value.  Atomic with respect to all other comm atomics and to
 * C11 atomics the owner performs on that word. */
int comm_fetch_add(int peer, int region, uint64_t off, uint64_t add,
                   uint64_t *old);
int comm_cas(int peer, int region, uint64_t off, uint64_t expect,
             uint64_t desired, uint64_t *old);
/* Stores value (8-byte aligned word, release semantics) in peer's region at
 * off and wakes the peer's waiters.  Ordered after every earlier put to the
 * same peer: when the waiter sees value, it sees that data. */
int comm_notify(int peer, int region, uint64_t off, uint64_t value);
/* Every earlier put to peer (all peers when peer < 0) is complete at the
 * peer when this returns. */
int comm_fence(int peer);

/* ---- two-sided control messages ---- */
/* Handlers run on the receiving node's service thread, one at a time, in
 * the order messages from one sender were sent.  They must not block on
 * other nodes.  Tags 0..COMM_TAG_MAX-1. */
enum { COMM_TAG_MAX = 32, COMM_MSG_MAX = 64 * 1024 };
typedef void (*comm_handler_fn)(int src, int tag, const void *buf, size_t len,
                                void *arg);
int comm_set_handler(int tag, comm_handler_fn fn, void *arg);
int comm_send(int peer, int tag, const void *buf, size_t len);

/* ---- waiting: spin briefly, then block ---- */
/* Waits until the 64-bit word at p (in this node's registered memory) is
 * >= target.  Spins for the configured time (OMPDSM_SPIN_US), then sleeps on
 * the node's doorbell futex, which every notify rings.  Returns 0, or a
 * negative errno if the job is failing (a peer was lost). */
int comm_wait_ge(const volatile uint64_t *p, uint64_t target);
/* Same with a predicate: waits until pred(arg) is true. */
int comm_wait_until(int (*pred)(void *arg), void *arg);
/* Rings this node's doorbell (wakes local waiters); used by transports
 * after they change a word on behalf of a peer, and by local threads. */
void comm_doorbell_ring(void);

/* ---- collectives over the first `nodes` ranks (a group), on a channel ---- */
/* Channels are independent sequences of collectives: every member calls the
 * collectives of a channel in the same order.  Channel 0 is for all nodes
 * of the job; channel 1 for a sub-team; others are free. */
enum { COMM_CHANNELS = 4 };

/* How often a blocked wait (futex, poll) wakes to look for a failed job:
 * bounds how long a failure goes unnoticed, never how long a wait lasts. */
enum { COMM_FAILURE_POLL_MS = 200 };
/* How long a node that lost a peer lingers before it reports the failure
 * and exits, so that the launcher first notices the death that caused it
 * and names that node, not the survivors whose connections then close. */
enum { COMM_FAILURE_LINGER_MS = 1500 };
struct comm_group {
    int chan;  /* channel */
    int nodes; /* members are ranks 0..nodes-1 */
};
#define COMM_WORLD ((struct comm_group){0, comm_size()})

/* A growable byte buffer for collective payloads. */
struct comm_buf {
    void *data;
    size_t len;
    size_t cap;
};
int comm_buf_reserve(struct comm_buf *b, size_t cap);
int comm_buf_append(struct comm_buf *b, const void *p, size_t len);
void comm_buf_free(struct comm_buf *b);

/* Combines `in` (a child subtree's payload) into acc (this node's running
 * payload).  Must be associative; need not be commutative, but children are
 * combined in rank order after the node's own contribution. */
typedef int (*comm_combine_fn)(void *ctx, struct comm_buf *acc, const void *in,
                               size_t inlen);
/* Runs on the root once every payload is combined, before the release; may
 * replace acc with the payload to broadcast. */
typedef int (*comm_root_fn)(void *ctx, struct comm_buf *acc);

/* Barrier with payloads both ways: a tree gather (fan-out
 * OMPDSM_TREE_FANOUT) combining every member's `up` into one payload at the
 * root, root_fn (optional), then a tree broadcast of the root's result into
 * *down on every member.  combine may be NULL when every up is empty.  Never
 * lets a member through before every member has arrived. */
int comm_barrier_x(struct comm_group g, const void *up, size_t uplen,
                   comm_combine_fn combine, comm_root_fn root_fn, void *ctx,
                   struct comm_buf *down);
int comm_barrier(struct comm_group g);
/* The sequence number of a channel's last collective on this node.  A
 * channel used by groups of different sizes drifts apart between nodes
 * (only members count); before the first collective of a new group, set
 * every member to the same value, no smaller than any member's (rank 0's,
 * when rank 0 was in every earlier group). */
uint64_t comm_coll_seq(int chan);
void comm_coll_set_seq(int chan, uint64_t seq);
/* Tree broadcast of rank 0's buf to every member (no gather).  Between two
 * broadcasts on a channel there must be a barrier on that channel. */
int comm_bcast0(struct comm_group g, struct comm_buf *buf);
/* Broadcast from any root (a barrier carrying root's bytes). */
int comm_bcast(struct comm_group g, int root, void *buf, size_t len);

enum comm_dtype { COMM_INT64, COMM_DOUBLE };
enum comm_op { COMM_SUM, COMM_MIN, COMM_MAX, COMM_AND, COMM_OR, COMM_XOR };
/* Element-wise allreduce of count values in buf (in place).  AND/OR/XOR are
 * bitwise and only for COMM_INT64. */
int comm_allreduce(struct comm_group g, void *buf, size_t count,
                   enum comm_dtype type, enum comm_op op);
/* Allreduce with a user-defined combine on byte buffers of len bytes:
 * fn(inout, in, len, arg) folds in into inout; must be associative. */
typedef void (*comm_reduce_fn)(void *inout, const void *in, size_t len,
                               void *arg);
int comm_allreduce_user(struct comm_group g, void *buf, size_t len,
                        comm_reduce_fn fn, void *arg);
/* Gathers len bytes from every member into all[rank * len] on every member. */
int comm_allgather(struct comm_group g, const void *mine, size_t len,
                   void *all);

/* ---- statistics of this node's comm operations ---- */
struct comm_stats {
    uint64_t puts, put_bytes;
    uint64_t gets, get_bytes;
    uint64_t atomics;
    uint64_t notifies;
    uint64_t fences;
    uint64_t sends, send_bytes;
    uint64_t barriers, bcasts;
    uint64_t wait_ns;     /* time blocked in comm_wait_* */
    uint64_t sleeps;      /* futex sleeps in comm_wait_* */
};
void comm_stats_get(struct comm_stats *out);
/* Asynchronous operations (put, vectored put, notify, send) this node has
 * issued to peers (*tx) and carried out for peers (*rx) so far.  Summed
 * over every node, tx == rx when none is in flight; unchanged sums over a
 * while with every thread waiting mean nothing moves (deadlock detection,
 * runtime/diag.c). */
void comm_traffic(uint64_t *tx, uint64_t *rx);

/* ---- diagnostics to the launcher ---- */
/* Sends a BOOT_STATE or BOOT_SAMPLE message (comm/boot_proto.h) to
 * ompdsmrun.  Never blocks for long: when the connection is busy (an
 * allgather, a full socket) it sends nothing and returns -EAGAIN.
 * -ENOTSUP when the node was not started by ompdsmrun. */
int comm_report(uint32_t type, const void *buf, size_t len);

/* Makes a failed comm call fatal with its reason already printed. */
#define COMM_CHECK(call)                                                       \
    do {                                                                       \
        int comm_check_rc_ = (call);                                           \
        if (OMPDSM_UNLIKELY(comm_check_rc_ < 0))                               \
            ompdsm_fatal("%s failed (%d), giving up", #call, comm_check_rc_);  \
    } while (0)

/* Asks the launcher to end the whole job with status and message (used by
 * ompdsm_fatal); returns after trying. */
void comm_abort_job(int status, const char *msg);

#endif
