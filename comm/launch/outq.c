/* comm/launch/outq.c - output queues: a writer thread for our stdout and
 * one for our stderr (one for both if they are the same file), so that a
 * reader that stops reading (a pager, a stopped pipeline) blocks only that
 * thread, never the event loop that handles failures and signals.  A queue
 * that grows too long makes the loop stop reading the nodes' pipes, which
 * pushes back on the nodes exactly as a direct pipe would. */
#include "launch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/util/base.h"

/* Queue lengths where reading the nodes' pipes stops and resumes. */
#define OUTQ_HIGH (4u << 20)
#define OUTQ_LOW (1u << 20)

struct outq_buf {
    struct outq_buf *next;
    int fd;
    size_t len;
    char data[];
};

/* One writer thread.  When our stdout and stderr are the same file (2>&1,
 * a terminal), one writer serves both: two threads writing one pipe could
 * interleave inside a line. */
struct writer {
    pthread_t thread;
    int started;
    /* lock protects every field below */
    pthread_mutex_t lock;
    pthread_cond_t cond;       /* work for the writer */
    struct outq_buf *head, *tail;
    size_t queued;             /* bytes in the queue */
    int full;                  /* above OUTQ_HIGH until below OUTQ_LOW */
    int quit;                  /* finish: wake the loop when empty */
    int dead[3];               /* a write to fd failed: drop its output */
};

static struct writer writers[2] = {
    {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER},
    {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER},
};
/* The writer of fd 1 and of fd 2. */
static struct writer *route[3] = {NULL, &writers[0], &writers[1]};
static int wake_fd = -1;

/* Blocking write of everything; 0, or -errno when the reader is gone. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) { /* someone made it non-blocking */
                struct pollfd pf = {.fd = fd, .events = POLLOUT};
                poll(&pf, 1, -1);
                continue;
            }
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void wake_loop(void)
{
    uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof one);
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;

    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->quit)
            pthread_cond_wait(&w->cond, &w->lock);
        if (!w->head)
            break;
        struct outq_buf *b = w->head;
        int dead = w->dead[b->fd];
        pthread_mutex_unlock(&w->lock);
        int rc = dead ? 0 : write_all(b->fd, b->data, b->len);
        pthread_mutex_lock(&w->lock);
        if (rc < 0)
            w->dead[b->fd] = 1; /* EPIPE: the job goes on, unheard */
        w->head = b->next;
        if (!w->head)
            w->tail = NULL;
        w->queued -= b->len;
        free(b);
        if ((w->full && w->queued <= OUTQ_LOW) || (w->quit && !w->head)) {
            w->full = 0;
            wake_loop();
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static int same_file(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
           sa.st_rdev == sb.st_rdev;
}

int launch_outq_start(void)
{
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0) {
        fprintf(stderr, "ompdsmrun: warning: eventfd: %s; output is "
                "written directly\n", strerror(errno));
        return -errno;
    }
    if (same_file(1, 2))
        route[2] = &writers[0];
    for (int i = 0; i < 2 && (i == 0 || route[2] == &writers[1]); i++) {
        int rc = pthread_create(&writers[i].thread, NULL, writer_main,
                                &writers[i]);
        if (rc) {
            fprintf(stderr, "ompdsmrun: warning: pthread_create: %s; "
                    "output is written directly\n", strerror(rc));
            continue;
        }
        writers[i].started = 1;
    }
    return 0;
}

void launch_outq_put(int fd, const char *p, size_t n)
{
    struct writer *w = route[fd];

    if (!n)
        return;
    if (!w->started) { /* before start, or no thread: write directly */
        if (!w->dead[fd] && write_all(fd, p, n) < 0)
            w->dead[fd] = 1;
        return;
    }
    struct outq_buf *b = malloc(sizeof *b + n);
    if (!b)
        return; /* rather lose this batch than the job */
    b->next = NULL;
    b->fd = fd;
    b->len = n;
    memcpy(b->data, p, n);
    pthread_mutex_lock(&w->lock);
    if (w->dead[fd]) {
        free(b);
    } else {
        if (w->tail)
            w->tail->next = b;
        else
            w->head = b;
        w->tail = b;
        w->queued += n;
        if (w->queued > OUTQ_HIGH)
            w->full = 1;
        pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
}

int launch_outq_full(int fd)
{
    struct writer *w = route[fd];
    if (!w->started)
        return 0;
    pthread_mutex_lock(&w->lock);
    int full = w->full;
    pthread_mutex_unlock(&w->lock);
    return full;
}

int launch_outq_wake_fd(void)
{
    return wake_fd;
}

void launch_outq_woken(void)
{
    uint64_t v;
    (void)!read(wake_fd, &v, sizeof v);
}

/* Tells the writers to finish; returns whether all queues are empty. */
static int queues_empty(void)
{
    int empty = 1;
    for (int i = 0; i < 2; i++) {
        struct writer *w = &writers[i];
        if (!w->started)
            continue;
        pthread_mutex_lock(&w->lock);
        w->quit = 1;
        pthread_cond_signal(&w->cond);
        if (w->head)
            empty = 0;
        pthread_mutex_unlock(&w->lock);
    }
    return empty;
}

int launch_outq_finish(struct launch_job *job, double deadline)
{
    int sig = 0;

    /* Wait, still answering signals: a user must be able to interrupt a
     * launcher whose reader stopped reading. */
    while (!queues_empty()) {
        int ms = -1;
        if (deadline > 0) {
            double left = deadline - ompdsm_now();
            if (left <= 0)
                return 0;
            ms = (int)(left * 1000.0) + 1;
        }
        struct pollfd pf[2] = {{.fd = job->sigfd, .events = POLLIN},
                               {.fd = wake_fd, .events = POLLIN}};
        if (poll(pf, 2, ms) < 0 && errno != EINTR)
            return 0;
        if (pf[1].revents)
            launch_outq_woken();
        struct signalfd_siginfo si;
        while (read(job->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
            int s = (int)si.ssi_signo;
            if (s == SIGINT || s == SIGTERM || s == SIGHUP || s == SIGQUIT)
                sig = s;
            else if (s == SIGTSTP)
                kill(getpid(), SIGSTOP);
        }
        if (sig)
            return sig; /* the writers may stay blocked: exit ends them */
    }
    for (int i = 0; i < 2; i++)
        if (writers[i].started) {
            pthread_join(writers[i].thread, NULL);
            writers[i].started = 0;
        }
    return 0;
}
