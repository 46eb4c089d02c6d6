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
    if (!n) /* (obuf may still be NULL: no pointer arithmetic on it) */
        return;
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

/* Agent: tells the launcher how much of node 0's stdin was written, or
 * that no more is wanted. */
static void stdin_ack(uint32_t bytes, uint32_t closed)
{
    uint32_t a[2] = {bytes, closed};
    launch_agent_send(AG_STDIN_ACK, -1, a, sizeof a, NULL, 0);
}

void launch_relay_stdin_stop(struct launch_job *job)
{
    if (job->agent && job->node0_in >= 0)
        stdin_ack(0, 1);
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
    /* Node 0 behind an agent: our stdin goes down to it in frames. */
    job->stdin_link = -1;
    if (!job->agent && job->n > 0 && job->nodes[0].link >= 0)
        job->stdin_link = job->nodes[0].link;
    job->stdin_inflight = 0;
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
    if (job->stdin_link >= 0) {
        /* As for a local node 0: no more than one buffer not yet in its
         * pipe, so a node 0 that does not read stops us reading. */
        if (job->in_state == STDIN_ACTIVE && !job->stdin_eof &&
            job->stdin_inflight < LAUNCH_LINE_MAX)
            launch_pollset_add(ps, 0, POLLIN, LFD_STDIN, 0);
    } else if (job->node0_in >= 0) {
        if (job->in_off < job->in_len)
            launch_pollset_add(ps, job->node0_in, POLLOUT, LFD_NODE0_IN, 0);
        else if (!job->agent && job->in_state == STDIN_ACTIVE &&
                 !job->stdin_eof) /* an agent's stdin is its parent */
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
    size_t done = 0;
    while (job->node0_in >= 0 && job->in_off < job->in_len) {
        ssize_t w = write(job->node0_in, job->inbuf + job->in_off,
                          job->in_len - job->in_off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            /* EPIPE: node 0 closed its stdin; the rest is not wanted. */
            launch_relay_stdin_stop(job);
            return;
        }
        job->in_off += (size_t)w;
        done += (size_t)w;
    }
    if (job->agent && done)
        stdin_ack((uint32_t)done, 0);
    if (job->in_off < job->in_len)
        return;
    job->in_off = job->in_len = 0;
    if (job->stdin_eof)
        launch_relay_stdin_stop(job);
}

void launch_relay_stdin_frame(struct launch_job *job, const unsigned char *p,
                              size_t n)
{
    int own = 0;
    for (int k = 0; k < job->n; k++)
        own |= job->nodes[k].rank == 0;
    if (!own) {
        int i = launch_link_of(job, 0);
        if (i >= 0)
            launch_link_send(job, i, AG_STDIN, p, n);
        return;
    }
    if (job->node0_in < 0) { /* closed: tell the launcher to stop */
        if (n)
            stdin_ack(0, 1);
        return;
    }
    if (!n) {
        job->stdin_eof = 1;
        if (job->in_off == job->in_len)
            launch_relay_stdin_stop(job);
        return;
    }
    if (job->in_off) {
        memmove(job->inbuf, job->inbuf + job->in_off,
                job->in_len - job->in_off);
        job->in_len -= job->in_off;
        job->in_off = 0;
    }
    /* The launcher's window keeps this within one buffer. */
    if (n > LAUNCH_LINE_MAX - job->in_len)
        n = LAUNCH_LINE_MAX - job->in_len;
    memcpy(job->inbuf + job->in_len, p, n);
    job->in_len += n;
    node0_write(job);
}

void launch_relay_stdin_ack(struct launch_job *job, uint32_t bytes,
                            uint32_t closed)
{
    job->stdin_inflight -= bytes < job->stdin_inflight ? bytes
                                                       : job->stdin_inflight;
    if (closed)
        launch_relay_stdin_stop(job);
}

static void remote_stdin_read(struct launch_job *job)
{
    ssize_t r = read(0, job->inbuf, LAUNCH_LINE_MAX - job->stdin_inflight);
    if (r > 0) {
        job->stdin_inflight += (size_t)r;
        launch_link_send(job, job->stdin_link, AG_STDIN, job->inbuf,
                         (size_t)r);
    } else if (r < 0 && errno == EIO) {
        job->in_state = STDIN_PAUSED;
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        job->stdin_eof = 1;
        launch_link_send(job, job->stdin_link, AG_STDIN, job->inbuf, 0);
        launch_relay_stdin_stop(job);
    }
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
        if (job->stdin_link >= 0 && job->in_state == STDIN_ACTIVE)
            remote_stdin_read(job);
        else if (job->node0_in >= 0 && job->in_state == STDIN_ACTIVE)
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
