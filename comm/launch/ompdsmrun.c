/* comm/launch/ompdsmrun.c - the launcher's main: starts the job, runs the
 * event loop (signals, node exits, stdio, bootstrap) without ever
 * busy-waiting, and ends the whole job at the first abnormal end of any
 * node, within the grace period, leaving nothing running. */
#include "launch.h"

#include "comm/util/base.h"

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
        if (!job->nodes[k].reaped && job->nodes[k].pid > 0 &&
            job->nodes[k].link < 0)
            kill(job->nodes[k].pid, sig);
    launch_links_signal(job, sig, group);
}

static void terminate_nodes(struct launch_job *job)
{
    /* SIGCONT after SIGTERM: a stopped node must be able to act on it. */
    signal_nodes(job, SIGTERM, 1);
    signal_nodes(job, SIGCONT, 1);
}

static void fail_v(struct launch_job *job, int status, int quiet,
                   const char *fmt, va_list ap)
{
    if (job->ending)
        return;
    char line[4096];
    int n = snprintf(line, sizeof line, "ompdsmrun: ");
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    /* Queued like a node's line, so the two cannot mix. */
    launch_outq_put(2, line, (size_t)n);

    job->ending = 1;
    job->status = status;
    double now = ompdsm_now();
    if (quiet) {
        signal_nodes(job, SIGSTOP, 1);
        job->term_at = now + LAUNCH_QUIET_S;
        job->kill_at = job->term_at + LAUNCH_GRACE_S;
        return;
    }
    job->kill_at = now + LAUNCH_GRACE_S;
    terminate_nodes(job);
}

void launch_fail(struct launch_job *job, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(job, status, 0, fmt, ap);
    va_end(ap);
}

void launch_fail_quiet(struct launch_job *job, int status, const char *fmt,
                       ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(job, status, 1, fmt, ap);
    va_end(ap);
}

void launch_suspect(struct launch_job *job, struct launch_node *node)
{
    if (node->suspect_at > 0)
        return;
    node->suspect_at = ompdsm_now();
    job->nsuspects++;
}

/* Whether node's bootstrap connection is open, here or at its agent. */
static int launch_boot_open(const struct launch_node *node)
{
    return node->conn >= 0 || node->vconn;
}

static void judge_exit(struct launch_job *job, struct launch_node *node);

static int exits_pending(const struct launch_job *job)
{
    for (int k = 0; k < job->n && job->nsuspects && !job->ending; k++)
        if (job->nodes[k].exit_pending)
            return 1;
    return 0;
}

/* A node that said HELLO must say FINI before it goes; a lost connection
 * waits briefly for the exit status, which explains more. */
static void check_suspects(struct launch_job *job, double now)
{
    for (int k = 0; k < job->n && job->nsuspects && !job->ending; k++) {
        struct launch_node *node = &job->nodes[k];
        if (node->suspect_at <= 0)
            continue;
        int late = now >= node->suspect_at + LAUNCH_LOST_WAIT_S;
        if (node->exit_pending) {
            if (!launch_boot_open(node) || node->fini || late) {
                node->exit_pending = 0;
                node->suspect_at = 0;
                job->nsuspects--;
                judge_exit(job, node);
            }
            continue;
        }
        if (node->fini) { /* it was still in the socket when it exited */
            node->suspect_at = 0;
            job->nsuspects--;
            launch_boot_node_gone(job, node);
            continue;
        }
        char name[LAUNCH_HOST_MAX + 64];
        launch_node_name(job, node, name, sizeof name);
        if (node->reaped && (!launch_boot_open(node) || late))
            launch_fail(job, 1, "%s exited with status 0 "
                        "without sending FINI on its bootstrap connection; "
                        "ending the job", name);
        else if (late)
            launch_fail(job, 1, "%s closed its bootstrap "
                        "connection without FINI; ending the job", name);
    }
}

/* Also called by link.c for a remote node's AG_EXIT. */
void launch_node_exited(struct launch_job *job, struct launch_node *node)
{
    int st = node->wstatus;

    if (node->rank == 0)
        launch_relay_stdin_stop(job);
    launch_boot_drain(job, node);
    if (job->ending)
        return;
    if ((WIFSIGNALED(st) || WEXITSTATUS(st)) && launch_boot_open(node) &&
        !node->fini) {
        /* Its ABORT, which explains the status, may still be in flight
         * (from another host, it races with the agent's report of the
         * exit): judge once the connection closes, or shortly. */
        node->exit_pending = 1;
        launch_suspect(job, node);
        return;
    }
    judge_exit(job, node);
}

static void judge_exit(struct launch_job *job, struct launch_node *node)
{
    int st = node->wstatus;
    char name[LAUNCH_HOST_MAX + 64];

    launch_node_name(job, node, name, sizeof name);
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        launch_fail(job, 128 + sig, "%s was killed by signal "
                    "%d (%s%s); ending the job", name,
                    sig, strsignal(sig), WCOREDUMP(st) ? ", core dumped" : "");
    } else if (WEXITSTATUS(st)) {
        launch_fail(job, WEXITSTATUS(st), "%s exited with "
                    "status %d; ending the job", name, WEXITSTATUS(st));
    } else if (node->hello && !node->fini) {
        launch_suspect(job, node);
    } else {
        launch_boot_node_gone(job, node);
    }
}

static void on_signal(struct launch_job *job, int sig)
{
    switch (sig) {
    case SIGCHLD:
        launch_reap(job, launch_node_exited);
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
        launch_diag_status(job);
        break;
    case SIGUSR2: {
        /* Passed on, it would kill every node of a program that does not
         * handle it; received, it must not end the job either. */
        char line[128];
        int n = snprintf(line, sizeof line, "ompdsmrun: received SIG%s; "
                         "ignored (not passed to the nodes)\n",
                         sigabbrev_np(sig));
        launch_outq_put(2, line, (size_t)n);
        break;
    }
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

int launch_setup_signals(struct launch_job *job)
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
int launch_raise_nofile(struct launch_job *job)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        job->nofile_orig = RLIM_INFINITY;
        return 0;
    }
    job->nofile_orig = rl.rlim_cur;
    /* stdout, stderr and bootstrap socket per node, plus a few. */
    rlim_t need = (rlim_t)job->n * 3 + (rlim_t)job->nlinks * 3 + 32;
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
        int bw = launch_boot_expire(job, now);
        if (bw >= 0 && (wait < 0 || bw < wait))
            wait = bw;
        int mw = launch_monitor_tick(job, now);
        if (mw >= 0 && (wait < 0 || mw < wait))
            wait = mw;
        int lw = launch_links_check(job, now);
        if (lw >= 0 && (wait < 0 || lw < wait))
            wait = lw;
        for (int k = 0; k < job->n && job->nsuspects && !job->ending; k++)
            if (job->nodes[k].suspect_at > 0) {
                int w = ms_until(job->nodes[k].suspect_at +
                                 LAUNCH_LOST_WAIT_S, now);
                if (wait < 0 || w < wait)
                    wait = w;
            }
        if (job->term_at > 0) {
            if (now >= job->term_at) {
                terminate_nodes(job);
                job->term_at = 0;
            } else {
                int w = ms_until(job->term_at, now);
                if (wait < 0 || w < wait)
                    wait = w;
            }
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
        if (job->killed && job->nlinks && !job->links_killed) {
            /* An agent that did not report its nodes' deaths after the
             * SIGKILL is cut off; closing its connection ends them. */
            if (now >= job->kill_at + LAUNCH_GRACE_S) {
                launch_links_close(job, 1);
                job->links_killed = 1;
            } else {
                int w = ms_until(job->kill_at + LAUNCH_GRACE_S, now);
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
                /* Agents whose nodes all ended exit on their own; a
                 * closed stdin tells the others. */
                launch_links_close(job, 0);
            }
            /* An exit still waiting for its ABORT is judged first (within
             * LAUNCH_LOST_WAIT_S, less than the drain). */
            if ((launch_relay_all_closed(job) && launch_links_done(job) &&
                 !exits_pending(job)) ||
                now >= job->drain_at + (job->nlinks ? LAUNCH_GRACE_S : 0))
                break;
            int w = ms_until(job->drain_at, now);
            if (wait < 0 || w < wait)
                wait = w;
        }

        ps.n = 0;
        launch_pollset_add(&ps, job->sigfd, POLLIN, LFD_SIGNAL, 0);
        if (job->status_fd >= 0)
            launch_pollset_add(&ps, job->status_fd, POLLIN, LFD_STATUS, 0);
        launch_boot_add_fds(job, &ps);
        launch_relay_add_fds(job, &ps);
        launch_links_add_fds(job, &ps);

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
            case LFD_STATUS:
                launch_diag_accept(job);
                break;
            case LFD_LISTEN:
            case LFD_DOOR:
            case LFD_CONN:
                launch_boot_event(job, kind, idx, re);
                break;
            case LFD_LINK_TO:
            case LFD_LINK_FROM:
            case LFD_LINK_ERR:
                launch_link_event(job, kind, idx, re);
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
    if (job->opts.action == LAUNCH_STATUS)
        return launch_status_main(job->opts.status_of);
    job->status_fd = -1;
    if (job->opts.action == LAUNCH_AGENT)
        return launch_agent_main(job);
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
    }
    if (launch_plan_env(job, err, sizeof err) < 0) {
        fprintf(stderr, "ompdsmrun: %s\n", err);
        return 2;
    }

    job->n = job->size = job->opts.np;
    job->self = getpid();
    job->start = ompdsm_now();
    job->boot.door.listen_fd = -1;
    job->sigfd = -1;
    job->nodes = calloc((size_t)job->n, sizeof *job->nodes);
    if (!job->nodes) {
        fprintf(stderr, "ompdsmrun: out of memory for %d nodes\n", job->n);
        return 1;
    }
    int nlocal = 0;
    for (int k = 0; k < job->n; k++) {
        job->nodes[k].rank = k;
        job->nodes[k].local_rank = k;
        job->nodes[k].conn = -1;
        job->nodes[k].link = -1;
    }
    if (job->hosts.n && launch_plan_hosts(job, err, sizeof err) < 0) {
        fprintf(stderr, "ompdsmrun: %s\n", err);
        return 2;
    }
    for (int k = 0; k < job->n; k++)
        nlocal += !job->hosts.n || job->host_local[job->nodes[k].host];
    if (launch_setup_signals(job) < 0)
        return 1;
    if (launch_cpus(job) < 0)
        return 1;
    launch_decide_bind(job, nlocal);
    char host[64];
    if (gethostname(host, sizeof host) < 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    snprintf(job->jobid, sizeof job->jobid, "%s-%d", host, (int)job->self);

    ompdsm_trace_init(); /* OMPDSM_TRACE=boot: the bootstrap's counts */
    /* The job's key: only processes it was handed to (agents on their
     * stdin, nodes in their environment) can connect to the job. */
    if ((rc = ompdsm_key_new(job->key)) < 0) {
        fprintf(stderr, "ompdsmrun: cannot draw the job's key: getrandom: "
                "%s\n", strerror(-rc));
        return 1;
    }
    ompdsm_key_hex(job->key, job->key_hex);
    job->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->devnull < 0) {
        fprintf(stderr, "ompdsmrun: /dev/null: %s\n", strerror(errno));
        return 1;
    }
    /* Only our own host's nodes connect here (those of other hosts
     * connect to their agent): loopback when every node is here, else the
     * address they advertise to the other hosts (plan.c). */
    const char *bind_host = job->remote ? job->boot_host : "127.0.0.1";
    if (launch_boot_listen(job, bind_host, bind_host) < 0)
        return 1;
    if (job->remote && launch_plan_links(job, err, sizeof err) < 0) {
        fprintf(stderr, "ompdsmrun: %s\n", err);
        return 2;
    }
    if (launch_raise_nofile(job) < 0)
        return 1;
    if (launch_relay_init(job) < 0)
        return 1;
    launch_diag_listen(job);
    if (launch_monitor_open(job) < 0)
        return 1;
    rc = launch_spawn(job, &status);
    if (rc < 0) {
        launch_diag_close(job);
        return status;
    }
    /* After our own nodes: an agent that fails at once must not race
     * with forking them. */
    if (launch_links_start(job) < 0) {
        launch_fail(job, 1, "cannot start the agents; ending the job");
    }
    launch_outq_start();

    run(job);
    launch_diag_close(job);
    launch_monitor_close(job);

    /* Agents still connected are cut off, and their rsh reaped. */
    launch_links_close(job, 1);
    for (int i = 0; i < job->nlinks; i++)
        if (!job->links[i].reaped && job->links[i].pid > 0)
            while (waitpid(job->links[i].pid, NULL, 0) < 0 && errno == EINTR)
                ;

    launch_relay_flush_all(job);
    launch_boot_close_all(job);
    int sig = launch_outq_finish(job, job->ending ? ompdsm_now() +
                                 LAUNCH_OUT_FLUSH_FAILED_S : 0);
    if (job->ending)
        return job->status;
    return sig ? 128 + sig : 0;
}
