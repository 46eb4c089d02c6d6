/* comm/launch/door.c - the door of a bootstrap socket, the launcher's
 * (bootsrv.c) and each agent's (agboot.c): it accepts connections and
 * admits to its server only those that pass the job key's challenge-
 * response (comm/util/auth.h), reading nothing else from them before.  A
 * connection whose answer is wrong, that closes after part of one, or that
 * waits longer than OMPDSM_AUTH_TIMEOUT_MS is closed with one line naming
 * its address, and the job goes on; beyond LAUNCH_DOOR_MAX waiting at
 * once, the one that waited longest goes, so that a stranger's flood
 * cannot keep the nodes out.  Waiting connections keep their slot until
 * they leave (a free slot has fd -1), so the poll set's indices stay
 * valid through an iteration. */
#include "launch.h"

#include "comm/util/base.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* w closes: said once (unless it sent nothing), then its slot is free. */
static void refuse(struct launch_door *d, struct launch_door_wait *w,
                   const char *why)
{
    if (why[0]) {
        char line[512];
        int n = snprintf(line, sizeof line, "ompdsmrun: %s: refused a "
                         "connection from %s: %s; the job goes on\n", d->who,
                         w->peer, why);
        d->log(line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
    }
    close(w->fd);
    w->fd = -1;
    d->waiting--;
}

/* The connection that has waited longest, to make room. */
static void refuse_oldest(struct launch_door *d)
{
    struct launch_door_wait *old = NULL;
    for (size_t i = 0; i < d->nw; i++)
        if (d->w[i].fd >= 0 &&
            (!old || d->w[i].auth.deadline_ns < old->auth.deadline_ns))
            old = &d->w[i];
    if (old)
        refuse(d, old, "too many connections waiting to authenticate");
}

static int door_accept(struct launch_door *d)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(d->listen_fd, (struct sockaddr *)&ss, &sl,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        }
        /* Allgather rounds are latency-bound request/answer exchanges. */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (d->waiting >= LAUNCH_DOOR_MAX)
            refuse_oldest(d);
        size_t i;
        for (i = 0; i < d->nw && d->w[i].fd >= 0; i++)
            ;
        if (i == d->nw) {
            size_t cap = d->nw ? 2 * d->nw : 8;
            struct launch_door_wait *nw = realloc(d->w, cap * sizeof *nw);
            if (!nw) {
                close(fd);
                return -ENOMEM;
            }
            for (size_t j = d->nw; j < cap; j++)
                nw[j].fd = -1;
            d->w = nw;
            d->nw = cap;
        }
        struct launch_door_wait *w = &d->w[i];
        char host[64], port[16], why[160];
        w->fd = fd;
        d->waiting++;
        if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port,
                        sizeof port, NI_NUMERICHOST | NI_NUMERICSERV))
            snprintf(w->peer, sizeof w->peer, "(unknown address)");
        else
            snprintf(w->peer, sizeof w->peer, "%s:%s", host, port);
        if (ompdsm_auth_srv_start(&w->auth, fd, OMPDSM_AUTH_BOOT, why,
                                  sizeof why) < 0)
            refuse(d, w, why);
    }
}

/* Reads what w sent of its answer; admits it once it is right. */
static void step(struct launch_door *d, struct launch_door_wait *w)
{
    char why[256];
    int rc = ompdsm_auth_srv_step(&w->auth, w->fd, d->key, why, sizeof why);
    if (rc < 0) {
        refuse(d, w, why);
    } else if (rc > 0) {
        int fd = w->fd;
        w->fd = -1;
        d->waiting--;
        d->admit(d->arg, fd, w->peer);
    }
}

int launch_door_event(struct launch_door *d, int kind, int idx)
{
    if (kind == LFD_LISTEN)
        return door_accept(d);
    if (d->w[idx].fd >= 0)
        step(d, &d->w[idx]);
    return 0;
}

int launch_door_pump(struct launch_door *d)
{
    int rc = d->listen_fd >= 0 ? door_accept(d) : 0;
    for (size_t i = 0; i < d->nw; i++)
        if (d->w[i].fd >= 0)
            step(d, &d->w[i]);
    return rc;
}

void launch_door_add_fds(struct launch_door *d, struct launch_pollset *ps)
{
    if (d->listen_fd >= 0)
        launch_pollset_add(ps, d->listen_fd, POLLIN, LFD_LISTEN, 0);
    for (size_t i = 0; i < d->nw; i++)
        if (d->w[i].fd >= 0)
            launch_pollset_add(ps, d->w[i].fd, POLLIN, LFD_DOOR, (int)i);
}

int launch_door_expire(struct launch_door *d, double now)
{
    uint64_t t = (uint64_t)(now * 1e9), next = 0;
    for (size_t i = 0; d->waiting && i < d->nw; i++) {
        char why[96];
        if (d->w[i].fd >= 0 &&
            ompdsm_auth_srv_expired(&d->w[i].auth, t, &next, why, sizeof why))
            refuse(d, &d->w[i], why);
    }
    return next ? (int)((next - t) / 1000000) + 1 : -1;
}

void launch_door_close(struct launch_door *d)
{
    for (size_t i = 0; i < d->nw; i++)
        if (d->w[i].fd >= 0)
            close(d->w[i].fd);
    free(d->w);
    d->w = NULL;
    d->nw = 0;
    d->waiting = 0;
    if (d->listen_fd >= 0)
        close(d->listen_fd);
    d->listen_fd = -1;
}
