/* runtime/htask.c - tasks in a team with several threads per node (hybrid
 * nodes, hybrid.c): a deferred task goes into its node's queue, in the
 * process's memory, and is run by a thread of the same node: at a team
 * barrier or the region's end (a thread takes every queued task before it
 * arrives), or at a taskwait (the waiting thread takes its own task's
 * descendants only, so that a task holding a lock never runs an unrelated
 * one that wants it).  Tasks never leave their node yet: the queues across
 * nodes (task.c) are per node, and are used by teams of one thread per
 * node.  Every task's context counts its children not yet complete (for
 * taskwait) and is kept, by references from its children, as long as a
 * descendant may still walk up through it. */
#include "rt.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hctx {
    struct hctx *parent; /* the creating task's context (a reference) */
    int children;        /* children not yet complete */
    int refs;            /* running (1) + children created */
    int final;           /* its descendants run undeferred */
    int implicit;        /* a thread's implicit task: never freed */
};

struct htask {
    void (*fn)(void *);
    void *data;
    struct hctx *parent; /* holds a reference */
    int final;
    struct htask *next;
};

static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static struct htask *qhead, *qtail;
static int qlen;
static __thread struct hctx implicit_ctx = {.implicit = 1};
static __thread struct hctx *hcur;

static struct hctx *current(void)
{
    return hcur ? hcur : &implicit_ctx;
}

static void unref(struct hctx *c)
{
    while (c && !c->implicit &&
           __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        struct hctx *p = c->parent;
        free(c);
        c = p;
    }
}

/* Runs fn(data) as a task whose creator's context is parent (whose
 * reference it takes over). */
static void run_task(void (*fn)(void *), void *data, struct hctx *parent,
                     int final)
{
    struct hctx *c = malloc(sizeof *c);
    if (!c)
        ompdsm_fatal("out of memory for a task");
    *c = (struct hctx){parent, 0, 1, final, 0};
    struct hctx *saved = hcur;
    struct rt_wait_saved w;
    rt_wait_suspend(&w);
    hcur = c;
    fn(data);
    hcur = saved;
    rt_wait_resume(&w);
    __atomic_sub_fetch(&parent->children, 1, __ATOMIC_ACQ_REL);
    unref(c);
}

static int descends(const struct hctx *c, const struct hctx *want)
{
    for (; c; c = c->parent)
        if (c == want)
            return 1;
    return 0;
}

/* Takes the first queued task (descending from want, when not NULL). */
static struct htask *take(const struct hctx *want)
{
    if (!__atomic_load_n(&qlen, __ATOMIC_ACQUIRE))
        return NULL;
    pthread_mutex_lock(&qmu);
    struct htask *t = qhead, *prev = NULL;
    while (t && want && !descends(t->parent, want)) {
        prev = t;
        t = t->next;
    }
    if (t) {
        if (prev)
            prev->next = t->next;
        else
            qhead = t->next;
        if (qtail == t)
            qtail = prev;
        __atomic_sub_fetch(&qlen, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&qmu);
    return t;
}

static void run_queued(struct htask *t)
{
    RT_STAT(tasks_local, 1);
    run_task(t->fn, t->data, t->parent, t->final);
    free(t->data);
    free(t);
}

void rt_htask_create(void (*fn)(void *), void *data, unsigned long size,
                     unsigned long align, int flags)
{
    struct hctx *p = current();
    int final = (flags & OMPDSM_TASK_FINAL) || p->final;
    __atomic_add_fetch(&p->children, 1, __ATOMIC_ACQ_REL);
    if (!p->implicit)
        __atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
    if ((flags & OMPDSM_TASK_IF_FALSE) || final) {
        run_task(fn, data, p, final);
        return;
    }
    struct htask *t = malloc(sizeof *t);
    size_t al = align < sizeof(void *) ? sizeof(void *) : align;
    void *d = NULL;
    if (!t || posix_memalign(&d, al, size ? size : 1))
        ompdsm_fatal("out of memory for a task's %lu bytes", size);
    memcpy(d, data, size);
    *t = (struct htask){fn, d, p, final, NULL};
    RT_STAT(tasks_deferred, 1);
    pthread_mutex_lock(&qmu);
    if (qtail)
        qtail->next = t;
    else
        qhead = t;
    qtail = t;
    __atomic_add_fetch(&qlen, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&qmu);
}

static void pause_a_little(unsigned *idle)
{
    if (++*idle < 64) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

void rt_htask_wait(void)
{
    struct hctx *c = current();
    unsigned idle = 0;
    while (__atomic_load_n(&c->children, __ATOMIC_ACQUIRE)) {
        struct htask *t = take(c);
        if (t) {
            run_queued(t);
            idle = 0;
        } else {
            pause_a_little(&idle);
        }
    }
}

void rt_htask_drain(void)
{
    struct htask *t;
    while ((t = take(NULL)))
        run_queued(t);
    /* the implicit task's children are all complete once every thread of
     * the node has drained (the barrier that follows) */
}

void rt_htask_region_start(void)
{
    implicit_ctx = (struct hctx){.implicit = 1};
    hcur = NULL;
}
