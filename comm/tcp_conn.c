/* comm/tcp_conn.c - tcp: failure, send queues, writing requests, replies. */
#include "tcp_int.h"

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

/* Tells every other peer why the job fails, best effort (an ABORT
 * frame), so that the nodes that notice the failure through this node's
 * own exit still name the node that was lost first; link: through the
 * network (msg then names no hosts: each receiver labels them). */
static void tcp_tell_peers(struct tcp_peer *lost, const char *msg, int link)
{
    struct comm_transport *t = lost->t;
    size_t len = strnlen(msg, TCP_ABORT_MAX);
    struct tcp_frame f = {.op = TCP_OP_ABORT, .len = (uint32_t)len};
    if (link) {
        f.a = (uint64_t)comm_g.rank + 1;
        f.b = (uint64_t)lost->peer + 1;
    }
    unsigned char hdr[TCP_FRAME_HDR];
    tcp_frame_encode(&f, hdr);
    for (int r = 0; r < t->size; r++) {
        struct tcp_peer *p = &t->peers[r];
        if (p == lost || !served(r) || pthread_mutex_trylock(&p->send_lock))
            continue;
        /* Only between frames: never after a partly written one. */
        if (!p->closed_tx && !tcp_oq_pending(p)) {
            struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)msg, len}};
            struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
            if (sendmsg(p->out_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) !=
                (ssize_t)(sizeof hdr + len))
                p->closed_tx = 1;
        }
        pthread_mutex_unlock(&p->send_lock);
    }
}

/* Fails the job with msg and tells the other peers. */
static void tcp_job_failed(struct tcp_peer *lost, const char *msg)
{
    if (comm_g.failed)
        return;
    comm_set_failed("%s", msg);
    tcp_tell_peers(lost, msg, 0);
}

/* Errors that say the network failed, not the peer process: no answer
 * within tcp_timeout_s (TCP_USER_TIMEOUT, keepalive), or no route.  A
 * process that dies has its kernel close or reset its connections. */
static int network_error(int err)
{
    return err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
           err == EHOSTDOWN || err == ENETDOWN;
}

void tcp_peer_lost(struct tcp_peer *p, int err, const char *doing)
{
    if (comm_g.failed)
        return;
    char how[96] = "closed", msg[512];
    if (network_error(err)) {
        if (err == ETIMEDOUT)
            snprintf(how, sizeof how, "no answer for %d s "
                     "(OMPDSM_TCP_TIMEOUT_S)", tcp_timeout_s);
        else
            snprintf(how, sizeof how, "%s", strerror(err));
        char what[256];
        snprintf(what, sizeof what, "node %d lost node %d while %s: %s",
                 comm_g.rank, p->peer, doing, how);
        comm_set_link_failed(comm_g.rank, p->peer, what, "%s", "tcp: ");
        tcp_tell_peers(p, what, 1);
        return;
    }
    if (err)
        snprintf(how, sizeof how, "failed (%s)", strerror(err));
    snprintf(msg, sizeof msg, "tcp: connection to node %d %s while %s; did "
             "node %d die?", p->peer, how, doing, p->peer);
    tcp_job_failed(p, msg);
}

/* The peer broke the protocol: fatal for the job. */
int tcp_bad_peer(struct tcp_peer *p, const char *why)
{
    char msg[512];
    snprintf(msg, sizeof msg, "tcp: bad frame from node %d: %s; ending the job",
             p->peer, why);
    tcp_job_failed(p, msg);
    return -EPROTO;
}

/* ------------------------------------------------------------------------ */
/* Output queues                                                            */

static void outq_set_len(struct tcp_outq *o, size_t len)
{
    __atomic_store_n(&o->len, len, __ATOMIC_RELAXED);
}

/* Appends iov[0..n) minus its first skip bytes. */
void tcp_outq_append(struct tcp_outq *o, int peer, const struct iovec *iov,
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
            size_t cap = o->cap ? o->cap : (size_t)64 * 1024;
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
int tcp_outq_write(struct tcp_outq *o, int fd)
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

void tcp_epoll_set(struct comm_transport *t, int fd, int key, uint32_t ev,
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
int tcp_write_all(int fd, struct iovec *iov, int n, uint64_t deadline_ns)
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
int tcp_oq_flush(struct tcp_peer *p, uint64_t deadline_ns)
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
        int rc = tcp_write_all(p->out_fd, &iov, 1, deadline_ns);
        free(o.q);
        if (rc < 0)
            return rc;
    }
}

int tcp_oq_pending(struct tcp_peer *p)
{
    return __atomic_load_n(&p->oq.len, __ATOMIC_RELAXED) != 0;
}

/* Puts out_fd in the epoll set while the service thread has something to
 * write there, or, during stop, to see the peer's half-close. */
void tcp_watch_out(struct comm_transport *t, struct tcp_peer *p, int pending)
{
    uint32_t want = (pending ? EPOLLOUT : 0) |
                    (ld(&t->stopping) && !p->out_eof ? EPOLLIN | EPOLLRDHUP : 0);
    if (want)
        tcp_epoll_set(t, p->out_fd, 2 * p->peer + 1, want,
                      p->out_polled ? EPOLL_CTL_MOD : EPOLL_CTL_ADD);
    else if (p->out_polled)
        epoll_ctl(t->epfd, EPOLL_CTL_DEL, p->out_fd, NULL);
    p->out_polled = want != 0;
}

/* The service thread writes the out queue without blocking, unless an
 * application thread holds send_lock: that thread writes the queue after it
 * unlocks (the fences pair with the one in send_unlock). */
void tcp_service_flush_out(struct comm_transport *t, struct tcp_peer *p)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (pthread_mutex_trylock(&p->send_lock) != 0)
        return;
    pthread_mutex_lock(&p->q_lock);
    int rc = p->closed_tx ? 0 : tcp_outq_write(&p->oq, p->out_fd);
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
        tcp_peer_lost(p, -rc, "sending from a message handler");
    tcp_watch_out(t, p, pending);
}

/* Releases send_lock, then writes what the service thread queued while we
 * held it. */
static void send_unlock(struct tcp_peer *p)
{
    pthread_mutex_unlock(&p->send_lock);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    while (tcp_oq_pending(p)) {
        pthread_mutex_lock(&p->send_lock);
        int rc = p->closed_tx ? 0 : tcp_oq_flush(p, 0);
        if (rc < 0)
            p->closed_tx = 1;
        pthread_mutex_unlock(&p->send_lock);
        if (rc < 0) {
            tcp_peer_lost(p, -rc, "sending a message handler's frames");
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
int tcp_send_frame(struct comm_transport *t, struct tcp_peer *p,
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
        tcp_outq_append(&p->oq, p->peer, iov, niov, 0);
        pthread_mutex_unlock(&p->q_lock);
        __atomic_fetch_add(&p->put_seq, 1, __ATOMIC_RELEASE);
        tcp_service_flush_out(t, p);
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
    if (!rc && tcp_oq_pending(p))
        rc = tcp_oq_flush(p, 0);
    if (!rc) {
        tcp_frame_encode(f, hdr);
        rc = tcp_write_all(p->out_fd, iov, niov, 0);
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
            tcp_peer_lost(p, -rc, doing);
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
    r->peer_put = f->off;
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
        return tcp_bad_peer(p, why);
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
        return tcp_bad_peer(p, why);
    }
    if (r && (r->op == TCP_OP_GET ? !f->b && f->len != r->len : f->len != 0)) {
        pthread_mutex_unlock(&p->req_lock);
        snprintf(why, sizeof why, "reply of %u bytes to a %s of %zu", f->len,
                 tcp_op_name(r->op), r->op == TCP_OP_GET ? r->len : 0);
        return tcp_bad_peer(p, why);
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
                    return tcp_bad_peer(p, why);
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
        tcp_peer_lost(p, err, doing);
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
int tcp_request(struct comm_transport *t, struct tcp_peer *p,
                struct tcp_frame *f, struct tcp_req *r)
{
    r->op = f->op;
    r->done = 0;
    r->status = 0;
    int rc = tcp_send_frame(t, p, f, NULL, 0, r);
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
    /* What the peer put here before it executed the request is applied
     * before the request returns (tcp_int.h, ff_done): the service thread
     * is behind by a frame or two at most. */
    for (int spins = 0; __atomic_load_n(&p->ff_done, __ATOMIC_ACQUIRE) < r->peer_put; spins++) {
        if (comm_g.failed)
            return -ECONNABORTED;
        if (spins > 64)
            sched_yield();
    }
    return 0;
}

