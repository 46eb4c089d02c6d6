/* comm/launch/link.c - the agents a launcher or an agent starts on other
 * hosts: the rsh command that starts each agent, its AG_SETUP (encoded by
 * setup.c), and the frames that come back (relayed output, exit statuses,
 * failures) and go down (signals).  An agent that goes away
 * before all of its subtree's nodes reported their exit ends the job with
 * one line naming the host, the nodes and the cause. */
#include "launch.h"

#include "comm/util/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

const char *launch_node_name(const struct launch_job *job,
                             const struct launch_node *node, char *buf,
                             size_t len)
{
    if (!job->remote)
        snprintf(buf, len, "node %d (pid %d)", node->rank, (int)node->pid);
    else if (node->pid > 0)
        snprintf(buf, len, "node %d (pid %d on host %s)", node->rank,
                 (int)node->pid, job->hosts.h[node->host].name);
    else
        snprintf(buf, len, "node %d (on host %s)", node->rank,
                 job->hosts.h[node->host].name);
    return buf;
}

void launch_host_name(const struct launch_job *job,
                      const struct launch_node *node, char *buf, size_t len)
{
    if (job->hosts.n)
        snprintf(buf, len, "%s", job->hosts.h[node->host].name);
    else if (gethostname(buf, len) < 0)
        snprintf(buf, len, "localhost");
    buf[len - 1] = 0;
}

void launch_format_ranks(char *buf, size_t len, const int *ranks, int n)
{
    size_t at = (size_t)snprintf(buf, len, "node%s", n == 1 ? "" : "s");
    for (int k = 0; k < n && k < 4 && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", k ? ", " : " ",
                               ranks[k]);
    if (n > 4 && at < len)
        snprintf(buf + at, len - at, " and %d more", n - 4);
}

int launch_link_add(struct launch_job *job, int host, const int *sub,
                    int nsub)
{
    struct launch_link *l = &job->links[job->nlinks];
    int n = job->hosts.h[host].nnodes;

    for (int i = 0; i < nsub; i++)
        n += job->hosts.h[sub[i]].nnodes;
    memset(l, 0, sizeof *l);
    l->host = host;
    l->to_fd = l->from_fd = l->err_fd = -1;
    l->sub = malloc((size_t)(nsub ? nsub : 1) * sizeof(int));
    l->ranks = malloc((size_t)(n ? n : 1) * sizeof(int));
    l->exited = calloc((size_t)(n ? n : 1), 1);
    if (!l->sub || !l->ranks || !l->exited) {
        free(l->sub);
        free(l->ranks);
        free(l->exited);
        return -ENOMEM;
    }
    l->nsub = nsub;
    for (int i = -1; i < nsub; i++) {
        int h = i < 0 ? host : sub[i];
        if (i >= 0)
            l->sub[i] = h;
        for (int k = 0; k < job->hosts.h[h].nnodes; k++) {
            int r = job->hosts.h[h].ranks[k];
            l->ranks[l->nranks++] = r;
            /* The launcher's nodes are all ranks; an agent's only its
             * own host's. */
            if (!job->agent)
                job->nodes[r].link = job->nlinks;
        }
    }
    job->nlinks++;
    return 0;
}

/* ---- frames to the parent (agents only) ---- */

void launch_agent_send(int type, int rank, const void *a, size_t alen,
                       const void *b, size_t blen)
{
    size_t len = sizeof(struct agent_hdr) + alen + blen;
    char stackbuf[4096];
    char *buf = len <= sizeof stackbuf ? stackbuf : malloc(len);
    if (!buf)
        return; /* rather lose this frame than the job */
    struct agent_hdr h = {(uint32_t)type, rank, (uint32_t)(alen + blen), 0};
    memcpy(buf, &h, sizeof h);
    if (alen)
        memcpy(buf + sizeof h, a, alen);
    if (blen)
        memcpy(buf + sizeof h + alen, b, blen);
    /* One put, so that the frame is written whole and in order. */
    launch_outq_put(1, buf, len);
    if (buf != stackbuf)
        free(buf);
}

/* ---- starting an agent ---- */

/* 'word' for the remote shell. */
static char *shell_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = 0;
    return q;
}

/* A failure here ends the job before it runs: one line, up or out. */
static void link_fail(struct launch_job *job, int status, const char *fmt,
                      ...) __attribute__((format(printf, 3, 4)));

static void link_fail(struct launch_job *job, int status, const char *fmt,
                      ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (job->agent) {
        int32_t st = status;
        launch_agent_send(AG_FAIL, -1, &st, sizeof st, msg, strlen(msg));
    } else {
        launch_fail(job, status, "%s; ending the job", msg);
    }
}

static int nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void tx_put(struct launch_link *l, int type, const void *body,
                   size_t len)
{
    size_t need = l->tx_len + sizeof(struct agent_hdr) + len;
    if (need > l->tx_cap) {
        size_t cap = l->tx_cap ? l->tx_cap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *p = realloc(l->tx, cap);
        if (!p)
            return; /* the agent then misses a signal; its EOF still ends
                     * its nodes */
        l->tx = p;
        l->tx_cap = cap;
    }
    struct agent_hdr h = {(uint32_t)type, -1, (uint32_t)len, 0};
    memcpy(l->tx + l->tx_len, &h, sizeof h);
    memcpy(l->tx + l->tx_len + sizeof h, body, len);
    l->tx_len = need;
}

static void tx_flush(struct launch_link *l)
{
    while (l->to_fd >= 0 && l->tx_off < l->tx_len) {
        ssize_t w = write(l->to_fd, l->tx + l->tx_off, l->tx_len - l->tx_off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) {
                /* The agent is gone; its exit or EOF says why. */
                close(l->to_fd);
                l->to_fd = -1;
            }
            return;
        }
        l->tx_off += (size_t)w;
    }
    l->tx_off = l->tx_len = 0;
}

static void __attribute__((noreturn))
rsh_child(struct launch_job *job, struct launch_link *l, char **argv, int in,
          int out, int errfd)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &sa, NULL);
    /* Its own group: a Ctrl-C for us must not kill the connection that
     * carries the order to end the remote nodes. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != job->self)
        _exit(1);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
        _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[0], argv);
    dprintf(2, "cannot execute '%s' to reach host %s: %s\n", argv[0],
            job->hosts.h[l->host].name, strerror(errno));
    _exit(127);
}

static int link_start(struct launch_job *job, struct launch_link *l)
{
    char *words[64];
    int nw = 0;
    char *rsh = strdup(job->rsh), *save = NULL;
    char *cmd = NULL, *q = shell_quote(job->self_exe);
    int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
    int rc = -ENOMEM;

    if (!rsh || !q)
        goto done;
    for (char *w = strtok_r(rsh, " \t", &save); w && nw < 60;
         w = strtok_r(NULL, " \t", &save))
        words[nw++] = w;
    if (!nw) {
        link_fail(job, 2, "OMPDSM_RSH is empty: name a command that runs "
                  "a command on a host, like ssh");
        rc = -EINVAL;
        goto done;
    }
    cmd = malloc(strlen(q) + 16);
    if (!cmd)
        goto done;
    sprintf(cmd, "%s --agent", q);
    words[nw++] = job->hosts.h[l->host].name;
    words[nw++] = cmd;
    words[nw] = NULL;

    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(er, O_CLOEXEC) < 0) {
        rc = -errno;
        link_fail(job, 1, "pipe: %s", strerror(errno));
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        link_fail(job, 1, "fork for the agent of host %s: %s",
                  job->hosts.h[l->host].name, strerror(errno));
        goto done;
    }
    if (pid == 0)
        rsh_child(job, l, words, in[0], out[1], er[1]);
    l->pid = pid;
    close(in[0]);
    close(out[1]);
    close(er[1]);
    in[0] = out[1] = er[1] = -1;
    l->to_fd = in[1];
    l->from_fd = out[0];
    l->err_fd = er[0];
    in[1] = out[0] = er[0] = -1;
    nonblock(l->to_fd);
    nonblock(l->from_fd);
    nonblock(l->err_fd);

    size_t len;
    unsigned char *setup = launch_setup_encode(job, l, &len);
    if (!setup) {
        link_fail(job, 1, "out of memory");
        goto done;
    }
    tx_put(l, AG_SETUP, setup, len);
    free(setup);
    tx_flush(l);
    rc = 0;
done:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (er[i] >= 0)
            close(er[i]);
    }
    free(rsh);
    free(q);
    free(cmd);
    return rc;
}

int launch_links_start(struct launch_job *job)
{
    for (int i = 0; i < job->nlinks; i++) {
        int rc = link_start(job, &job->links[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- what comes back ---- */

static int rank_index(const struct launch_link *l, int rank)
{
    for (int i = 0; i < l->nranks; i++)
        if (l->ranks[i] == rank)
            return i;
    return -1;
}

/* Shows the lines held back until the agent proved to run. */
static void release_held(struct launch_job *job, struct launch_link *l)
{
    if (!l->held_len)
        return;
    if (job->agent)
        launch_agent_send(AG_LOG, -1, l->held, l->held_len, NULL, 0);
    else
        launch_outq_put(2, l->held, l->held_len);
    free(l->held);
    l->held = NULL;
    l->held_len = 0;
}

static void err_line(struct launch_job *job, struct launch_link *l,
                     const char *p, size_t n)
{
    size_t keep = n && p[n - 1] == '\n' ? n - 1 : n;
    if (keep >= sizeof l->last)
        keep = sizeof l->last - 1;
    if (keep) {
        memcpy(l->last, p, keep);
        l->last[keep] = 0;
    }
    if (!l->talked) {
        char *h = realloc(l->held, l->held_len + n);
        if (h) {
            memcpy(h + l->held_len, p, n);
            l->held = h;
            l->held_len += n;
        }
        return;
    }
    if (job->agent)
        launch_agent_send(AG_LOG, -1, p, n, NULL, 0);
    else
        launch_outq_put(2, p, n);
}

static void err_read(struct launch_job *job, struct launch_link *l)
{
    char buf[4096];
    for (;;) {
        ssize_t r = read(l->err_fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) {
            if (l->eline_len) { /* the last line had no newline */
                char *e = realloc(l->eline, l->eline_len + 1);
                if (e) {
                    e[l->eline_len++] = '\n';
                    err_line(job, l, e, l->eline_len);
                    l->eline = e;
                }
                l->eline_len = 0;
            }
            close(l->err_fd);
            l->err_fd = -1;
            return;
        }
        char *p = buf;
        size_t n = (size_t)r;
        while (n) {
            char *nl = memchr(p, '\n', n);
            size_t take = nl ? (size_t)(nl - p) + 1 : n;
            char *e = realloc(l->eline, l->eline_len + take);
            if (!e)
                return;
            memcpy(e + l->eline_len, p, take);
            l->eline = e;
            l->eline_len += take;
            if (nl || l->eline_len >= LAUNCH_LINE_MAX) {
                err_line(job, l, l->eline, l->eline_len);
                l->eline_len = 0;
            }
            p += take;
            n -= take;
        }
    }
}

/* The launcher's side of AG_GATHER: each entry is that node's
 * contribution to the round, judged as if it had come on its own. */
static int gather_frame(struct launch_job *job, struct launch_link *l,
                        const unsigned char *p, size_t len)
{
    size_t off = 0;
    job->boot.via_frames++;
    while (off < len && !job->ending) {
        int32_t rank;
        uint32_t n;
        if (len - off < sizeof rank + sizeof n)
            return -EPROTO;
        memcpy(&rank, p + off, sizeof rank);
        memcpy(&n, p + off + sizeof rank, sizeof n);
        off += sizeof rank + sizeof n;
        if (n > len - off || rank_index(l, rank) < 0)
            return -EPROTO;
        job->boot.via_cards++;
        launch_boot_remote(job, rank, BOOT_ALLGATHER, p + off, n);
        off += n;
    }
    return 0;
}

/* One frame from the agent of l; returns -EPROTO if it makes no sense. */
static int on_frame(struct launch_job *job, struct launch_link *l,
                    const struct agent_hdr *h, const unsigned char *body)
{
    int idx = -1;
    int32_t v = 0;

    switch (h->type) {
    case AG_STARTED:
    case AG_EXIT:
        if (h->len != sizeof v)
            return -EPROTO;
        memcpy(&v, body, sizeof v);
        /* fallthrough */
    case AG_OUT:
    case AG_ERR:
    case AG_BOOT:
        idx = rank_index(l, h->rank);
        if (idx < 0)
            return -EPROTO;
        if (h->type == AG_BOOT && h->len < sizeof(uint32_t))
            return -EPROTO;
        break;
    case AG_GATHER:
        if (job->agent) /* ours and our subtree's go up as one */
            return launch_agboot_gather(job, l, body, h->len);
        return gather_frame(job, l, body, h->len);
    case AG_FAIL:
        if (h->len < sizeof v)
            return -EPROTO;
        memcpy(&v, body, sizeof v);
        break;
    case AG_LOG:
        break;
    case AG_STDIN_ACK:
        if (h->len != 2 * sizeof(uint32_t) || rank_index(l, 0) < 0)
            return -EPROTO;
        break;
    default:
        return -EPROTO;
    }
    if (h->type == AG_EXIT) {
        if (l->exited[idx])
            return -EPROTO;
        l->exited[idx] = 1;
        l->nexited++;
    }
    if (job->agent) { /* up the tree as it came */
        launch_agent_send((int)h->type, h->rank, body, h->len, NULL, 0);
        return 0;
    }

    struct launch_node *node = idx >= 0 ? &job->nodes[h->rank] : NULL;
    switch (h->type) {
    case AG_STARTED:
        node->pid = v;
        break;
    case AG_OUT:
    case AG_ERR:
        launch_relay_data(job, node, h->type == AG_OUT ? 1 : 2,
                          (const char *)body, h->len);
        break;
    case AG_EXIT:
        if (node->reaped)
            break;
        node->reaped = 1;
        job->nreaped++;
        if (v == -1) {
            node->lost = 1;
        } else {
            node->wstatus = v;
            launch_node_exited(job, node);
        }
        break;
    case AG_FAIL: {
        size_t n = h->len - sizeof v;
        char msg[2048];
        if (n >= sizeof msg)
            n = sizeof msg - 1;
        memcpy(msg, body + sizeof v, n);
        msg[n] = 0;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)msg[i] < 0x20)
                msg[i] = ' ';
        launch_fail(job, v > 0 && v < 256 ? v : 1, "%s; ending the job",
                    msg);
        break;
    }
    case AG_LOG:
        launch_outq_put(2, (const char *)body, h->len);
        break;
    case AG_STDIN_ACK: {
        uint32_t a[2];
        memcpy(a, body, sizeof a);
        launch_relay_stdin_ack(job, a[0], a[1]);
        break;
    }
    case AG_BOOT: {
        uint32_t type;
        memcpy(&type, body, sizeof type);
        launch_boot_remote(job, h->rank, type, body + sizeof type,
                           h->len - sizeof type);
        break;
    }
    }
    return 0;
}

static void link_gone(struct launch_job *job, struct launch_link *l)
{
    if (l->gone_at <= 0)
        l->gone_at = ompdsm_now();
}

/* Skips what the remote shell printed before the agent's AGENT_SYNC (its
 * rc files may echo); sets *off past it and returns 1 once it is found.
 * The last line of the noise is kept for a failure message. */
static int find_sync(struct launch_link *l, size_t *off)
{
    static const char sync[] = AGENT_SYNC;
    size_t n = sizeof sync - 1;
    unsigned char *at = memmem(l->rx, l->rx_len, sync, n);
    size_t noise = at ? (size_t)(at - l->rx)
                      : (l->rx_len > n ? l->rx_len - n : 0);
    if (noise) {
        size_t b, e = noise;
        while (e > 0 && l->rx[e - 1] == '\n')
            e--;
        b = e;
        while (b > 0 && l->rx[b - 1] != '\n')
            b--;
        if (e > b)
            snprintf(l->last, sizeof l->last, "%.*s", (int)(e - b),
                     (const char *)l->rx + b);
    }
    if (!at) {
        /* A partial AGENT_SYNC may end the buffer: keep that much. */
        memmove(l->rx, l->rx + noise, l->rx_len - noise);
        l->rx_len -= noise;
        return 0;
    }
    l->synced = 1;
    *off = noise + n;
    return 1;
}

static void from_read(struct launch_job *job, struct launch_link *l)
{
    for (int budget = 16; budget > 0 && l->from_fd >= 0; budget--) {
        if (l->rx_cap - l->rx_len < 65536) {
            size_t cap = l->rx_cap ? l->rx_cap * 2 : 131072;
            unsigned char *p = realloc(l->rx, cap);
            if (!p)
                return;
            l->rx = p;
            l->rx_cap = cap;
        }
        ssize_t r = read(l->from_fd, l->rx + l->rx_len, l->rx_cap - l->rx_len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) {
            close(l->from_fd);
            l->from_fd = -1;
            link_gone(job, l);
            return;
        }
        l->rx_len += (size_t)r;
        size_t off = 0;
        if (!l->synced && !find_sync(l, &off))
            continue;
        while (l->rx_len - off >= sizeof(struct agent_hdr)) {
            struct agent_hdr h;
            memcpy(&h, l->rx + off, sizeof h);
            if (h.len > AGENT_MSG_MAX) {
                l->last[0] = 0;
                snprintf(l->last, sizeof l->last, "it sent a frame of %u "
                         "bytes (type %u): not an ompdsm agent?", h.len,
                         h.type);
                close(l->from_fd);
                l->from_fd = -1;
                link_gone(job, l);
                return;
            }
            if (l->rx_len - off < sizeof h + h.len)
                break;
            if (!l->talked) {
                l->talked = 1;
                release_held(job, l);
            }
            if (on_frame(job, l, &h, l->rx + off + sizeof h) < 0) {
                snprintf(l->last, sizeof l->last, "it sent a bad frame "
                         "(type %u, node %d, %u bytes)", h.type, h.rank,
                         h.len);
                close(l->from_fd);
                l->from_fd = -1;
                link_gone(job, l);
                return;
            }
            off += sizeof h + h.len;
        }
        memmove(l->rx, l->rx + off, l->rx_len - off);
        l->rx_len -= off;
    }
}

void launch_links_add_fds(struct launch_job *job, struct launch_pollset *ps)
{
    /* Our own output queues full: leave the agents' frames in their pipes
     * (which pushes back on the nodes there). */
    int full = launch_outq_full(1) || launch_outq_full(2);
    for (int i = 0; i < job->nlinks; i++) {
        struct launch_link *l = &job->links[i];
        if (l->to_fd >= 0 && l->tx_off < l->tx_len)
            launch_pollset_add(ps, l->to_fd, POLLOUT, LFD_LINK_TO, i);
        if (l->from_fd >= 0 && !full)
            launch_pollset_add(ps, l->from_fd, POLLIN, LFD_LINK_FROM, i);
        if (l->err_fd >= 0 && !full)
            launch_pollset_add(ps, l->err_fd, POLLIN, LFD_LINK_ERR, i);
    }
}

void launch_link_event(struct launch_job *job, int kind, int idx,
                       short revents)
{
    struct launch_link *l = &job->links[idx];
    switch (kind) {
    case LFD_LINK_TO:
        if (revents & (POLLERR | POLLHUP)) {
            close(l->to_fd);
            l->to_fd = -1;
        } else {
            tx_flush(l);
        }
        break;
    case LFD_LINK_FROM:
        from_read(job, l);
        break;
    case LFD_LINK_ERR:
        err_read(job, l);
        break;
    }
}

int launch_link_reaped(struct launch_job *job, pid_t pid, int wstatus)
{
    for (int i = 0; i < job->nlinks; i++) {
        struct launch_link *l = &job->links[i];
        if (l->pid == pid && !l->reaped) {
            l->reaped = 1;
            l->wstatus = wstatus;
            link_gone(job, l);
            return 1;
        }
    }
    return 0;
}

void launch_link_send(struct launch_job *job, int i, int type,
                      const void *body, size_t len)
{
    struct launch_link *l = &job->links[i];
    if (l->done || l->to_fd < 0)
        return;
    tx_put(l, type, body, len);
    tx_flush(l);
}

int launch_link_of(const struct launch_job *job, int rank)
{
    for (int i = 0; i < job->nlinks; i++)
        if (rank_index(&job->links[i], rank) >= 0)
            return i;
    return -1;
}

void launch_links_send(struct launch_job *job, int type, const void *body,
                       size_t len)
{
    for (int i = 0; i < job->nlinks; i++) {
        struct launch_link *l = &job->links[i];
        if (l->done || l->to_fd < 0)
            continue;
        tx_put(l, type, body, len);
        tx_flush(l);
    }
}

void launch_links_signal(struct launch_job *job, int sig, int group)
{
    int32_t body[2] = {sig, group};
    for (int i = 0; i < job->nlinks; i++) {
        struct launch_link *l = &job->links[i];
        if (l->done || l->to_fd < 0)
            continue;
        tx_put(l, AG_SIGNAL, body, sizeof body);
        tx_flush(l);
    }
}

static void describe_status(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

/* The agent of l went away: the nodes it had not reported are lost. */
static void link_decide(struct launch_job *job, struct launch_link *l)
{
    if (l->err_fd >= 0)
        err_read(job, l); /* its last words explain it */
    if (l->err_fd >= 0) {
        close(l->err_fd);
        l->err_fd = -1;
    }
    if (l->from_fd >= 0) {
        close(l->from_fd);
        l->from_fd = -1;
    }
    if (l->to_fd >= 0) {
        close(l->to_fd);
        l->to_fd = -1;
    }
    l->done = 1;
    if (l->nexited == l->nranks)
        return;

    const char *host = job->hosts.h[l->host].name;
    char st[96] = "still running", nodes[96];
    if (l->reaped)
        describe_status(l->wstatus, st, sizeof st);
    int *left = malloc((size_t)l->nranks * sizeof(int)), count = 0;
    if (left)
        for (int i = 0; i < l->nranks; i++)
            if (!l->exited[i])
                left[count++] = l->ranks[i];
    launch_format_ranks(nodes, sizeof nodes, left, count);
    free(left);
    const char *sep = l->last[0] ? ": " : "";
    if (!l->talked)
        link_fail(job, 1, "host %s: cannot start the agent of %s with "
                  "'%s %s ...'%s%s (rsh %s)", host, nodes, job->rsh, host,
                  sep, l->last, st);
    else
        link_fail(job, 1, "host %s: lost the agent of %s%s%s (rsh %s)",
                  host, nodes, sep, l->last, st);

    for (int i = 0; i < l->nranks; i++) {
        if (l->exited[i])
            continue;
        l->exited[i] = 1;
        l->nexited++;
        if (job->agent) {
            int32_t lost = -1;
            launch_agent_send(AG_EXIT, l->ranks[i], &lost, sizeof lost, NULL,
                              0);
        } else {
            struct launch_node *node = &job->nodes[l->ranks[i]];
            if (!node->reaped) {
                node->reaped = 1;
                node->lost = 1;
                job->nreaped++;
            }
        }
    }
}

int launch_links_check(struct launch_job *job, double now)
{
    int wait = -1;
    for (int i = 0; i < job->nlinks; i++) {
        struct launch_link *l = &job->links[i];
        if (l->done || l->gone_at <= 0)
            continue;
        /* Both ends seen, or the other end late: the exit status explains
         * more than a closed pipe, so it is waited for a little. */
        double due = l->gone_at + LAUNCH_LOST_WAIT_S;
        if ((l->reaped && l->from_fd < 0) || now >= due) {
            link_decide(job, l);
            continue;
        }
        double ms = (due - now) * 1000.0 + 1;
        if (wait < 0 || ms < wait)
            wait = (int)ms;
    }
    return wait;
}

int launch_links_done(const struct launch_job *job)
{
    for (int i = 0; i < job->nlinks; i++)
        if (!job->links[i].done)
            return 0;
    return 1;
}

void launch_links_close(struct launch_job *job, int kill_rsh)
{
    for (int i = 0; i < job->nlinks; i++) {
        struct launch_link *l = &job->links[i];
        if (l->to_fd >= 0 && (kill_rsh || l->tx_off == l->tx_len)) {
            close(l->to_fd);
            l->to_fd = -1;
        }
        if (kill_rsh && !l->reaped && l->pid > 0)
            kill(l->pid, SIGKILL);
    }
}
