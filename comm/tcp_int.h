/* comm/tcp_int.h - what the tcp transport's files share: tcp.c (the
 * operations, set-up and shutdown), tcp_conn.c (failure, send queues,
 * requests and replies), tcp_svc.c (the service thread) and tcp_addr.c
 * (the address it listens on); tcp_frame.h is the wire format. */
#ifndef OMPDSM_COMM_TCP_INT_H
#define OMPDSM_COMM_TCP_INT_H

#include "transport.h"
#include "card.h"
#include "tcp.h"
#include "tcp_frame.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum {
    TCP_CLOSE_TIMEOUT_S = 10,   /* stop() waits this long for the peers */
    TCP_TIMEOUT_DEFAULT_S = 30, /* OMPDSM_TCP_TIMEOUT_S's default */
    TCP_RBUF = 64 * 1024,       /* receive buffer per stream */
    TCP_DIRECT_MIN = 16 * 1024, /* payload rest read straight to its place */
};

/* ------------------------------------------------------------------------ */
/* Transport state                                                          */

/* A request waiting for its reply; lives on the requester's stack and is
 * linked into its peer's list from before the request is written until the
 * reply completes it or the requester gives up (job failed). */
struct tcp_req {
    struct tcp_req *next;
    uint64_t id;
    uint8_t op;
    void *dst;       /* get: the caller's buffer */
    size_t len;      /* get: bytes expected */
    uint64_t seq;    /* fence: put_seq when the fence was written */
    uint64_t peer_put; /* reply's off: the peer's put_seq to us when it
                          replied (tcp_request waits until ff_done reaches
                          it) */
    uint64_t value;  /* reply's old value (atomics) */
    int status;      /* reply's status: 0 or -errno from the target */
    int done;        /* 1 once completed (release store, under req_lock) */
};

/* A receiving stream's parse state. */
struct tcp_rx {
    unsigned char *buf;   /* TCP_RBUF bytes */
    size_t pos, len;      /* unparsed bytes are buf[pos..len) */
    struct tcp_frame cur; /* the frame whose payload is arriving */
    int in_payload;
    size_t got;           /* payload bytes received so far */
    char *dst;            /* where it goes (put: region memory, send: msgbuf) */
};

/* Bytes waiting to be written: q[head..len).  len is also read without
 * the owner's lock as a hint (tcp_oq_pending), so it is stored atomically. */
struct tcp_outq {
    char *q;
    size_t head, len, cap;
};

struct tcp_peer {
    int peer;
    struct comm_transport *t;
    /* ---- out: this node's requests to the peer; its replies come back ---- */
    int out_fd;              /* blocking, with COMM_FAILURE_POLL_MS timeouts */
    /* One writer at a time on out_fd, held across whole frames.  Application
     * threads may hold it while blocked in a write; the service thread only
     * ever trylocks it. */
    pthread_mutex_t send_lock;
    uint64_t next_id;        /* last request id (atomic) */
    uint64_t put_seq;        /* fire-and-forget frames written (atomic) */
    uint64_t fenced_seq;     /* put_seq covered by a completed fence (atomic) */
    int closed_tx;           /* BYE sent or a write failed (send_lock) */
    pthread_mutex_t q_lock;  /* protects oq */
    struct tcp_outq oq;      /* frames the service thread could not write */
    int out_polled;          /* out_fd is in the epoll set (service thread) */
    pthread_mutex_t rx_lock; /* the one thread reading replies */
    int rx_busy;             /* 1 while rx_lock is held (atomic, for waiters) */
    struct tcp_rx orx;       /* the reply stream (rx_lock) */
    int out_eof;             /* the peer closed out_fd (rx_lock) */
    pthread_mutex_t req_lock;
    struct tcp_req *req_head, *req_tail; /* awaiting replies, in send order */
    unsigned nreq;
    struct tcp_req *rx_req;  /* whose reply payload is arriving; NULL while
                                discarding one whose requester gave up */
    /* ---- in: the peer's requests; replies go back (service thread only) */
    int in_fd;               /* non-blocking */
    /* The peer's fire-and-forget frames (put, vectored put, notify, send:
     * what its put_seq counts) applied here, in order (atomic; written by
     * the service thread).  A reply carries the replier's put_seq, and
     * the requester waits until this reaches it: the two directions of a
     * pair are two sockets, and without the wait a reply could overtake
     * a put the peer made before it executed the request. */
    uint64_t ff_done;
    struct tcp_rx irx;
    char *msgbuf;            /* a control message or abort text arriving */
    char *putvbuf;           /* a vectored put arriving */
    size_t putvcap;
    struct tcp_outq iq;      /* replies not written yet */
    int iq_armed;            /* EPOLLOUT on in_fd */
    int shut_pending;        /* half-close in_fd once iq is written */
    int bye_rx;              /* the peer sent BYE (atomic for other threads) */
    int in_eof;              /* the peer closed in_fd */
};

struct comm_transport {
    int rank, size;
    struct tcp_peer *peers; /* size entries; peers[rank] unused (fds -1) */
    int epfd;
    int stopfd;             /* eventfd: wakes the service thread to stop */
    int bootfd;             /* launcher connection watched for loss, or -1 */
    pthread_t service;
    int service_started;
    int stopping;           /* stop() has begun (atomic) */
};

/* epoll keys: 2 * peer (+1 for out_fd), or one of these. */
enum { KEY_STOP = -1, KEY_BOOT = -2 };

/* Set in the service thread: transport calls from message handlers must
 * not block, and may not wait for replies. */
extern __thread int tcp_in_service;

/* OMPDSM_TCP_TIMEOUT_S: how long a peer may leave this node's data
 * unacknowledged, or not answer keepalive probes, before its connection
 * fails (tcp.c). */
extern int tcp_timeout_s;

/* The peers of this transport: with OMPDSM_TRANSPORT=auto, those on
 * other hosts. */
static inline int served(int r) { return comm_serves(r, COMM_TRANSPORT_TCP); }

static inline int ld(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void st(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }


/* ---- tcp_conn.c: failure, output queues, writing requests, replies ---- */

/* Sends request f and waits for its reply.  Returns 0, the target's error,
 * or -ECONNABORTED when the job fails first. */
int tcp_request(struct comm_transport *t, struct tcp_peer *p,
                struct tcp_frame *f, struct tcp_req *r);

/* Writes one frame (header, then payload) to the peer.  With req, the frame
 * is a request: it gets an id and req is linked before the frame leaves, so
 * that the reply always finds it.  From the service thread (a message
 * handler) the frame is queued if it cannot go at once, and req must be
 * NULL. */
int tcp_send_frame(struct comm_transport *t, struct tcp_peer *p,
                   struct tcp_frame *f, const void *payload, size_t plen,
                   struct tcp_req *req);

/* Writes the queue the service thread left, blocking (with send_lock). */
int tcp_oq_flush(struct tcp_peer *p, uint64_t deadline_ns);

/* Writes iov[0..n) completely on the blocking out_fd (application threads,
 * with send_lock).  Returns 0 or -errno; -ECONNABORTED once the job fails,
 * -ETIMEDOUT after deadline_ns (0: none). */
int tcp_write_all(int fd, struct iovec *iov, int n, uint64_t deadline_ns);

/* Adds (op EPOLL_CTL_ADD) or changes fd's entry in the epoll set. */
void tcp_epoll_set(struct comm_transport *t, int fd, int key, uint32_t ev,
                   int op);

/* Whether the out queue holds bytes (a hint: read without q_lock). */
int tcp_oq_pending(struct tcp_peer *p);

/* The peer broke the protocol: fatal for the job. */
int tcp_bad_peer(struct tcp_peer *p, const char *why);

/* Puts out_fd in the epoll set while the service thread has something to
 * write there, or, during stop, to see the peer's half-close. */
void tcp_watch_out(struct comm_transport *t, struct tcp_peer *p, int pending);

/* The service thread writes the out queue without blocking, unless an
 * application thread holds send_lock: that thread writes the queue after it
 * unlocks (the fences pair with the one in send_unlock). */
void tcp_service_flush_out(struct comm_transport *t, struct tcp_peer *p);

/* Writes what fits without blocking.  Returns 0 (maybe bytes left) or
 * -errno. */
int tcp_outq_write(struct tcp_outq *o, int fd);

/* The connection to p failed (err) or closed while doing: fails the job,
 * unless it has failed already; a timeout or no route (err) as the failure
 * of the network between the two hosts. */
void tcp_peer_lost(struct tcp_peer *p, int err, const char *doing);

/* Appends iov[0..n) minus its first skip bytes. */
void tcp_outq_append(struct tcp_outq *o, int peer, const struct iovec *iov,
                     int n, size_t skip);

/* ---- tcp_svc.c: the service thread ---- */

/* The service thread's body; arg is the transport. */
void *tcp_service_main(void *arg);

/* ---- tcp_addr.c ---- */

/* The address for the listener (network order) and the rule that chose it
 * (for traces and errors); 0 or a negative errno after printing why. */
int tcp_addr_choose(uint32_t *addr, const char **how);

#endif
