/* comm/launch/agboot.c - an agent's side of the nodes' bootstrap
 * (comm/boot_proto.h): this host's nodes connect to their agent, not to the
 * launcher, so that start-up at hundreds of hosts does not make every node
 * of the job connect to one process.  Each message a node sends goes up as
 * an AG_BOOT frame, except its allgather contributions: the agent gathers
 * those of its own nodes and of its subtree's agents and sends one
 * AG_GATHER up per round; the answer comes down once per agent
 * (AG_GATHER_RESULT) and is passed to its links and nodes.  The launcher
 * judges every message as if it had come on the node's own connection
 * (bootsrv.c), so errors read the same; this file checks only what it must
 * to know which node speaks.  Its door (door.c) admits only connections
 * that passed the job key's challenge-response; it sends its lines about
 * the others up to the launcher. */
#include "launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct ag_conn {
    int fd;                  /* -1: slot free */
    int node;                /* index in job->nodes; -1 until HELLO */
    char peer[96];
    struct boot_hdr hdr;
    size_t hdr_got;
    unsigned char *body;
    size_t body_got;
    struct boot_blob *out;   /* the round's answer being written */
    size_t out_off;
};

static struct {
    struct launch_door door; /* the socket, and who waits at it */
    struct ag_conn *c;
    size_t nc;
    unsigned char *gather;   /* AG_GATHER entries of the current round */
    size_t glen, gcap;
    int gcount, want;        /* entries so far; every node of the subtree */
} ab = {.door.listen_fd = -1};

static void fail_up(const char *msg)
{
    int32_t st = 1;
    launch_agent_send(AG_FAIL, -1, &st, sizeof st, msg, strlen(msg));
}

static void admit(void *arg, int fd, const char *peer);

/* The door's lines about refused connections go up to the launcher. */
static void log_up(const char *line, size_t len)
{
    launch_agent_send(AG_LOG, -1, line, len, NULL, 0);
}

int launch_agboot_listen(struct launch_job *job, char *err, size_t errlen)
{
    /* Our nodes' tcp transport takes the local address of their bootstrap
     * connection: it must be ours toward the launcher, as it was when they
     * connected to the launcher itself. */
    char dst[96], mine[64];
    snprintf(dst, sizeof dst, "%s", job->host_boot[0]);
    char *colon = strrchr(dst, ':');
    if (colon)
        *colon = 0;
    int rc = launch_route_source(dst, mine, sizeof mine, err, errlen);
    if (rc < 0)
        return rc;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, mine, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(fd, SOMAXCONN) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return launch_errf(err, errlen, "bootstrap: cannot listen on %s: %s",
                           mine, strerror(e));
    }
    ab.door.listen_fd = fd;
    ab.door.key = job->key;
    snprintf(ab.door.who, sizeof ab.door.who, "host %s: bootstrap",
             job->hosts.h[0].name);
    ab.door.log = log_up;
    ab.door.admit = admit;
    ab.door.arg = job;
    snprintf(job->host_boot[0], sizeof job->host_boot[0], "%s:%d", mine,
             ntohs(sa.sin_port));
    ab.want = job->n;
    for (int i = 0; i < job->nlinks; i++)
        ab.want += job->links[i].nranks;
    return 0;
}

static int gather_put(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t need = ab.glen + alen + blen;
    if (need > ab.gcap) {
        size_t cap = ab.gcap ? ab.gcap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *p = realloc(ab.gather, cap);
        if (!p)
            return -ENOMEM;
        ab.gather = p;
        ab.gcap = cap;
    }
    memcpy(ab.gather + ab.glen, a, alen);
    if (blen)
        memcpy(ab.gather + ab.glen + alen, b, blen);
    ab.glen = need;
    return 0;
}

/* The round is complete below us: one frame up. */
static void gather_check(void)
{
    if (ab.gcount < ab.want || !ab.gcount)
        return;
    launch_agent_send(AG_GATHER, -1, ab.gather, ab.glen, NULL, 0);
    ab.glen = 0;
    ab.gcount = 0;
}

int launch_agboot_gather(struct launch_job *job, struct launch_link *l,
                         const unsigned char *body, size_t len)
{
    (void)job;
    size_t off = 0;
    int n = 0;
    while (off < len) {
        int32_t rank;
        uint32_t m;
        if (len - off < sizeof rank + sizeof m)
            return -EPROTO;
        memcpy(&rank, body + off, sizeof rank);
        memcpy(&m, body + off + sizeof rank, sizeof m);
        off += sizeof rank + sizeof m;
        if (m > len - off)
            return -EPROTO;
        int ok = 0;
        for (int i = 0; i < l->nranks && !ok; i++)
            ok = l->ranks[i] == rank;
        if (!ok)
            return -EPROTO;
        off += m;
        n++;
    }
    if (gather_put(body, len, NULL, 0) < 0) {
        fail_up("agent: out of memory for the bootstrap");
        return 0;
    }
    ab.gcount += n;
    gather_check();
    return 0;
}

static void conn_close(struct launch_job *job, struct ag_conn *c)
{
    close(c->fd);
    c->fd = -1;
    free(c->body);
    c->body = NULL;
    launch_blob_unref(c->out);
    c->out = NULL;
    if (c->node >= 0) {
        uint32_t t = AG_BOOT_CLOSED;
        launch_agent_send(AG_BOOT, job->nodes[c->node].rank, &t, sizeof t,
                          NULL, 0);
        job->nodes[c->node].conn = -1;
    }
}

static void conn_write(struct launch_job *job, struct ag_conn *c)
{
    while (c->fd >= 0 && c->out) {
        ssize_t w = send(c->fd, c->out->data + c->out_off,
                         c->out->len - c->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_close(job, c);
            return;
        }
        c->out_off += (size_t)w;
        if (c->out_off == c->out->len) {
            launch_blob_unref(c->out);
            c->out = NULL;
        }
    }
}

void launch_agboot_result(struct launch_job *job, const unsigned char *body,
                          size_t len)
{
    launch_links_send(job, AG_GATHER_RESULT, body, len);
    struct boot_blob *b = launch_blob_new(BOOT_ALLGATHER_RESULT, len);
    if (!b) {
        fail_up("agent: out of memory for the bootstrap");
        return;
    }
    memcpy(b->data + sizeof(struct boot_hdr), body, len);
    for (size_t i = 0; i < ab.nc; i++) {
        struct ag_conn *c = &ab.c[i];
        if (c->fd < 0 || c->node < 0)
            continue;
        if (c->out) { /* still writing the last answer: not a node of ours */
            conn_close(job, c);
            continue;
        }
        b->refs++;
        c->out = b;
        c->out_off = 0;
        conn_write(job, c);
    }
    launch_blob_unref(b);
}

/* A whole message from c. */
static void msg_done(struct launch_job *job, struct ag_conn *c)
{
    uint32_t type = c->hdr.type;
    if (c->node < 0) {
        struct boot_hello h;
        int k = -1;
        if (type == BOOT_HELLO && c->hdr.len == sizeof h) {
            memcpy(&h, c->body, sizeof h);
            for (int i = 0; i < job->n && k < 0; i++)
                if (job->nodes[i].rank == h.rank && job->nodes[i].conn < 0)
                    k = i;
        }
        if (k < 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "host %s: bootstrap: connection from "
                     "%s sent message type %u (%u bytes) that is not the "
                     "HELLO of a node of this host",
                     job->hosts.h[0].name, c->peer, type, c->hdr.len);
            fail_up(msg);
            conn_close(job, c);
            return;
        }
        c->node = k;
        job->nodes[k].conn = (int)(c - ab.c);
    }
    int rank = job->nodes[c->node].rank;
    if (type == BOOT_ALLGATHER) {
        int32_t r = rank;
        uint32_t n = c->hdr.len;
        unsigned char head[8];
        memcpy(head, &r, sizeof r);
        memcpy(head + sizeof r, &n, sizeof n);
        if (gather_put(head, sizeof head, c->body, n) < 0) {
            fail_up("agent: out of memory for the bootstrap");
            return;
        }
        ab.gcount++;
        gather_check();
    } else {
        launch_agent_send(AG_BOOT, rank, &type, sizeof type, c->body,
                          c->hdr.len);
    }
    free(c->body);
    c->body = NULL;
    c->hdr_got = c->body_got = 0;
}

/* Returns 1 when it stopped with data possibly left. */
static int conn_read(struct launch_job *job, struct ag_conn *c)
{
    int budget;
    for (budget = 64; budget > 0 && c->fd >= 0; budget--) {
        int got = launch_boot_recv(c->fd, &c->hdr, &c->hdr_got, c->body,
                                   &c->body_got);
        if (got == LAUNCH_RECV_AGAIN)
            return 0;
        if (got == LAUNCH_RECV_CLOSED) {
            conn_close(job, c);
            return 0;
        }
        if (got == LAUNCH_RECV_BODY)
            msg_done(job, c);
        if (got == LAUNCH_RECV_HDR) {
            if (c->hdr.len > BOOT_MSG_MAX) {
                char msg[256];
                snprintf(msg, sizeof msg, "host %s: bootstrap: %s sent a "
                         "message of %u bytes (type %u), over the limit of "
                         "%u", job->hosts.h[0].name, c->peer,
                         c->hdr.len, c->hdr.type, BOOT_MSG_MAX);
                fail_up(msg);
                conn_close(job, c);
                return 0;
            }
            c->body = malloc(c->hdr.len ? c->hdr.len : 1);
            if (!c->body) {
                fail_up("agent: out of memory for the bootstrap");
                conn_close(job, c);
                return 0;
            }
            if (c->hdr.len == 0)
                msg_done(job, c);
        }
    }
    return 1;
}

/* The door let a node's connection in. */
static void admit(void *arg, int fd, const char *peer)
{
    (void)arg;
    size_t i;
    for (i = 0; i < ab.nc; i++)
        if (ab.c[i].fd < 0)
            break;
    if (i == ab.nc) {
        size_t cap = ab.nc ? 2 * ab.nc : 8;
        struct ag_conn *nc = realloc(ab.c, cap * sizeof *nc);
        if (!nc) {
            close(fd);
            fail_up("agent: out of memory for the bootstrap");
            return;
        }
        for (size_t j = ab.nc; j < cap; j++)
            nc[j].fd = -1;
        ab.c = nc;
        ab.nc = cap;
    }
    struct ag_conn *c = &ab.c[i];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->node = -1;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
}

/* The door's events and pump; accept failing for good ends the job. */
static void door_result(int rc)
{
    if (rc < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "agent: bootstrap: accept: %s",
                 strerror(-rc));
        fail_up(msg);
    }
}

int launch_agboot_expire(struct launch_job *job, double now)
{
    (void)job;
    return launch_door_expire(&ab.door, now);
}

void launch_agboot_add_fds(struct launch_job *job, struct launch_pollset *ps)
{
    (void)job;
    launch_door_add_fds(&ab.door, ps);
    for (size_t i = 0; i < ab.nc; i++)
        if (ab.c[i].fd >= 0)
            launch_pollset_add(ps, ab.c[i].fd,
                               POLLIN | (ab.c[i].out ? POLLOUT : 0), LFD_CONN,
                               (int)i);
}

void launch_agboot_event(struct launch_job *job, int kind, int idx,
                         short revents)
{
    if (kind == LFD_LISTEN || kind == LFD_DOOR) {
        door_result(launch_door_event(&ab.door, kind, idx));
        return;
    }
    struct ag_conn *c = &ab.c[idx];
    if (c->fd >= 0 && (revents & POLLOUT))
        conn_write(job, c);
    if (c->fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR)))
        conn_read(job, c);
}

void launch_agboot_drain(struct launch_job *job, int k)
{
    /* A connection still in the backlog, or accepted without its HELLO
     * read yet, may be this node's. */
    if (job->nodes[k].conn < 0 && ab.door.listen_fd >= 0) {
        door_result(launch_door_pump(&ab.door));
        for (size_t i = 0; i < ab.nc; i++)
            if (ab.c[i].fd >= 0 && ab.c[i].node < 0)
                conn_read(job, &ab.c[i]);
    }
    while (job->nodes[k].conn >= 0 && conn_read(job, &ab.c[job->nodes[k].conn]))
        ;
}

void launch_agboot_close(struct launch_job *job)
{
    (void)job;
    for (size_t i = 0; i < ab.nc; i++)
        if (ab.c[i].fd >= 0) {
            close(ab.c[i].fd);
            ab.c[i].fd = -1;
            free(ab.c[i].body);
            launch_blob_unref(ab.c[i].out);
        }
    free(ab.c);
    ab.c = NULL;
    ab.nc = 0;
    free(ab.gather);
    ab.gather = NULL;
    launch_door_close(&ab.door);
}
