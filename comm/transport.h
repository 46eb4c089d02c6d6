/* comm/transport.h - what a transport implements (one table of function
 * pointers) and the comm-internal state the transports share.  Only files
 * in comm/ include this; other layers use comm.h.
 *
 * A transport moves bytes and atomics between nodes.  comm.c performs
 * operations on the calling node itself, counts statistics and chooses a
 * transport for each peer (comm_g.peer_kind); a transport only ever sees
 * peers it serves, never its own rank. */
#ifndef OMPDSM_COMM_TRANSPORT_H
#define OMPDSM_COMM_TRANSPORT_H

#include <stdint.h>
#include <stddef.h>
#include "comm.h"

/* A node's contact card, exchanged once through the bootstrap: a common
 * part (identity, host, registered region sizes), then one part per
 * transport, each filled whether or not that transport ends up used (the
 * choice needs every card).  Fixed layout so that it travels as bytes
 * between hosts of one kind; on the wire it is followed by the verbs
 * part's per-peer table (comm_card_wire_len). */
#define COMM_CARD_MAGIC 0x6f6d7065u /* "ompe": second layout, with parts */

/* tcp's part: where the node's listener is. */
struct comm_card_tcp {
    uint32_t addr;        /* IPv4, network order; 0 if no tcp listener */
    uint16_t port;        /* network order */
    uint16_t pad;
};

/* verbs' part: what a peer needs to connect an RC queue pair to this node
 * and to address its registered memory.  All zero when present is 0. */
/* Region flags: COMM_VERBS_REG_WHOLE, one rkey covers the region; or
 * COMM_VERBS_REG_CHUNKS | shift << COMM_VERBS_REG_SHIFT, registered by the
 * owner in 2^shift-byte chunks as peers ask for them (rkey 0 here). */
enum {
    COMM_VERBS_REG_WHOLE = 1,
    COMM_VERBS_REG_CHUNKS = 2,
    COMM_VERBS_REG_SHIFT = 8,
    COMM_VERBS_CHUNK_SHIFT_MIN = 12, /* 4 KiB .. 1 TiB */
    COMM_VERBS_CHUNK_SHIFT_MAX = 40,
};
struct comm_card_verbs {
    uint32_t present;     /* 1: a device is open and the fields are valid */
    uint16_t lid;         /* port LID (InfiniBand), 0 on RoCE */
    uint8_t port;         /* port number, 1-based */
    uint8_t mtu;          /* enum ibv_mtu of the port (1..5) */
    uint32_t psn;         /* first packet sequence number, 24 bits */
    uint32_t gid_index;   /* OMPDSM_IB_GID_INDEX, meaningful when gid is set */
    uint8_t gid[16];      /* all zero: no GRH (InfiniBand inside a subnet) */
    struct {
        uint64_t addr;    /* virtual address of the region in this node */
        uint32_t rkey;
        uint32_t flags;   /* COMM_VERBS_REG_* */
    } region[COMM_REG_MAX];
    /* On the wire the card is followed by uint32_t qpn[size]: qpn[p] is the
     * number of this node's queue pair for peer p (0 for itself and when
     * present is 0). */
};

struct comm_card {
    uint32_t magic;
    int32_t rank;
    int32_t pid;
    uint32_t transport;   /* enum comm_transport_kind the node asked for */
    /* Build ids (GNU build-id note in hex, or "h" and a hash of the file
     * when the object has none) of the executable and of the object
     * holding libompdsm: addresses agree between nodes only when both
     * match node 0's.  Early in the card, so that a build with another
     * card layout is still told apart by them. */
    char exe_id[48];
    char lib_id[48];
    char host[64];        /* gethostname() */
    char boot_id[40];     /* /proc/sys/kernel/random/boot_id */
    uint64_t netns;       /* inode of /proc/self/ns/net */
    struct {
        int32_t fd;       /* shm: memfd in the owner process, -1 if none */
        uint32_t pad;
        uint64_t len;     /* every transport: 0 when not registered */
    } region[COMM_REG_MAX];
    struct comm_card_tcp tcp;
    uint32_t pad;
    struct comm_card_verbs verbs;
};

/* Bytes of one card on the wire in a job of `nodes` nodes. */
static inline size_t comm_card_wire_len(int nodes)
{
    return sizeof(struct comm_card) + (size_t)nodes * sizeof(uint32_t);
}
/* Writes c and its queue pair table (nodes entries) as wire bytes; buf
 * holds comm_card_wire_len(nodes). */
void comm_card_encode(const struct comm_card *c, const uint32_t *qpn,
                      int nodes, void *buf);
/* Reads the card node `rank` sent (len bytes) in a job of `nodes` nodes
 * into *c and qpn[0..nodes); 0, or -EPROTO with the reason printed. */
int comm_card_decode(const void *buf, size_t len, int rank, int nodes,
                     struct comm_card *c, uint32_t *qpn);
/* Checks a verbs part and its queue pair table against the common part's
 * region sizes; 0, or -EPROTO with why (no newline) in why[0..whylen). */
int comm_card_verbs_check(const struct comm_card *c, const uint32_t *qpn,
                          int rank, int nodes, char *why, size_t whylen);

struct comm_transport;

/* The transport table.  Every function returns 0 or a negative errno after
 * printing the reason.  Semantics are those of the comm_* call of the same
 * name in comm.h, restricted to a remote peer. */
struct comm_transport_ops {
    const char *name;
    /* Creates the transport once every card is known; may start threads. */
    int (*start)(struct comm_transport **out);
    /* Stops threads, closes connections, frees; called once. */
    void (*stop)(struct comm_transport *t);
    int (*put)(struct comm_transport *t, int peer, int region, uint64_t off,
               const void *src, size_t len);
    int (*get)(struct comm_transport *t, int peer, int region, uint64_t off,
               void *dst, size_t len);
    /* Optional; without it comm_putv puts run by run. */
    int (*putv)(struct comm_transport *t, int peer, int region, uint64_t base,
                const void *src, const struct comm_run *runs, size_t nruns);
    int (*fetch_add)(struct comm_transport *t, int peer, int region,
                     uint64_t off, uint64_t add, uint64_t *old);
    int (*cas)(struct comm_transport *t, int peer, int region, uint64_t off,
               uint64_t expect, uint64_t desired, uint64_t *old);
    int (*notify)(struct comm_transport *t, int peer, int region,
                  uint64_t off, uint64_t value);
    int (*fence)(struct comm_transport *t, int peer);
    int (*send)(struct comm_transport *t, int peer, int tag, const void *buf,
                size_t len);
};

extern const struct comm_transport_ops comm_shm_ops;
extern const struct comm_transport_ops comm_tcp_ops;
extern const struct comm_transport_ops comm_verbs_ops;

/* ---- the comm layer's own registered region (COMM_REG_SYNC) ---- */
enum {
    COMM_FANOUT_MAX = 16,
    COMM_SLOT_SIZE = 16 * 1024,        /* inline payload per slot */
    COMM_SPILL_SIZE = 16 * 1024 * 1024 /* per spill buffer, lazily touched */
};

/* Header of a payload slot; the payload follows inline or lives in the
 * writer's spill buffer (read with comm_get). */
struct comm_slot_hdr {
    uint64_t len;       /* payload bytes */
    uint64_t spill_off; /* offset in the writer's COMM_REG_SYNC, 0 = inline */
};

/* Per channel, on every node. */
struct comm_chan_area {
    /* arrive[i] = sequence number of the last gather child i finished */
    struct {
        volatile uint64_t seq;
        char pad[OMPDSM_CACHELINE - 8];
    } arrive[COMM_FANOUT_MAX];
    /* release[p] = sequence number of the last release (parity p) */
    struct {
        volatile uint64_t seq;
        char pad[OMPDSM_CACHELINE - 8];
    } release[2];
    /* slots written by children (up) and by the parent (down, by parity) */
    char up[COMM_FANOUT_MAX][COMM_SLOT_SIZE];
    char down[2][COMM_SLOT_SIZE];
};

struct comm_sync_area {
    /* Futex word every notify increments; waiters sleep on it. */
    volatile uint32_t doorbell;
    /* Number of threads sleeping (or about to) on doorbell. */
    volatile uint32_t sleepers;
    /* Separate futex for the shm mailboxes, so that the service thread
     * sleeping on it does not make every notify pay for a wake-up. */
    volatile uint32_t mbox_bell;
    volatile uint32_t mbox_sleepers;
    char pad0[OMPDSM_CACHELINE - 16];
    struct comm_chan_area chan[COMM_CHANNELS];
    /* Spill buffers: per channel, one for up payloads and two (by parity)
     * for down payloads; aligned to pages. */
    char spill[COMM_CHANNELS][3][COMM_SPILL_SIZE] __attribute__((aligned(4096)));
    /* Followed by comm_size() mailboxes (struct comm_mbox), one per sender,
     * used by transports without a byte stream (shm). */
};

/* A single-producer single-consumer ring of control messages from one
 * sender, in the receiver's memory.  Records are struct comm_mbox_rec then
 * the payload, padded to 8 bytes; a record never wraps (a pad record with
 * tag -1 fills the end of the ring). */
enum { COMM_MBOX_DATA = 256 * 1024 };
struct comm_mbox {
    volatile uint64_t head; /* consumed bytes, written by the receiver */
    char pad0[OMPDSM_CACHELINE - 8];
    volatile uint64_t tail; /* produced bytes, written by the sender */
    char pad1[OMPDSM_CACHELINE - 8];
    char data[COMM_MBOX_DATA];
};
struct comm_mbox_rec {
    int32_t tag; /* -1: padding to the end of the ring */
    uint32_t len;
};
static inline size_t comm_sync_len(int nodes)
{
    return sizeof(struct comm_sync_area) + (size_t)nodes * sizeof(struct comm_mbox);
}
static inline struct comm_mbox *comm_mbox_of(void *sync_base, int sender)
{
    return (struct comm_mbox *)((char *)sync_base + sizeof(struct comm_sync_area)) + sender;
}

/* ---- comm-internal state, one per process ---- */
struct comm_state {
    int rank, size;
    int connected;
    enum comm_transport_kind want;     /* from OMPDSM_TRANSPORT */
    /* Each transport in use, indexed by kind (AUTO unused): started once
     * for the peers it serves, stopped at comm_fini. */
    struct comm_tp {
        const struct comm_transport_ops *ops;
        struct comm_transport *tr;
    } tp[COMM_TRANSPORT_KINDS];
    /* peer_kind[r]: the transport serving node r (AUTO for this node);
     * peer[r]: that transport's table and instance, for the fast path. */
    uint8_t *peer_kind;
    struct comm_tp *peer;
    struct {
        void *base;
        size_t len;
        int fd;
    } reg[COMM_REG_MAX];
    struct comm_card *cards; /* size entries, after comm_connect */
    /* card_qpn[r * size + p]: node r's queue pair number for peer p (the
     * verbs part's tables of every card). */
    uint32_t *card_qpn;
    int all_local;           /* every node on this host */
    struct comm_sync_area *sync; /* this node's COMM_REG_SYNC */
    int sync_fd;
    comm_handler_fn handler[COMM_TAG_MAX];
    void *handler_arg[COMM_TAG_MAX];
    /* Tcp listener created before the card exchange (auto or tcp). */
    int tcp_listen_fd;
    uint32_t tcp_addr;  /* address to advertise, network order */
    uint16_t tcp_port;  /* network order */
    /* Spin budget for comm_wait_* in nanoseconds (OMPDSM_SPIN_US). */
    uint64_t spin_ns;
    int fanout;         /* OMPDSM_TREE_FANOUT */
    /* Collective sequence numbers per channel. */
    uint64_t coll_seq[COMM_CHANNELS];
    volatile int failed;
};
extern struct comm_state comm_g;

/* True when this node talks to peer through the transport of that kind
 * (set before any transport starts: transports use it in start to know
 * their peers). */
static inline int comm_serves(int peer, enum comm_transport_kind kind)
{
    return peer != comm_g.rank && comm_g.peer_kind[peer] == (uint8_t)kind;
}

/* ---- verbs set-up before the card exchange (verbs.c) ----
 * Opens the device (OMPDSM_IB_DEVICE, OMPDSM_IB_PORT, OMPDSM_IB_GID_INDEX),
 * registers every region and creates one queue pair per peer, then fills
 * the verbs part of this node's card and its queue pair table.  With
 * required 0 (auto) a node without a device leaves the part empty and
 * returns 0; with required 1 that is an error naming the cause.  Returns
 * 0 or a negative errno after printing the reason. */
int comm_verbs_prepare(struct comm_card_verbs *part, uint32_t *qpn,
                       int required);
/* Frees what comm_verbs_prepare made when no peer uses verbs after all. */
void comm_verbs_release(void);

/* Dispatches an incoming control message to its handler (service threads). */
void comm_dispatch(int src, int tag, const void *buf, size_t len);
/* Marks the job as failing and wakes every waiter; prints msg once. */
void comm_set_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Applies a notify to local memory: store + ring doorbell. */
void comm_local_notify(int region, uint64_t off, uint64_t value);
/* Bounds check of [off, off+len) in this node's region. */
int comm_local_check(int region, uint64_t off, size_t len, const char *what,
                     int src);
/* Wakes sleepers of the doorbell in `sync` (a local or mapped peer area). */
void comm_doorbell_ring_area(struct comm_sync_area *sync);
/* Statistics counted outside comm.c: time waited in comm_wait_* and
 * whether the waiter slept (wait.c), collectives run (coll.c). */
void comm_stats_add_wait(uint64_t ns, int slept);
/* Counts one asynchronous operation from a peer carried out here
 * (comm_traffic). */
void comm_traffic_rx(void);
void comm_stats_add_coll(int bcast);

/* ---- host identity, tcp address and build ids (host.c) ---- */
/* Fills c's host name, boot id, network namespace and build ids. */
void comm_host_card(struct comm_card *c);
/* True when two cards are on one host: same boot id, network namespace
 * and host name. */
int comm_card_same_host(const struct comm_card *a, const struct comm_card *b);
/* "name" or "name/a.b.c.d" (its tcp address), for messages. */
void comm_host_label(const struct comm_card *c, char *buf, size_t len);
/* The address for the tcp listener (network order) and the rule that
 * chose it (for traces and errors); 0 or a negative errno. */
int comm_tcp_addr_choose(uint32_t *addr, const char **how);
/* After the card exchange: 0 when every node runs node 0's executable and
 * libompdsm, else -EINVAL (the lowest-ranked node that differs printed the
 * reason). */
int comm_check_same_build(void);

/* ---- bootstrap (boot.c) ---- */
/* Learns rank and size from the environment (OMPDSM_RANK/SIZE/BOOT from
 * ompdsmrun, PMIx, or a single node). */
int comm_boot_init(int *rank, int *size);
/* Exchanges len bytes per node: all[r * len] holds rank r's bytes. */
int comm_boot_allgather(const void *mine, size_t len, void *all);
struct boot_hdr;
/* Checks the launcher's answer header to an allgather of len bytes per
 * node among size nodes; 0, or -EPROTO with the reason printed. */
int comm_boot_answer_check(const struct boot_hdr *h, size_t len, int size);
/* Local address of the connection to the launcher (0 if none): the address
 * the tcp transport advertises by default. */
uint32_t comm_boot_local_addr(void);
/* Under PMIx (boot_pmix.c): node 0's host name, NULL when not started by
 * PMIx or unknown; and the number of nodes on this host. */
const char *comm_boot_pmix_node0(void);
int comm_boot_pmix_local_size(void);
/* Descriptor the service thread watches for launcher loss (-1 if none). */
int comm_boot_fd(void);
/* Asks the launcher to end the job; 0 if it was told, -1 if there is no
 * launcher to tell (the caller prints the message). */
int comm_boot_abort(int status, const char *msg);
void comm_boot_fini(void);

/* ---- PMIx bootstrap (boot_pmix.c) ----
 * comm_boot_pmix_init returns -ENOSYS when not launched by PMIx. */
int comm_boot_pmix_init(int *rank, int *size);
int comm_boot_pmix_allgather(const void *mine, size_t len, void *all);
void comm_boot_pmix_abort(int status, const char *msg);
void comm_boot_pmix_fini(void);

#endif
