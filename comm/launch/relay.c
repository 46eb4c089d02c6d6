/* comm/launch/relay.c - the nodes' stdout and stderr to ours, whole lines
 * at a time so that lines of two nodes never mix (written by outq.c), and
 * our stdin to node 0 without ever reading the terminal from the background
 * (SIGTTIN). */
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* One read of a node's pipe, and the output assembled from it. */
static char scratch[LAUNCH_LINE_MAX];
static char *obuf;
static size_t olen, ocap;

static void obuf_put(const void *p, size_t n)
{
    if (olen + n > ocap) {
        size_t cap = ocap ? ocap : 4 * LAUNCH_LINE_MAX;
        while (cap < olen + n)
            cap *= 2;
        char *b = realloc(obuf, cap);
        if (!b) {
            /* Rather lose this batch than the job. */
            fprintf(stderr, "ompdsmrun: out of memory relaying output\n");
            return;
        }
        obuf = b;
        ocap = cap;
    }
    memcpy(obuf + olen, p, n);
    olen += n;
}

static void put_tag(struct launch_job *job, struct relay_stream *s, int rank)
{
    if (job->opts.tag_output && s->at_line_start) {
        char tag[32];
        int n = snprintf(tag, sizeof tag, "[node %d] ", rank);
        obuf_put(tag, (size_t)n);
    }
}

/* Emits the partial line as a piece (too long, or the node is done). */
static void flush_pend(struct launch_job *job, struct relay_stream *s,
                       int rank)
{
    if (!s->pend_len)
        return;
    put_tag(job, s, rank);
    obuf_put(s->pend, s->pend_len);
    s->pend_len = 0;
    s->at_line_start = 0;
}

static void pend_put(struct relay_stream *s, const char *p, size_t n)
{
    if (s->pend_len + n > s->pend_cap) {
        size_t cap = s->pend_cap ? s->pend_cap : 256;
        while (cap < s->pend_len + n)
            cap *= 2;
        char *b = realloc(s->pend, cap);
        if (!b)
            return; /* the piece is lost; see obuf_put */
        s->pend = b;
        s->pend_cap = cap;
    }
    memcpy(s->pend + s->pend_len, p, n);
    s->pend_len += n;
}

static void stream_data(struct launch_job *job, struct relay_stream *s,
                        int rank, const char *p, size_t n)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        if (!nl) {
            size_t take = LAUNCH_LINE_MAX - s->pend_len;
            if (take > n)
                take = n;
            pend_put(s, p, take);
            p += take;
            n -= take;
            if (s->pend_len >= LAUNCH_LINE_MAX)
                flush_pend(job, s, rank);
            continue;
        }
        size_t len = (size_t)(nl - p) + 1;
        put_tag(job, s, rank);
        obuf_put(s->pend, s->pend_len);
        obuf_put(p, len);
        s->pend_len = 0;
        s->at_line_start = 1;
        p += len;
        n -= len;
    }
}

static void stream_close(struct launch_job *job, struct relay_stream *s,
                         int rank)
{
    flush_pend(job, s, rank);
    close(s->fd);
    s->fd = -1;
    free(s->pend);
    s->pend = NULL;
    s->pend_cap = 0;
}

/* One read per poll event keeps the nodes fair to each other. */
static void stream_read(struct launch_job *job, struct launch_node *node,
                        struct relay_stream *s)
{
    if (s->fd < 0)
        return;
    if (job->agent) {
        /* Raw bytes: the launcher makes the lines, so that a line cut
         * between two frames is still one line. */
        ssize_t r = read(s->fd, scratch, sizeof scratch);
        if (r > 0)
            launch_agent_send(s->out == 1 ? AG_OUT : AG_ERR, node->rank,
                              scratch, (size_t)r, NULL, 0);
        else if (r == 0 || (errno != EINTR && errno != EAGAIN))
            stream_close(job, s, node->rank);
        return;
    }
    olen = 0;
    ssize_t r = read(s->fd, scratch, sizeof scratch);
    if (r > 0)
        stream_data(job, s, node->rank, scratch, (size_t)r);
    else if (r == 0 || (errno != EINTR && errno != EAGAIN))
        stream_close(job, s, node->rank);
    launch_outq_put(s->out, obuf, olen);
}

void launch_relay_data(struct launch_job *job, struct launch_node *node,
                       int which, const char *p, size_t n)
{
    struct relay_stream *s = which == 1 ? &node->out : &node->err;
    olen = 0;
    stream_data(job, s, node->rank, p, n);
    launch_outq_put(s->out, obuf, olen);
}

void launch_relay_flush_all(struct launch_job *job)
{
    for (int k = 0; k < job->n; k++) {
        struct relay_stream *ss[2] = {&job->nodes[k].out, &job->nodes[k].err};
        for (int i = 0; i < 2; i++) {
            olen = 0;
            flush_pend(job, ss[i], k);
            launch_outq_put(ss[i]->out, obuf, olen);
        }
    }
}

int launch_relay_all_closed(const struct launch_job *job)
{
    for (int k = 0; k < job->n; k++)
        if (job->nodes[k].out.fd >= 0 || job->nodes[k].err.fd >= 0)
            return 0;
    return 1;
}

/* ---- stdin ---- */

/* Reading our terminal from a background process group would stop us with
 * SIGTTIN (or fail with EIO, as we ignore it): only the foreground reads. */
static int stdin_readable_now(void)
{
    if (!isatty(0))
        return 1;
    pid_t fg = tcgetpgrp(0);
    if (fg < 0)
        return 1; /* not our controlling terminal: no job control applies */
    return fg == getpgrp();
}

void launch_relay_stdin_recheck(struct launch_job *job)
{
    if (job->in_state != STDIN_DONE)
        job->in_state = stdin_readable_now() ? STDIN_ACTIVE : STDIN_PAUSED;
}

void launch_relay_stdin_stop(struct launch_job *job)
{
    if (job->node0_in >= 0)
        close(job->node0_in);
    job->node0_in = -1;
    job->in_state = STDIN_DONE;
    job->in_len = job->in_off = 0;
}

int launch_relay_init(struct launch_job *job)
{
    for (int k = 0; k < job->n; k++) {
        struct launch_node *node = &job->nodes[k];
        node->out = (struct relay_stream){.fd = -1, .out = 1,
                                          .at_line_start = 1};
        node->err = (struct relay_stream){.fd = -1, .out = 2,
                                          .at_line_start = 1};
    }
    job->node0_in = -1;
    job->inbuf = malloc(LAUNCH_LINE_MAX);
    if (!job->inbuf) {
        fprintf(stderr, "ompdsmrun: out of memory\n");
        return -ENOMEM;
    }
    job->in_state = STDIN_ACTIVE;
    launch_relay_stdin_recheck(job);
    return 0;
}

void launch_relay_add_fds(struct launch_job *job, struct launch_pollset *ps)
{
    if (job->node0_in >= 0) {
        if (job->in_off < job->in_len)
            launch_pollset_add(ps, job->node0_in, POLLOUT, LFD_NODE0_IN, 0);
        else if (job->in_state == STDIN_ACTIVE && !job->stdin_eof)
            launch_pollset_add(ps, 0, POLLIN, LFD_STDIN, 0);
    }
    /* A long queue means our reader is slow: leave the nodes' output in
     * their pipes until it catches up. */
    int out_full = launch_outq_full(1), err_full = launch_outq_full(2);
    if (launch_outq_wake_fd() >= 0)
        launch_pollset_add(ps, launch_outq_wake_fd(), POLLIN, LFD_WAKE, 0);
    for (int k = 0; k < job->n; k++) {
        struct launch_node *node = &job->nodes[k];
        if (node->out.fd >= 0 && !out_full)
            launch_pollset_add(ps, node->out.fd, POLLIN, LFD_OUT, k);
        if (node->err.fd >= 0 && !err_full)
            launch_pollset_add(ps, node->err.fd, POLLIN, LFD_ERR, k);
    }
}

static void node0_write(struct launch_job *job)
{
    while (job->node0_in >= 0 && job->in_off < job->in_len) {
        ssize_t w = write(job->node0_in, job->inbuf + job->in_off,
                          job->in_len - job->in_off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            /* EPIPE: node 0 closed its stdin; the rest is not wanted. */
            launch_relay_stdin_stop(job);
            return;
        }
        job->in_off += (size_t)w;
    }
    job->in_off = job->in_len = 0;
    if (job->stdin_eof)
        launch_relay_stdin_stop(job);
}

static void stdin_read(struct launch_job *job)
{
    ssize_t r = read(0, job->inbuf, LAUNCH_LINE_MAX);
    if (r > 0) {
        job->in_len = (size_t)r;
        job->in_off = 0;
        node0_write(job);
    } else if (r < 0 && errno == EIO) {
        /* Moved to the background between the check and the read; look
         * again at the next SIGCONT. */
        job->in_state = STDIN_PAUSED;
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        job->stdin_eof = 1;
        launch_relay_stdin_stop(job);
    }
}

void launch_relay_event(struct launch_job *job, int kind, int idx,
                        short revents)
{
    switch (kind) {
    case LFD_OUT:
        stream_read(job, &job->nodes[idx], &job->nodes[idx].out);
        break;
    case LFD_ERR:
        stream_read(job, &job->nodes[idx], &job->nodes[idx].err);
        break;
    case LFD_STDIN:
        if (job->node0_in >= 0 && job->in_state == STDIN_ACTIVE)
            stdin_read(job);
        break;
    case LFD_WAKE:
        launch_outq_woken();
        break;
    case LFD_NODE0_IN:
        if (revents & (POLLERR | POLLHUP))
            launch_relay_stdin_stop(job);
        else
            node0_write(job);
        break;
    }
}
