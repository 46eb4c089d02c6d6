/* comm/transport.h - what a transport implements (one table of function
 * pointers), and what every transport shares with comm.c: the comm state,
 * the head of the comm layer's own region and the helpers transports call
 * back into.  Only files in comm/ include this; other layers use comm.h.
 * A transport's own parts live in its own header (shm.h, tcp.h, verbs.h:
 * its part of the contact card, its set-up hooks), the card in card.h and
 * the bootstrap in boot.h, so that a new transport leaves this file alone.
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

struct comm_transport;

/* The transport table.  Every function returns 0 or a negative errno after
 * printing the reason.  Semantics are those of the comm_* call of the same
 * name in comm.h, restricted to a remote peer. */
struct comm_transport_ops {
    const char *name;
    /* 1 when the peer's own service thread carries out puts and notifies
     * and counts each with comm_traffic_rx; 0 when they are done within
     * the call (the peer's memory written directly), counted by comm.c. */
    int peer_counts_rx;
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

/* ---- COMM_REG_SYNC, the comm layer's own registered region ----
 * The same layout on every node: this head at 0 (the doorbell every
 * notify rings, wait.c); the collectives' arrival words, slots and spill
 * buffers from COMM_SYNC_COLL_OFF on (coll.c, comm_coll_area_len bytes);
 * shm's mailboxes in the last comm_shm_area_len(size) bytes (shm.c). */
struct comm_sync_area {
    /* Futex word every notify increments; waiters sleep on it. */
    volatile uint32_t doorbell;
    /* Number of threads sleeping (or about to) on doorbell. */
    volatile uint32_t sleepers;
};
/* A page, so that the collectives' page-aligned spill buffers stay so. */
enum { COMM_SYNC_COLL_OFF = 4096 };
/* Bytes of the collectives' part (coll.c). */
size_t comm_coll_area_len(void);

/* ---- comm-internal state, one per process ---- */
struct comm_card;
struct comm_state {
    int rank, size;
    /* peer_kind[r]: the enum comm_transport_kind serving node r (AUTO for
     * this node); set before any transport starts, which reads it in start
     * to know its peers (comm_serves). */
    uint8_t *peer_kind;
    struct {
        void *base;
        size_t len;
        int fd;
    } reg[COMM_REG_MAX];
    struct comm_card *cards; /* size entries, after the card exchange */
    /* card_qpn[r * size + p]: node r's queue pair number for peer p (the
     * verbs part's table that follows each card on the wire). */
    uint32_t *card_qpn;
    struct comm_sync_area *sync; /* this node's COMM_REG_SYNC */
    /* Spin budget for comm_wait_* and tcp's reply reading, in nanoseconds
     * (OMPDSM_SPIN_US). */
    uint64_t spin_ns;
    volatile int failed;
};
extern struct comm_state comm_g;

/* True when this node talks to peer through the transport of that kind. */
static inline int comm_serves(int peer, enum comm_transport_kind kind)
{
    return peer != comm_g.rank && comm_g.peer_kind[peer] == (uint8_t)kind;
}

/* ---- what transports call back into (comm.c, wait.c) ---- */
/* Dispatches an incoming control message to its handler (service threads). */
void comm_dispatch(int src, int tag, const void *buf, size_t len);
/* Marks the job as failing and wakes every waiter; the first failure's
 * message is printed, and is what ompdsm_fatal then tells the launcher. */
void comm_set_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, for the network between node by (this one, or the peer that told
 * us) and node peer (no answer within OMPDSM_TCP_TIMEOUT_S, or no route):
 * the message printed is the formatted prefix, then both hosts and what
 * happened (what); the launcher, which knows whether peer still runs,
 * words its own line from what (BOOT_ABORT_LINK). */
void comm_set_link_failed(int by, int peer, const char *what,
                          const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
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
void comm_stats_add_coll(int bcast);
/* Counts one asynchronous operation from a peer carried out here
 * (comm_traffic). */
void comm_traffic_rx(void);
/* Parses OMPDSM_TREE_FANOUT (coll.c); comm_init calls it. */
void comm_coll_init(void);

#endif
