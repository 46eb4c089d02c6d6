/* comm/launch/diag.c - the launcher's side of the diagnostics
 * (docs/diagnostics.md): every node reports where its threads wait
 * (BOOT_STATE); when every node has waited in the runtime, with no progress
 * and nothing else changed, for its OMPDSM_DEADLOCK_S with as many messages
 * received as sent, nothing can ever move again: the job is reported as
 * deadlocked and ended.  The same reports answer SIGUSR1 and ompdsmrun
 * --status (a Unix socket in the user's runtime directory), and the
 * nodes' samples feed ompdsmrun --monitor. */
#include "launch.h"

#include "comm/util/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A waiting node reports every period; one silent for longer than this
 * (stopped, or starved of CPU) cannot count as waiting. */
static double stale_after(const struct boot_state *st)
{
    return 2.0 * st->period_ms / 1000.0 + 1.0;
}

struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL,
                          b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return;
        b->p = q;
        b->cap = cap;
    }
}

static void diag_check(struct launch_job *job);

int launch_diag_state(struct launch_job *job, struct launch_node *node,
                      const unsigned char *body, size_t len, char *why,
                      size_t whylen)
{
    struct boot_state st;
    if (len < sizeof st) {
        snprintf(why, whylen, "STATE of %zu bytes (at least %zu expected)",
                 len, sizeof st);
        return -EPROTO;
    }
    memcpy(&st, body, sizeof st);
    size_t want = sizeof st + (size_t)st.nthreads * sizeof(struct boot_thread) +
                  (size_t)st.nheld * sizeof(uint64_t);
    if (st.nthreads > BOOT_STATE_THREADS_MAX ||
        st.nheld > BOOT_STATE_HELD_MAX || len != want) {
        snprintf(why, whylen, "STATE of %zu bytes for %u threads and %u "
                 "locks (at most %d and %d)", len, st.nthreads, st.nheld,
                 BOOT_STATE_THREADS_MAX, BOOT_STATE_HELD_MAX);
        return -EPROTO;
    }
    unsigned char *copy = malloc(len);
    if (!copy) {
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    memcpy(copy, body, len);
    double now = ompdsm_now();
    const struct boot_state *old = (const struct boot_state *)node->diag;
    /* The same wait, no progress, nothing sent or received, and no
     * silence longer than a waiting node's reports allow: the streak goes
     * on.  A node that was silent (SIGSTOPped, or starved of CPU) cannot
     * vouch for the time it was silent, even if it comes back with the
     * very same wait: its streak starts again. */
    if (!(old && old->blocked && st.blocked && old->moves == st.moves &&
          old->progress == st.progress && old->tx == st.tx &&
          old->rx == st.rx && now - node->diag_at <= stale_after(old)))
        node->diag_since = st.blocked ? now : 0;
    free(node->diag);
    node->diag = copy;
    node->diag_len = len;
    node->diag_at = now;
    diag_check(job);
    return 0;
}

static const struct boot_thread *threads_of(const struct launch_node *node)
{
    return (const struct boot_thread *)(node->diag + sizeof(struct boot_state));
}

static const uint64_t *held_of(const struct launch_node *node)
{
    const struct boot_state *st = (const struct boot_state *)node->diag;
    return (const uint64_t *)(threads_of(node) + st->nthreads);
}

/* Resolves n program addresses to "file:line" with addr2line (one run);
 * out[i] stays empty where it cannot. */
static void resolve(const char *prog, const uint64_t *pc, int n,
                    char (*out)[160])
{
    for (int i = 0; i < n; i++)
        out[i][0] = 0;
    if (!n)
        return;
    char **argv = calloc((size_t)n + 6, sizeof *argv);
    char (*num)[24] = calloc((size_t)n, sizeof *num);
    int fds[2] = {-1, -1};
    if (!argv || !num || pipe2(fds, O_CLOEXEC) < 0)
        goto out;
    int a = 0;
    argv[a++] = "addr2line";
    argv[a++] = "-s";
    argv[a++] = "-e";
    argv[a++] = (char *)prog;
    for (int i = 0; i < n; i++) {
        snprintf(num[i], sizeof num[i], "0x%llx", (unsigned long long)pc[i]);
        argv[a++] = num[i];
    }
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        goto out;
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(fds[1], 1);
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 2);
        }
        execvp("addr2line", argv);
        _exit(127);
    }
    close(fds[1]);
    fds[1] = -1;
    struct sbuf b = {0};
    char chunk[4096];
    ssize_t r;
    /* addr2line reads a small file's line table: quick; it is run only to
     * print a report. */
    while ((r = read(fds[0], chunk, sizeof chunk)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        sb_printf(&b, "%.*s", (int)r, chunk);
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    char *line = b.p, *save = NULL;
    for (int i = 0; i < n && line; i++) {
        char *tok = strtok_r(i ? NULL : line, "\n", &save);
        if (!tok)
            break;
        char *disc = strstr(tok, " (discriminator");
        if (disc)
            *disc = 0;
        size_t tl = strlen(tok);
        if (tok[0] != '?' && !(tl >= 2 && (!strcmp(tok + tl - 2, ":?") ||
                                           !strcmp(tok + tl - 2, ":0"))))
            snprintf(out[i], sizeof out[i], "%s", tok);
    }
    free(b.p);
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(argv);
    free(num);
}

/* One line per thread of every node: "node 1 thread 0: omp_set_lock(lock 3)
 * at foo.c:57, held by node 0".  With status, nodes without a report and
 * how long each has waited too. */
static void describe(struct launch_job *job, struct sbuf *b, int status)
{
    int npc = 0;
    for (int k = 0; k < job->n; k++) {
        const struct launch_node *node = &job->nodes[k];
        if (node->diag)
            npc += (int)((const struct boot_state *)node->diag)->nthreads;
    }
    uint64_t *pcs = calloc((size_t)npc + 1, sizeof *pcs);
    char (*where)[160] = calloc((size_t)npc + 1, sizeof *where);
    if (!pcs || !where) {
        free(pcs);
        free(where);
        return;
    }
    int i = 0;
    for (int k = 0; k < job->n; k++) {
        const struct launch_node *node = &job->nodes[k];
        if (!node->diag)
            continue;
        const struct boot_state *st = (const struct boot_state *)node->diag;
        for (uint32_t t = 0; t < st->nthreads; t++)
            pcs[i++] = threads_of(node)[t].waiting ? threads_of(node)[t].pc : 0;
    }
    /* Only the addresses to resolve go to addr2line. */
    uint64_t *ask = calloc((size_t)npc + 1, sizeof *ask);
    char (*got)[160] = calloc((size_t)npc + 1, sizeof *got);
    int nask = 0;
    if (ask && got) {
        for (int j = 0; j < npc; j++)
            if (pcs[j])
                ask[nask++] = pcs[j];
        resolve(job->prog_path, ask, nask, got);
        for (int j = 0, q = 0; j < npc; j++)
            if (pcs[j])
                snprintf(where[j], sizeof where[j], "%s", got[q++]);
    }
    free(ask);
    free(got);

    double now = ompdsm_now();
    i = 0;
    for (int k = 0; k < job->n; k++) {
        const struct launch_node *node = &job->nodes[k];
        if (!node->diag) {
            if (status) {
                if (node->reaped)
                    sb_printf(b, "node %d: ended\n", k);
                else if (!node->hello)
                    sb_printf(b, "node %d: no report (starting, or not an "
                              "ompdsm program)\n", k);
                else
                    sb_printf(b, "node %d: running (serial part)\n", k);
            }
            continue;
        }
        const struct boot_state *st = (const struct boot_state *)node->diag;
        double age = now - node->diag_at;
        for (uint32_t t = 0; t < st->nthreads; t++, i++) {
            const struct boot_thread *th = &threads_of(node)[t];
            char what[sizeof th->what + 1], w[sizeof th->where + 1];
            memcpy(what, th->what, sizeof th->what);
            what[sizeof th->what] = 0;
            memcpy(w, th->where, sizeof th->where);
            w[sizeof th->where] = 0;
            sb_printf(b, "node %d thread %u: %s", k, t, what);
            if (!th->waiting) {
                if (w[0])
                    sb_printf(b, " %s", w);
            } else if (where[i][0]) {
                sb_printf(b, " at %s", where[i]);
            } else if (w[0]) {
                sb_printf(b, " at %s", w);
            } else if (th->pc) {
                sb_printf(b, " at %s+0x%llx (build with -g for file:line)",
                          job->prog_path, (unsigned long long)th->pc);
            }
            if (th->waiting && th->has_lock) {
                int found = 0;
                for (int h = 0; h < job->n; h++) {
                    const struct launch_node *o = &job->nodes[h];
                    if (!o->diag)
                        continue;
                    const struct boot_state *os =
                        (const struct boot_state *)o->diag;
                    for (uint32_t x = 0; x < os->nheld; x++)
                        if (held_of(o)[x] == th->lock) {
                            sb_printf(b, "%s node %d%s", found ? "," :
                                      ", held by", h, h == k ? " (itself)"
                                                             : "");
                            found = 1;
                            break;
                        }
                }
            }
            if (status && th->waiting)
                sb_printf(b, " (waiting %.1f s)",
                          th->waited_ms / 1000.0 + (st->blocked ? age : 0));
            sb_printf(b, "\n");
        }
        if (status && node->reaped)
            sb_printf(b, "node %d: ended\n", k);
        else if (status && st->blocked && age > stale_after(st))
            sb_printf(b, "node %d: no report for %.1f s (stopped?)\n", k, age);
    }
    free(pcs);
    free(where);
}

static void put_lines(const char *text);

/* Ends the job as deadlocked if every node's reports say so. */
static void diag_check(struct launch_job *job)
{
    if (job->ending || job->diag_reported)
        return;
    double now = ompdsm_now(), need = 0, t = 0;
    uint64_t tx = 0, rx = 0;
    for (int k = 0; k < job->n; k++) {
        const struct launch_node *node = &job->nodes[k];
        const struct boot_state *st = (const struct boot_state *)node->diag;
        if (!st || !node->hello || node->fini || node->reaped ||
            !st->blocked || !st->deadlock_ms || node->diag_since <= 0 ||
            now - node->diag_at > stale_after(st))
            return;
        if (st->deadlock_ms / 1000.0 > need)
            need = st->deadlock_ms / 1000.0;
        if (k == 0 || node->diag_at < t)
            t = node->diag_at;
        tx += st->tx;
        rx += st->rx;
    }
    /* Two rounds: every node was seen waiting, unchanged, both at t - need
     * and at t (or later), so the whole window had every thread waiting;
     * a node stopped earlier cannot stretch it.  Reports arrive late when
     * a relay or the machine is slow, which stretches what we see: each
     * node's own clock must also have seen it stand still that long,
     * ending at its report (at or before its arrival). */
    for (int k = 0; k < job->n; k++) {
        const struct launch_node *node = &job->nodes[k];
        const struct boot_state *st = (const struct boot_state *)node->diag;
        if (node->diag_since > t - need ||
            node->diag_at - st->still_ms / 1000.0 > t - need)
            return;
    }
    if (tx != rx)
        return;
    job->diag_reported = 1;
    launch_fail_quiet(job, LAUNCH_DEADLOCK_STATUS, "deadlock: every thread of "
                      "every node has waited in the runtime for %g s, with no "
                      "progress and no message in flight; ending the job",
                      need);
    struct sbuf b = {0};
    describe(job, &b, 0);
    put_lines(b.p);
    free(b.p);
}

/* ---- status: SIGUSR1 and ompdsmrun --status ---- */

static char *status_text(struct launch_job *job, size_t *len)
{
    struct sbuf b = {0};
    sb_printf(&b, "ompdsmrun: job %s, %d node%s, running for %.1f s:\n",
              job->jobid, job->n, job->n == 1 ? "" : "s",
              ompdsm_now() - job->start);
    describe(job, &b, 1);
    *len = b.len;
    return b.p;
}

/* Lines of text on our stderr, each as "ompdsmrun: line". */
static void put_lines(const char *text)
{
    for (const char *l = text, *e; l && *l; l = e + 1) {
        e = strchr(l, '\n');
        if (!e)
            break;
        const char *body = l;
        if (!strncmp(body, "ompdsmrun: ", 11))
            body += 11;
        char line[512];
        int n = snprintf(line, sizeof line, "ompdsmrun: %.*s\n",
                         (int)(e - body), body);
        if (n > (int)sizeof line - 1) {
            n = (int)sizeof line - 1;
            line[n - 1] = '\n';
        }
        launch_outq_put(2, line, (size_t)n);
    }
}

void launch_diag_status(struct launch_job *job)
{
    size_t len;
    char *t = status_text(job, &len);
    put_lines(t);
    free(t);
}

/* $XDG_RUNTIME_DIR/ompdsm, or /tmp/ompdsm-UID: made private to the user. */
static int status_dir(char *dir, size_t len, int create)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (x && *x && stat(x, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(dir, len, "%s/ompdsm", x);
    else
        snprintf(dir, len, "/tmp/ompdsm-%u", (unsigned)getuid());
    if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    if (stat(dir, &st) < 0)
        return -errno;
    if (st.st_uid != getuid() || (st.st_mode & 077))
        return -EPERM;
    return 0;
}

int launch_diag_listen(struct launch_job *job)
{
    char dir[200];
    job->status_fd = -1;
    int rc = status_dir(dir, sizeof dir, 1);
    if (rc < 0) {
        fprintf(stderr, "ompdsmrun: warning: no status socket (%s: %s); "
                "ompdsmrun --status will not find this job\n", dir,
                rc == -EPERM ? "not a private directory of this user"
                             : strerror(-rc));
        return 0;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%d.sock", dir,
                     (int)job->self);
    if (n >= (int)sizeof sa.sun_path) {
        fprintf(stderr, "ompdsmrun: warning: no status socket (the path "
                "%s/%d.sock is too long)\n", dir, (int)job->self);
        return 0;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    unlink(sa.sun_path); /* a launcher killed earlier with our pid */
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(fd, 16) < 0) {
        fprintf(stderr, "ompdsmrun: warning: no status socket %s: %s\n",
                sa.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 0;
    }
    snprintf(job->status_path, sizeof job->status_path, "%s", sa.sun_path);
    job->status_fd = fd;
    return 0;
}

void launch_diag_close(struct launch_job *job)
{
    if (job->status_fd >= 0) {
        close(job->status_fd);
        job->status_fd = -1;
        unlink(job->status_path);
    }
}

void launch_diag_accept(struct launch_job *job)
{
    for (;;) {
        int c = accept4(job->status_fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            return;
        size_t len;
        char *t = status_text(job, &len);
        /* A client that does not read gets what fits, never our time. */
        struct timeval tv = {1, 0};
        setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        for (size_t off = 0; t && off < len;) {
            ssize_t w = send(c, t + off, len - off, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        free(t);
        close(c);
    }
}

static int status_connect(const char *path, int quiet)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t plen = strlen(path);
    if (plen >= sizeof sa.sun_path)
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, plen + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        if (!quiet)
            fprintf(stderr, "ompdsmrun: --status: cannot reach the job at "
                    "%s: %s\n", path, strerror(e));
        close(fd);
        return -e;
    }
    return fd;
}

int launch_status_main(const char *which)
{
    char dir[200], path[512];
    int rc = status_dir(dir, sizeof dir, 0);
    if (rc < 0) {
        fprintf(stderr, "ompdsmrun: --status: no running job (%s: %s)\n",
                dir, rc == -EPERM ? "not a private directory of this user"
                                  : strerror(-rc));
        return 1;
    }
    int fd = -1;
    if (which) {
        uint64_t pid;
        if (ompdsm_parse_u64(which, 0, &pid) < 0 || !pid || pid > 0x7fffffff) {
            fprintf(stderr, "ompdsmrun: --status '%s' is not valid: expected "
                    "the pid of an ompdsmrun\n", which);
            return 2;
        }
        snprintf(path, sizeof path, "%s/%llu.sock", dir,
                 (unsigned long long)pid);
        if ((fd = status_connect(path, 0)) < 0)
            return 1;
    } else {
        DIR *d = opendir(dir);
        int found = 0;
        char names[512] = "";
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 6 || strcmp(e->d_name + n - 5, ".sock") != 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            int c = status_connect(path, 1);
            if (c < 0) {
                if (c == -ECONNREFUSED)
                    unlink(path); /* its launcher was killed */
                continue;
            }
            found++;
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%.*s", l ? ", " : "",
                     (int)(n - 5), e->d_name);
            if (fd >= 0)
                close(fd);
            fd = c;
        }
        if (d)
            closedir(d);
        if (found == 0) {
            fprintf(stderr, "ompdsmrun: --status: no running job of yours "
                    "found (in %s)\n", dir);
            return 1;
        }
        if (found > 1) {
            close(fd);
            fprintf(stderr, "ompdsmrun: --status: several jobs run (ompdsmrun "
                    "pids %s): name one, as in ompdsmrun --status PID\n",
                    names);
            return 2;
        }
    }
    char buf[4096];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (fwrite(buf, 1, (size_t)r, stdout) != (size_t)r)
            break;
    }
    close(fd);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- ompdsmrun --monitor ---- */

void launch_diag_sample(struct launch_job *job, struct launch_node *node,
                        const unsigned char *body)
{
    (void)job;
    node->mon[0] = node->mon[1];
    memcpy(&node->mon[1], body, sizeof node->mon[1]);
    if (node->nmon < 2)
        node->nmon++;
    node->mon_written = 0;
    node->mon_at = ompdsm_now();
}

int launch_monitor_open(struct launch_job *job)
{
    job->mon_out = NULL;
    job->mon_next = 0;
    job->mon_lines = 0;
    if (!job->opts.monitor || !job->opts.monitor_file)
        return 0;
    job->mon_out = fopen(job->opts.monitor_file, "w");
    if (!job->mon_out) {
        fprintf(stderr, "ompdsmrun: --monitor=%s: %s\n",
                job->opts.monitor_file, strerror(errno));
        return -1;
    }
    return 0;
}

static void write_sample(struct launch_job *job, int k, double t);

void launch_monitor_close(struct launch_job *job)
{
    if (!job->mon_out)
        return;
    /* Each node's last sample (sent as it finished) if no tick wrote it:
     * a job shorter than a second leaves one line per node, any job its
     * final one. */
    for (int k = 0; k < job->n; k++)
        if (!job->nodes[k].mon_written)
            write_sample(job, k, job->nodes[k].mon_at - job->start);
    fclose(job->mon_out);
    job->mon_out = NULL;
}

struct share {
    double compute, barrier, lock, fault, faults_s, bytes_s;
};

/* A node's last second from its last two samples; 0 if it has none. */
static int node_share(const struct launch_node *node, struct share *s)
{
    if (node->nmon < 2)
        return 0;
    const struct boot_sample *a = &node->mon[0], *b = &node->mon[1];
    double dt = (double)(b->t_ns - a->t_ns);
    if (dt <= 0)
        return 0;
    s->barrier = (double)(b->barrier_ns - a->barrier_ns) / dt;
    s->lock = (double)(b->lock_ns - a->lock_ns) / dt;
    s->fault = (double)(b->fault_ns - a->fault_ns) / dt;
    double busy = s->barrier + s->lock + s->fault;
    if (busy > 1) { /* several threads, or clocks read at other times */
        s->barrier /= busy;
        s->lock /= busy;
        s->fault /= busy;
        busy = 1;
    }
    s->compute = 1 - busy;
    s->faults_s = (double)(b->faults - a->faults) * 1e9 / dt;
    s->bytes_s = (double)(b->bytes - a->bytes) * 1e9 / dt;
    return 1;
}

/* Node k's last second as a JSON line at t s into the job (nothing
 * before its second sample). */
static void write_sample(struct launch_job *job, int k, double t)
{
    struct share s;
    if (!node_share(&job->nodes[k], &s))
        return;
    fprintf(job->mon_out, "{\"t\": %.3f, \"node\": %d, \"compute\": "
            "%.4f, \"barrier\": %.4f, \"lock\": %.4f, \"fault\": "
            "%.4f, \"faults_per_s\": %.1f, \"bytes_per_s\": %.1f}\n",
            t, k, s.compute, s.barrier, s.lock, s.fault, s.faults_s,
            s.bytes_s);
    job->nodes[k].mon_written = 1;
}

int launch_monitor_tick(struct launch_job *job, double now)
{
    if (!job->opts.monitor || job->ending)
        return -1;
    if (job->mon_next == 0)
        job->mon_next = now + 1.0;
    if (now < job->mon_next) {
        double ms = (job->mon_next - now) * 1000.0;
        return (int)ms + 1;
    }
    job->mon_next += 1.0;
    if (job->mon_next < now)
        job->mon_next = now + 1.0;
    double t = now - job->start;
    if (job->mon_out) {
        for (int k = 0; k < job->n; k++)
            write_sample(job, k, t);
        fflush(job->mon_out);
        return 1000;
    }
    /* Plain ANSI: up to the previous frame, each line cleared; nothing
     * else changes the terminal, so it is left as it was. */
    struct sbuf b = {0};
    if (job->mon_lines)
        sb_printf(&b, "\033[%dA", job->mon_lines);
    sb_printf(&b, "\r\033[Kompdsmrun: monitor at %.0f s (C compute, B barrier, "
              "L lock, F fault)\n", t);
    int lines = 1;
    enum { W = 40 };
    for (int k = 0; k < job->n && lines < 65; k++, lines++) {
        struct share s;
        char bar[W + 1];
        if (!node_share(&job->nodes[k], &s)) {
            sb_printf(&b, "\r\033[Knode %-4d (no samples)\n", k);
            continue;
        }
        int nb = (int)(s.barrier * W + 0.5), nl = (int)(s.lock * W + 0.5);
        int nf = (int)(s.fault * W + 0.5);
        if (nb + nl + nf > W)
            nb = W - nl - nf > 0 ? W - nl - nf : 0;
        int nc = W - nb - nl - nf;
        int i = 0;
        for (int x = 0; x < nc; x++) bar[i++] = 'C';
        for (int x = 0; x < nb; x++) bar[i++] = 'B';
        for (int x = 0; x < nl; x++) bar[i++] = 'L';
        for (int x = 0; x < nf; x++) bar[i++] = 'F';
        bar[i] = 0;
        sb_printf(&b, "\r\033[Knode %-4d [%s] %3.0f%% compute %8.0f faults/s "
                  "%8.1f MB/s\n", k, bar, s.compute * 100, s.faults_s,
                  s.bytes_s / 1e6);
    }
    if (b.p)
        launch_outq_put(2, b.p, b.len);
    free(b.p);
    job->mon_lines = lines;
    return 1000;
}
