/* comm/launch/ompdsmrun.c - the launcher's main: starts the job, runs the
 * event loop (signals, node exits, stdio, bootstrap) without ever
 * busy-waiting, and ends the whole job at the first abnormal end of any
 * node, within the grace period, leaving nothing running. */
#include "launch.h"

#include "comm/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include("ompdsm_config.h")
#include "ompdsm_config.h"
#endif
#endif
#ifndef OMPDSM_VERSION
#define OMPDSM_VERSION "unknown"
#endif

static struct launch_job the_job;

/* Signals the launcher handles in its loop; all others keep their default. */
static const int handled_signals[] = {
    SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT,
    SIGUSR1, SIGUSR2,
};

int launch_pollset_add(struct launch_pollset *ps, int fd, short events,
                       int kind, int idx)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 64;
        struct pollfd *p = realloc(ps->pfd, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        ps->pfd = p;
        void *r = realloc(ps->ref, cap * sizeof *ps->ref);
        if (!r)
            return -ENOMEM;
        ps->ref = r;
        ps->cap = cap;
    }
    ps->pfd[ps->n] = (struct pollfd){.fd = fd, .events = events};
    ps->ref[ps->n].kind = kind;
    ps->ref[ps->n].idx = idx;
    ps->n++;
    return 0;
}

/* Sends sig to every live node, and with group to their process group too
 * (which reaches their children; the node itself may have left it). */
static void signal_nodes(struct launch_job *job, int sig, int group)
{
    if (group && job->pgid > 0)
        killpg(job->pgid, sig);
    for (int k = 0; k < job->n; k++)
        if (!job->nodes[k].reaped && job->nodes[k].pid > 0)
            kill(job->nodes[k].pid, sig);
}

void launch_fail(struct launch_job *job, int status, const char *fmt, ...)
{
    if (job->ending)
        return;
    char line[4096];
    int n = snprintf(line, sizeof line, "ompdsmrun: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    /* Queued like a node's line, so the two cannot mix. */
    launch_outq_put(2, line, (size_t)n);

    job->ending = 1;
    job->status = status;
    job->kill_at = ompdsm_now() + LAUNCH_GRACE_S;
    /* SIGCONT after SIGTERM: a stopped node must be able to act on it. */
    signal_nodes(job, SIGTERM, 1);
    signal_nodes(job, SIGCONT, 1);
}

void launch_suspect(struct launch_job *job, struct launch_node *node)
{
    if (node->suspect_at > 0)
        return;
    node->suspect_at = ompdsm_now();
    job->nsuspects++;
}

/* A node that said HELLO must say FINI before it goes; a lost connection
 * waits briefly for the exit status, which explains more. */
static void check_suspects(struct launch_job *job, double now)
{
    for (int k = 0; k < job->n && job->nsuspects && !job->ending; k++) {
        struct launch_node *node = &job->nodes[k];
        if (node->suspect_at <= 0)
            continue;
        if (node->fini) { /* it was still in the socket when it exited */
            node->suspect_at = 0;
            job->nsuspects--;
            launch_boot_node_gone(job, node);
            continue;
        }
        int late = now >= node->suspect_at + LAUNCH_LOST_WAIT_S;
        if (node->reaped && (node->conn < 0 || late))
            launch_fail(job, 1, "node %d (pid %d) exited with status 0 "
                        "without sending FINI on its bootstrap connection; "
                        "ending the job", k, (int)node->pid);
        else if (late)
            launch_fail(job, 1, "node %d (pid %d) closed its bootstrap "
                        "connection without FINI; ending the job", k,
                        (int)node->pid);
    }
}

static void judge_exit(struct launch_job *job, struct launch_node *node)
{
    int st = node->wstatus;

    launch_boot_drain(job, node);
    if (job->ending)
        return;
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        launch_fail(job, 128 + sig, "node %d (pid %d) was killed by signal "
                    "%d (%s%s); ending the job", node->rank, (int)node->pid,
                    sig, strsignal(sig), WCOREDUMP(st) ? ", core dumped" : "");
    } else if (WEXITSTATUS(st)) {
        launch_fail(job, WEXITSTATUS(st), "node %d (pid %d) exited with "
                    "status %d; ending the job", node->rank, (int)node->pid,
                    WEXITSTATUS(st));
    } else if (node->hello && !node->fini) {
        launch_suspect(job, node);
    } else {
        launch_boot_node_gone(job, node);
    }
}

static void reap(struct launch_job *job)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        for (int k = 0; k < job->n; k++) {
            struct launch_node *node = &job->nodes[k];
            if (node->pid != pid || node->reaped)
                continue;
            node->reaped = 1;
            node->wstatus = st;
            job->nreaped++;
            if (k == 0)
                launch_relay_stdin_stop(job);
            judge_exit(job, node);
            break;
        }
    }
}

static void on_signal(struct launch_job *job, int sig)
{
    switch (sig) {
    case SIGCHLD:
        reap(job);
        break;
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
        if (!job->ending) {
            launch_fail(job, 128 + sig, "received SIG%s; ending the job",
                        sigabbrev_np(sig));
        } else if (!job->killed) {
            /* A second Ctrl-C: the user will not wait for the grace. */
            signal_nodes(job, SIGKILL, 1);
            job->killed = 1;
        }
        break;
    case SIGTSTP:
        if (job->ending)
            break;
        /* Nodes first: once we are stopped we cannot stop them. */
        signal_nodes(job, SIGSTOP, 1);
        kill(getpid(), SIGSTOP);
        break;
    case SIGCONT:
        signal_nodes(job, SIGCONT, 1);
        launch_relay_stdin_recheck(job);
        break;
    case SIGUSR1:
    case SIGUSR2:
        signal_nodes(job, sig, 0);
        break;
    }
}

static void read_signals(struct launch_job *job)
{
    struct signalfd_siginfo si;
    for (;;) {
        ssize_t r = read(job->sigfd, &si, sizeof si);
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof si)
            return;
        on_signal(job, (int)si.ssi_signo);
    }
}

static int setup_signals(struct launch_job *job)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(handled_signals); i++) {
        int sig = handled_signals[i];
        struct sigaction old;
        /* Started ignoring a terminating signal (nohup, a script's "&"):
         * keep ignoring it, as the user asked.  A blocked signal would
         * reach the signalfd even though ignored. */
        if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
             sig == SIGQUIT) &&
            sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaddset(&set, sig);
    }
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
        fprintf(stderr, "ompdsmrun: sigprocmask: %s\n", strerror(errno));
        return -errno;
    }
    /* A node gone is reported by its exit status, not by a SIGPIPE on us;
     * SIGTTIN is avoided (see relay.c) and must never stop us. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    job->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (job->sigfd < 0) {
        fprintf(stderr, "ompdsmrun: signalfd: %s\n", strerror(errno));
        return -errno;
    }
    return 0;
}

/* Pipes and sockets for N nodes can exceed the usual soft limit of 1024:
 * raise it, or say at once that N is too many for the hard limit. */
static int raise_nofile(struct launch_job *job)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        job->nofile_orig = RLIM_INFINITY;
        return 0;
    }
    job->nofile_orig = rl.rlim_cur;
    /* stdout, stderr and bootstrap socket per node, plus a few. */
    rlim_t need = (rlim_t)job->n * 3 + 32;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        fprintf(stderr, "ompdsmrun: -np %d needs about %llu file descriptors "
                "but the limit is %llu (see ulimit -n)\n", job->n,
                (unsigned long long)need, (unsigned long long)rl.rlim_max);
        return -EMFILE;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
        fprintf(stderr, "ompdsmrun: setrlimit(RLIMIT_NOFILE): %s\n",
                strerror(errno));
        return -errno;
    }
    return 0;
}

/* Descriptors 0-2 must exist, or a pipe we create could land there and be
 * clobbered by the child's dup2. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
            if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) < 0)
                _exit(1);
}

static int ms_until(double deadline, double now)
{
    double ms = (deadline - now) * 1000.0;
    /* +1 rounds up: waking a little early would just poll again. */
    return ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms + 1;
}

/* Returns when every node is reaped and its output drained. */
static void run(struct launch_job *job)
{
    struct launch_pollset ps = {0};

    for (;;) {
        double now = ompdsm_now();
        int wait = -1;

        if (!job->ending && job->opts.timeout > 0) {
            double end = job->start + job->opts.timeout;
            if (now >= end)
                launch_fail(job, 124, "the job reached its time limit "
                            "(--timeout %g s); ending the job",
                            job->opts.timeout);
            else
                wait = ms_until(end, now);
        }
        check_suspects(job, now);
        for (int k = 0; k < job->n && job->nsuspects && !job->ending; k++)
            if (job->nodes[k].suspect_at > 0) {
                int w = ms_until(job->nodes[k].suspect_at +
                                 LAUNCH_LOST_WAIT_S, now);
                if (wait < 0 || w < wait)
                    wait = w;
            }
        if (job->ending && !job->killed) {
            if (now >= job->kill_at) {
                signal_nodes(job, SIGKILL, 1);
                job->killed = 1;
            } else {
                int w = ms_until(job->kill_at, now);
                if (wait < 0 || w < wait)
                    wait = w;
            }
        }
        if (job->nreaped == job->n) {
            if (job->drain_at <= 0) {
                job->drain_at = now + (job->ending ? LAUNCH_DRAIN_FAILED_S
                                                   : LAUNCH_DRAIN_S);
                /* Whatever the nodes left behind in their group goes too. */
                if (job->ending && job->pgid > 0)
                    killpg(job->pgid, SIGKILL);
            }
            if (launch_relay_all_closed(job) || now >= job->drain_at)
                break;
            int w = ms_until(job->drain_at, now);
            if (wait < 0 || w < wait)
                wait = w;
        }

        ps.n = 0;
        launch_pollset_add(&ps, job->sigfd, POLLIN, LFD_SIGNAL, 0);
        launch_boot_add_fds(job, &ps);
        launch_relay_add_fds(job, &ps);

        int r = poll(ps.pfd, ps.n, wait);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            launch_fail(job, 1, "poll: %s; ending the job", strerror(errno));
            /* Without poll, fall back to plain blocking reaping. */
            signal_nodes(job, SIGKILL, 1);
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
            break;
        }
        /* Signals first, so exits are known before the lost connections
         * and closed pipes they cause. */
        for (size_t i = 0; i < ps.n; i++) {
            short re = ps.pfd[i].revents;
            if (!re)
                continue;
            int kind = ps.ref[i].kind, idx = ps.ref[i].idx;
            switch (kind) {
            case LFD_SIGNAL:
                read_signals(job);
                break;
            case LFD_LISTEN:
            case LFD_CONN:
                launch_boot_event(job, kind, idx, re);
                break;
            default:
                launch_relay_event(job, kind, idx, re);
                break;
            }
        }
    }
    free(ps.pfd);
    free(ps.ref);
}

int main(int argc, char **argv)
{
    struct launch_job *job = &the_job;
    char err[512];
    int rc, status;

    ensure_std_fds();
    if (launch_parse_opts(argc, argv, &job->opts, err, sizeof err)) {
        fprintf(stderr, "ompdsmrun: %s\n", err);
        return 2;
    }
    if (job->opts.action == LAUNCH_HELP) {
        fputs(launch_usage, stdout);
        return 0;
    }
    if (job->opts.action == LAUNCH_VERSION) {
        printf("ompdsmrun (ompdsm) %s\n", OMPDSM_VERSION);
        return 0;
    }
    if (launch_find_program(job->opts.prog_argv[0], &job->prog_path, err,
                            sizeof err)) {
        fprintf(stderr, "ompdsmrun: %s\n", err);
        return 2;
    }

    if (launch_load_hosts(&job->opts, &job->hosts, err, sizeof err) < 0) {
        fprintf(stderr, "ompdsmrun: %s\n", err);
        return 2;
    }
    if (job->hosts.n) {
        if (launch_map_nodes(&job->hosts, &job->opts, &job->opts.np,
                             &job->node_host, err, sizeof err) < 0) {
            fprintf(stderr, "ompdsmrun: %s\n", err);
            return 2;
        }
        fprintf(stderr, "ompdsmrun: running on other hosts is not "
                "implemented yet\n");
        return 2;
    }

    job->n = job->opts.np;
    job->self = getpid();
    job->start = ompdsm_now();
    job->boot.listen_fd = -1;
    job->sigfd = -1;
    if (setup_signals(job) < 0)
        return 1;
    if (raise_nofile(job) < 0)
        return 1;
    if (launch_cpus(job) < 0)
        return 1;
    if (job->opts.bind == LAUNCH_BIND_AUTO)
        job->bind = job->n <= job->ncpus;
    else
        job->bind = job->opts.bind == LAUNCH_BIND_CORE;
    if (job->ncpus == 0)
        job->bind = 0;

    job->nodes = calloc((size_t)job->n, sizeof *job->nodes);
    if (!job->nodes) {
        fprintf(stderr, "ompdsmrun: out of memory for %d nodes\n", job->n);
        return 1;
    }
    for (int k = 0; k < job->n; k++) {
        job->nodes[k].rank = k;
        job->nodes[k].conn = -1;
    }
    char host[64];
    if (gethostname(host, sizeof host) < 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    snprintf(job->jobid, sizeof job->jobid, "%s-%d", host, (int)job->self);

    job->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->devnull < 0) {
        fprintf(stderr, "ompdsmrun: /dev/null: %s\n", strerror(errno));
        return 1;
    }
    /* Local run: loopback only.  A multi-host mode binds a routable
     * address (or the wildcard) and advertises the host's name. */
    if (launch_boot_listen(job, "127.0.0.1", "127.0.0.1") < 0)
        return 1;
    if (launch_relay_init(job) < 0)
        return 1;
    rc = launch_spawn(job, &status);
    if (rc < 0)
        return status;
    launch_outq_start();

    run(job);

    launch_relay_flush_all(job);
    launch_boot_close_all(job);
    int sig = launch_outq_finish(job, job->ending ? ompdsm_now() +
                                 LAUNCH_OUT_FLUSH_FAILED_S : 0);
    if (job->ending)
        return job->status;
    return sig ? 128 + sig : 0;
}
