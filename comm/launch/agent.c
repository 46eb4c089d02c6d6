/* comm/launch/agent.c - ompdsmrun --agent, started on another host by the
 * launcher (or by the agent above it in the tree) through rsh: it reads its
 * part of the job from stdin, checks the working directory and the program
 * exist here, forks this host's nodes, starts the agents of its subtree,
 * and sends up their output, exit statuses and failures as frames on
 * stdout.  Signals come down as frames.  When its stdin closes (the
 * launcher or the connection went away) it kills its nodes and exits, so
 * that nothing outlives the job on any host. */
#include "launch.h"

#include "comm/util/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_full(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static void fail_up(struct launch_job *job, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail_up(struct launch_job *job, int status, const char *fmt, ...)
{
    char msg[1400];
    const struct launch_host *me = &job->hosts.h[0];
    char nodes[96];
    launch_format_ranks(nodes, sizeof nodes, me->ranks, me->nnodes);
    int n = snprintf(msg, sizeof msg, "host %s (%s): ", me->name, nodes);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    int32_t st = status;
    launch_agent_send(AG_FAIL, -1, &st, sizeof st, msg, strlen(msg));
}

/* The hosts after ours become links: the first of each group is started
 * by us and gets the rest of the group. */
static void add_link(void *arg, int host, const int *sub, int nsub)
{
    if (launch_link_add(arg, host, sub, nsub) < 0) {
        fail_up(arg, 1, "agent: out of memory");
        exit(1);
    }
}

static void signal_local(struct launch_job *job, int sig, int group)
{
    if (group && job->pgid > 0)
        killpg(job->pgid, sig);
    for (int k = 0; k < job->n; k++)
        if (!job->nodes[k].reaped && job->nodes[k].pid > 0)
            kill(job->nodes[k].pid, sig);
}

/* Everything goes: our parent is gone, or we were told to stop. */
static int orphaned(struct launch_job *job)
{
    signal_local(job, SIGKILL, 1);
    launch_links_close(job, 1);
    for (int k = 0; k < job->n; k++)
        if (!job->nodes[k].reaped && job->nodes[k].pid > 0)
            while (waitpid(job->nodes[k].pid, NULL, 0) < 0 && errno == EINTR)
                ;
    for (int i = 0; i < job->nlinks; i++)
        if (!job->links[i].reaped && job->links[i].pid > 0)
            while (waitpid(job->links[i].pid, NULL, 0) < 0 && errno == EINTR)
                ;
    return 1;
}

/* Frames from the parent; returns -1 when it is gone. */
static unsigned char *prx;
static size_t prx_len, prx_cap;

static int parent_read(struct launch_job *job)
{
    if (prx_cap - prx_len < 4096) {
        size_t cap = prx_cap ? prx_cap * 2 : 65536;
        unsigned char *p = realloc(prx, cap);
        if (!p)
            return -1;
        prx = p;
        prx_cap = cap;
    }
    ssize_t r = read(0, prx + prx_len, prx_cap - prx_len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (r <= 0)
        return -1;
    prx_len += (size_t)r;
    size_t off = 0;
    while (prx_len - off >= sizeof(struct agent_hdr)) {
        struct agent_hdr h;
        memcpy(&h, prx + off, sizeof h);
        if (h.type == AG_GATHER_RESULT ? h.len > AGENT_MSG_MAX
            : h.type == AG_STDIN       ? h.len > LAUNCH_LINE_MAX
                                       : h.type != AG_SIGNAL ||
                                             h.len != 2 * sizeof(int32_t))
            return -1; /* not our launcher: stop everything */
        if (prx_len - off < sizeof h + h.len)
            break;
        if (h.type == AG_STDIN) {
            launch_relay_stdin_frame(job, prx + off + sizeof h, h.len);
            off += sizeof h + h.len;
            continue;
        }
        if (h.type == AG_GATHER_RESULT) {
            launch_agboot_result(job, prx + off + sizeof h, h.len);
            off += sizeof h + h.len;
            continue;
        }
        int32_t v[2];
        memcpy(v, prx + off + sizeof h, sizeof v);
        if (v[0] > 0 && v[0] < NSIG) {
            signal_local(job, v[0], v[1]);
            launch_links_signal(job, v[0], v[1]);
        }
        off += sizeof h + h.len;
    }
    memmove(prx, prx + off, prx_len - off);
    prx_len -= off;
    return 0;
}

/* A node's exit goes up once its output has: the launcher's lines must
 * be complete before it judges the exit. */
static void report_exits(struct launch_job *job, double now, int *reported)
{
    for (int k = 0; k < job->n; k++) {
        struct launch_node *node = &job->nodes[k];
        if (!node->reaped || reported[k])
            continue;
        int open = node->out.fd >= 0 || node->err.fd >= 0;
        if (open && now < node->reaped_at + LAUNCH_DRAIN_S)
            continue;
        launch_agboot_drain(job, k);
        if (node->out.fd >= 0) {
            close(node->out.fd);
            node->out.fd = -1;
        }
        if (node->err.fd >= 0) {
            close(node->err.fd);
            node->err.fd = -1;
        }
        int32_t st = node->wstatus;
        launch_agent_send(AG_EXIT, node->rank, &st, sizeof st, NULL, 0);
        reported[k] = 1;
    }
}

static int on_signals(struct launch_job *job)
{
    struct signalfd_siginfo si;
    int quit = 0;
    while (read(job->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            launch_reap(job, NULL);
        } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
                   sig == SIGQUIT) {
            quit = 1;
        }
    }
    return quit;
}

int launch_agent_main(struct launch_job *job)
{
    struct agent_hdr h;
    char err[1024];

    job->agent = 1;
    job->self = getpid();
    job->start = ompdsm_now();
    job->boot.door.listen_fd = -1;
    job->sigfd = -1;
    job->node0_in = -1;

    /* Our frames start here, after anything the remote shell printed. */
    if (ompdsm_write_full(1, AGENT_SYNC, sizeof AGENT_SYNC - 1) < 0)
        return 1;

    /* The setup first, blocking: nothing else can happen before it. */
    if (read_full(0, &h, sizeof h) < 0 || h.type != AG_SETUP ||
        h.len > AGENT_MSG_MAX) {
        fprintf(stderr, "ompdsmrun --agent: no setup from the launcher on "
                "stdin (--agent is for ompdsmrun's own use)\n");
        return 2;
    }
    unsigned char *setup = malloc(h.len ? h.len : 1);
    if (!setup || read_full(0, setup, h.len) < 0) {
        fprintf(stderr, "ompdsmrun --agent: the launcher went away\n");
        free(setup);
        return 1;
    }
    int bad = launch_setup_decode(job, setup, h.len, err, sizeof err) < 0 ||
              !job->hosts.n;
    free(setup);
    if (bad) {
        int32_t st = 1;
        launch_agent_send(AG_FAIL, -1, &st, sizeof st, err, strlen(err));
        return 1;
    }

    /* Our subtree's agents run at our path, as we run at our parent's. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) {
        fail_up(job, 1, "readlink /proc/self/exe: %s", strerror(errno));
        return 1;
    }
    exe[n] = 0;
    job->self_exe = strdup(exe);

    if (chdir(job->cwd) < 0) {
        fail_up(job, 1, "cannot enter the working directory %s: %s (it "
                "must exist on every host)", job->cwd, strerror(errno));
        return 1;
    }
    char *found = NULL;
    int rc = launch_find_program(job->prog_path, &found, err, sizeof err);
    if (rc < 0) {
        fail_up(job, 127, "%s (the program must be at the same path on "
                "every host)", err);
        return 1;
    }
    free(found);

    struct launch_host *me = &job->hosts.h[0];
    job->n = me->nnodes;
    job->nodes = calloc((size_t)(job->n ? job->n : 1), sizeof *job->nodes);
    job->links = calloc((size_t)job->hosts.n, sizeof *job->links);
    /* From here on every return goes through out, to free reported. */
    int ret = 1;
    int *reported = calloc((size_t)(job->n ? job->n : 1), sizeof(int));
    if (!job->nodes || !job->links || !reported) {
        fail_up(job, 1, "agent: out of memory");
        goto out;
    }
    for (int k = 0; k < job->n; k++) {
        job->nodes[k].rank = me->ranks[k];
        job->nodes[k].local_rank = k;
        job->nodes[k].link = -1;
        job->nodes[k].conn = -1;
    }
    int *sub = malloc((size_t)job->hosts.n * sizeof(int));
    if (!sub) {
        fail_up(job, 1, "agent: out of memory");
        goto out;
    }
    for (int i = 1; i < job->hosts.n; i++)
        sub[i - 1] = i;
    launch_tree_split(sub, job->hosts.n - 1, job->fanout, add_link, job);
    free(sub);

    if (launch_agboot_listen(job, err, sizeof err) < 0) {
        fail_up(job, 1, "%s", err);
        goto out;
    }
    if (launch_setup_signals(job) < 0 || launch_raise_nofile(job) < 0 ||
        launch_cpus(job) < 0) {
        fail_up(job, 1, "agent: cannot set up (see its messages above)");
        goto out;
    }
    launch_decide_bind(job, job->n);
    job->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->devnull < 0 || launch_relay_init(job) < 0) {
        fail_up(job, 1, "agent: /dev/null: %s", strerror(errno));
        goto out;
    }
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);

    int status;
    if (launch_spawn(job, &status) < 0) {
        fail_up(job, status, "%s", job->spawn_err);
        goto out;
    }
    if (launch_links_start(job) < 0) {
        orphaned(job);
        goto out;
    }
    launch_outq_start();

    struct launch_pollset ps = {0};
    int parent_gone = 0;
    for (;;) {
        double now = ompdsm_now();
        report_exits(job, now, reported);
        int wait = launch_links_check(job, now);
        int bw = launch_agboot_expire(job, now);
        if (bw >= 0 && (wait < 0 || bw < wait))
            wait = bw;
        int all = 1;
        for (int k = 0; k < job->n; k++) {
            if (!reported[k]) {
                all = 0;
                if (job->nodes[k].reaped) {
                    int w = (int)((job->nodes[k].reaped_at +
                                   LAUNCH_DRAIN_S - now) * 1000.0) + 1;
                    if (w < 0)
                        w = 0;
                    if (wait < 0 || w < wait)
                        wait = w;
                }
            }
        }
        if (all && launch_links_done(job))
            break;

        ps.n = 0;
        launch_pollset_add(&ps, job->sigfd, POLLIN, LFD_SIGNAL, 0);
        launch_pollset_add(&ps, 0, POLLIN, LFD_PARENT, 0);
        launch_relay_add_fds(job, &ps);
        launch_links_add_fds(job, &ps);
        launch_agboot_add_fds(job, &ps);
        if (poll(ps.pfd, ps.n, wait) < 0) {
            if (errno == EINTR)
                continue;
            parent_gone = 1;
            break;
        }
        for (size_t i = 0; i < ps.n && !parent_gone; i++) {
            short re = ps.pfd[i].revents;
            if (!re)
                continue;
            int kind = ps.ref[i].kind, idx = ps.ref[i].idx;
            switch (kind) {
            case LFD_SIGNAL:
                if (on_signals(job))
                    parent_gone = 1;
                break;
            case LFD_PARENT:
                if (parent_read(job) < 0)
                    parent_gone = 1;
                break;
            case LFD_LINK_TO:
            case LFD_LINK_FROM:
            case LFD_LINK_ERR:
                launch_link_event(job, kind, idx, re);
                break;
            case LFD_LISTEN:
            case LFD_DOOR:
            case LFD_CONN:
                launch_agboot_event(job, kind, idx, re);
                break;
            default:
                launch_relay_event(job, kind, idx, re);
                break;
            }
        }
        if (parent_gone)
            break;
    }
    free(ps.pfd);
    free(ps.ref);
    launch_agboot_close(job);
    if (parent_gone) {
        orphaned(job);
        goto out;
    }
    /* The last exit statuses must reach the launcher, however slowly it
     * reads; if it is gone, the writes fail at once. */
    launch_outq_finish(job, 0);
    ret = 0;
out:
    free(reported);
    return ret;
}
