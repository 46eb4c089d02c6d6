/* comm/tcp.c - the tcp transport: its operations, set-up and shutdown.
 *
 * The transport: two TCP connections between every pair of nodes it serves
 * (all pairs with OMPDSM_TRANSPORT=tcp, the pairs on different hosts with
 * auto) and one service thread per node (tcp_svc.c) that executes the
 * peers' one-sided requests against this node's registered memory, so that
 * a target's application threads never take part.
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
 * Set-up: every node listens (comm_tcp_listen, before the card exchange),
 * then connects to every peer it serves and accepts every peer's
 * connection; each connection starts with the job key's challenge-response
 * (comm/util/auth.h), and one that fails it is refused with a line and
 * does not stop the job.  Each connection then gets TCP_USER_TIMEOUT and
 * keepalives from OMPDSM_TCP_TIMEOUT_S, so a peer that stops answering is
 * lost within that time even when nothing is being sent.
 *
 * Failure: a connection that closes without the peer's BYE frame, or fails,
 * while the job runs is fatal for the job (comm_set_failed; a timeout or no
 * route is the network's failure, comm_set_link_failed).  stop() sends
 * BYE and half-closes each out connection; a service thread answers a BYE
 * by half-closing the in connection; stop() returns once both directions
 * of every connection are closed, so an orderly end reports nothing and
 * loses no data. */
#include "tcp_int.h"
#include "boot.h"
#include "util/auth.h"

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

/* ------------------------------------------------------------------------ */
/* The operations                                                           */

/* Bounds check against the peer's card, before anything goes out. */
static int remote_check(int peer, int region, uint64_t off, size_t len,
                        const char *what)
{
    uint64_t rl = (region >= 0 && region < COMM_REG_MAX)
                      ? comm_g.cards[peer].region_len[region] : 0;
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
        rc = tcp_send_frame(t, &t->peers[peer], &f, s, n, NULL);
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
    if (!nruns) /* comm_putv never passes none; keeps total above 0 */
        return 0;
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
    if (cap < total || !buf) {
        free(buf);
        cap = total < 4096 ? 4096 : total;
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
    return tcp_send_frame(t, &t->peers[peer], &f, buf, total, NULL);
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
        rc = tcp_request(t, &t->peers[peer], &f, &r);
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
    rc = tcp_request(t, &t->peers[peer], &f, &r);
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
    rc = tcp_request(t, &t->peers[peer], &f, &r);
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
    return tcp_send_frame(t, &t->peers[peer], &f, NULL, 0, NULL);
}

static int tcp_fence(struct comm_transport *t, int peer)
{
    struct tcp_peer *p = &t->peers[peer];
    uint64_t want = __atomic_load_n(&p->put_seq, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&p->fenced_seq, __ATOMIC_ACQUIRE) >= want)
        return 0; /* nothing written since a completed fence */
    struct tcp_frame f = {.op = TCP_OP_FENCE};
    struct tcp_req r = {0};
    int rc = tcp_request(t, p, &f, &r);
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
    return tcp_send_frame(t, &t->peers[peer], &f, buf, len, NULL);
}

/* ------------------------------------------------------------------------ */
/* Connection set-up                                                        */

/* Every connection must be up within this. */
enum { TCP_CONNECT_TIMEOUT_S = 30 };

/* The listener, made before the card exchange (comm_tcp_listen) and closed
 * once every peer has connected. */
static int listen_fd = -1;

int tcp_timeout_s;

int comm_tcp_listen(struct comm_card_tcp *part)
{
    tcp_timeout_s = (int)ompdsm_env_u64("OMPDSM_TCP_TIMEOUT_S",
                                        TCP_TIMEOUT_DEFAULT_S, 2, 3600, 0);
    uint32_t addr = 0;
    const char *how = "";
    int rc = tcp_addr_choose(&addr, &how);
    if (rc < 0)
        return rc;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ompdsm_err("tcp: socket: %s", strerror(errno));
        return -errno;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = addr};
    char ip[INET_ADDRSTRLEN];
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 4096) < 0) {
        int e = errno;
        ompdsm_err("tcp: cannot listen on %s (%s): %s",
                   inet_ntop(AF_INET, &addr, ip, sizeof ip), how, strerror(e));
        close(fd);
        return -e;
    }
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    listen_fd = fd;
    part->addr = sa.sin_addr.s_addr;
    part->port = sa.sin_port;
    OMPDSM_TRACE(OMPDSM_TR_COMM, "tcp: listening on %s:%u (%s)",
                 inet_ntop(AF_INET, &addr, ip, sizeof ip), ntohs(sa.sin_port), how);
    return 0;
}

void comm_tcp_release(void)
{
    if (listen_fd >= 0)
        close(listen_fd);
    listen_fd = -1;
}

/* Same on every node of a job: after the key's handshake, which keeps out
 * whoever does not hold it, a hello must also agree with the cards this
 * node received (a node of the job that read other cards is refused). */
static uint64_t job_cookie(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int r = 0; r < comm_g.size; r++) {
        const struct comm_card *c = &comm_g.cards[r];
        const uint64_t v[3] = {(uint64_t)(uint32_t)c->pid, c->tcp.addr,
                               c->tcp.port};
        for (size_t i = 0; i < sizeof v; i++)
            h = (h ^ ((v[i / 8] >> (8 * (i % 8))) & 0xff)) * 0x100000001b3ull;
    }
    return h;
}

/* One socket in the handshake.  The connector (out) reads the acceptor's
 * challenge, sends its answer and its hello at once, then reads the proof
 * and the acceptor's hello.  The acceptor (in) sends the challenge, reads
 * the answer and nothing more until it is right (auth.h), sends the proof,
 * then reads the hello and answers with its own. */
struct hs {
    int fd;
    int state;    /* HS_* */
    int rank;     /* out: the peer; in: learnt from its hello */
    char peer[32]; /* in: "a.b.c.d:port" for messages */
    struct ompdsm_auth a;      /* out */
    struct ompdsm_auth_srv srv; /* in */
    size_t got;
    unsigned char buf[OMPDSM_AUTH_PROOF_LEN + TCP_FRAME_HDR];
};
enum {
    HS_CONNECTING,  /* out: connect in progress */
    HS_CHALLENGE,   /* out: reading the challenge */
    HS_PROOF,       /* out: reading the proof and the hello */
    HS_AUTH,        /* in: reading the answer to our challenge */
    HS_HELLO_WAIT,  /* in: reading the hello */
    HS_DONE,
};

/* Accepted connections waiting for their handshake, beyond one per peer:
 * a stranger's connections cannot crowd out the job's. */
enum { TCP_ACCEPT_SPARE = 64 };

static void hello_encode(unsigned char *b, uint64_t cookie)
{
    struct tcp_frame f = {.op = TCP_OP_HELLO, .id = (uint64_t)comm_g.rank,
                          .off = (uint64_t)comm_g.size, .a = cookie};
    tcp_frame_encode(&f, b);
}

/* Reads h->buf up to want bytes.  1 when they are in, 0 when more is
 * needed, -1 with why. */
static int hs_read(struct hs *h, size_t want, char *why, size_t whylen)
{
    while (h->got < want) {
        ssize_t n = recv(h->fd, h->buf + h->got, want - h->got, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0) {
            snprintf(why, whylen, "%s", n ? strerror(errno)
                                          : "closed during the handshake");
            return -1;
        }
        h->got += (size_t)n;
    }
    return 1;
}

/* Checks a hello in b.  Returns 0 (rank in *rank) or -1 with why. */
static int hello_check(const unsigned char *b, uint64_t cookie, int *rank,
                       char *why, size_t whylen)
{
    struct tcp_frame f;
    if (tcp_frame_decode(b, &f, why, whylen) < 0)
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
    *rank = (int)f.id;
    return 0;
}

static int start_connect(int r, struct hs *h)
{
    const struct comm_card *card = &comm_g.cards[r];
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = card->tcp.addr,
                             .sin_port = card->tcp.port};
    h->rank = r;
    h->fd = -1;
    if (!card->tcp.addr || !card->tcp.port) {
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
                   inet_ntoa(sa.sin_addr), ntohs(card->tcp.port), strerror(e));
        return -e;
    }
    h->state = HS_CONNECTING;
    return 0;
}

/* One step of an out connection's handshake, on poll's word that it is
 * ready.  0 (carry on, or done: h->state HS_DONE), or a negative errno
 * after printing why. */
static int out_step(struct hs *h, const unsigned char *key,
                    const unsigned char *hello, uint64_t cookie)
{
    int r = h->rank, got;
    char why[160];
    if (h->state == HS_CONNECTING) {
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e) {
            ompdsm_err("tcp: cannot connect to node %d: %s", r, strerror(e));
            return -e;
        }
        h->state = HS_CHALLENGE;
        h->got = 0;
        return 0;
    }
    if (h->state == HS_CHALLENGE) {
        if ((got = hs_read(h, OMPDSM_AUTH_CHALLENGE_LEN, why, sizeof why)) <= 0)
            goto read_failed;
        unsigned char msg[OMPDSM_AUTH_RESPONSE_LEN + TCP_FRAME_HDR];
        if (ompdsm_auth_respond(&h->a, OMPDSM_AUTH_TCP, key, h->buf, msg) < 0) {
            ompdsm_err("tcp: node %d's address answered with something else "
                       "than the job's challenge (another program listens "
                       "there?)", r);
            return -EPROTO;
        }
        memcpy(msg + OMPDSM_AUTH_RESPONSE_LEN, hello, TCP_FRAME_HDR);
        if (send(h->fd, msg, sizeof msg, MSG_DONTWAIT | MSG_NOSIGNAL) !=
            (ssize_t)sizeof msg) {
            int e = errno ? errno : EIO;
            ompdsm_err("tcp: cannot connect to node %d: %s", r, strerror(e));
            return -e;
        }
        h->state = HS_PROOF;
        h->got = 0;
        return 0;
    }
    if ((got = hs_read(h, sizeof h->buf, why, sizeof why)) <= 0)
        goto read_failed;
    if (ompdsm_auth_confirm(&h->a, key, h->buf) < 0) {
        ompdsm_err("tcp: node %d's address did not prove it holds the job's "
                   "key: not node %d of this job", r, r);
        return -EACCES;
    }
    int rank = -1;
    if (hello_check(h->buf + OMPDSM_AUTH_PROOF_LEN, cookie, &rank, why,
                    sizeof why) == 0) {
        if (rank == r) {
            h->state = HS_DONE;
            return 0;
        }
        snprintf(why, sizeof why, "node %d answered", rank);
    }
    ompdsm_err("tcp: handshake with node %d failed: %s", r, why);
    return -EPROTO;
read_failed:
    if (got == 0)
        return 0;
    ompdsm_err("tcp: handshake with node %d failed: %s", r, why);
    return -EPROTO;
}

/* One step of an accepted connection's handshake.  1: it is now the in
 * connection of h->rank; 0: more to come; -1: refused, with why. */
static int in_step(struct comm_transport *t, struct hs *h,
                   const unsigned char *key, const unsigned char *hello,
                   uint64_t cookie, char *why, size_t whylen)
{
    if (h->state == HS_AUTH) {
        int rc = ompdsm_auth_srv_step(&h->srv, h->fd, key, why, whylen);
        if (rc <= 0)
            return rc < 0 ? -1 : 0;
        h->state = HS_HELLO_WAIT;
        h->got = 0;
    }
    int got = hs_read(h, TCP_FRAME_HDR, why, whylen);
    if (got <= 0)
        return got;
    if (hello_check(h->buf, cookie, &h->rank, why, whylen) < 0)
        return -1;
    if (t->peers[h->rank].in_fd >= 0) {
        snprintf(why, whylen, "node %d connected twice", h->rank);
        return -1;
    }
    if (send(h->fd, hello, TCP_FRAME_HDR, MSG_DONTWAIT | MSG_NOSIGNAL) !=
        TCP_FRAME_HDR) {
        snprintf(why, whylen, "could not answer node %d", h->rank);
        return -1;
    }
    return 1;
}

/* A connection this node accepted and will not use: closed, and said once,
 * naming where it came from. */
static void refuse(struct hs *h, const char *why)
{
    if (why[0])
        ompdsm_warn("tcp: refused a connection from %s: %s; the job goes on",
                    h->peer, why);
    close(h->fd);
    h->fd = -1;
}

/* Connects an out connection to every peer and accepts an in connection
 * from every peer, all at once in one poll loop (no order to deadlock on);
 * each connection first passes the key's challenge-response (auth.h). */
static int handshake(struct comm_transport *t)
{
    int n = t->size, lfd = listen_fd, rc = 0, npeers = 0;
    for (int r = 0; r < n; r++)
        npeers += served(r);
    const unsigned char *key = comm_boot_key();
    if (!key) {
        ompdsm_err("tcp: no job key to authenticate the connections with");
        return -EINVAL;
    }
    uint64_t cookie = job_cookie();
    uint64_t deadline = ompdsm_now_ns() + TCP_CONNECT_TIMEOUT_S * 1000000000ull;
    unsigned char hello[TCP_FRAME_HDR];
    hello_encode(hello, cookie);
    int accmax = n + TCP_ACCEPT_SPARE;
    struct hs *out = calloc((size_t)n, sizeof *out);
    struct hs *acc = calloc((size_t)accmax, sizeof *acc); /* accepted */
    struct pollfd *pf = calloc((size_t)(n + accmax) + 1, sizeof *pf);
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
        uint64_t now = ompdsm_now_ns(), wake = deadline;
        pf[k++] = (struct pollfd){.fd = ins < npeers ? lfd : -1, .events = POLLIN};
        for (int r = 0; r < n; r++)
            pf[k++] = (struct pollfd){
                .fd = !served(r) || out[r].state == HS_DONE ? -1 : out[r].fd,
                .events = out[r].state == HS_CONNECTING ? POLLOUT : POLLIN};
        for (int i = 0; i < nacc; i++) {
            pf[k++] = (struct pollfd){.fd = acc[i].fd, .events = POLLIN};
            if (acc[i].state == HS_AUTH && acc[i].srv.deadline_ns < wake)
                wake = acc[i].srv.deadline_ns;
        }
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
        int ms = wake > now ? (int)((wake - now) / 1000000) + 1 : 0;
        if (poll(pf, (nfds_t)k, ms) < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        now = ompdsm_now_ns();
        /* accepted sockets: their answers and hellos */
        for (int i = nacc - 1; i >= 0; i--) {
            struct hs *h = &acc[i];
            int got = 0;
            if (pf[1 + n + i].revents)
                got = in_step(t, h, key, hello, cookie, why, sizeof why);
            if (!got && h->state == HS_AUTH && now >= h->srv.deadline_ns) {
                snprintf(why, sizeof why, "no answer to the job's challenge "
                         "within %d s", OMPDSM_AUTH_TIMEOUT_MS / 1000);
                got = -1;
            }
            if (got == 0)
                continue;
            if (got < 0) {
                refuse(h, why);
            } else {
                t->peers[h->rank].in_fd = h->fd;
                ins++;
            }
            acc[i] = acc[--nacc];
        }
        /* out sockets: connected, the challenge, the proof and hello */
        for (int r = 0; !rc && r < n; r++)
            if (served(r) && out[r].state != HS_DONE && pf[1 + r].revents) {
                rc = out_step(&out[r], key, hello, cookie);
                if (!rc && out[r].state == HS_DONE) {
                    t->peers[r].out_fd = out[r].fd;
                    out[r].fd = -1;
                    outs++;
                }
            }
        /* new connections */
        while (!rc && pf[0].revents) {
            struct sockaddr_in sa = {0};
            socklen_t sl = sizeof sa;
            int fd = accept4(lfd, (struct sockaddr *)&sa, &sl,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED)
                    continue;
                if (errno != EAGAIN) {
                    rc = -errno;
                    ompdsm_err("tcp: accept: %s", strerror(errno));
                }
                break;
            }
            if (nacc == accmax) {
                /* The oldest waits longest: a stranger's, most likely. */
                refuse(&acc[0], "too many connections waiting for their "
                       "handshake");
                acc[0] = acc[--nacc];
            }
            struct hs *h = &acc[nacc++];
            *h = (struct hs){.fd = fd, .rank = -1, .state = HS_AUTH};
            snprintf(h->peer, sizeof h->peer, "%s:%u", inet_ntoa(sa.sin_addr),
                     ntohs(sa.sin_port));
            if (ompdsm_auth_srv_start(&h->srv, fd, OMPDSM_AUTH_TCP, why,
                                      sizeof why) < 0) {
                refuse(h, why);
                nacc--;
            }
        }
    }
    for (int r = 0; out && r < n; r++)
        if (out[r].fd >= 0)
            close(out[r].fd);
    for (int i = 0; i < nacc; i++) {
        if (rc < 0)
            close(acc[i].fd);
        else
            refuse(&acc[i], "still unauthenticated when every node had "
                   "connected");
    }
    free(out);
    free(acc);
    free(pf);
    return rc;
}

/* A peer that stops answering (its host or the network between us gone)
 * is noticed within tcp_timeout_s: TCP_USER_TIMEOUT bounds how long sent
 * data may stay unacknowledged, and keepalive probes, which start after a
 * third of that without traffic and are bounded by the same timeout, find
 * it when nothing is being sent, as in a barrier that waits for it. */
static int liveness_setup(int fd)
{
    int one = 1, idle = tcp_timeout_s / 3, intvl = tcp_timeout_s / 6;
    int cnt = 9;
    unsigned ms = (unsigned)tcp_timeout_s * 1000u;
    idle = idle < 1 ? 1 : idle;
    intvl = intvl < 1 ? 1 : intvl;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt) ||
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms))
        return -1;
    return 0;
}

/* Out connections block (application threads wait in them) with timeouts
 * that let them look at the job's state; in connections do not block. */
static int sock_setup(struct tcp_peer *p)
{
    int one = 1;
    struct timeval tv = {0, COMM_FAILURE_POLL_MS * 1000L};
    if (setsockopt(p->out_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
        setsockopt(p->in_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
        liveness_setup(p->out_fd) || liveness_setup(p->in_fd) ||
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
                    if (!tcp_oq_flush(p, dl))
                        tcp_write_all(p->out_fd, &iov, 1, dl);
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
    comm_tcp_release();
    free(t->peers);
    free(t);
}

static int tcp_start(struct comm_transport **out)
{
    if (listen_fd < 0) {
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
        comm_tcp_release(); /* every peer is connected */
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
        tcp_epoll_set(t, t->stopfd, KEY_STOP, EPOLLIN, EPOLL_CTL_ADD);
        /* Only hang-ups of the launcher connection: its data is not ours. */
        t->bootfd = comm_boot_fd();
        struct epoll_event bev = {.events = EPOLLRDHUP,
                                  .data.u64 = (uint64_t)(int64_t)KEY_BOOT};
        if (t->bootfd >= 0 &&
            epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->bootfd, &bev) < 0)
            t->bootfd = -1;
        int e = pthread_create(&t->service, NULL, tcp_service_main, t);
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
    .peer_counts_rx = 1,
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

