/* comm/tcp_svc.c - tcp: the service thread, executing the peers' requests. */
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

__thread int tcp_in_service;

/* After a peer is lost, a node still running this long later exits. */
enum { TCP_FAIL_GRACE_MS = 3000 };

/* ------------------------------------------------------------------------ */
/* The service thread: executing the peers' requests                        */

static void arm_in(struct comm_transport *t, struct tcp_peer *p, int out)
{
    if (p->iq_armed == out || p->in_eof)
        return;
    tcp_epoll_set(t, p->in_fd, 2 * p->peer,
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
    int rc = tcp_outq_write(&p->iq, p->in_fd);
    if (rc < 0) {
        p->iq.head = p->iq.len = 0;
        if (!ld(&t->stopping))
            tcp_peer_lost(p, -rc, "sending replies");
    }
    arm_in(t, p, p->iq.len != 0);
    if (!p->iq.len && p->shut_pending)
        shut_in(p);
}

static void reply(struct comm_transport *t, struct tcp_peer *p, uint64_t id,
                  int status, uint64_t value, const void *data, size_t len)
{
    /* (after the request's own loads and stores: a put this node made
     * before storing what the request read is counted) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    struct tcp_frame f = {.op = TCP_OP_REPLY, .len = (uint32_t)len, .id = id,
                          .a = value, .b = (uint64_t)(int64_t)status,
                          .off = __atomic_load_n(&p->put_seq, __ATOMIC_ACQUIRE)};
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
                tcp_peer_lost(p, errno, "sending a reply");
            return;
        }
        w = s > 0 ? (size_t)s : 0;
        if (w == sizeof hdr + len)
            return;
    }
    /* The rest waits for EPOLLOUT; the data is copied now, as later
     * requests may change it. */
    tcp_outq_append(&p->iq, p->peer, iov, n, w);
    arm_in(t, p, 1);
}

static void request_end(struct tcp_peer *p);

/* One more of the peer's fire-and-forget frames is applied (ff_done). */
static inline void ff_applied(struct tcp_peer *p)
{
    __atomic_store_n(&p->ff_done, p->ff_done + 1, __ATOMIC_RELEASE);
}

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
    /* Sends count where they are dispatched. */
    if (f->op == TCP_OP_PUT || f->op == TCP_OP_PUTV || f->op == TCP_OP_NOTIFY)
        comm_traffic_rx();
    switch (f->op) {
    case TCP_OP_PUT:
        if (comm_local_check(f->region, f->off, f->len, "tcp put", peer) < 0)
            return tcp_bad_peer(p, "put outside the registered memory");
        x->dst = base + f->off;
        if (!f->len) {
            ff_applied(p);
            return 0;
        }
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
            return tcp_bad_peer(p, "notify outside the registered memory");
        comm_local_notify(f->region, f->off, f->a);
        ff_applied(p);
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
        return tcp_bad_peer(p, why);
    }
    x->in_payload = tcp_frame_payload(f) > 0;
    return 0;
}

/* Applies a vectored put held in p->putvbuf; a run outside the registered
 * memory, or data not adding up, means the peer is broken. */
static int apply_putv(struct tcp_peer *p, const struct tcp_frame *f)
{
    char *base = (char *)comm_g.reg[f->region].base;
    const unsigned char *data;
    uint64_t pos = 0;
    uint32_t off, len;
    int rc;
    while ((rc = tcp_putv_next(f, (const unsigned char *)p->putvbuf, &pos,
                               &off, &len, &data)) > 0) {
        if (comm_local_check(f->region, f->off + off, len,
                             "tcp vectored put", p->peer) < 0)
            return -EPROTO;
        memcpy(base + f->off + off, data, len);
    }
    return rc;
}

static void request_end(struct tcp_peer *p)
{
    struct tcp_rx *x = &p->irx;
    x->in_payload = 0;
    if (x->cur.op == TCP_OP_PUT) {
        ff_applied(p);
    } else if (x->cur.op == TCP_OP_PUTV) {
        if (apply_putv(p, &x->cur) < 0)
            tcp_bad_peer(p, "malformed vectored put");
        ff_applied(p);
    } else if (x->cur.op == TCP_OP_SEND) {
        comm_dispatch(p->peer, x->cur.tag, p->msgbuf, x->cur.len);
        ff_applied(p);
    } else if (x->cur.op == TCP_OP_ABORT && !comm_g.failed) {
        p->msgbuf[x->cur.len] = 0;
        uint64_t by = x->cur.a, lost = x->cur.b;
        if (by && lost && by <= (uint64_t)comm_g.size &&
            lost <= (uint64_t)comm_g.size)
            comm_set_link_failed((int)by - 1, (int)lost - 1, p->msgbuf,
                                 "node %d reports: ", p->peer);
        else
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
    tcp_peer_lost(p, err, doing);
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
                /* dst is NULL only for an empty vectored put (n is 0). */
                // NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker)
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
                tcp_bad_peer(p, why);
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
            tcp_watch_out(t, p, 0);
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

void *tcp_service_main(void *arg)
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
                        tcp_watch_out(t, &t->peers[r], tcp_oq_pending(&t->peers[r]));
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
                    tcp_service_flush_out(t, p);
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

