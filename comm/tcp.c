/* comm/tcp.c - the tcp transport: two TCP connections between every pair of
 * nodes it serves (all pairs with OMPDSM_TRANSPORT=tcp, the pairs on
 * different hosts with auto) and one service thread per node that executes
 * the peers' one-sided requests against this node's registered memory, so
 * that a target's application threads never take part.
 *
 * Each node has, per peer, an "out" connection that carries its requests to
 * the peer and brings the replies back, and an "in" connection that brings
 * the peer's requests and takes the replies back.  The service thread alone
 * reads and writes the in connections.  Application threads write requests
 * on the out connection under a per-peer send lock; a thread that waits for
 * a reply reads the out connection itself (one reader at a time, completing
 * the other waiters' replies too; a get's data goes straight into the
 * caller's buffer), so a round trip costs what a plain TCP ping-pong costs:
 * no hand-off between threads on the requesting side.
 *
 * The service thread never blocks on a socket or on a lock an application
 * thread may hold for long: a reply it cannot write at once is queued and
 * written on EPOLLOUT; a frame a message handler sends to a peer (on the out
 * connection) is queued when an application thread is writing there, and
 * that thread writes the queue when it unlocks.  So every node always drains
 * the requests sent to it, and no cycle of full sockets can deadlock.
 *
 * Failure: a connection that closes without the peer's BYE frame, or fails,
 * while the job runs is fatal for the job (comm_set_failed).  stop() sends
 * BYE and half-closes each out connection; a service thread answers a BYE
 * by half-closing the in connection; stop() returns once both directions
 * of every connection are closed, so an orderly end reports nothing and
 * loses no data. */
#include "transport.h"
#include "tcp_frame.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
    TCP_CONNECT_TIMEOUT_S = 30, /* every connection must be up within this */
    TCP_CLOSE_TIMEOUT_S = 10,   /* stop() waits this long for the peers */
    TCP_FAIL_GRACE_MS = 3000,   /* after a peer is lost, exit if still alive */
    TCP_RBUF = 64 * 1024,       /* receive buffer per stream */
    TCP_DIRECT_MIN = 16 * 1024, /* payload rest read straight to its place */
};

/* ------------------------------------------------------------------------ */
/* Frame encoding (pure; see tcp_frame.h)                                   */

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void tcp_frame_encode(const struct tcp_frame *f,
                      unsigned char out[TCP_FRAME_HDR])
{
    out[0] = TCP_FRAME_MAGIC;
    out[1] = f->op;
    out[2] = f->region;
    out[3] = f->tag;
    put_le32(out + 4, f->len);
    put_le64(out + 8, f->id);
    put_le64(out + 16, f->off);
    put_le64(out + 24, f->a);
    put_le64(out + 32, f->b);
}

static const char *const op_names[TCP_OP_END] = {
    [TCP_OP_HELLO] = "hello",  [TCP_OP_PUT] = "put",
    [TCP_OP_GET] = "get",      [TCP_OP_FADD] = "fetch-add",
    [TCP_OP_CAS] = "compare-swap", [TCP_OP_NOTIFY] = "notify",
    [TCP_OP_FENCE] = "fence",  [TCP_OP_SEND] = "send",
    [TCP_OP_REPLY] = "reply",  [TCP_OP_BYE] = "bye",
    [TCP_OP_ABORT] = "abort",  [TCP_OP_PUTV] = "vectored put",
};

const char *tcp_op_name(unsigned op)
{
    return op > 0 && op < TCP_OP_END ? op_names[op] : "unknown op";
}

/* Which header fields each op uses. */
enum {
    F_REGION = 1 << 0,
    F_TAG = 1 << 1,
    F_LEN = 1 << 2,
    F_ID = 1 << 3,
    F_OFF = 1 << 4,
    F_A = 1 << 5,
    F_B = 1 << 6,
    F_ALIGN = 1 << 7, /* off must be 8-byte aligned */
};
static const uint8_t op_fields[TCP_OP_END] = {
    [TCP_OP_HELLO] = F_ID | F_OFF | F_A,
    [TCP_OP_PUT] = F_REGION | F_LEN | F_OFF,
    [TCP_OP_GET] = F_REGION | F_LEN | F_OFF | F_ID,
    [TCP_OP_FADD] = F_REGION | F_OFF | F_A | F_ID | F_ALIGN,
    [TCP_OP_CAS] = F_REGION | F_OFF | F_A | F_B | F_ID | F_ALIGN,
    [TCP_OP_NOTIFY] = F_REGION | F_OFF | F_A | F_ALIGN,
    [TCP_OP_FENCE] = F_ID,
    [TCP_OP_SEND] = F_TAG | F_LEN,
    [TCP_OP_REPLY] = F_ID | F_LEN | F_A | F_B,
    [TCP_OP_BYE] = 0,
    [TCP_OP_ABORT] = F_LEN,
    [TCP_OP_PUTV] = F_REGION | F_LEN | F_OFF | F_A,
};

int tcp_frame_decode(const unsigned char in[TCP_FRAME_HDR],
                     struct tcp_frame *f, char *why, size_t whylen)
{
    if (in[0] != TCP_FRAME_MAGIC) {
        snprintf(why, whylen, "bad magic byte 0x%02x (stream out of step)",
                 in[0]);
        return -EPROTO;
    }
    f->op = in[1];
    f->region = in[2];
    f->tag = in[3];
    f->len = get_le32(in + 4);
    f->id = get_le64(in + 8);
    f->off = get_le64(in + 16);
    f->a = get_le64(in + 24);
    f->b = get_le64(in + 32);
    if (f->op == 0 || f->op >= TCP_OP_END) {
        snprintf(why, whylen, "unknown op %u", f->op);
        return -EPROTO;
    }
    const char *name = op_names[f->op];
    unsigned u = op_fields[f->op];
    static const struct {
        unsigned bit;
        const char *name;
    } unused[] = {{F_REGION, "region"}, {F_TAG, "tag"}, {F_LEN, "len"},
                  {F_ID, "id"},         {F_OFF, "off"}, {F_A, "a"},
                  {F_B, "b"}};
    const uint64_t val[] = {f->region, f->tag, f->len, f->id,
                            f->off,    f->a,   f->b};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(unused); i++)
        if (!(u & unused[i].bit) && val[i]) {
            snprintf(why, whylen, "%s frame with its unused field '%s' set",
                     name, unused[i].name);
            return -EPROTO;
        }
    if ((u & F_REGION) && f->region >= COMM_REG_MAX) {
        snprintf(why, whylen, "%s on region %u (regions are 0..%d)", name,
                 f->region, COMM_REG_MAX - 1);
        return -EPROTO;
    }
    if ((u & F_TAG) && f->tag >= COMM_TAG_MAX) {
        snprintf(why, whylen, "%s with tag %u (tags are 0..%d)", name, f->tag,
                 COMM_TAG_MAX - 1);
        return -EPROTO;
    }
    if (f->op == TCP_OP_SEND && f->len > COMM_MSG_MAX) {
        snprintf(why, whylen, "send of %u bytes exceeds the %d-byte message "
                 "limit", f->len, COMM_MSG_MAX);
        return -EPROTO;
    }
    if (f->op == TCP_OP_PUTV && (!f->a || f->a > f->len / 8)) {
        snprintf(why, whylen, "vectored put of %llu runs in %u bytes",
                 (unsigned long long)f->a, f->len);
        return -EPROTO;
    }
    if (f->op == TCP_OP_ABORT && f->len > TCP_ABORT_MAX) {
        snprintf(why, whylen, "abort text of %u bytes exceeds %d", f->len,
                 TCP_ABORT_MAX);
        return -EPROTO;
    }
    if ((u & F_LEN) && f->len > TCP_FRAME_MAX_LEN) {
        snprintf(why, whylen, "%s of %u bytes exceeds the %u-byte frame limit",
                 name, f->len, TCP_FRAME_MAX_LEN);
        return -EPROTO;
    }
    if ((u & F_ALIGN) && (f->off & 7)) {
        snprintf(why, whylen, "%s at offset %llu, not 8-byte aligned", name,
                 (unsigned long long)f->off);
        return -EPROTO;
    }
    if (f->op == TCP_OP_REPLY) {
        int64_t st = (int64_t)f->b;
        if (st > 0 || st < -4095) {
            snprintf(why, whylen, "reply with status %lld (not 0 or -errno)",
                     (long long)st);
            return -EPROTO;
        }
        if (st && f->len) {
            snprintf(why, whylen, "failed reply carrying %u bytes", f->len);
            return -EPROTO;
        }
    }
    return 0;
}

size_t tcp_frame_payload(const struct tcp_frame *f)
{
    return (f->op == TCP_OP_PUT || f->op == TCP_OP_SEND ||
            f->op == TCP_OP_REPLY || f->op == TCP_OP_ABORT ||
            f->op == TCP_OP_PUTV) ? f->len : 0;
}

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
 * the owner's lock as a hint (oq_pending), so it is stored atomically. */
struct tcp_outq {
    char *q;
    size_t head, len, cap;
};

static void outq_set_len(struct tcp_outq *o, size_t len)
{
    __atomic_store_n(&o->len, len, __ATOMIC_RELAXED);
}

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
static __thread int tcp_in_service;

/* The peers of this transport: with OMPDSM_TRANSPORT=auto, those on
 * other hosts. */
static inline int served(int r) { return comm_serves(r, COMM_TRANSPORT_TCP); }

static inline int ld(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void st(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

static int oq_pending(struct tcp_peer *p);

/* Fails the job with msg and, best effort, tells every other peer why
 * (an ABORT frame), so that the nodes that notice the failure through this
 * node's own exit still name the node that was lost first. */
static void job_failed(struct tcp_peer *lost, const char *msg)
{
    if (comm_g.failed)
        return;
    comm_set_failed("%s", msg);
    struct comm_transport *t = lost->t;
    size_t len = strnlen(msg, TCP_ABORT_MAX);
    struct tcp_frame f = {.op = TCP_OP_ABORT, .len = (uint32_t)len};
    unsigned char hdr[TCP_FRAME_HDR];
    tcp_frame_encode(&f, hdr);
    for (int r = 0; r < t->size; r++) {
        struct tcp_peer *p = &t->peers[r];
        if (p == lost || !served(r) || pthread_mutex_trylock(&p->send_lock))
            continue;
        /* Only between frames: never after a partly written one. */
        if (!p->closed_tx && !oq_pending(p)) {
            struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)msg, len}};
            struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
            if (sendmsg(p->out_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) !=
                (ssize_t)(sizeof hdr + len))
                p->closed_tx = 1;
        }
        pthread_mutex_unlock(&p->send_lock);
    }
}

static void peer_lost(struct tcp_peer *p, int err, const char *doing)
{
    if (comm_g.failed)
        return;
    char how[96] = "closed", msg[512];
    if (err)
        snprintf(how, sizeof how, "failed (%s)", strerror(err));
    snprintf(msg, sizeof msg, "tcp: connection to node %d %s while %s; did "
             "node %d die?", p->peer, how, doing, p->peer);
    job_failed(p, msg);
}

/* The peer broke the protocol: fatal for the job. */
static int bad_peer(struct tcp_peer *p, const char *why)
{
    char msg[512];
    snprintf(msg, sizeof msg, "tcp: bad frame from node %d: %s; ending the job",
             p->peer, why);
    job_failed(p, msg);
    return -EPROTO;
}

/* ------------------------------------------------------------------------ */
/* Output queues                                                            */

/* Appends iov[0..n) minus its first skip bytes. */
static void outq_append(struct tcp_outq *o, int peer, const struct iovec *iov,
                        int n, size_t skip)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    total -= skip;
    if (o->len + total > o->cap) {
        size_t live = o->len - o->head;
        if (o->head)
            memmove(o->q, o->q + o->head, live);
        o->head = 0;
        outq_set_len(o, live);
        if (live + total > o->cap) {
            size_t cap = o->cap ? o->cap : 64 * 1024;
            while (cap < live + total)
                cap *= 2;
            char *q = realloc(o->q, cap);
            if (!q)
                ompdsm_fatal("tcp: out of memory queueing %zu bytes for node "
                             "%d", total, peer);
            o->q = q;
            o->cap = cap;
        }
    }
    for (int i = 0; i < n; i++) {
        size_t l = iov[i].iov_len;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(o->q + o->len, (const char *)iov[i].iov_base + skip, l - skip);
        outq_set_len(o, o->len + l - skip);
        skip = 0;
    }
}

/* Writes what fits without blocking.  Returns 0 (maybe bytes left) or
 * -errno. */
static int outq_write(struct tcp_outq *o, int fd)
{
    while (o->head < o->len) {
        ssize_t w = send(fd, o->q + o->head, o->len - o->head,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN ? 0 : -errno;
        }
        o->head += (size_t)w;
    }
    o->head = 0;
    outq_set_len(o, 0);
    return 0;
}

static void epoll_set(struct comm_transport *t, int fd, int key, uint32_t ev,
                      int op)
{
    struct epoll_event e = {.events = ev, .data.u64 = (uint64_t)(int64_t)key};
    epoll_ctl(t->epfd, op, fd, &e);
}

/* ------------------------------------------------------------------------ */
/* Requests: sending                                                        */

/* Writes iov[0..n) completely on the blocking out_fd (application threads,
 * with send_lock).  Returns 0 or -errno; -ECONNABORTED once the job fails,
 * -ETIMEDOUT after deadline_ns (0: none). */
static int write_all(int fd, struct iovec *iov, int n, uint64_t deadline_ns)
{
    while (n) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return -errno;
            /* SO_SNDTIMEO expired: the peer is slow or gone. */
            if (comm_g.failed)
                return -ECONNABORTED;
            if (deadline_ns && ompdsm_now_ns() > deadline_ns)
                return -ETIMEDOUT;
            continue;
        }
        while (n && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Writes the queue the service thread left, blocking (with send_lock). */
static int oq_flush(struct tcp_peer *p, uint64_t deadline_ns)
{
    for (;;) {
        pthread_mutex_lock(&p->q_lock);
        struct tcp_outq o = p->oq;
        p->oq.q = NULL;
        p->oq.head = p->oq.cap = 0;
        outq_set_len(&p->oq, 0);
        pthread_mutex_unlock(&p->q_lock);
        if (o.head == o.len) {
            free(o.q);
            return 0;
        }
        struct iovec iov = {o.q + o.head, o.len - o.head};
        int rc = write_all(p->out_fd, &iov, 1, deadline_ns);
        free(o.q);
        if (rc < 0)
            return rc;
    }
}

static int oq_pending(struct tcp_peer *p)
{
    return __atomic_load_n(&p->oq.len, __ATOMIC_RELAXED) != 0;
}

/* Puts out_fd in the epoll set while the service thread has something to
 * write there, or, during stop, to see the peer's half-close. */
static void watch_out(struct comm_transport *t, struct tcp_peer *p, int pending)
{
    uint32_t want = (pending ? EPOLLOUT : 0) |
                    (ld(&t->stopping) && !p->out_eof ? EPOLLIN | EPOLLRDHUP : 0);
    if (want)
        epoll_set(t, p->out_fd, 2 * p->peer + 1, want,
                  p->out_polled ? EPOLL_CTL_MOD : EPOLL_CTL_ADD);
    else if (p->out_polled)
        epoll_ctl(t->epfd, EPOLL_CTL_DEL, p->out_fd, NULL);
    p->out_polled = want != 0;
}

/* The service thread writes the out queue without blocking, unless an
 * application thread holds send_lock: that thread writes the queue after it
 * unlocks (the fences pair with the one in send_unlock). */
static void service_flush_out(struct comm_transport *t, struct tcp_peer *p)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (pthread_mutex_trylock(&p->send_lock) != 0)
        return;
    pthread_mutex_lock(&p->q_lock);
    int rc = p->closed_tx ? 0 : outq_write(&p->oq, p->out_fd);
    if (rc < 0 || p->closed_tx) {
        p->oq.head = 0;
        outq_set_len(&p->oq, 0);
    }
    int pending = p->oq.len != 0;
    pthread_mutex_unlock(&p->q_lock);
    if (rc < 0)
        p->closed_tx = 1;
    pthread_mutex_unlock(&p->send_lock);
    if (rc < 0 && !ld(&t->stopping))
        peer_lost(p, -rc, "sending from a message handler");
    watch_out(t, p, pending);
}

/* Releases send_lock, then writes what the service thread queued while we
 * held it. */
static void send_unlock(struct tcp_peer *p)
{
    pthread_mutex_unlock(&p->send_lock);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    while (oq_pending(p)) {
        pthread_mutex_lock(&p->send_lock);
        int rc = p->closed_tx ? 0 : oq_flush(p, 0);
        if (rc < 0)
            p->closed_tx = 1;
        pthread_mutex_unlock(&p->send_lock);
        if (rc < 0) {
            peer_lost(p, -rc, "sending a message handler's frames");
            return;
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
}

static void req_unlink_locked(struct tcp_peer *p, struct tcp_req *r)
{
    struct tcp_req **pp = &p->req_head, *prev = NULL;
    while (*pp && *pp != r) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = r->next;
    if (p->req_tail == r)
        p->req_tail = prev;
    __atomic_store_n(&p->nreq, p->nreq - 1, __ATOMIC_RELAXED);
}

/* Writes one frame (header, then payload) to the peer.  With req, the frame
 * is a request: it gets an id and req is linked before the frame leaves, so
 * that the reply always finds it.  From the service thread (a message
 * handler) the frame is queued if it cannot go at once, and req must be
 * NULL. */
static int send_frame(struct comm_transport *t, struct tcp_peer *p,
                      struct tcp_frame *f, const void *payload, size_t plen,
                      struct tcp_req *req)
{
    unsigned char hdr[TCP_FRAME_HDR];
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)payload, plen}};
    int niov = plen ? 2 : 1;
    const char *what = tcp_op_name(f->op);
    if (OMPDSM_UNLIKELY(ld(&p->bye_rx) && !comm_g.failed)) {
        ompdsm_err("tcp %s to node %d: it has already finished", what, p->peer);
        return -EPIPE;
    }
    if (OMPDSM_UNLIKELY(tcp_in_service)) {
        if (req) {
            ompdsm_err("tcp %s to node %d from a message handler: handlers "
                       "must not wait for other nodes", what, p->peer);
            return -EDEADLK;
        }
        tcp_frame_encode(f, hdr);
        pthread_mutex_lock(&p->q_lock);
        outq_append(&p->oq, p->peer, iov, niov, 0);
        pthread_mutex_unlock(&p->q_lock);
        __atomic_fetch_add(&p->put_seq, 1, __ATOMIC_RELEASE);
        service_flush_out(t, p);
        return 0;
    }
    pthread_mutex_lock(&p->send_lock);
    int rc = p->closed_tx ? -EPIPE : 0;
    if (req && !rc) {
        f->id = req->id = __atomic_add_fetch(&p->next_id, 1, __ATOMIC_RELAXED);
        req->seq = __atomic_load_n(&p->put_seq, __ATOMIC_RELAXED);
        req->next = NULL;
        pthread_mutex_lock(&p->req_lock);
        if (p->req_tail)
            p->req_tail->next = req;
        else
            p->req_head = req;
        p->req_tail = req;
        __atomic_store_n(&p->nreq, p->nreq + 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&p->req_lock);
    }
    if (!rc && oq_pending(p))
        rc = oq_flush(p, 0);
    if (!rc) {
        tcp_frame_encode(f, hdr);
        rc = write_all(p->out_fd, iov, niov, 0);
    }
    if (rc < 0) /* maybe after part of the frame: nothing more may follow */
        p->closed_tx = 1;
    if (!req)
        __atomic_fetch_add(&p->put_seq, 1, __ATOMIC_RELEASE);
    send_unlock(p);
    if (rc < 0) {
        if (req) {
            pthread_mutex_lock(&p->req_lock);
            req_unlink_locked(p, req);
            pthread_mutex_unlock(&p->req_lock);
        }
        if (rc != -ECONNABORTED && !comm_g.failed) {
            char doing[64];
            snprintf(doing, sizeof doing, "sending a %s", what);
            peer_lost(p, -rc, doing);
        }
        return -ECONNABORTED;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Requests: reading the replies (application threads)                      */

static void complete_locked(struct tcp_peer *p, struct tcp_req *r,
                            const struct tcp_frame *f)
{
    r->value = f->a;
    r->status = (int)(int64_t)f->b;
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    if (p->rx_req == r)
        p->rx_req = NULL;
}

/* A reply header arrived.  Returns 0 or -EPROTO. */
static int reply_begin(struct tcp_peer *p, const struct tcp_frame *f,
                       struct tcp_req *me)
{
    char why[160];
    if (f->op != TCP_OP_REPLY) {
        snprintf(why, sizeof why, "a %s among the replies", tcp_op_name(f->op));
        return bad_peer(p, why);
    }
    pthread_mutex_lock(&p->req_lock);
    struct tcp_req *r = p->req_head;
    while (r && r->id != f->id)
        r = r->next;
    if (!r && f->id > __atomic_load_n(&p->next_id, __ATOMIC_RELAXED)) {
        /* Not one whose requester gave up: never issued. */
        pthread_mutex_unlock(&p->req_lock);
        snprintf(why, sizeof why, "reply to request %llu, never sent",
                 (unsigned long long)f->id);
        return bad_peer(p, why);
    }
    if (r && (r->op == TCP_OP_GET ? !f->b && f->len != r->len : f->len != 0)) {
        pthread_mutex_unlock(&p->req_lock);
        snprintf(why, sizeof why, "reply of %u bytes to a %s of %zu", f->len,
                 tcp_op_name(r->op), r->op == TCP_OP_GET ? r->len : 0);
        return bad_peer(p, why);
    }
    if (r)
        req_unlink_locked(p, r);
    p->rx_req = r;
    if (r && !f->len)
        complete_locked(p, r, f);
    pthread_mutex_unlock(&p->req_lock);
    if (r && !f->len && r != me)
        comm_doorbell_ring();
    struct tcp_rx *x = &p->orx;
    x->cur = *f;
    x->got = 0;
    x->in_payload = f->len > 0;
    return 0;
}

static void reply_end(struct tcp_peer *p, struct tcp_req *me)
{
    struct tcp_rx *x = &p->orx;
    x->in_payload = 0;
    pthread_mutex_lock(&p->req_lock);
    struct tcp_req *r = p->rx_req;
    if (r)
        complete_locked(p, r, &x->cur);
    pthread_mutex_unlock(&p->req_lock);
    if (r && r != me)
        comm_doorbell_ring();
}

/* Reads replies from the peer until me is complete.  Called with rx_lock;
 * completes every reply that arrives, whoever waits for it.  Spins for the
 * configured time, then blocks in recv.  Returns 0 or a negative errno. */
static int read_replies(struct tcp_peer *p, struct tcp_req *me)
{
    struct tcp_rx *x = &p->orx;
    uint64_t spin_end = ompdsm_now_ns() + comm_g.spin_ns;
    int block = 0;
    for (;;) {
        /* Act on everything buffered. */
        for (;;) {
            size_t avail = x->len - x->pos;
            if (x->in_payload) {
                if (!avail)
                    break;
                size_t need = x->cur.len - x->got;
                size_t n = avail < need ? avail : need;
                pthread_mutex_lock(&p->req_lock);
                if (p->rx_req)
                    memcpy((char *)p->rx_req->dst + x->got, x->buf + x->pos, n);
                pthread_mutex_unlock(&p->req_lock);
                x->pos += n;
                x->got += n;
                if (x->got == x->cur.len)
                    reply_end(p, me);
            } else if (avail >= TCP_FRAME_HDR) {
                struct tcp_frame f;
                char why[160];
                if (tcp_frame_decode(x->buf + x->pos, &f, why, sizeof why) < 0)
                    return bad_peer(p, why);
                if (reply_begin(p, &f, me) < 0)
                    return -EPROTO;
                x->pos += TCP_FRAME_HDR;
            } else {
                break;
            }
        }
        if (__atomic_load_n(&me->done, __ATOMIC_ACQUIRE))
            return 0;
        if (comm_g.failed)
            return -ECONNABORTED;
        if (!block && ompdsm_now_ns() >= spin_end)
            block = 1;
        ssize_t n;
        size_t need = x->cur.len - x->got;
        if (x->in_payload && need >= TCP_DIRECT_MIN) {
            /* The rest of a large get straight into the caller's buffer;
             * under req_lock, so never blocking. */
            pthread_mutex_lock(&p->req_lock);
            if (p->rx_req)
                n = recv(p->out_fd, (char *)p->rx_req->dst + x->got, need,
                         MSG_DONTWAIT);
            else /* its requester gave up: discard */
                n = recv(p->out_fd, x->buf, need < TCP_RBUF ? need : TCP_RBUF,
                         MSG_DONTWAIT);
            pthread_mutex_unlock(&p->req_lock);
            if (n > 0) {
                x->got += (size_t)n;
                if (x->got == x->cur.len)
                    reply_end(p, me);
                continue;
            }
            if (n < 0 && errno == EAGAIN && block) {
                struct pollfd pf = {.fd = p->out_fd, .events = POLLIN};
                poll(&pf, 1, COMM_FAILURE_POLL_MS);
                continue;
            }
        } else {
            if (x->pos) {
                memmove(x->buf, x->buf + x->pos, x->len - x->pos);
                x->len -= x->pos;
                x->pos = 0;
            }
            n = recv(p->out_fd, x->buf + x->len, TCP_RBUF - x->len,
                     block ? 0 : MSG_DONTWAIT);
            if (n > 0) {
                x->len += (size_t)n;
                continue;
            }
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue; /* spinning, or SO_RCVTIMEO: look at the job again */
        int err = n ? errno : 0;
        p->out_eof = 1;
        if (ld(&p->bye_rx) && !comm_g.failed) {
            ompdsm_err("tcp: node %d finished while a %s to it was waiting "
                       "for its reply", p->peer, tcp_op_name(me->op));
            return -EPIPE;
        }
        char doing[96];
        snprintf(doing, sizeof doing, "waiting for the reply to a %s",
                 tcp_op_name(me->op));
        peer_lost(p, err, doing);
        return -ECONNABORTED;
    }
}

struct wait_arg {
    struct tcp_peer *p;
    struct tcp_req *r;
};

static int reply_or_reader_gone(void *arg)
{
    struct wait_arg *w = arg;
    return ld(&w->r->done) || !ld(&w->p->rx_busy) || comm_g.failed;
}

/* Sends request f and waits for its reply.  Returns 0, the target's error,
 * or -ECONNABORTED when the job fails first. */
static int request(struct comm_transport *t, struct tcp_peer *p,
                   struct tcp_frame *f, struct tcp_req *r)
{
    r->op = f->op;
    r->done = 0;
    r->status = 0;
    int rc = send_frame(t, p, f, NULL, 0, r);
    if (rc < 0)
        return rc;
    while (!ld(&r->done) && !comm_g.failed) {
        if (pthread_mutex_trylock(&p->rx_lock) == 0) {
            st(&p->rx_busy, 1);
            rc = p->out_eof ? -ECONNABORTED : read_replies(p, r);
            st(&p->rx_busy, 0);
            pthread_mutex_unlock(&p->rx_lock);
            /* Others may wait for replies: one of them reads next. */
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            if (__atomic_load_n(&p->nreq, __ATOMIC_RELAXED))
                comm_doorbell_ring();
            if (rc < 0)
                break;
        } else {
            struct wait_arg w = {p, r};
            comm_wait_until(reply_or_reader_gone, &w);
        }
    }
    if (OMPDSM_UNLIKELY(!ld(&r->done))) {
        /* Give up: after this no reader touches r. */
        pthread_mutex_lock(&p->req_lock);
        req_unlink_locked(p, r);
        if (p->rx_req == r)
            p->rx_req = NULL;
        int done = r->done;
        pthread_mutex_unlock(&p->req_lock);
        if (!done)
            return rc < 0 && rc != -EPROTO ? rc : -ECONNABORTED;
    }
    if (r->status) {
        ompdsm_err("tcp %s on node %d failed: %s", tcp_op_name(r->op),
                   p->peer, strerror(-r->status));
        return r->status;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The operations                                                           */

/* Bounds check against the peer's card, before anything goes out. */
static int remote_check(int peer, int region, uint64_t off, size_t len,
                        const char *what)
{
    uint64_t rl = (region >= 0 && region < COMM_REG_MAX)
                      ? comm_g.cards[peer].region[region].len : 0;
    if (OMPDSM_UNLIKELY(!rl || off > rl || len > rl - off)) {
        ompdsm_err("tcp %s to node %d: region %d offset %llu length %zu is "
                   "outside its registered memory", what, peer, region,
                   (unsigned long long)off, len);
        return -EFAULT;
    }
    return 0;
}

static int tcp_put(struct comm_transport *t, int peer, int region,
                   uint64_t off, const void *src, size_t len)
{
    int rc = remote_check(peer, region, off, len, "put");
    const char *s = src;
    while (!rc && len) {
        size_t n = len < TCP_FRAME_MAX_LEN ? len : TCP_FRAME_MAX_LEN;
        struct tcp_frame f = {.op = TCP_OP_PUT, .region = (uint8_t)region,
                              .len = (uint32_t)n, .off = off};
        rc = send_frame(t, &t->peers[peer], &f, s, n, NULL);
        s += n;
        off += n;
        len -= n;
    }
    return rc;
}

/* One frame: the run table, then the runs' data (packed in a per-thread
 * buffer; a diff of a page is at most a page of data plus its table). */
static int tcp_putv(struct comm_transport *t, int peer, int region,
                    uint64_t base, const void *src, const struct comm_run *runs,
                    size_t nruns)
{
    const struct comm_run *last = &runs[nruns - 1];
    int rc = remote_check(peer, region, base, (size_t)last->off + last->len,
                          "vectored put");
    if (rc < 0)
        return rc;
    static __thread unsigned char *buf;
    static __thread size_t cap;
    uint64_t total = nruns * 8;
    for (size_t k = 0; k < nruns; k++)
        total += runs[k].len;
    if (total > TCP_FRAME_MAX_LEN) {
        for (size_t k = 0; k < nruns && !rc; k++)
            rc = tcp_put(t, peer, region, base + runs[k].off,
                         (const char *)src + runs[k].off, runs[k].len);
        return rc;
    }
    if (cap < total) {
        free(buf);
        cap = total;
        if (!(buf = malloc(cap))) {
            cap = 0;
            ompdsm_err("tcp: out of memory for a %llu-byte vectored put",
                       (unsigned long long)total);
            return -ENOMEM;
        }
    }
    size_t pos = nruns * 8;
    for (size_t k = 0; k < nruns; k++) {
        put_le32(buf + 8 * k, runs[k].off);
        put_le32(buf + 8 * k + 4, runs[k].len);
        memcpy(buf + pos, (const char *)src + runs[k].off, runs[k].len);
        pos += runs[k].len;
    }
    struct tcp_frame f = {.op = TCP_OP_PUTV, .region = (uint8_t)region,
                          .len = (uint32_t)total, .off = base, .a = nruns};
    return send_frame(t, &t->peers[peer], &f, buf, total, NULL);
}

static int tcp_get(struct comm_transport *t, int peer, int region,
                   uint64_t off, void *dst, size_t len)
{
    int rc = remote_check(peer, region, off, len, "get");
    char *d = dst;
    while (!rc && len) {
        size_t n = len < TCP_FRAME_MAX_LEN ? len : TCP_FRAME_MAX_LEN;
        struct tcp_frame f = {.op = TCP_OP_GET, .region = (uint8_t)region,
                              .len = (uint32_t)n, .off = off};
        struct tcp_req r = {.dst = d, .len = n};
        rc = request(t, &t->peers[peer], &f, &r);
        d += n;
        off += n;
        len -= n;
    }
    return rc;
}

static int tcp_fetch_add(struct comm_transport *t, int peer, int region,
                         uint64_t off, uint64_t add, uint64_t *old)
{
    int rc = remote_check(peer, region, off, 8, "fetch-add");
    if (rc < 0)
        return rc;
    struct tcp_frame f = {.op = TCP_OP_FADD, .region = (uint8_t)region,
                          .off = off, .a = add};
    struct tcp_req r = {0};
    rc = request(t, &t->peers[peer], &f, &r);
    if (!rc)
        *old = r.value;
    return rc;
}

static int tcp_cas(struct comm_transport *t, int peer, int region,
                   uint64_t off, uint64_t expect, uint64_t desired,
                   uint64_t *old)
{
    int rc = remote_check(peer, region, off, 8, "compare-swap");
    if (rc < 0)
        return rc;
    struct tcp_frame f = {.op = TCP_OP_CAS, .region = (uint8_t)region,
                          .off = off, .a = expect, .b = desired};
    struct tcp_req r = {0};
    rc = request(t, &t->peers[peer], &f, &r);
    if (!rc)
        *old = r.value;
    return rc;
}

static int tcp_notify(struct comm_transport *t, int peer, int region,
                      uint64_t off, uint64_t value)
{
    int rc = remote_check(peer, region, off, 8, "notify");
    if (rc < 0)
        return rc;
    struct tcp_frame f = {.op = TCP_OP_NOTIFY, .region = (uint8_t)region,
                          .off = off, .a = value};
    return send_frame(t, &t->peers[peer], &f, NULL, 0, NULL);
}

static int tcp_fence(struct comm_transport *t, int peer)
{
    struct tcp_peer *p = &t->peers[peer];
    uint64_t want = __atomic_load_n(&p->put_seq, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&p->fenced_seq, __ATOMIC_ACQUIRE) >= want)
        return 0; /* nothing written since a completed fence */
    struct tcp_frame f = {.op = TCP_OP_FENCE};
    struct tcp_req r = {0};
    int rc = request(t, p, &f, &r);
    if (rc < 0)
        return rc;
    uint64_t cur = __atomic_load_n(&p->fenced_seq, __ATOMIC_RELAXED);
    while (cur < r.seq &&
           !__atomic_compare_exchange_n(&p->fenced_seq, &cur, r.seq, 1,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return 0;
}

static int tcp_send(struct comm_transport *t, int peer, int tag,
                    const void *buf, size_t len)
{
    struct tcp_frame f = {.op = TCP_OP_SEND, .tag = (uint8_t)tag,
                          .len = (uint32_t)len};
    return send_frame(t, &t->peers[peer], &f, buf, len, NULL);
}

/* ------------------------------------------------------------------------ */
/* The service thread: executing the peers' requests                        */

static void arm_in(struct comm_transport *t, struct tcp_peer *p, int out)
{
    if (p->iq_armed == out || p->in_eof)
        return;
    epoll_set(t, p->in_fd, 2 * p->peer,
              EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0u), EPOLL_CTL_MOD);
    p->iq_armed = out;
}

/* After the peer's BYE and our last reply: no more replies from us. */
static void shut_in(struct tcp_peer *p)
{
    p->shut_pending = 0;
    shutdown(p->in_fd, SHUT_WR);
}

/* Writes the reply queue without blocking. */
static void flush_in(struct comm_transport *t, struct tcp_peer *p)
{
    int rc = outq_write(&p->iq, p->in_fd);
    if (rc < 0) {
        p->iq.head = p->iq.len = 0;
        if (!ld(&t->stopping))
            peer_lost(p, -rc, "sending replies");
    }
    arm_in(t, p, p->iq.len != 0);
    if (!p->iq.len && p->shut_pending)
        shut_in(p);
}

static void reply(struct comm_transport *t, struct tcp_peer *p, uint64_t id,
                  int status, uint64_t value, const void *data, size_t len)
{
    struct tcp_frame f = {.op = TCP_OP_REPLY, .len = (uint32_t)len, .id = id,
                          .a = value, .b = (uint64_t)(int64_t)status};
    unsigned char hdr[TCP_FRAME_HDR];
    tcp_frame_encode(&f, hdr);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)data, len}};
    int n = len ? 2 : 1;
    size_t w = 0;
    if (!p->iq.len) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t s;
        do
            s = sendmsg(p->in_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        while (s < 0 && errno == EINTR);
        if (s < 0 && errno != EAGAIN) {
            if (!ld(&t->stopping))
                peer_lost(p, errno, "sending a reply");
            return;
        }
        w = s > 0 ? (size_t)s : 0;
        if (w == sizeof hdr + len)
            return;
    }
    /* The rest waits for EPOLLOUT; the data is copied now, as later
     * requests may change it. */
    outq_append(&p->iq, p->peer, iov, n, w);
    arm_in(t, p, 1);
}

static void request_end(struct tcp_peer *p);

/* Acts on a request header.  Returns 0, or -EPROTO when the peer must no
 * longer be read. */
static int request_begin(struct comm_transport *t, struct tcp_peer *p,
                         const struct tcp_frame *f)
{
    struct tcp_rx *x = &p->irx;
    int peer = p->peer, rc;
    char *base = (char *)comm_g.reg[f->region].base;
    char why[96];
    x->cur = *f;
    x->got = 0;
    x->dst = NULL;
    switch (f->op) {
    case TCP_OP_PUT:
        if (comm_local_check(f->region, f->off, f->len, "tcp put", peer) < 0)
            return bad_peer(p, "put outside the registered memory");
        x->dst = base + f->off;
        break;
    case TCP_OP_GET:
        rc = comm_local_check(f->region, f->off, f->len, "tcp get", peer);
        /* The requester's earlier puts, stored by this thread, are visible
         * to other threads before this get reads (comm.h's ordering). */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        reply(t, p, f->id, rc, 0, rc ? NULL : base + f->off, rc ? 0 : f->len);
        return 0;
    case TCP_OP_FADD:
    case TCP_OP_CAS: {
        rc = comm_local_check(f->region, f->off, 8, tcp_op_name(f->op), peer);
        uint64_t old = 0;
        if (!rc && f->op == TCP_OP_FADD) {
            old = __atomic_fetch_add((uint64_t *)(base + f->off), f->a,
                                     __ATOMIC_SEQ_CST);
        } else if (!rc) {
            old = f->a;
            __atomic_compare_exchange_n((uint64_t *)(base + f->off), &old,
                                        f->b, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
        }
        reply(t, p, f->id, rc, old, NULL, 0);
        return 0;
    }
    case TCP_OP_NOTIFY:
        if (comm_local_check(f->region, f->off, 8, "tcp notify", peer) < 0)
            return bad_peer(p, "notify outside the registered memory");
        comm_local_notify(f->region, f->off, f->a);
        return 0;
    case TCP_OP_FENCE:
        /* Requests from one peer run in order: all earlier ones are done. */
        reply(t, p, f->id, 0, 0, NULL, 0);
        return 0;
    case TCP_OP_PUTV:
        if (p->putvcap < f->len) {
            free(p->putvbuf);
            p->putvcap = f->len;
            if (!(p->putvbuf = malloc(p->putvcap)))
                ompdsm_fatal("tcp: out of memory for a %u-byte vectored put "
                             "from node %d", f->len, peer);
        }
        x->dst = p->putvbuf;
        break;
    case TCP_OP_SEND:
    case TCP_OP_ABORT:
        if (!p->msgbuf && !(p->msgbuf = malloc(COMM_MSG_MAX + 1)))
            ompdsm_fatal("tcp: out of memory for a message from node %d", peer);
        x->dst = p->msgbuf;
        if (!f->len)
            request_end(p);
        break;
    case TCP_OP_BYE:
        /* Nothing more comes from the peer: once our replies are out, close
         * our direction too, which ends the peer's stop(). */
        st(&p->bye_rx, 1);
        if (p->iq.len)
            p->shut_pending = 1;
        else
            shut_in(p);
        return 0;
    default:
        snprintf(why, sizeof why, "a %s among the requests", tcp_op_name(f->op));
        return bad_peer(p, why);
    }
    x->in_payload = tcp_frame_payload(f) > 0;
    return 0;
}

/* Applies a vectored put held in p->putvbuf; a run outside the registered
 * memory, or data not adding up, means the peer is broken. */
static int apply_putv(struct tcp_peer *p, const struct tcp_frame *f)
{
    const unsigned char *b = (const unsigned char *)p->putvbuf;
    uint64_t n = f->a, hdr = n * 8, pos = hdr;
    char *base = (char *)comm_g.reg[f->region].base;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t off = get_le32(b + 8 * k), len = get_le32(b + 8 * k + 4);
        if (pos + len > f->len ||
            comm_local_check(f->region, f->off + off, len, "tcp vectored put",
                             p->peer) < 0)
            return -EPROTO;
        memcpy(base + f->off + off, b + pos, len);
        pos += len;
    }
    return pos == f->len ? 0 : -EPROTO;
}

static void request_end(struct tcp_peer *p)
{
    struct tcp_rx *x = &p->irx;
    x->in_payload = 0;
    if (x->cur.op == TCP_OP_PUTV) {
        if (apply_putv(p, &x->cur) < 0)
            bad_peer(p, "malformed vectored put");
    } else if (x->cur.op == TCP_OP_SEND) {
        comm_dispatch(p->peer, x->cur.tag, p->msgbuf, x->cur.len);
    } else if (x->cur.op == TCP_OP_ABORT && !comm_g.failed) {
        p->msgbuf[x->cur.len] = 0;
        comm_set_failed("node %d reports: %s", p->peer, p->msgbuf);
    }
}

static void in_closed(struct comm_transport *t, struct tcp_peer *p, int err)
{
    epoll_ctl(t->epfd, EPOLL_CTL_DEL, p->in_fd, NULL);
    p->in_eof = 1;
    if ((ld(&p->bye_rx) && !p->irx.in_payload) || ld(&t->stopping) ||
        comm_g.failed) {
        OMPDSM_TRACE(OMPDSM_TR_COMM, "tcp: node %d closed its connection",
                     p->peer);
        return;
    }
    char doing[96];
    if (p->irx.in_payload)
        snprintf(doing, sizeof doing, "receiving a %s of %u bytes from it",
                 tcp_op_name(p->irx.cur.op), p->irx.cur.len);
    else
        snprintf(doing, sizeof doing, "the job was running");
    peer_lost(p, err, doing);
}

/* Reads and executes everything the in connection has. */
static void in_input(struct comm_transport *t, struct tcp_peer *p)
{
    struct tcp_rx *x = &p->irx;
    int drained = 0; /* a read came back short: the socket is empty */
    for (;;) {
        size_t avail = x->len - x->pos;
        if (x->in_payload) {
            size_t need = x->cur.len - x->got;
            if (avail) {
                size_t n = avail < need ? avail : need;
                memcpy(x->dst + x->got, x->buf + x->pos, n);
                x->pos += n;
                x->got += n;
                if (x->got == x->cur.len)
                    request_end(p);
                continue;
            }
            if (need >= TCP_DIRECT_MIN) {
                if (drained)
                    return;
                ssize_t n = recv(p->in_fd, x->dst + x->got, need, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                    in_closed(t, p, n ? errno : 0);
                    return;
                }
                if (n < 0)
                    return;
                x->got += (size_t)n;
                drained = (size_t)n < need;
                if (x->got == x->cur.len)
                    request_end(p);
                continue;
            }
        } else if (avail >= TCP_FRAME_HDR) {
            struct tcp_frame f;
            char why[160];
            int rc = tcp_frame_decode(x->buf + x->pos, &f, why, sizeof why);
            if (rc < 0)
                bad_peer(p, why);
            else
                rc = request_begin(t, p, &f);
            if (rc < 0) {
                epoll_ctl(t->epfd, EPOLL_CTL_DEL, p->in_fd, NULL);
                p->in_eof = 1;
                return;
            }
            x->pos += TCP_FRAME_HDR;
            continue;
        }
        /* More bytes needed; level-triggered epoll reports the socket again
         * if more arrived since a read came back short. */
        if (drained)
            return;
        if (x->pos) {
            memmove(x->buf, x->buf + x->pos, x->len - x->pos);
            x->len -= x->pos;
            x->pos = 0;
        }
        size_t room = TCP_RBUF - x->len;
        ssize_t n = recv(p->in_fd, x->buf + x->len, room, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            in_closed(t, p, n ? errno : 0);
            return;
        }
        if (n < 0)
            return;
        x->len += (size_t)n;
        drained = (size_t)n < room;
    }
}

/* During stop: the out connection is read to its end (nothing should
 * come but the peer's half-close). */
static void out_drain(struct comm_transport *t, struct tcp_peer *p)
{
    if (pthread_mutex_trylock(&p->rx_lock) != 0)
        return;
    for (;;) {
        ssize_t n = recv(p->out_fd, p->orx.buf, TCP_RBUF, MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || errno != EAGAIN) {
            p->out_eof = 1;
            watch_out(t, p, 0);
        }
        break;
    }
    pthread_mutex_unlock(&p->rx_lock);
}

static int all_closed(struct comm_transport *t)
{
    for (int r = 0; r < t->size; r++)
        if (served(r) && (!t->peers[r].in_eof || !t->peers[r].out_eof))
            return 0;
    return 1;
}

static void *service_main(void *arg)
{
    struct comm_transport *t = arg;
    tcp_in_service = 1;
    uint64_t stop_deadline = 0, fail_deadline = 0;
    for (;;) {
        int timeout = -1;
        if (ld(&t->stopping)) {
            uint64_t now = ompdsm_now_ns();
            if (!stop_deadline) {
                stop_deadline = now + TCP_CLOSE_TIMEOUT_S * 1000000000ull;
                /* Watch the out connections for the peers' half-close. */
                for (int r = 0; r < t->size; r++)
                    if (served(r))
                        watch_out(t, &t->peers[r], oq_pending(&t->peers[r]));
            }
            if (all_closed(t) || comm_g.failed)
                break;
            if (now >= stop_deadline) {
                for (int r = 0; r < t->size; r++)
                    if (served(r) && !all_closed(t) &&
                        (!t->peers[r].in_eof || !t->peers[r].out_eof))
                        ompdsm_warn("tcp: node %d did not close its "
                                    "connections within %d s of the end; "
                                    "closing anyway", r, TCP_CLOSE_TIMEOUT_S);
                break;
            }
            timeout = (int)((stop_deadline - now) / 1000000) + 1;
        } else if (comm_g.failed) {
            /* The application should notice the failure and exit; if it
             * does not (busy computing), end the node ourselves. */
            uint64_t now = ompdsm_now_ns();
            if (!fail_deadline)
                fail_deadline = now + TCP_FAIL_GRACE_MS * 1000000ull;
            if (now >= fail_deadline)
                ompdsm_fatal("the job failed %d ms ago and this node is still "
                             "running; exiting", TCP_FAIL_GRACE_MS);
            timeout = (int)((fail_deadline - now) / 1000000) + 1;
        }
        struct epoll_event ev[32];
        int n = epoll_wait(t->epfd, ev, 32, timeout);
        if (n < 0 && errno != EINTR)
            ompdsm_fatal("tcp: epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            int key = (int)(int64_t)ev[i].data.u64;
            uint32_t e = ev[i].events;
            if (key == KEY_STOP) {
                uint64_t v;
                (void)!read(t->stopfd, &v, sizeof v);
            } else if (key == KEY_BOOT) {
                epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->bootfd, NULL);
                if (!ld(&t->stopping)) {
                    /* Nobody is left to tell: do not report to it. */
                    ompdsm_fatal_hook = NULL;
                    ompdsm_fatal("the connection to the launcher closed "
                                 "while the job was running (did ompdsmrun "
                                 "die?); exiting");
                }
            } else if (key & 1) {
                struct tcp_peer *p = &t->peers[key / 2];
                if (e & EPOLLOUT)
                    service_flush_out(t, p);
                if (e & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
                    out_drain(t, p);
            } else {
                struct tcp_peer *p = &t->peers[key / 2];
                if (p->in_eof)
                    continue;
                if (e & EPOLLOUT)
                    flush_in(t, p);
                if (e & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
                    in_input(t, p);
            }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Connection set-up                                                        */

/* Same on every node of a job, different between jobs: a stray connection
 * from another job's node is refused. */
static uint64_t job_cookie(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int r = 0; r < comm_g.size; r++) {
        const struct comm_card *c = &comm_g.cards[r];
        uint64_t v[3] = {(uint64_t)(uint32_t)c->pid, c->tcp_addr, c->tcp_port};
        const unsigned char *b = (const unsigned char *)v;
        for (size_t i = 0; i < sizeof v; i++)
            h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

/* One socket in the handshake. */
struct hs {
    int fd;
    int state;    /* HS_* */
    int rank;     /* out: the peer; in: learnt from its hello */
    size_t got;
    unsigned char buf[TCP_FRAME_HDR];
};
enum { HS_CONNECTING, HS_HELLO_WAIT, HS_DONE };

static void hello_encode(unsigned char *b, uint64_t cookie)
{
    struct tcp_frame f = {.op = TCP_OP_HELLO, .id = (uint64_t)comm_g.rank,
                          .off = (uint64_t)comm_g.size, .a = cookie};
    tcp_frame_encode(&f, b);
}

/* Reads more of a hello.  Returns 1 when complete (rank in h->rank), 0 when
 * more is needed, or -1 with why. */
static int hello_read(struct hs *h, uint64_t cookie, char *why, size_t whylen)
{
    ssize_t n = recv(h->fd, h->buf + h->got, sizeof h->buf - h->got,
                     MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0) {
        snprintf(why, whylen, "%s", n ? strerror(errno)
                                      : "closed during the handshake");
        return -1;
    }
    h->got += (size_t)n;
    if (h->got < sizeof h->buf)
        return 0;
    struct tcp_frame f;
    if (tcp_frame_decode(h->buf, &f, why, whylen) < 0)
        return -1;
    if (f.op != TCP_OP_HELLO) {
        snprintf(why, whylen, "expected a hello, got a %s", tcp_op_name(f.op));
        return -1;
    }
    if (f.a != cookie || f.off != (uint64_t)comm_g.size ||
        f.id >= (uint64_t)comm_g.size || !served((int)f.id)) {
        snprintf(why, whylen, "hello from another job (rank %llu of %llu)",
                 (unsigned long long)f.id, (unsigned long long)f.off);
        return -1;
    }
    h->rank = (int)f.id;
    return 1;
}

static int start_connect(int r, struct hs *h)
{
    const struct comm_card *card = &comm_g.cards[r];
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = card->tcp_addr,
                             .sin_port = card->tcp_port};
    h->rank = r;
    h->fd = -1;
    if (!card->tcp_addr || !card->tcp_port) {
        ompdsm_err("tcp: node %d advertises no tcp address", r);
        return -EINVAL;
    }
    h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (h->fd < 0) {
        int e = errno;
        ompdsm_err("tcp: socket: %s", strerror(e));
        return -e;
    }
    if (connect(h->fd, (struct sockaddr *)&sa, sizeof sa) < 0 &&
        errno != EINPROGRESS) {
        int e = errno;
        ompdsm_err("tcp: cannot connect to node %d at %s:%u: %s", r,
                   inet_ntoa(sa.sin_addr), ntohs(card->tcp_port), strerror(e));
        return -e;
    }
    h->state = HS_CONNECTING;
    return 0;
}

/* Connects an out connection to every peer and accepts an in connection
 * from every peer, all at once in one poll loop (no order to deadlock on):
 * the connector sends a hello, the acceptor checks it and answers with its
 * own. */
static int handshake(struct comm_transport *t)
{
    int n = t->size, lfd = comm_g.tcp_listen_fd, rc = 0, npeers = 0;
    for (int r = 0; r < n; r++)
        npeers += served(r);
    uint64_t cookie = job_cookie();
    uint64_t deadline = ompdsm_now_ns() + TCP_CONNECT_TIMEOUT_S * 1000000000ull;
    unsigned char hello[TCP_FRAME_HDR];
    hello_encode(hello, cookie);
    struct hs *out = calloc((size_t)n, sizeof *out);
    struct hs *acc = calloc((size_t)n, sizeof *acc); /* accepted, unnamed */
    struct pollfd *pf = calloc((size_t)(2 * n + 1), sizeof *pf);
    int nacc = 0, ins = 0, outs = 0;
    if (!out || !acc || !pf)
        rc = -ENOMEM;
    /* accepts until EAGAIN below */
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
    for (int r = 0; !rc && r < n; r++) {
        out[r].fd = -1;
        if (served(r) && (rc = start_connect(r, &out[r])) < 0)
            break;
    }
    char why[160];
    while (!rc && (ins < npeers || outs < npeers)) {
        int k = 0;
        pf[k++] = (struct pollfd){.fd = ins < npeers ? lfd : -1, .events = POLLIN};
        for (int r = 0; r < n; r++)
            pf[k++] = (struct pollfd){
                .fd = !served(r) || out[r].state == HS_DONE ? -1 : out[r].fd,
                .events = out[r].state == HS_CONNECTING ? POLLOUT : POLLIN};
        for (int i = 0; i < nacc; i++)
            pf[k++] = (struct pollfd){.fd = acc[i].fd, .events = POLLIN};
        uint64_t now = ompdsm_now_ns();
        if (now >= deadline) {
            char list[256] = "";
            for (int r = 0; r < n; r++)
                if (served(r) && (out[r].state != HS_DONE ||
                                     t->peers[r].in_fd < 0) &&
                    strlen(list) < sizeof list - 16)
                    snprintf(list + strlen(list), sizeof list - strlen(list),
                             "%s%d", *list ? ", " : "", r);
            ompdsm_err("tcp: no connection with node(s) %s within %d s (died, "
                       "or cannot reach each other's address?)", list,
                       TCP_CONNECT_TIMEOUT_S);
            rc = -ETIMEDOUT;
            break;
        }
        if (poll(pf, (nfds_t)k, (int)((deadline - now) / 1000000) + 1) < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        /* accepted sockets: their hellos */
        for (int i = nacc - 1; i >= 0; i--) {
            if (!pf[1 + n + i].revents)
                continue;
            struct hs *h = &acc[i];
            int got = hello_read(h, cookie, why, sizeof why);
            if (got == 1 && t->peers[h->rank].in_fd >= 0) {
                snprintf(why, sizeof why, "node %d connected twice", h->rank);
                got = -1;
            }
            if (got == 1 && send(h->fd, hello, sizeof hello,
                                 MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof hello) {
                snprintf(why, sizeof why, "could not answer node %d", h->rank);
                got = -1;
            }
            if (got == 0)
                continue;
            if (got < 0) {
                ompdsm_warn("tcp: refused a connection: %s", why);
                close(h->fd);
            } else {
                t->peers[h->rank].in_fd = h->fd;
                ins++;
            }
            acc[i] = acc[--nacc];
        }
        /* out sockets: connected (send the hello), or the answer */
        for (int r = 0; !rc && r < n; r++) {
            struct hs *h = &out[r];
            if (!served(r) || h->state == HS_DONE || !pf[1 + r].revents)
                continue;
            if (h->state == HS_CONNECTING) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &el);
                if (!e && send(h->fd, hello, sizeof hello,
                               MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof hello)
                    e = errno ? errno : EIO;
                if (e) {
                    ompdsm_err("tcp: cannot connect to node %d: %s", r,
                               strerror(e));
                    rc = -e;
                }
                h->state = HS_HELLO_WAIT;
                continue;
            }
            int got = hello_read(h, cookie, why, sizeof why);
            if (got == 1 && h->rank != r) {
                snprintf(why, sizeof why, "node %d answered", h->rank);
                got = -1;
            }
            if (got < 0) {
                ompdsm_err("tcp: handshake with node %d failed: %s", r, why);
                rc = -EPROTO;
            } else if (got == 1) {
                h->state = HS_DONE;
                t->peers[r].out_fd = h->fd;
                h->fd = -1;
                outs++;
            }
        }
        /* new connections */
        while (!rc && pf[0].revents) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0 && nacc < n) {
                acc[nacc++] = (struct hs){.fd = fd, .rank = -1};
                continue;
            }
            if (fd >= 0) {
                ompdsm_warn("tcp: refused a connection: too many at once");
                close(fd);
            } else if (errno == EINTR || errno == ECONNABORTED) {
                continue;
            } else if (errno != EAGAIN) {
                rc = -errno;
                ompdsm_err("tcp: accept: %s", strerror(errno));
            }
            break;
        }
    }
    for (int r = 0; out && r < n; r++)
        if (out[r].fd >= 0)
            close(out[r].fd);
    for (int i = 0; i < nacc; i++)
        close(acc[i].fd);
    free(out);
    free(acc);
    free(pf);
    return rc;
}

/* Out connections block (application threads wait in them) with timeouts
 * that let them look at the job's state; in connections do not block. */
static int sock_setup(struct tcp_peer *p)
{
    int one = 1;
    struct timeval tv = {0, COMM_FAILURE_POLL_MS * 1000};
    if (setsockopt(p->out_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
        setsockopt(p->in_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
        setsockopt(p->out_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
        setsockopt(p->out_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) ||
        fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) & ~O_NONBLOCK)) {
        int e = errno;
        ompdsm_err("tcp: socket options: %s", strerror(e));
        return -e;
    }
    return 0;
}

static void tcp_stop(struct comm_transport *t)
{
    if (!t)
        return;
    if (t->service_started) {
        if (!comm_g.failed) {
            /* The final barrier is behind us: no more requests.  Say so and
             * half-close; the service thread then waits for the peers to
             * close both directions, so that nothing unread turns a close
             * into a reset. */
            uint64_t dl = ompdsm_now_ns() + TCP_CLOSE_TIMEOUT_S * 1000000000ull;
            for (int r = 0; r < t->size; r++) {
                struct tcp_peer *p = &t->peers[r];
                if (!served(r))
                    continue;
                pthread_mutex_lock(&p->send_lock);
                if (!p->closed_tx) {
                    unsigned char hdr[TCP_FRAME_HDR];
                    struct tcp_frame f = {.op = TCP_OP_BYE};
                    tcp_frame_encode(&f, hdr);
                    struct iovec iov = {hdr, sizeof hdr};
                    if (!oq_flush(p, dl))
                        write_all(p->out_fd, &iov, 1, dl);
                    shutdown(p->out_fd, SHUT_WR);
                    p->closed_tx = 1;
                }
                pthread_mutex_unlock(&p->send_lock);
            }
        }
        st(&t->stopping, 1);
        uint64_t one = 1;
        (void)!write(t->stopfd, &one, sizeof one);
        pthread_join(t->service, NULL);
    }
    for (int r = 0; r < t->size; r++) {
        struct tcp_peer *p = &t->peers[r];
        if (p->out_fd >= 0)
            close(p->out_fd);
        if (p->in_fd >= 0)
            close(p->in_fd);
        free(p->orx.buf);
        free(p->irx.buf);
        free(p->msgbuf);
        free(p->putvbuf);
        free(p->oq.q);
        free(p->iq.q);
        pthread_mutex_destroy(&p->send_lock);
        pthread_mutex_destroy(&p->q_lock);
        pthread_mutex_destroy(&p->rx_lock);
        pthread_mutex_destroy(&p->req_lock);
    }
    if (t->epfd >= 0)
        close(t->epfd);
    if (t->stopfd >= 0)
        close(t->stopfd);
    if (comm_g.tcp_listen_fd >= 0) {
        close(comm_g.tcp_listen_fd);
        comm_g.tcp_listen_fd = -1;
    }
    free(t->peers);
    free(t);
}

static int tcp_start(struct comm_transport **out)
{
    if (comm_g.tcp_listen_fd < 0) {
        ompdsm_err("tcp: no listening socket (comm_init did not create one)");
        return -EINVAL;
    }
    struct comm_transport *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->rank = comm_g.rank;
    t->size = comm_g.size;
    t->epfd = t->stopfd = t->bootfd = -1;
    t->peers = calloc((size_t)t->size, sizeof *t->peers);
    if (!t->peers) {
        free(t);
        return -ENOMEM;
    }
    int rc = 0;
    for (int r = 0; r < t->size; r++) {
        struct tcp_peer *p = &t->peers[r];
        p->peer = r;
        p->t = t;
        p->out_fd = p->in_fd = -1;
        pthread_mutex_init(&p->send_lock, NULL);
        pthread_mutex_init(&p->q_lock, NULL);
        pthread_mutex_init(&p->rx_lock, NULL);
        pthread_mutex_init(&p->req_lock, NULL);
        if (served(r) && (!(p->orx.buf = malloc(TCP_RBUF)) ||
                             !(p->irx.buf = malloc(TCP_RBUF))))
            rc = -ENOMEM;
    }
    if (!rc)
        rc = handshake(t);
    if (!rc) {
        close(comm_g.tcp_listen_fd); /* every peer is connected */
        comm_g.tcp_listen_fd = -1;
        t->epfd = epoll_create1(EPOLL_CLOEXEC);
        t->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (t->epfd < 0 || t->stopfd < 0) {
            rc = -errno;
            ompdsm_err("tcp: epoll/eventfd: %s", strerror(errno));
        }
    }
    for (int r = 0; !rc && r < t->size; r++) {
        if (!served(r))
            continue;
        rc = sock_setup(&t->peers[r]);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
                                 .data.u64 = (uint64_t)(2 * r)};
        if (!rc && epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->peers[r].in_fd, &ev) < 0)
            rc = -errno;
    }
    if (!rc) {
        epoll_set(t, t->stopfd, KEY_STOP, EPOLLIN, EPOLL_CTL_ADD);
        /* Only hang-ups of the launcher connection: its data is not ours. */
        t->bootfd = comm_boot_fd();
        struct epoll_event bev = {.events = EPOLLRDHUP,
                                  .data.u64 = (uint64_t)(int64_t)KEY_BOOT};
        if (t->bootfd >= 0 &&
            epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->bootfd, &bev) < 0)
            t->bootfd = -1;
        int e = pthread_create(&t->service, NULL, service_main, t);
        if (e) {
            ompdsm_err("tcp: cannot start the service thread: %s",
                       strerror(e));
            rc = -e;
        } else {
            t->service_started = 1;
        }
    }
    if (rc < 0) {
        tcp_stop(t);
        return rc;
    }
    if (ompdsm_trace_mask & OMPDSM_TR_COMM) {
        int np = 0;
        for (int r = 0; r < t->size; r++)
            np += served(r);
        OMPDSM_TRACE(OMPDSM_TR_COMM, "tcp: connected to %d peers", np);
    }
    *out = t;
    return 0;
}

const struct comm_transport_ops comm_tcp_ops = {
    .name = "tcp",
    .start = tcp_start,
    .stop = tcp_stop,
    .put = tcp_put,
    .putv = tcp_putv,
    .get = tcp_get,
    .fetch_add = tcp_fetch_add,
    .cas = tcp_cas,
    .notify = tcp_notify,
    .fence = tcp_fence,
    .send = tcp_send,
};
