/* comm/launch/spawn.c - starts the nodes: pipes, environment (the job's
 * key among it), and each child's preparation before exec (one process
 * group, death with the launcher, no address randomisation when the job
 * has several nodes, CPU pinning, clean signal state).
 * A failure in the child comes back through a close-on-exec pipe, so it is
 * reported once, by the launcher, instead of as a puzzling exit status. */
#include "launch.h"

#include "comm/util/base.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int launch_cpus(struct launch_job *job)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    size_t ncpu = conf > 0 ? (size_t)conf : 1024;

    /* The kernel refuses a mask smaller than its own nr_cpu_ids (EINVAL),
     * which can exceed the configured count: grow until it fits. */
    for (;;) {
        cpu_set_t *set = CPU_ALLOC(ncpu);
        size_t sz = CPU_ALLOC_SIZE(ncpu);
        if (!set)
            return -ENOMEM;
        if (sched_getaffinity(0, sz, set) == 0) {
            int cnt = CPU_COUNT_S(sz, set), k = 0;
            job->cpus = malloc((size_t)(cnt ? cnt : 1) * sizeof(int));
            if (!job->cpus) {
                CPU_FREE(set);
                return -ENOMEM;
            }
            for (size_t i = 0; i < sz * 8 && k < cnt; i++)
                if (CPU_ISSET_S(i, sz, set))
                    job->cpus[k++] = (int)i;
            job->ncpus = k;
            CPU_FREE(set);
            return 0;
        }
        int e = errno;
        CPU_FREE(set);
        if (e != EINVAL || ncpu >= (1u << 20)) {
            fprintf(stderr, "ompdsmrun: sched_getaffinity: %s\n",
                    strerror(e));
            return -e;
        }
        ncpu *= 2;
    }
}

/* The value the nodes get for variable name: the last -x of it (in an
 * agent, env_extra also holds the launcher's own OMPDSM_ and OMP_
 * variables), else ours. */
static const char *node_var(const struct launch_job *job, const char *name)
{
    size_t n = strlen(name);
    for (int x = job->nenv_extra - 1; x >= 0; x--)
        if (!strncmp(job->env_extra[x], name, n) && job->env_extra[x][n] == '=')
            return job->env_extra[x] + n + 1;
    return job->agent ? NULL : getenv(name);
}

/* The threads each node runs, as the runtime will decide them
 * (runtime/env.c): --threads-per-node or OMPDSM_THREADS_PER_NODE, else
 * OMP_NUM_THREADS when it is a multiple of the nodes above them; auto: an
 * equal share of our CPUs. */
static int bind_width(const struct launch_job *job, int nlocal)
{
    int t = job->opts.threads_per_node;
    const char *v = node_var(job, "OMPDSM_THREADS_PER_NODE");
    if (!t && v && *v)
        t = !strcmp(v, "auto") ? -1 : atoi(v);
    if (!t && !(v && *v)) {
        const char *o = node_var(job, "OMP_NUM_THREADS");
        long n = o ? strtol(o, NULL, 10) : 0;
        if (job->size > 0 && n > job->size && n % job->size == 0)
            t = (int)(n / job->size);
    }
    if (t < 0)
        return nlocal > 0 && job->ncpus / nlocal > 1 ? job->ncpus / nlocal : 1;
    return t >= 1 && t <= LAUNCH_MAX_TPN ? t : 1;
}

void launch_decide_bind(struct launch_job *job, int nlocal)
{
    job->bind_width = bind_width(job, nlocal);
    if (job->opts.bind == LAUNCH_BIND_AUTO)
        job->bind = (long)nlocal * job->bind_width <= job->ncpus;
    else
        job->bind = job->opts.bind == LAUNCH_BIND_CORE;
    if (job->ncpus == 0)
        job->bind = 0;
}

/* ---- environment ---- */

/* Variables we set; inherited values would contradict ours. */
static const char *const own_vars[] = {
    "OMPDSM_RANK=", "OMPDSM_SIZE=", "OMPDSM_LOCAL_RANK=",
    "OMPDSM_LOCAL_SIZE=", "OMPDSM_JOBID=", "OMPDSM_BOOT=",
    "OMPDSM_BIND_THREADS=",
    OMPDSM_KEY_VAR "=", /* NOLINT(bugprone-suspicious-missing-comma) */
};
#define NOWN OMPDSM_ARRAY_LEN(own_vars)

int launch_own_var(const char *e)
{
    for (size_t j = 0; j < NOWN; j++)
        if (!strncmp(e, own_vars[j], strlen(own_vars[j])))
            return 1;
    return 0;
}

/* Whether environ entry e sets the variable that "VAR=..." v sets. */
static int same_var(const char *e, const char *v)
{
    size_t n = strcspn(v, "=");
    return !strncmp(e, v, n) && e[n] == '=';
}

/* environ without our variables and those env_extra sets (in an agent, also
 * without any OMPDSM_ or OMP_ variable of its own: the launcher's come in
 * env_extra), then env_extra, with room for ours and the NULL. */
static char **base_env(const struct launch_job *job, size_t *nbase)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **env = malloc((n + (size_t)job->nenv_extra + NOWN + 1) *
                        sizeof *env);
    if (!env)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t j;
        int drop = 0;
        for (j = 0; j < NOWN && !drop; j++)
            drop = !strncmp(environ[i], own_vars[j], strlen(own_vars[j]));
        for (int x = 0; x < job->nenv_extra && !drop; x++)
            drop = same_var(environ[i], job->env_extra[x]);
        if (job->agent && (!strncmp(environ[i], "OMPDSM_", 7) ||
                           !strncmp(environ[i], "OMP_", 4)))
            drop = 1;
        if (!drop)
            env[k++] = environ[i];
    }
    for (int x = 0; x < job->nenv_extra; x++)
        env[k++] = job->env_extra[x];
    *nbase = k;
    return env;
}

/* Fills env[nbase..] for node; the strings live in buf. */
static void node_env(const struct launch_job *job,
                     const struct launch_node *node, char **env,
                     size_t nbase, char buf[NOWN][192])
{
    /* Per host only when some are remote: else every node is here and
     * uses the loopback socket. */
    const char *boot = job->remote || job->agent ? job->host_boot[node->host]
                                                 : job->boot.addr;
    int lsize = job->hosts.n ? job->hosts.h[node->host].nnodes : job->size;
    snprintf(buf[0], 192, "OMPDSM_RANK=%d", node->rank);
    snprintf(buf[1], 192, "OMPDSM_SIZE=%d", job->size);
    snprintf(buf[2], 192, "OMPDSM_LOCAL_RANK=%d", node->local_rank);
    snprintf(buf[3], 192, "OMPDSM_LOCAL_SIZE=%d", lsize);
    snprintf(buf[4], 192, "OMPDSM_JOBID=%s", job->jobid);
    snprintf(buf[5], 192, "OMPDSM_BOOT=%s", boot);
    /* the runtime pins each of the node's threads to one of its CPUs */
    snprintf(buf[6], 192, "OMPDSM_BIND_THREADS=%d",
             job->bind && job->bind_width > 1);
    /* The key in the environment rather than on an inherited descriptor:
     * a node may be started through wrappers (sh -c, env, a debugger) that
     * keep the environment but not descriptors they do not know; only its
     * own user and root can read /proc/PID/environ, and they could read
     * the key from its memory as well; the runtime wipes it there and
     * takes it out of the environment at start (ompdsm_key_from_env). */
    snprintf(buf[7], 192, "%s=%s", OMPDSM_KEY_VAR, job->key_hex);
    for (size_t i = 0; i < NOWN; i++)
        env[nbase + i] = buf[i];
    env[nbase + NOWN] = NULL;
}

/* ---- the child ---- */

enum child_stage { ST_SETPGID, ST_PDEATHSIG, ST_DUP, ST_AFFINITY, ST_EXEC };

static const char *const stage_names[] = {
    "setpgid", "prctl(PR_SET_PDEATHSIG)", "dup2", "sched_setaffinity",
    "exec",
};

struct child_err {
    int stage;
    int err;
};

static void __attribute__((noreturn))
child_fail(int ep, int stage, int err)
{
    struct child_err ce = {stage, err};
    (void)!write(ep, &ce, sizeof ce);
    _exit(stage == ST_EXEC ? 127 : 1);
}

/* Runs in the forked child; the launcher is single-threaded, so the libc
 * calls here are safe after fork. */
static void __attribute__((noreturn))
child(const struct launch_job *job, int k, int first, int in_fd, int out_fd,
      int err_fd, int ep, char **envp)
{
    /* Dispositions first, while every signal is still blocked: the
     * launcher ignores SIGPIPE and SIGTTIN, which the program must not
     * inherit. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &sa, NULL); /* glibc-reserved ones fail: fine */

    if (setpgid(0, first ? 0 : job->pgid) < 0)
        child_fail(ep, ST_SETPGID, errno);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        child_fail(ep, ST_PDEATHSIG, errno);
    /* The launcher may have died before prctl: then nobody would kill us. */
    if (getppid() != job->self)
        _exit(1);

    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        child_fail(ep, ST_DUP, errno);

    /* Nodes must share one address layout (docs/design.md, "Who may
     * connect"): pointers to code and data travel between them.  A job of
     * one node shares nothing and keeps its randomisation.  The runtime
     * re-executes itself if this did not work. */
    int persona = personality(0xffffffff);
    if (job->size > 1 && persona != -1 && !(persona & ADDR_NO_RANDOMIZE) &&
        personality((unsigned long)persona | ADDR_NO_RANDOMIZE) == -1 &&
        first)
        dprintf(2, "ompdsmrun: warning: cannot disable address "
                "randomisation for the nodes: %s\n", strerror(errno));

    if (job->bind) {
        /* bind_width CPUs, one per thread of the node, wrapping around */
        int w = job->bind_width > 0 ? job->bind_width : 1, top = 0;
        long first = (long)job->nodes[k].local_rank * w;
        for (int j = 0; j < w; j++) {
            int c = job->cpus[(first + j) % job->ncpus];
            top = c > top ? c : top;
        }
        size_t sz = CPU_ALLOC_SIZE(top + 1);
        cpu_set_t *set = CPU_ALLOC(top + 1);
        if (!set)
            child_fail(ep, ST_AFFINITY, ENOMEM);
        CPU_ZERO_S(sz, set);
        for (int j = 0; j < w; j++)
            CPU_SET_S(job->cpus[(first + j) % job->ncpus], sz, set);
        if (sched_setaffinity(0, sz, set) < 0)
            child_fail(ep, ST_AFFINITY, errno);
        CPU_FREE(set);
    }

    /* The launcher raised its descriptor limit for N nodes' pipes; the
     * program gets the limit the user had. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != job->nofile_orig) {
        rl.rlim_cur = job->nofile_orig;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    execve(job->prog_path, job->opts.prog_argv, envp);
    int e = errno;
    if (e == ENOEXEC) {
        /* execvp runs a script without "#!" with the shell; so do we. */
        int argc = job->opts.prog_argc;
        char **sh = malloc((size_t)(argc + 2) * sizeof *sh);
        if (sh) {
            sh[0] = (char *)"/bin/sh";
            sh[1] = job->prog_path;
            for (int i = 1; i <= argc; i++)
                sh[i + 1] = job->opts.prog_argv[i];
            execve("/bin/sh", sh, envp);
        }
    }
    child_fail(ep, ST_EXEC, e);
}

/* ---- the launcher's side ---- */

/* Close-on-exec pipe; our_end (0 or 1, -1 for none) is made non-blocking. */
static int make_pipe(int p[2], int our_end)
{
    if (pipe2(p, O_CLOEXEC) < 0) {
        int e = errno;
        fprintf(stderr, "ompdsmrun: pipe: %s\n", strerror(e));
        return -e;
    }
    if (our_end < 0)
        return 0;
    /* Only our end is non-blocking: the node sees an ordinary pipe. */
    int fl = fcntl(p[our_end], F_GETFL);
    if (fl < 0 || fcntl(p[our_end], F_SETFL, fl | O_NONBLOCK) < 0) {
        int e = errno;
        fprintf(stderr, "ompdsmrun: fcntl(O_NONBLOCK): %s\n", strerror(e));
        close(p[0]);
        close(p[1]);
        return -e;
    }
    return 0;
}

static void close_pair(int p[2])
{
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    p[0] = p[1] = -1;
}

/* Kills and reaps the nodes started so far (none of them has run long). */
static void abandon(struct launch_job *job, int started)
{
    for (int k = 0; k < started; k++)
        if (job->nodes[k].pid > 0 && job->nodes[k].link < 0)
            kill(job->nodes[k].pid, SIGKILL);
    for (int k = 0; k < started; k++)
        if (job->nodes[k].pid > 0 && job->nodes[k].link < 0)
            while (waitpid(job->nodes[k].pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

/* Waits for node k's exec: EOF on ep means it happened; a record means the
 * child failed before.  Returns 0 or -errno with the reason printed. */
static int wait_exec(struct launch_job *job, int k, int ep, int *exit_status)
{
    /* Zeroed: a record cut short is never looked at, but that follows
     * from the loop below only. */
    struct child_err ce = {0, 0};
    size_t got = 0;
    while (got < sizeof ce) {
        ssize_t r = read(ep, (char *)&ce + got, sizeof ce - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < sizeof ce)
        return 0;
    char where[LAUNCH_HOST_MAX + 16] = "";
    if (job->hosts.n)
        snprintf(where, sizeof where, " on host %s",
                 job->hosts.h[job->nodes[k].host].name);
    if (ce.stage == ST_EXEC) {
        snprintf(job->spawn_err, sizeof job->spawn_err, "node %d%s: cannot "
                 "execute '%s': %s", job->nodes[k].rank, where,
                 job->prog_path, strerror(ce.err));
        *exit_status = 127;
    } else {
        snprintf(job->spawn_err, sizeof job->spawn_err, "node %d%s: cannot "
                 "start: %s: %s", job->nodes[k].rank, where,
                 ce.stage >= 0 && ce.stage < ST_EXEC ? stage_names[ce.stage]
                                                     : "?",
                 strerror(ce.err));
        *exit_status = 1;
    }
    if (!job->agent)
        fprintf(stderr, "ompdsmrun: %s\n", job->spawn_err);
    return -ce.err;
}

int launch_spawn(struct launch_job *job, int *exit_status)
{
    size_t nbase;
    char **env = base_env(job, &nbase);
    char (*strs)[192] = calloc(NOWN, sizeof *strs);
    int rc = 0, k, first = 1;

    *exit_status = 1;
    if (!env || !strs) {
        fprintf(stderr, "ompdsmrun: out of memory\n");
        free(env);
        free(strs);
        return -ENOMEM;
    }

    for (k = 0; k < job->n; k++) {
        struct launch_node *node = &job->nodes[k];
        int outp[2] = {-1, -1}, errp[2] = {-1, -1}, inp[2] = {-1, -1};
        int ep[2] = {-1, -1};
        /* Only node 0 reads our stdin (through its agent when it runs
         * on another host). */
        int reads_stdin = node->rank == 0;

        if (node->link >= 0)
            continue; /* an agent starts it */
        if ((rc = make_pipe(outp, 0)) || (rc = make_pipe(errp, 0)) ||
            (reads_stdin && (rc = make_pipe(inp, 1))) ||
            (rc = make_pipe(ep, -1))) {
            close_pair(outp);
            close_pair(errp);
            close_pair(inp);
            break;
        }
        node_env(job, node, env, nbase, strs);

        pid_t pid = fork();
        if (pid < 0) {
            rc = -errno;
            fprintf(stderr, "ompdsmrun: fork for node %d: %s\n", k,
                    strerror(-rc));
            close_pair(outp);
            close_pair(errp);
            close_pair(inp);
            close_pair(ep);
            break;
        }
        if (pid == 0)
            child(job, k, first, reads_stdin ? inp[0] : job->devnull,
                  outp[1], errp[1], ep[1], env);

        /* Also set here, so that the group exists whichever of us runs
         * first; EACCES once the child has exec'd is harmless. */
        if (first)
            job->pgid = pid;
        first = 0;
        setpgid(pid, job->pgid);

        node->pid = pid;
        close(outp[1]);
        close(errp[1]);
        close(ep[1]);
        node->out.fd = outp[0];
        node->err.fd = errp[0];
        if (reads_stdin) {
            close(inp[0]);
            job->node0_in = inp[1];
        }
        rc = wait_exec(job, k, ep[0], exit_status);
        close(ep[0]);
        if (rc) {
            k++; /* this one is started too: reap it */
            break;
        }
        if (job->agent)
            launch_agent_send(AG_STARTED, node->rank, &(int32_t){pid},
                              sizeof(int32_t), NULL, 0);
    }
    free(env);
    free(strs);
    if (rc) {
        abandon(job, k);
        for (int i = 0; i < k; i++)
            if (job->nodes[i].link < 0)
                job->nodes[i].reaped = 1;
        return rc;
    }
    return 0;
}

void launch_reap(struct launch_job *job,
                 void (*exited)(struct launch_job *, struct launch_node *))
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        if (launch_link_reaped(job, pid, st))
            continue;
        for (int k = 0; k < job->n; k++) {
            struct launch_node *node = &job->nodes[k];
            /* A node behind an agent has a pid of another host. */
            if (node->pid != pid || node->reaped || node->link >= 0)
                continue;
            node->reaped = 1;
            node->wstatus = st;
            node->reaped_at = ompdsm_now();
            job->nreaped++;
            if (exited)
                exited(job, node);
            break;
        }
    }
}
