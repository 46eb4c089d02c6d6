/* comm/tcp.c - the tcp transport: a full mesh of TCP connections and one
 * service thread per node that executes the peers' one-sided requests
 * against this node's registered memory, so that a target's application
 * threads never take part.
 *
 * Requesters write frames (comm/tcp_frame.h) under a per-peer send lock and,
 * for get, atomics and fence, wait on a completion record on their stack
 * that the service thread fills when the reply arrives (a get's data goes
 * straight into the caller's buffer), then rings the doorbell.
 *
 * The service thread never blocks on a socket or on a lock an application
 * thread may hold for long: what it cannot write at once (a reply, a frame a
 * message handler sends) goes to a per-peer queue that the next holder of
 * the send lock, or the service thread on EPOLLOUT, writes out.  So every
 * node always drains its sockets, and two nodes writing big replies to each
 * other cannot deadlock.
 *
 * A connection that closes without the peer's BYE frame, or fails, while the
 * job runs is fatal for the job (comm_set_failed); stop() sends BYE, half-
 * closes, and waits for every peer to do the same, so an orderly end reports
 * nothing. */
#include "transport.h"
#include "tcp_frame.h"

#include <arpa/inet.h>
#include <errno.h>
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
    TCP_CONNECT_TIMEOUT_S = 30, /* peers must connect within this */
    TCP_CLOSE_TIMEOUT_S = 10,   /* stop() waits this long for peers' BYE */
    TCP_FAIL_GRACE_MS = 3000,   /* after a peer is lost, exit if still alive */
    TCP_RBUF = 64 * 1024,       /* receive buffer per connection */
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
            f->op == TCP_OP_REPLY) ? f->len : 0;
}

/* ------------------------------------------------------------------------ */
/* Transport state                                                          */

/* A request waiting for its reply; lives on the requester's stack and is
 * linked into its connection's list from before the request is written
 * until the reply completes it or the requester gives up (job failed). */
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

struct tcp_conn {
    int peer;
    int fd;
    /* ---- sending ---- */
    /* One writer at a time on fd, held across whole frames.  Application
     * threads may hold it while blocked in a write; the service thread only
     * ever trylocks it. */
    pthread_mutex_t send_lock;
    uint64_t next_id;   /* last request id (send_lock) */
    uint64_t put_seq;   /* fire-and-forget frames written (send_lock;
                           read atomically by fence) */
    uint64_t fenced_seq; /* put_seq covered by a completed fence (atomic) */
    int closed_tx;      /* BYE sent or a write failed (send_lock) */
    /* Bytes the service thread could not write without blocking; written by
     * the next holder of send_lock before any new frame. */
    pthread_mutex_t q_lock;
    char *q;
    size_t q_head, q_len, q_cap; /* pending bytes are q[q_head..q_len) */
    int out_armed;               /* EPOLLOUT is on (service thread only) */
    /* ---- requests awaiting replies, in the order they were written ---- */
    pthread_mutex_t req_lock;
    struct tcp_req *req_head, *req_tail;
    unsigned nreq;
    struct tcp_req *rx_req; /* whose reply payload is arriving; NULL while
                               discarding one whose requester gave up */
    /* ---- receiving (service thread only) ---- */
    unsigned char *rbuf;
    size_t rpos, rlen;      /* unparsed bytes are rbuf[rpos..rlen) */
    struct tcp_frame cur;   /* frame whose payload is arriving */
    int in_payload;
    char *pdst;             /* where cur's payload goes (put, send) */
    char *msgbuf;           /* a control message being received (payloads
                               of several peers arrive interleaved) */
    size_t pgot;            /* payload bytes received so far */
    int bye_rx;             /* the peer sent BYE: its end is orderly */
    int eof;                /* closed; no longer in the epoll set */
};

struct comm_transport {
    int rank, size;
    struct tcp_conn *conn; /* size entries; conn[rank] unused (fd -1) */
    int epfd;
    int stopfd;            /* eventfd: wakes the service thread to stop */
    int bootfd;            /* launcher connection watched for loss, or -1 */
    pthread_t service;
    int service_started;
    int stopping;          /* stop() has begun (atomic) */
};

enum { KEY_STOP = -1, KEY_BOOT = -2 };

/* Set in the service thread: transport calls from message handlers must
 * not block, and may not wait for replies (the service thread is the one
 * that would complete them). */
static __thread int tcp_in_service;

/* eof and bye_rx are written by the service thread only. */
static inline int peer_ok(struct tcp_conn *c)
{
    return !__atomic_load_n(&c->eof, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&c->bye_rx, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* Sending                                                                  */

static void conn_lost(struct tcp_conn *c, int err, const char *doing)
{
    if (comm_g.failed)
        return;
    comm_set_failed("tcp: connection to node %d lost while %s: %s; did node "
                    "%d die?", c->peer, doing, strerror(err), c->peer);
}

/* Writes iov[0..n) completely.  Application threads only (the socket is
 * non-blocking: waits in poll).  Called with send_lock.  Returns 0 or
 * -errno; -ECONNABORTED once the job is failing, -ETIMEDOUT after
 * deadline_ns (0: none). */
static int write_all(struct tcp_conn *c, struct iovec *iov, int n,
                     uint64_t deadline_ns)
{
    while (n) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return -errno;
            if (comm_g.failed)
                return -ECONNABORTED;
            if (deadline_ns && ompdsm_now_ns() > deadline_ns)
                return -ETIMEDOUT;
            struct pollfd p = {.fd = c->fd, .events = POLLOUT};
            poll(&p, 1, 200);
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

/* Appends bytes to the queue.  Any thread; takes q_lock. */
static void queue_append(struct tcp_conn *c, const struct iovec *iov, int n,
                         size_t skip)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    total -= skip;
    pthread_mutex_lock(&c->q_lock);
    if (c->q_len + total > c->q_cap) {
        size_t live = c->q_len - c->q_head;
        if (c->q_head) {
            memmove(c->q, c->q + c->q_head, live);
            c->q_head = 0;
            c->q_len = live;
        }
        if (live + total > c->q_cap) {
            size_t cap = c->q_cap ? c->q_cap : 64 * 1024;
            while (cap < live + total)
                cap *= 2;
            char *q = realloc(c->q, cap);
            if (!q)
                ompdsm_fatal("tcp: out of memory queueing %zu bytes for node "
                             "%d", total, c->peer);
            c->q = q;
            c->q_cap = cap;
        }
    }
    for (int i = 0; i < n; i++) {
        size_t l = iov[i].iov_len;
        const char *b = iov[i].iov_base;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(c->q + c->q_len, b + skip, l - skip);
        c->q_len += l - skip;
        skip = 0;
    }
    pthread_mutex_unlock(&c->q_lock);
}

static int queue_pending(struct tcp_conn *c)
{
    return __atomic_load_n(&c->q_len, __ATOMIC_RELAXED) != 0;
}

/* Writes the whole queue, blocking.  Application threads, with send_lock. */
static int queue_flush(struct tcp_conn *c, uint64_t deadline_ns)
{
    for (;;) {
        pthread_mutex_lock(&c->q_lock);
        char *q = c->q;
        size_t h = c->q_head, l = c->q_len;
        if (h == l) {
            c->q_head = c->q_len = 0;
            pthread_mutex_unlock(&c->q_lock);
            return 0;
        }
        c->q = NULL;
        c->q_head = c->q_len = c->q_cap = 0;
        pthread_mutex_unlock(&c->q_lock);
        struct iovec iov = {q + h, l - h};
        int rc = write_all(c, &iov, 1, deadline_ns);
        free(q);
        if (rc < 0)
            return rc;
    }
}

static void arm_out(struct comm_transport *t, struct tcp_conn *c, int on)
{
    if (c->out_armed == on || c->eof)
        return;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP |
                                       (on ? EPOLLOUT : 0u),
                             .data.u64 = (uint64_t)c->peer};
    epoll_ctl(t->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->out_armed = on;
}

/* Writes what the queue holds without blocking (service thread).  When an
 * application thread holds send_lock, leaves the queue to it: it checks the
 * queue after unlocking (the fences pair with the one in conn_unlock). */
static void service_flush(struct comm_transport *t, struct tcp_conn *c)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (pthread_mutex_trylock(&c->send_lock) != 0)
        return;
    int err = 0;
    pthread_mutex_lock(&c->q_lock);
    while (c->q_head < c->q_len) {
        ssize_t w = send(c->fd, c->q + c->q_head, c->q_len - c->q_head,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                err = errno;
            break;
        }
        c->q_head += (size_t)w;
    }
    if (err || c->q_head == c->q_len)
        c->q_head = c->q_len = 0;
    int pending = c->q_len != 0;
    pthread_mutex_unlock(&c->q_lock);
    if (err)
        c->closed_tx = 1;
    pthread_mutex_unlock(&c->send_lock);
    if (err && !__atomic_load_n(&t->stopping, __ATOMIC_RELAXED))
        conn_lost(c, err, "sending replies");
    arm_out(t, c, pending);
}

/* Releases send_lock, then writes out anything the service thread queued
 * while we held it. */
static void conn_unlock(struct tcp_conn *c)
{
    pthread_mutex_unlock(&c->send_lock);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    while (queue_pending(c)) {
        pthread_mutex_lock(&c->send_lock);
        int rc = c->closed_tx ? 0 : queue_flush(c, 0);
        if (rc < 0)
            c->closed_tx = 1;
        pthread_mutex_unlock(&c->send_lock);
        if (rc < 0) {
            conn_lost(c, -rc, "sending replies");
            return;
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
}

static void req_unlink_locked(struct tcp_conn *c, struct tcp_req *r)
{
    struct tcp_req **pp = &c->req_head, *prev = NULL;
    while (*pp && *pp != r) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = r->next;
    if (c->req_tail == r)
        c->req_tail = prev;
    c->nreq--;
}

/* Writes one frame (header, then payload) to c's peer.  With req, the frame
 * is a request: it gets an id and req is linked before the frame leaves, so
 * that the reply always finds it.  From the service thread (a message
 * handler) the frame is queued instead and req must be NULL. */
static int conn_send(struct comm_transport *t, struct tcp_conn *c,
                     struct tcp_frame *f, const void *payload, size_t plen,
                     struct tcp_req *req)
{
    unsigned char hdr[TCP_FRAME_HDR];
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)payload, plen}};
    const char *what = tcp_op_name(f->op);
    if (OMPDSM_UNLIKELY(!peer_ok(c) && !comm_g.failed)) {
        ompdsm_err("tcp %s to node %d: it has already finished", what,
                   c->peer);
        return -EPIPE;
    }
    if (OMPDSM_UNLIKELY(tcp_in_service)) {
        if (req) {
            ompdsm_err("tcp %s to node %d from a message handler: handlers "
                       "must not wait for other nodes", what, c->peer);
            return -EDEADLK;
        }
        tcp_frame_encode(f, hdr);
        queue_append(c, iov, plen ? 2 : 1, 0);
        __atomic_fetch_add(&c->put_seq, 1, __ATOMIC_RELEASE);
        service_flush(t, c);
        return 0;
    }
    pthread_mutex_lock(&c->send_lock);
    int rc = c->closed_tx ? -EPIPE : 0;
    if (req && !rc) {
        f->id = req->id = __atomic_add_fetch(&c->next_id, 1, __ATOMIC_RELAXED);
        req->seq = __atomic_load_n(&c->put_seq, __ATOMIC_RELAXED);
        req->next = NULL;
        pthread_mutex_lock(&c->req_lock);
        if (c->req_tail)
            c->req_tail->next = req;
        else
            c->req_head = req;
        c->req_tail = req;
        c->nreq++;
        pthread_mutex_unlock(&c->req_lock);
    }
    if (!rc && queue_pending(c))
        rc = queue_flush(c, 0);
    if (!rc) {
        tcp_frame_encode(f, hdr);
        rc = write_all(c, iov, plen ? 2 : 1, 0);
    }
    if (rc < 0 && rc != -ECONNABORTED)
        c->closed_tx = 1;
    if (!req)
        __atomic_fetch_add(&c->put_seq, 1, __ATOMIC_RELEASE);
    conn_unlock(c);
    if (rc < 0) {
        if (req) {
            pthread_mutex_lock(&c->req_lock);
            req_unlink_locked(c, req);
            pthread_mutex_unlock(&c->req_lock);
        }
        if (rc == -ECONNABORTED || comm_g.failed)
            return -ECONNABORTED;
        char doing[64];
        snprintf(doing, sizeof doing, "sending a %s", what);
        conn_lost(c, -rc, doing);
        return -ECONNABORTED;
    }
    return 0;
}

static int req_ready(void *arg)
{
    struct tcp_req *r = arg;
    return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) || comm_g.failed;
}

/* Sends request f and waits for its reply.  Returns 0, the target's error,
 * or -ECONNABORTED when the job fails first. */
static int conn_request(struct comm_transport *t, struct tcp_conn *c,
                        struct tcp_frame *f, struct tcp_req *r)
{
    r->op = f->op;
    r->done = 0;
    r->status = 0;
    int rc = conn_send(t, c, f, NULL, 0, r);
    if (rc < 0)
        return rc;
    if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
        comm_wait_until(req_ready, r);
    if (OMPDSM_UNLIKELY(!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))) {
        /* Give up: after this the service thread no longer touches r. */
        pthread_mutex_lock(&c->req_lock);
        req_unlink_locked(c, r);
        if (c->rx_req == r)
            c->rx_req = NULL;
        int done = r->done;
        pthread_mutex_unlock(&c->req_lock);
        if (!done)
            return -ECONNABORTED;
    }
    if (r->status) {
        ompdsm_err("tcp %s on node %d failed: %s", tcp_op_name(r->op),
                   c->peer, strerror(-r->status));
        return r->status;
    }
    return 0;
}

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
    const char *p = src;
    while (!rc && len) {
        size_t n = len < TCP_FRAME_MAX_LEN ? len : TCP_FRAME_MAX_LEN;
        struct tcp_frame f = {.op = TCP_OP_PUT, .region = (uint8_t)region,
                              .len = (uint32_t)n, .off = off};
        rc = conn_send(t, &t->conn[peer], &f, p, n, NULL);
        p += n;
        off += n;
        len -= n;
    }
    return rc;
}

static int tcp_get(struct comm_transport *t, int peer, int region,
                   uint64_t off, void *dst, size_t len)
{
    int rc = remote_check(peer, region, off, len, "get");
    char *p = dst;
    while (!rc && len) {
        size_t n = len < TCP_FRAME_MAX_LEN ? len : TCP_FRAME_MAX_LEN;
        struct tcp_frame f = {.op = TCP_OP_GET, .region = (uint8_t)region,
                              .len = (uint32_t)n, .off = off};
        struct tcp_req r = {.dst = p, .len = n};
        rc = conn_request(t, &t->conn[peer], &f, &r);
        p += n;
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
    rc = conn_request(t, &t->conn[peer], &f, &r);
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
    rc = conn_request(t, &t->conn[peer], &f, &r);
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
    return conn_send(t, &t->conn[peer], &f, NULL, 0, NULL);
}

static int tcp_fence(struct comm_transport *t, int peer)
{
    struct tcp_conn *c = &t->conn[peer];
    uint64_t want = __atomic_load_n(&c->put_seq, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c->fenced_seq, __ATOMIC_ACQUIRE) >= want)
        return 0; /* nothing written since a completed fence */
    struct tcp_frame f = {.op = TCP_OP_FENCE};
    struct tcp_req r = {0};
    int rc = conn_request(t, c, &f, &r);
    if (rc < 0)
        return rc;
    uint64_t cur = __atomic_load_n(&c->fenced_seq, __ATOMIC_RELAXED);
    while (cur < r.seq &&
           !__atomic_compare_exchange_n(&c->fenced_seq, &cur, r.seq, 1,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return 0;
}

static int tcp_send(struct comm_transport *t, int peer, int tag,
                    const void *buf, size_t len)
{
    struct tcp_frame f = {.op = TCP_OP_SEND, .tag = (uint8_t)tag,
                          .len = (uint32_t)len};
    return conn_send(t, &t->conn[peer], &f, buf, len, NULL);
}

/* ------------------------------------------------------------------------ */
/* The service thread: executing requests, completing replies               */

/* Sends a reply from the service thread without blocking: straight to the
 * socket when nothing is queued and no application thread is writing, the
 * rest (or all) through the queue. */
static void reply(struct comm_transport *t, struct tcp_conn *c, uint64_t id,
                  int status, uint64_t value, const void *data, size_t len)
{
    if (c->closed_tx)
        return;
    struct tcp_frame f = {.op = TCP_OP_REPLY, .len = (uint32_t)len, .id = id,
                          .a = value, .b = (uint64_t)(int64_t)status};
    unsigned char hdr[TCP_FRAME_HDR];
    tcp_frame_encode(&f, hdr);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)data, len}};
    int n = len ? 2 : 1;
    size_t total = sizeof hdr + len;
    if (!queue_pending(c) && pthread_mutex_trylock(&c->send_lock) == 0) {
        /* Only the service thread appends, and appenders that are not us
         * need send_lock to take the queue: it stays empty here. */
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w;
        do
            w = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        while (w < 0 && errno == EINTR);
        int err = (w < 0 && errno != EAGAIN) ? errno : 0;
        if (w < 0)
            w = 0;
        if (!err && (size_t)w < total)
            queue_append(c, iov, n, (size_t)w);
        if (err)
            c->closed_tx = 1;
        pthread_mutex_unlock(&c->send_lock);
        if (err) {
            if (!__atomic_load_n(&t->stopping, __ATOMIC_RELAXED))
                conn_lost(c, err, "sending a reply");
            return;
        }
        if ((size_t)w == total)
            return;
        arm_out(t, c, 1);
        return;
    }
    queue_append(c, iov, n, 0);
    service_flush(t, c);
}

/* The peer broke the protocol: fatal for the job. */
static int bad_peer(struct tcp_conn *c, const char *why)
{
    if (!comm_g.failed)
        comm_set_failed("tcp: bad frame from node %d: %s; ending the job",
                        c->peer, why);
    return -EPROTO;
}

static void complete_locked(struct tcp_conn *c, struct tcp_req *r,
                            const struct tcp_frame *f)
{
    r->value = f->a;
    r->status = (int)(int64_t)f->b;
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    if (c->rx_req == r)
        c->rx_req = NULL;
}

/* Acts on a header just received.  Returns 0, or -EPROTO when the peer
 * must no longer be read. */
static int frame_begin(struct comm_transport *t, struct tcp_conn *c,
                       const struct tcp_frame *f)
{
    char why[160];
    int peer = c->peer, rc;
    char *base = (char *)comm_g.reg[f->region].base;
    c->cur = *f;
    c->pgot = 0;
    c->pdst = NULL;
    switch (f->op) {
    case TCP_OP_PUT:
        if (comm_local_check(f->region, f->off, f->len, "tcp put", peer) < 0)
            return bad_peer(c, "put outside the registered memory");
        c->pdst = base + f->off;
        break;
    case TCP_OP_GET:
        rc = comm_local_check(f->region, f->off, f->len, "tcp get", peer);
        reply(t, c, f->id, rc, 0, rc ? NULL : base + f->off, rc ? 0 : f->len);
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
        reply(t, c, f->id, rc, old, NULL, 0);
        return 0;
    }
    case TCP_OP_NOTIFY:
        if (comm_local_check(f->region, f->off, 8, "tcp notify", peer) < 0)
            return bad_peer(c, "notify outside the registered memory");
        comm_local_notify(f->region, f->off, f->a);
        return 0;
    case TCP_OP_FENCE:
        /* Requests from one peer run in order: all earlier ones are done. */
        reply(t, c, f->id, 0, 0, NULL, 0);
        return 0;
    case TCP_OP_SEND:
        if (!c->msgbuf && !(c->msgbuf = malloc(COMM_MSG_MAX)))
            ompdsm_fatal("tcp: out of memory for a message from node %d", peer);
        c->pdst = c->msgbuf;
        break;
    case TCP_OP_REPLY: {
        pthread_mutex_lock(&c->req_lock);
        struct tcp_req *r = c->req_head;
        while (r && r->id != f->id)
            r = r->next;
        if (r && r->op == TCP_OP_GET && !f->b && f->len != r->len) {
            pthread_mutex_unlock(&c->req_lock);
            snprintf(why, sizeof why, "reply of %u bytes to a get of %zu",
                     f->len, r->len);
            return bad_peer(c, why);
        }
        if (r && r->op != TCP_OP_GET && f->len) {
            pthread_mutex_unlock(&c->req_lock);
            return bad_peer(c, "reply with data to a request without");
        }
        if (!r && f->id > __atomic_load_n(&c->next_id, __ATOMIC_RELAXED)) {
            /* Never issued (ids of abandoned requests are below next_id). */
            pthread_mutex_unlock(&c->req_lock);
            snprintf(why, sizeof why, "reply to request %llu, never sent",
                     (unsigned long long)f->id);
            return bad_peer(c, why);
        }
        if (r)
            req_unlink_locked(c, r);
        c->rx_req = r;
        if (r && !f->len) {
            complete_locked(c, r, f);
            r = NULL;
        }
        pthread_mutex_unlock(&c->req_lock);
        if (!f->len)
            comm_doorbell_ring();
        break;
    }
    case TCP_OP_BYE:
        __atomic_store_n(&c->bye_rx, 1, __ATOMIC_RELAXED);
        return 0;
    default:
        snprintf(why, sizeof why, "unexpected %s", tcp_op_name(f->op));
        return bad_peer(c, why);
    }
    c->in_payload = tcp_frame_payload(f) > 0;
    if (!c->in_payload && f->op == TCP_OP_SEND)
        comm_dispatch(peer, f->tag, c->msgbuf, 0);
    return 0;
}

/* cur's payload is complete. */
static void frame_end(struct comm_transport *t, struct tcp_conn *c)
{
    c->in_payload = 0;
    if (c->cur.op == TCP_OP_SEND) {
        comm_dispatch(c->peer, c->cur.tag, c->msgbuf, c->cur.len);
    } else if (c->cur.op == TCP_OP_REPLY) {
        pthread_mutex_lock(&c->req_lock);
        if (c->rx_req)
            complete_locked(c, c->rx_req, &c->cur);
        pthread_mutex_unlock(&c->req_lock);
        comm_doorbell_ring();
    }
}

/* Moves n payload bytes from src to where cur's payload goes. */
static void payload_copy(struct tcp_conn *c, const void *src, size_t n)
{
    if (c->cur.op == TCP_OP_REPLY) {
        pthread_mutex_lock(&c->req_lock);
        if (c->rx_req)
            memcpy((char *)c->rx_req->dst + c->pgot, src, n);
        pthread_mutex_unlock(&c->req_lock);
    } else {
        memcpy(c->pdst + c->pgot, src, n);
    }
    c->pgot += n;
}

/* Receives the rest of a large payload straight into its destination.
 * Returns bytes received, 0 at EOF, or -1 with errno. */
static ssize_t payload_recv(struct tcp_conn *c, size_t want)
{
    ssize_t n;
    if (c->cur.op == TCP_OP_REPLY) {
        pthread_mutex_lock(&c->req_lock);
        if (c->rx_req)
            n = recv(c->fd, (char *)c->rx_req->dst + c->pgot, want,
                     MSG_DONTWAIT);
        else /* the requester gave up: discard */
            n = recv(c->fd, c->rbuf, want < TCP_RBUF ? want : TCP_RBUF,
                     MSG_DONTWAIT);
        pthread_mutex_unlock(&c->req_lock);
    } else {
        n = recv(c->fd, c->pdst + c->pgot, want, MSG_DONTWAIT);
    }
    if (n > 0)
        c->pgot += (size_t)n;
    return n;
}

static void conn_closed(struct comm_transport *t, struct tcp_conn *c, int err)
{
    epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    __atomic_store_n(&c->eof, 1, __ATOMIC_RELAXED);
    if ((c->bye_rx && !err && !c->in_payload) ||
        __atomic_load_n(&t->stopping, __ATOMIC_ACQUIRE) || comm_g.failed) {
        OMPDSM_TRACE(OMPDSM_TR_COMM, "tcp: node %d closed its connection",
                     c->peer);
        return;
    }
    char doing[160];
    pthread_mutex_lock(&c->req_lock);
    unsigned nreq = c->nreq;
    pthread_mutex_unlock(&c->req_lock);
    if (c->in_payload)
        snprintf(doing, sizeof doing, "receiving a %s of %u bytes from it",
                 tcp_op_name(c->cur.op), c->cur.len);
    else if (nreq)
        snprintf(doing, sizeof doing, "%u request%s to it awaited a reply",
                 nreq, nreq == 1 ? "" : "s");
    else
        snprintf(doing, sizeof doing, "the job was running");
    char how[96] = "closed";
    if (err)
        snprintf(how, sizeof how, "failed (%s)", strerror(err));
    comm_set_failed("tcp: connection to node %d %s while %s; did node %d "
                    "die?", c->peer, how, doing, c->peer);
}

/* Reads and acts on everything c's socket has (service thread). */
static void conn_input(struct comm_transport *t, struct tcp_conn *c)
{
    char why[160] = "";
    int drained = 0; /* a read came back short: the socket is empty */
    for (;;) {
        if (c->in_payload) {
            size_t need = c->cur.len - c->pgot;
            size_t avail = c->rlen - c->rpos;
            if (avail) {
                size_t n = avail < need ? avail : need;
                payload_copy(c, c->rbuf + c->rpos, n);
                c->rpos += n;
                if (c->pgot == c->cur.len)
                    frame_end(t, c);
                continue;
            }
            if (need >= TCP_DIRECT_MIN) {
                if (drained)
                    return;
                ssize_t n = payload_recv(c, need);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                    conn_closed(t, c, n ? errno : 0);
                    return;
                }
                if (n < 0)
                    return;
                drained = (size_t)n < need;
                if (c->pgot == c->cur.len)
                    frame_end(t, c);
                continue;
            }
        } else if (c->rlen - c->rpos >= TCP_FRAME_HDR) {
            struct tcp_frame f;
            if (tcp_frame_decode(c->rbuf + c->rpos, &f, why, sizeof why) < 0 ||
                frame_begin(t, c, &f) < 0) {
                if (!c->eof) {
                    bad_peer(c, why);
                    epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->fd, NULL);
                    __atomic_store_n(&c->eof, 1, __ATOMIC_RELAXED);
                }
                return;
            }
            c->rpos += TCP_FRAME_HDR;
            continue;
        }
        /* Need more bytes in rbuf; level-triggered epoll reports the
         * socket again if more arrived since it came back short. */
        if (drained)
            return;
        if (c->rpos) {
            memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
            c->rlen -= c->rpos;
            c->rpos = 0;
        }
        size_t room = TCP_RBUF - c->rlen;
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, room, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            conn_closed(t, c, n ? errno : 0);
            return;
        }
        if (n < 0)
            return;
        c->rlen += (size_t)n;
        drained = (size_t)n < room;
    }
}

static int all_closed(struct comm_transport *t)
{
    for (int p = 0; p < t->size; p++)
        if (p != t->rank && !t->conn[p].eof)
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
        if (__atomic_load_n(&t->stopping, __ATOMIC_ACQUIRE)) {
            uint64_t now = ompdsm_now_ns();
            if (!stop_deadline)
                stop_deadline = now + TCP_CLOSE_TIMEOUT_S * 1000000000ull;
            if (all_closed(t) || comm_g.failed)
                break;
            if (now >= stop_deadline) {
                for (int p = 0; p < t->size; p++)
                    if (p != t->rank && !t->conn[p].eof)
                        ompdsm_warn("tcp: node %d did not close its "
                                    "connection within %d s of the end; "
                                    "closing anyway", p, TCP_CLOSE_TIMEOUT_S);
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
            if (key == KEY_STOP) {
                uint64_t v;
                (void)!read(t->stopfd, &v, sizeof v);
            } else if (key == KEY_BOOT) {
                epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->bootfd, NULL);
                if (!__atomic_load_n(&t->stopping, __ATOMIC_ACQUIRE)) {
                    /* Nobody is left to tell: do not report to it. */
                    ompdsm_fatal_hook = NULL;
                    ompdsm_fatal("the connection to the launcher closed "
                                 "while the job was running (did ompdsmrun "
                                 "die?); exiting");
                }
            } else {
                struct tcp_conn *c = &t->conn[key];
                if (c->eof)
                    continue;
                if (ev[i].events & EPOLLOUT)
                    service_flush(t, c);
                if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
                    conn_input(t, c);
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

static int ms_left(uint64_t deadline)
{
    uint64_t now = ompdsm_now_ns();
    return now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1;
}

/* Reads or writes exactly len bytes on a non-blocking fd before deadline.
 * Returns 0, -ETIMEDOUT, -EPIPE (EOF) or -errno. */
static int io_timed(int fd, void *buf, size_t len, int out, uint64_t deadline)
{
    char *p = buf;
    while (len) {
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n == 0 && !out)
            return -EPIPE;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return -errno;
            struct pollfd pf = {.fd = fd, .events = out ? POLLOUT : POLLIN};
            int ms = ms_left(deadline);
            if (!ms || poll(&pf, 1, ms) == 0)
                return -ETIMEDOUT;
            continue;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int hello_send(int fd, uint64_t cookie, uint64_t deadline)
{
    struct tcp_frame f = {.op = TCP_OP_HELLO, .id = (uint64_t)comm_g.rank,
                          .off = (uint64_t)comm_g.size, .a = cookie};
    unsigned char hdr[TCP_FRAME_HDR];
    tcp_frame_encode(&f, hdr);
    return io_timed(fd, hdr, sizeof hdr, 1, deadline);
}

/* Reads a peer's HELLO; returns its rank or a negative errno with why. */
static int hello_recv(int fd, uint64_t cookie, uint64_t deadline, char *why,
                      size_t whylen)
{
    unsigned char hdr[TCP_FRAME_HDR];
    int rc = io_timed(fd, hdr, sizeof hdr, 0, deadline);
    if (rc < 0) {
        snprintf(why, whylen, "%s", rc == -ETIMEDOUT ? "no handshake in time"
                 : rc == -EPIPE ? "closed during the handshake"
                 : strerror(-rc));
        return rc;
    }
    struct tcp_frame f;
    if (tcp_frame_decode(hdr, &f, why, whylen) < 0)
        return -EPROTO;
    if (f.op != TCP_OP_HELLO) {
        snprintf(why, whylen, "expected a hello, got a %s", tcp_op_name(f.op));
        return -EPROTO;
    }
    if (f.a != cookie || f.off != (uint64_t)comm_g.size ||
        f.id >= (uint64_t)comm_g.size) {
        snprintf(why, whylen, "hello from another job (rank %llu of %llu)",
                 (unsigned long long)f.id, (unsigned long long)f.off);
        return -EPROTO;
    }
    return (int)f.id;
}

static void sock_setup(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int connect_to(struct comm_transport *t, int p, uint64_t cookie,
                      uint64_t deadline)
{
    const struct comm_card *card = &comm_g.cards[p];
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = card->tcp_addr,
                             .sin_port = card->tcp_port};
    char where[64];
    snprintf(where, sizeof where, "%s:%u", inet_ntoa(sa.sin_addr),
             ntohs(card->tcp_port));
    if (!card->tcp_addr || !card->tcp_port) {
        ompdsm_err("tcp: node %d advertises no tcp address", p);
        return -EINVAL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        int e = errno;
        ompdsm_err("tcp: socket: %s", strerror(e));
        return -e;
    }
    sock_setup(fd);
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
        } else {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int ms = ms_left(deadline);
            if (!ms || poll(&pf, 1, ms) <= 0) {
                rc = -ETIMEDOUT;
            } else {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
                rc = -e;
            }
        }
    }
    if (rc < 0) {
        ompdsm_err("tcp: cannot connect to node %d at %s: %s", p, where,
                   strerror(-rc));
        close(fd);
        return rc;
    }
    char why[160];
    rc = hello_send(fd, cookie, deadline);
    if (rc < 0)
        snprintf(why, sizeof why, "%s", strerror(-rc));
    else if ((rc = hello_recv(fd, cookie, deadline, why, sizeof why)) >= 0 &&
             rc != p) {
        snprintf(why, sizeof why, "node %d answered instead", rc);
        rc = -EPROTO;
    }
    if (rc < 0) {
        ompdsm_err("tcp: handshake with node %d at %s failed: %s%s", p, where,
                   why, rc == -ETIMEDOUT ? " (is it alive?)" : "");
        close(fd);
        return rc;
    }
    t->conn[p].fd = fd;
    return 0;
}

/* Accepts one connection from every higher rank. */
static int accept_from_higher(struct comm_transport *t, uint64_t cookie,
                              uint64_t deadline)
{
    int lfd = comm_g.tcp_listen_fd;
    int want = t->size - 1 - t->rank;
    while (want > 0) {
        struct pollfd pf = {.fd = lfd, .events = POLLIN};
        int ms = ms_left(deadline);
        if (!ms || poll(&pf, 1, ms) == 0) {
            char list[256] = "";
            for (int p = t->rank + 1; p < t->size; p++)
                if (t->conn[p].fd < 0 && strlen(list) < sizeof list - 16)
                    snprintf(list + strlen(list), sizeof list - strlen(list),
                             "%s%d", *list ? ", " : "", p);
            ompdsm_err("tcp: node(s) %s did not connect within %d s (died, "
                       "or cannot reach this node's address?)", list,
                       TCP_CONNECT_TIMEOUT_S);
            return -ETIMEDOUT;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            int e = errno;
            ompdsm_err("tcp: accept: %s", strerror(e));
            return -e;
        }
        sock_setup(fd);
        char why[160];
        uint64_t hd = ompdsm_now_ns() + 5000000000ull;
        int p = hello_recv(fd, cookie, hd < deadline ? hd : deadline, why,
                           sizeof why);
        if (p >= 0 && (p <= t->rank || t->conn[p].fd >= 0)) {
            snprintf(why, sizeof why, "node %d connected %s", p,
                     p <= t->rank ? "the wrong way" : "twice");
            p = -EPROTO;
        }
        if (p >= 0 && hello_send(fd, cookie, deadline) < 0) {
            snprintf(why, sizeof why, "could not answer node %d", p);
            p = -EPIPE;
        }
        if (p < 0) {
            ompdsm_warn("tcp: refused a connection: %s", why);
            close(fd);
            continue;
        }
        t->conn[p].fd = fd;
        want--;
    }
    return 0;
}

static void tcp_stop(struct comm_transport *t)
{
    if (!t)
        return;
    if (t->service_started) {
        if (!comm_g.failed) {
            /* The final barrier is behind us: nothing more is coming.  Say
             * so, then wait (in the service thread) for every peer's BYE and
             * EOF, so that no unread data turns our close into a reset. */
            uint64_t dl = ompdsm_now_ns() + TCP_CLOSE_TIMEOUT_S * 1000000000ull;
            for (int p = 0; p < t->size; p++) {
                struct tcp_conn *c = &t->conn[p];
                if (p == t->rank)
                    continue;
                pthread_mutex_lock(&c->send_lock);
                if (!c->closed_tx && !c->eof) {
                    unsigned char hdr[TCP_FRAME_HDR];
                    struct tcp_frame f = {.op = TCP_OP_BYE};
                    tcp_frame_encode(&f, hdr);
                    struct iovec iov = {hdr, sizeof hdr};
                    if (!queue_flush(c, dl))
                        write_all(c, &iov, 1, dl);
                    shutdown(c->fd, SHUT_WR);
                    c->closed_tx = 1;
                }
                pthread_mutex_unlock(&c->send_lock);
            }
        }
        __atomic_store_n(&t->stopping, 1, __ATOMIC_RELEASE);
        uint64_t one = 1;
        (void)!write(t->stopfd, &one, sizeof one);
        pthread_join(t->service, NULL);
    }
    for (int p = 0; p < t->size; p++) {
        struct tcp_conn *c = &t->conn[p];
        if (c->fd >= 0)
            close(c->fd);
        free(c->rbuf);
        free(c->msgbuf);
        free(c->q);
        pthread_mutex_destroy(&c->send_lock);
        pthread_mutex_destroy(&c->q_lock);
        pthread_mutex_destroy(&c->req_lock);
    }
    if (t->epfd >= 0)
        close(t->epfd);
    if (t->stopfd >= 0)
        close(t->stopfd);
    if (comm_g.tcp_listen_fd >= 0) {
        close(comm_g.tcp_listen_fd);
        comm_g.tcp_listen_fd = -1;
    }
    free(t->conn);
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
    t->conn = calloc((size_t)t->size, sizeof *t->conn);
    if (!t->conn) {
        free(t);
        return -ENOMEM;
    }
    int rc = 0;
    for (int p = 0; p < t->size; p++) {
        struct tcp_conn *c = &t->conn[p];
        c->peer = p;
        c->fd = -1;
        pthread_mutex_init(&c->send_lock, NULL);
        pthread_mutex_init(&c->q_lock, NULL);
        pthread_mutex_init(&c->req_lock, NULL);
        if (p != t->rank && !(c->rbuf = malloc(TCP_RBUF)))
            rc = -ENOMEM;
    }
    /* Connect down, accept up: every pair once, and no cycle of waits
     * (node 0 only accepts). */
    uint64_t cookie = job_cookie();
    uint64_t deadline = ompdsm_now_ns() +
                        TCP_CONNECT_TIMEOUT_S * 1000000000ull;
    for (int p = 0; !rc && p < t->rank; p++)
        rc = connect_to(t, p, cookie, deadline);
    if (!rc)
        rc = accept_from_higher(t, cookie, deadline);
    if (!rc) {
        close(comm_g.tcp_listen_fd); /* every peer is connected */
        comm_g.tcp_listen_fd = -1;
    }
    if (!rc) {
        t->epfd = epoll_create1(EPOLL_CLOEXEC);
        t->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (t->epfd < 0 || t->stopfd < 0) {
            rc = -errno;
            ompdsm_err("tcp: epoll/eventfd: %s", strerror(errno));
        }
    }
    for (int p = 0; !rc && p < t->size; p++) {
        if (p == t->rank)
            continue;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
                                 .data.u64 = (uint64_t)p};
        if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->conn[p].fd, &ev) < 0)
            rc = -errno;
    }
    if (!rc) {
        struct epoll_event ev = {.events = EPOLLIN,
                                 .data.u64 = (uint64_t)(int64_t)KEY_STOP};
        if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->stopfd, &ev) < 0)
            rc = -errno;
        /* Only hang-ups of the launcher connection: its data is not ours. */
        t->bootfd = comm_boot_fd();
        struct epoll_event bev = {.events = EPOLLRDHUP,
                                  .data.u64 = (uint64_t)(int64_t)KEY_BOOT};
        if (!rc && t->bootfd >= 0 &&
            epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->bootfd, &bev) < 0)
            t->bootfd = -1;
    }
    if (!rc) {
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
    OMPDSM_TRACE(OMPDSM_TR_COMM, "tcp: connected to %d peers", t->size - 1);
    *out = t;
    return 0;
}

const struct comm_transport_ops comm_tcp_ops = {
    .name = "tcp",
    .start = tcp_start,
    .stop = tcp_stop,
    .put = tcp_put,
    .get = tcp_get,
    .fetch_add = tcp_fetch_add,
    .cas = tcp_cas,
    .notify = tcp_notify,
    .fence = tcp_fence,
    .send = tcp_send,
};
