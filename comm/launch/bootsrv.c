/* comm/launch/bootsrv.c - the launcher's side of comm/boot_proto.h: takes
 * the nodes' connections that its door (door.c) admitted after the job
 * key's challenge-response, checks every node's build against node 0's as
 * its HELLO comes, checks every message strictly, runs the allgather
 * rounds, and turns ABORT, protocol errors and lost connections into the
 * end of the job.  Sockets are non-blocking: a node that stops reading its
 * result must not stall the launcher. */
#include "launch.h"

#include "comm/util/base.h"

#include <assert.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void admit(void *arg, int fd, const char *peer);
static void log_line(const char *line, size_t len);

int launch_boot_listen(struct launch_job *job, const char *bind_host,
                       const char *advertise_host)
{
    struct boot_srv *s = &job->boot;
    struct addrinfo hints, *res, *ai;
    int fd = -1, err = 0;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(bind_host, "0", &hints, &res);
    if (rc) {
        fprintf(stderr, "ompdsmrun: bootstrap: cannot resolve '%s': %s\n",
                bind_host ? bind_host : "*", gai_strerror(rc));
        return -EINVAL;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
                    SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        /* The backlog only needs to absorb N nodes connecting at once. */
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, SOMAXCONN) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "ompdsmrun: bootstrap: cannot listen on %s: %s\n",
                bind_host ? bind_host : "*", strerror(err));
        return -err;
    }

    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char port[16];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
        getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, port, sizeof port,
                    NI_NUMERICSERV)) {
        err = errno ? errno : EINVAL;
        fprintf(stderr, "ompdsmrun: bootstrap: getsockname: %s\n",
                strerror(err));
        close(fd);
        return -err;
    }
    snprintf(s->addr, sizeof s->addr,
             strchr(advertise_host, ':') ? "[%s]:%s" : "%s:%s",
             advertise_host, port);
    s->door.listen_fd = fd;
    s->door.key = job->key;
    snprintf(s->door.who, sizeof s->door.who, "bootstrap");
    s->door.log = log_line;
    s->door.admit = admit;
    s->door.arg = job;
    return 0;
}

/* ---- messages about a connection ---- */

static const char *conn_name(const struct launch_job *job,
                             const struct boot_conn *c, char *buf, size_t len)
{
    if (c->rank >= 0)
        launch_node_name(job, &job->nodes[c->rank], buf, len);
    else
        snprintf(buf, len, "connection from %s", c->peer);
    return buf;
}

/* A protocol violation ends the job. */
static void proto_fail(struct launch_job *job, const struct boot_conn *c,
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* proto_fail, returning -EPROTO for the caller.  A macro so that the
 * failure is plain where it is returned: clang's analyzer does not look
 * into variadic functions, and took hdr_check for succeeding with no body
 * after a violation. */
#define proto_error(job, c, ...) (proto_fail(job, c, __VA_ARGS__), -EPROTO)

static void proto_fail(struct launch_job *job, const struct boot_conn *c,
                       const char *fmt, ...)
{
    char name[128], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    launch_fail(job, 1, "bootstrap: %s: %s; ending the job",
                conn_name(job, c, name, sizeof name), msg);
}

/* ---- send queues ---- */

struct boot_blob *launch_blob_new(uint32_t type, size_t payload)
{
    struct boot_blob *b = malloc(sizeof *b + sizeof(struct boot_hdr) +
                                 payload);
    if (!b)
        return NULL;
    b->refs = 1;
    b->len = sizeof(struct boot_hdr) + payload;
    struct boot_hdr h = {.type = type, .len = (uint32_t)payload};
    memcpy(b->data, &h, sizeof h);
    return b;
}

void launch_blob_unref(struct boot_blob *b)
{
    if (b && --b->refs == 0)
        free(b);
}

static int enqueue(struct boot_conn *c, struct boot_blob *b)
{
    struct boot_out *o = malloc(sizeof *o);
    if (!o)
        return -ENOMEM;
    b->refs++;
    *o = (struct boot_out){.blob = b};
    if (c->outq_tail)
        c->outq_tail->next = o;
    else
        c->outq = o;
    c->outq_tail = o;
    return 0;
}

/* lost: the node closed it or it broke (not us shutting down). */
static void conn_close(struct launch_job *job, struct boot_conn *c, int lost)
{
    close(c->fd);
    c->fd = -1;
    while (c->outq) {
        struct boot_out *o = c->outq;
        c->outq = o->next;
        launch_blob_unref(o->blob);
        free(o);
    }
    c->outq_tail = NULL;
    if (c->body_owned)
        free(c->body);
    c->body = NULL;
    c->body_owned = 0;
    if (c->rank >= 0) {
        struct launch_node *node = &job->nodes[c->rank];
        node->conn = -1;
        if (lost && !c->fini && !job->ending)
            launch_suspect(job, node);
    }
}

static void conn_write(struct launch_job *job, struct boot_conn *c)
{
    while (c->fd >= 0 && c->outq) {
        struct boot_out *o = c->outq;
        ssize_t w = send(c->fd, o->blob->data + o->off, o->blob->len - o->off,
                         MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            conn_close(job, c, 1); /* a reset: the node is gone */
            return;
        }
        o->off += (size_t)w;
        if (o->off == o->blob->len) {
            c->outq = o->next;
            if (!c->outq)
                c->outq_tail = NULL;
            launch_blob_unref(o->blob);
            free(o);
        }
    }
}

/* ---- allgather rounds ---- */

/* A round no one can finish would hang every node waiting in it. */
static void round_check(struct launch_job *job)
{
    struct boot_srv *s = &job->boot;
    if (!s->round_started || job->ending)
        return;
    for (int k = 0; k < job->n; k++) {
        struct launch_node *node = &job->nodes[k];
        if (!node->gathered && (node->fini || node->reaped)) {
            char name[LAUNCH_HOST_MAX + 64];
            launch_fail(job, 1, "bootstrap: %s %s without "
                        "joining allgather round %u, which node %d is "
                        "waiting in; ending the job",
                        launch_node_name(job, node, name, sizeof name),
                        node->fini ? "sent FINI" : "exited", s->round,
                        s->round_first);
            return;
        }
    }
}

void launch_boot_node_gone(struct launch_job *job, struct launch_node *node)
{
    (void)node;
    round_check(job);
}

static void round_complete(struct launch_job *job)
{
    struct boot_srv *s = &job->boot;
    struct boot_blob *b = s->result;

    /* Nothing but s->result refers to a round's result before the round
     * completes, and that reference is now ours: held to the end, it
     * keeps b alive through the writes below, each of which drops its
     * queue's reference once sent.  Stated, because clang's analyzer
     * cannot know it and took a write for freeing b. */
    assert(b->refs == 1);
    s->result = NULL;
    s->round_started = 0;
    s->contributed = 0;
    s->round++;
    for (int k = 0; k < job->n; k++) {
        struct launch_node *node = &job->nodes[k];
        node->gathered = 0;
        if (node->conn >= 0 && enqueue(&s->conns[node->conn], b) < 0) {
            launch_blob_unref(b);
            launch_fail(job, 1, "bootstrap: out of memory; ending the job");
            return;
        }
    }
    for (int k = 0; k < job->n; k++)
        if (job->nodes[k].conn >= 0)
            conn_write(job, &s->conns[job->nodes[k].conn]);
    /* The nodes behind agents: one answer per agent, passed down. */
    if (job->nlinks)
        launch_links_send(job, AG_GATHER_RESULT, b->data +
                          sizeof(struct boot_hdr), b->len -
                          sizeof(struct boot_hdr));
    if (ompdsm_trace_mask & OMPDSM_TR_BOOT)
        fprintf(stderr, "ompdsmrun: bootstrap: allgather round %u of %d "
                "nodes done; %d connections accepted here, %d cards came "
                "in %d frames from agents\n", s->round - 1, job->n,
                s->accepted, s->via_cards, s->via_frames);
    launch_blob_unref(b);
}

/* ---- receiving ---- */

/* Called once a header is in: decides whether the message may come at all,
 * before a single body byte is read, and where its body goes. */
static int hdr_check(struct launch_job *job, struct boot_conn *c)
{
    struct boot_srv *s = &job->boot;
    uint32_t type = c->hdr.type, len = c->hdr.len;

    if (len > BOOT_MSG_MAX)
        return proto_error(job, c, "message of %u bytes exceeds the limit "
                           "of %u (type %u)", len, BOOT_MSG_MAX, type);
    if (c->fini)
        return proto_error(job, c, "sent a message (type %u) after FINI",
                           type);
    if (c->rank < 0 && type != BOOT_HELLO)
        return proto_error(job, c, "sent message type %u before HELLO",
                           type);

    c->body_owned = 0;
    c->body = NULL;
    switch (type) {
    case BOOT_HELLO:
        if (c->rank >= 0)
            return proto_error(job, c, "sent HELLO twice");
        /* Magic and version first: another version's HELLO has another
         * length, and is told as such (on_hello). */
        if (len < 2 * sizeof(uint32_t) || len > sizeof(struct boot_hello))
            return proto_error(job, c, "HELLO of %u bytes (expected %zu)",
                               len, sizeof(struct boot_hello));
        break;
    case BOOT_ALLGATHER: {
        struct launch_node *node = &job->nodes[c->rank];
        if (node->gathered)
            return proto_error(job, c, "sent a second contribution to "
                               "allgather round %u before it completed",
                               s->round);
        if ((uint64_t)len * (uint64_t)job->n > (uint64_t)BOOT_MSG_MAX)
            return proto_error(job, c, "allgather contribution of %u bytes "
                               "is too large: %d nodes x %u bytes exceed "
                               "the %u-byte limit", len, job->n, len,
                               BOOT_MSG_MAX);
        if (s->round_started && len != s->round_len)
            return proto_error(job, c, "sent %u bytes to allgather round %u "
                               "but node %d sent %u (every node must send "
                               "the same length)", len, s->round,
                               s->round_first, s->round_len);
        if (!s->round_started) {
            s->result = launch_blob_new(BOOT_ALLGATHER_RESULT,
                                 (size_t)len * (size_t)job->n);
            if (!s->result)
                return proto_error(job, c, "out of memory for allgather "
                                   "round %u", s->round);
            s->round_started = 1;
            s->round_len = len;
            s->round_first = c->rank;
        }
        node->gathered = 1;
        /* Straight into the result: no copy. */
        c->body = s->result->data + sizeof(struct boot_hdr) +
                  (size_t)c->rank * len;
        round_check(job);
        return job->ending ? -EPROTO : 0;
    }
    case BOOT_ABORT:
        if (len < sizeof(struct boot_abort) ||
            len > sizeof(struct boot_abort) + LAUNCH_ABORT_MSG_MAX)
            return proto_error(job, c, "ABORT of %u bytes (expected %zu to "
                               "%zu)", len, sizeof(struct boot_abort),
                               sizeof(struct boot_abort) +
                                   LAUNCH_ABORT_MSG_MAX);
        break;
    case BOOT_FINI:
        if (len)
            return proto_error(job, c, "FINI with a %u-byte body (expected "
                               "none)", len);
        return 0;
    case BOOT_SAMPLE:
        if (len != sizeof(struct boot_sample))
            return proto_error(job, c, "SAMPLE of %u bytes (expected %zu)",
                               len, sizeof(struct boot_sample));
        break;
    case BOOT_STATE:
        if (len > BOOT_STATE_MAX)
            return proto_error(job, c, "STATE of %u bytes (at most %zu)", len,
                               (size_t)BOOT_STATE_MAX);
        break;
    default:
        return proto_error(job, c, "sent message type %u, which is not one "
                           "a node may send", type);
    }
    c->body = malloc(len + 1); /* +1: room for the ABORT message's NUL */
    if (!c->body)
        return proto_error(job, c, "out of memory");
    c->body_owned = 1;
    return 0;
}

/* "node K (pid P on host H)"'s build, for the mismatch line. */
static void build_text(const struct launch_job *job, int k, int exe,
                       char *buf, size_t len)
{
    const struct launch_node *node = &job->nodes[k];
    const struct boot_hello *h = node->build;
    char name[LAUNCH_HOST_MAX + 64];
    snprintf(buf, len, "%s runs %s (build id %.40s)",
             launch_node_name(job, node, name, sizeof name),
             exe ? h->exe_path : h->lib_path, exe ? h->exe_id : h->lib_id);
}

/* Every node must run node 0's executable and libompdsm (addresses of
 * code and data must agree): checked here, as each HELLO comes, before
 * the first allgather can complete and any node connects to another, so
 * that this line is the one the job ends with. */
static void build_check(struct launch_job *job, int k)
{
    const struct boot_hello *h0 = job->nodes[0].build;
    for (int r = k ? k : 1; h0 && r < (k ? k + 1 : job->n) && !job->ending;
         r++) {
        const struct boot_hello *h = job->nodes[r].build;
        if (!h)
            continue;
        int exe = strcmp(h->exe_id, h0->exe_id) != 0;
        if (!exe && !strcmp(h->lib_id, h0->lib_id))
            continue;
        char a[LAUNCH_HOST_MAX + 400], b[LAUNCH_HOST_MAX + 400];
        build_text(job, r, exe, a, sizeof a);
        build_text(job, 0, exe, b, sizeof b);
        launch_fail(job, 1, "%s, a different %s than %s: every node must run "
                    "the same build of the program and libompdsm; ending the "
                    "job", a, exe ? "executable" : "libompdsm", b);
    }
}

static void on_hello(struct launch_job *job, struct boot_conn *c, int idx)
{
    struct boot_hello h;
    memset(&h, 0, sizeof h);
    memcpy(&h, c->body, c->hdr.len);
    if (h.magic != BOOT_MAGIC) {
        proto_fail(job, c, "bad magic 0x%08x in HELLO (expected 0x%08x): "
                   "not an ompdsm bootstrap client", h.magic, BOOT_MAGIC);
        return;
    }
    if (h.version != BOOT_VERSION) {
        proto_fail(job, c, "bootstrap protocol version %u, but this "
                   "ompdsmrun speaks version %u (mixed installations?)",
                   h.version, BOOT_VERSION);
        return;
    }
    if (c->hdr.len != sizeof h) {
        proto_fail(job, c, "HELLO of %u bytes (expected %zu)", c->hdr.len,
                   sizeof h);
        return;
    }
    if (h.size != job->n) {
        proto_fail(job, c, "HELLO says the job has %d nodes, but it has %d",
                   h.size, job->n);
        return;
    }
    if (h.rank < 0 || h.rank >= job->n) {
        proto_fail(job, c, "HELLO claims rank %d, out of range 0..%d",
                   h.rank, job->n - 1);
        return;
    }
    struct launch_node *node = &job->nodes[h.rank];
    if (node->hello) {
        proto_fail(job, c, "HELLO claims rank %d (pid %d), which another "
                   "connection already claimed", h.rank, (int)h.pid);
        return;
    }
    c->rank = h.rank;
    node->hello = 1;
    if (idx >= 0)
        node->conn = idx;
    else
        node->vconn = 1;
    /* Ids and files end inside their fields, whatever the node sent. */
    h.exe_id[sizeof h.exe_id - 1] = h.lib_id[sizeof h.lib_id - 1] = 0;
    h.exe_path[sizeof h.exe_path - 1] = h.lib_path[sizeof h.lib_path - 1] = 0;
    node->build = malloc(sizeof h);
    if (!node->build) {
        proto_fail(job, c, "out of memory");
        return;
    }
    memcpy(node->build, &h, sizeof h);
    build_check(job, h.rank);
}

/* A node lost its peer through the network while the peer still runs
 * (BOOT_ABORT_LINK): the one line names both hosts.  Returns 0, for the
 * plain line, when the peer has ended after all. */
static int link_failed(struct launch_job *job, int by, int peer,
                       const char *msg)
{
    if (peer < 0 || peer >= job->n || by < 0 || by >= job->n || peer == by)
        return 0;
    struct launch_node *p = &job->nodes[peer];
    if (p->reaped && !p->lost)
        return 0;
    char a[LAUNCH_HOST_MAX], b[LAUNCH_HOST_MAX], pn[LAUNCH_HOST_MAX + 64];
    launch_host_name(job, &job->nodes[by], a, sizeof a);
    launch_host_name(job, p, b, sizeof b);
    launch_fail(job, 1, "the network between host %s and host %s failed: "
                "%s (%s still runs); ending the job", a, b, msg,
                launch_node_name(job, p, pn, sizeof pn));
    return 1;
}

/* The message's text, made one printable line. */
static void on_abort(struct launch_job *job, struct boot_conn *c)
{
    struct boot_abort a;
    size_t n = c->hdr.len - sizeof a;
    char *msg = (char *)c->body + sizeof a;

    memcpy(&a, c->body, sizeof a);
    msg[n] = 0;
    n = strlen(msg);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
            msg[i] = ' ';
    while (n && msg[n - 1] == ' ')
        msg[--n] = 0;
    if ((a.flags & BOOT_ABORT_EXIT) && a.status == 0) {
        launch_fail(job, 0, "node %d ended the job with status 0: %s",
                    c->rank, n ? msg : "(no message)");
        return;
    }
    if ((a.flags & BOOT_ABORT_LINK) && link_failed(job, a.by, a.peer, msg))
        return;
    /* Exit statuses are 8 bits: anything else would wrap to 0 or a lie. */
    int status = a.status > 0 && a.status < 256 ? a.status : 1;
    launch_fail(job, status, "node %d aborted the job: %s", c->rank,
                n ? msg : "(no message)");
}

static void msg_done(struct launch_job *job, struct boot_conn *c, int idx)
{
    struct boot_srv *s = &job->boot;

    switch (c->hdr.type) {
    case BOOT_HELLO:
        on_hello(job, c, idx);
        break;
    case BOOT_ALLGATHER:
        if (++s->contributed == job->n)
            round_complete(job);
        break;
    case BOOT_ABORT:
        on_abort(job, c);
        break;
    case BOOT_SAMPLE:
        launch_diag_sample(job, &job->nodes[c->rank], c->body);
        break;
    case BOOT_STATE: {
        char why[160];
        if (launch_diag_state(job, &job->nodes[c->rank], c->body, c->hdr.len,
                              why, sizeof why) < 0)
            proto_fail(job, c, "%s", why);
        break;
    }
    case BOOT_FINI:
        c->fini = 1;
        job->nodes[c->rank].fini = 1;
        round_check(job);
        break;
    }
    if (c->body_owned)
        free(c->body);
    c->body = NULL;
    c->body_owned = 0;
    c->hdr_got = c->body_got = 0;
}

int launch_boot_recv(int fd, struct boot_hdr *hdr, size_t *hdr_got,
                     unsigned char *body, size_t *body_got)
{
    for (;;) {
        int in_hdr = *hdr_got < sizeof *hdr;
        char *dst = in_hdr ? (char *)hdr + *hdr_got : (char *)body + *body_got;
        size_t want = in_hdr ? sizeof *hdr - *hdr_got : hdr->len - *body_got;
        ssize_t r = recv(fd, dst, want, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return LAUNCH_RECV_AGAIN;
        if (r <= 0)
            return LAUNCH_RECV_CLOSED;
        if (in_hdr) {
            *hdr_got += (size_t)r;
            return *hdr_got < sizeof *hdr ? LAUNCH_RECV_MORE : LAUNCH_RECV_HDR;
        }
        *body_got += (size_t)r;
        return *body_got == hdr->len ? LAUNCH_RECV_BODY : LAUNCH_RECV_MORE;
    }
}

/* Returns 1 when it stopped with data possibly left (budget spent). */
static int conn_read(struct launch_job *job, int idx)
{
    struct boot_conn *c = &job->boot.conns[idx];
    int budget;

    /* Bounded so that one chatty node cannot starve the others. */
    for (budget = 64; budget > 0 && c->fd >= 0 && !job->ending; budget--) {
        switch (launch_boot_recv(c->fd, &c->hdr, &c->hdr_got, c->body,
                                 &c->body_got)) {
        case LAUNCH_RECV_AGAIN:
            return 0;
        case LAUNCH_RECV_CLOSED:
            conn_close(job, c, 1);
            return 0;
        case LAUNCH_RECV_HDR:
            if (hdr_check(job, c) < 0)
                return 0;
            if (c->hdr.len == 0)
                msg_done(job, c, idx);
            break;
        case LAUNCH_RECV_BODY:
            msg_done(job, c, idx);
            break;
        default:
            break;
        }
    }
    return budget == 0;
}

/* The door let a node's connection in. */
static void admit(void *arg, int fd, const char *peer)
{
    struct launch_job *job = arg;
    struct boot_srv *s = &job->boot;
    size_t i;
    for (i = 0; i < s->nconns; i++)
        if (s->conns[i].fd < 0)
            break;
    if (i == s->nconns) {
        size_t cap = s->nconns ? 2 * s->nconns : (size_t)job->n + 4;
        struct boot_conn *nc = realloc(s->conns, cap * sizeof *nc);
        if (!nc) {
            close(fd);
            launch_fail(job, 1, "bootstrap: out of memory; ending the job");
            return;
        }
        for (size_t j = s->nconns; j < cap; j++)
            nc[j].fd = -1;
        s->conns = nc;
        s->nconns = cap;
    }
    struct boot_conn *c = &s->conns[i];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->rank = -1;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    s->accepted++;
}

static void log_line(const char *line, size_t len)
{
    launch_outq_put(2, line, len);
}

/* The door's events and pump; accept failing for good (EMFILE and
 * friends) ends the job: the socket would stay readable for ever, and the
 * node that is not served would hang. */
static void door_result(struct launch_job *job, int rc)
{
    if (rc < 0)
        launch_fail(job, 1, "bootstrap: accept: %s; ending the job",
                    strerror(-rc));
}

void launch_boot_drain(struct launch_job *job, struct launch_node *node)
{
    /* Its connection may still wait in the backlog, or at the door, or be
     * admitted but not yet say HELLO, while its exit is already known:
     * read those first. */
    if (node->conn < 0 && !node->hello && job->boot.door.listen_fd >= 0 &&
        !job->ending) {
        door_result(job, launch_door_pump(&job->boot.door));
        for (size_t i = 0; i < job->boot.nconns && !job->ending; i++)
            if (job->boot.conns[i].fd >= 0 && job->boot.conns[i].rank < 0)
                conn_read(job, (int)i);
    }
    while (!job->ending && node->conn >= 0 && conn_read(job, node->conn))
        ;
}

int launch_boot_expire(struct launch_job *job, double now)
{
    return job->ending ? -1 : launch_door_expire(&job->boot.door, now);
}

void launch_boot_add_fds(struct launch_job *job, struct launch_pollset *ps)
{
    struct boot_srv *s = &job->boot;
    /* Once the job is ending, nothing a node says matters any more. */
    if (job->ending)
        return;
    launch_door_add_fds(&s->door, ps);
    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i].fd >= 0)
            launch_pollset_add(ps, s->conns[i].fd,
                               POLLIN | (s->conns[i].outq ? POLLOUT : 0),
                               LFD_CONN, (int)i);
}

void launch_boot_event(struct launch_job *job, int kind, int idx,
                       short revents)
{
    if (job->ending)
        return;
    if (kind == LFD_LISTEN || kind == LFD_DOOR) {
        door_result(job, launch_door_event(&job->boot.door, kind, idx));
        return;
    }
    struct boot_conn *c = &job->boot.conns[idx];
    if (c->fd >= 0 && (revents & POLLOUT))
        conn_write(job, c);
    if (c->fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR)))
        conn_read(job, idx);
}

void launch_boot_close_all(struct launch_job *job)
{
    struct boot_srv *s = &job->boot;

    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i].fd >= 0)
            conn_close(job, &s->conns[i], 0);
    free(s->conns);
    s->conns = NULL;
    s->nconns = 0;
    launch_blob_unref(s->result);
    s->result = NULL;
    launch_door_close(&s->door);
}

void launch_boot_remote(struct launch_job *job, int rank, uint32_t type,
                        const unsigned char *body, size_t len)
{
    struct launch_node *node = &job->nodes[rank];
    struct boot_conn c;

    if (job->ending)
        return;
    if (type == AG_BOOT_CLOSED) {
        node->vconn = 0;
        if (node->hello && !node->fini)
            launch_suspect(job, node);
        return;
    }
    memset(&c, 0, sizeof c);
    c.fd = -1;
    c.rank = node->hello ? rank : -1;
    c.fini = node->fini;
    snprintf(c.peer, sizeof c.peer, "node %d through the agent of host %s",
             rank, job->hosts.h[node->host].name);
    c.hdr.type = type;
    c.hdr.len = (uint32_t)len;
    if (len > (size_t)BOOT_MSG_MAX) {
        proto_fail(job, &c, "message of %zu bytes exceeds the limit of %u "
                   "(type %u)", len, BOOT_MSG_MAX, type);
        return;
    }
    if (type == BOOT_HELLO && len == sizeof(struct boot_hello)) {
        struct boot_hello h;
        memcpy(&h, body, sizeof h);
        /* An agent vouches for the rank it relays: it must agree. */
        if (h.rank != rank) {
            proto_fail(job, &c, "HELLO claims rank %d", h.rank);
            return;
        }
    }
    if (hdr_check(job, &c) < 0)
        return;
    if (len)
        memcpy(c.body, body, len);
    msg_done(job, &c, -1);
}
