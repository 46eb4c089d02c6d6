/* runtime/task.c - explicit tasks: deferred tasks queued per node, taken
 * by idle nodes at taskwait and barriers (own queue first, then stealing
 * from other nodes with remote atomics), the cut-off that runs tasks
 * undeferred, and the barrier rounds that complete every task.
 *
 * A deferred task is a descriptor in this node's task region
 * (RT_REG_TASK): the outlined function (valid on every node: the same
 * binary at the same address), the data ompcc packed (firstprivate
 * copies, addresses of shared variables, which are shared-heap addresses),
 * where its parent's children counter lives, and the identities of its
 * nearest ancestors.
 *
 * taskwait runs only descendants of the waiting task (OpenMP's task
 * scheduling constraint for tied tasks): a task holding a lock across
 * taskwait must not start an unrelated task that takes the same lock.  A
 * queued task is a descendant when the waiting task's identity is among
 * its TQ_ANC nearest ancestors; one deeper than that is left to others.
 * The region is not the shared heap: descriptors travel with one get, without page faults.
 *
 * A slot's state word goes EMPTY -> TAKEN (a thread of the owner node
 * claims it, by compare-and-swap, to write the descriptor) -> FULL ->
 * TAKEN (whoever claims it, by compare-and-swap, local or remote) -> EMPTY
 * (the claimer, after copying it out).  Only the owner node's threads
 * write descriptors, and only into slots they claimed.
 *
 * Consistency at task boundaries, not per access: the creator releases
 * before it publishes a task; a node that steals one acquires before
 * running it; a task whose parent is on another node releases before it
 * decrements the parent's counter; taskwait acquires after the counter
 * reached zero.  Barriers complete every task: each carries the team's
 * counts of deferred tasks created and completed, and while they differ
 * the members run what they find and meet again. */
#include "rt.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { TQ_SLOTS = 256, TQ_CTRS = 4096, TQ_DATA = 480, TQ_ANC = 8 };
enum { ST_EMPTY = 0, ST_FULL = 1, ST_TAKEN = 2 };
#define CTR_REMOTE (1ULL << 32)
#define CTR_PENDING(v) ((v) & (CTR_REMOTE - 1))

struct tq_desc {
    uint64_t fn;
    uint64_t parent;  /* (node + 1) << 32 | counter index; 0: none */
    uint32_t size, flags;
    uint64_t pad;
    uint64_t anc[TQ_ANC]; /* identities of the parent, its parent, ...;
                             0 past the root */
    unsigned char data[TQ_DATA];
} __attribute__((aligned(16)));

struct tq_area {
    volatile uint64_t count;          /* FULL slots (approximately) */
    volatile uint64_t arrive;         /* node 0's: arrivals at the team's
                                         barriers in this region */
    volatile uint64_t busy;           /* node 0's: tasks being run by nodes
                                         that arrived (rt_task_arrive) */
    volatile uint64_t state[TQ_SLOTS];
    volatile uint64_t ctr[TQ_CTRS];   /* children not yet completed (low
                                         32 bits), completed on another
                                         node (high 32 bits) */
    struct tq_desc slot[TQ_SLOTS];
};

/* A task being executed on this node: where its children counter is. */
struct task_ctx {
    int ctr;    /* index in tq->ctr, -1 until it defers a child */
    int final;  /* its descendants run undeferred */
    uint64_t id;             /* (node + 1) << 48 | sequence; 0 until needed */
    uint64_t anc[TQ_ANC];    /* as in tq_desc */
    uint64_t epoch;          /* implicit tasks: ctr is valid in this epoch */
};

/* With several threads per node (hybrid nodes) the node's threads share
 * the queue, the counters and the counts: slots are claimed by
 * compare-and-swap (a creator too: EMPTY -> TAKEN while it writes the
 * descriptor), counts are atomic, counters are allocated under ctr_mu.
 * A thread waiting in the node's barrier (hybrid.c) takes tasks
 * (rt_task_help) until the leader, about to hand the node's counts to the
 * network barrier, closes the node (help_closed) and waits for the helpers
 * running a task (help_busy) to finish: the counts are then those of a
 * node that runs nothing, as with one thread per node. */
static struct tq_area *tq;
static __thread struct task_ctx implicit_ctx = {-1, 0, 0, {0}, 0};
static __thread struct task_ctx *cur;
static uint64_t n_created, n_completed; /* deferred, since the last drain */
static pthread_mutex_t ctr_mu = PTHREAD_MUTEX_INITIALIZER;
static int ctr_next, ctr_free[TQ_CTRS], nfree;
static uint64_t ctr_epoch; /* counters freed all at once: implicit tasks'
                              ctr from an older epoch is stale */
static uint64_t id_seq;
static __thread unsigned push_at;
static __thread unsigned rng;
static uint64_t queue_max, tiny_ns;
static int tasks_on;    /* this region's unit creates tasks */
static int prog_tasks;  /* some unit of the program creates tasks */
static uint64_t bar_b;  /* barriers of this region with an arrival phase */
static int help_closed, help_busy;
/* Bumped when a waiting thread may find something new: a task queued on
 * this node, the node opened, a barrier word changed (rt_task_kick). */
static uint32_t ev, ev_sleep;

/* Mean duration of each task function, sampled, for the cut-off. */
enum { FN_TAB = 64, FN_SAMPLE_EVERY = 16, FN_MIN_SAMPLES = 4 };
static struct fn_time {
    uint64_t fn, calls, samples, ns;
} fn_tab[FN_TAB];

static struct fn_time *fn_time_of(uint64_t fn)
{
    unsigned h = (unsigned)((fn >> 4) * 2654435761u) % FN_TAB;
    for (unsigned i = 0; i < FN_TAB; i++) {
        struct fn_time *e = &fn_tab[(h + i) % FN_TAB];
        uint64_t f = __atomic_load_n(&e->fn, __ATOMIC_ACQUIRE);
        if (!f && __atomic_compare_exchange_n(&e->fn, &f, fn, 0,
                                              __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE))
            return e;
        if (f == fn)
            return e;
    }
    return NULL;
}

static unsigned next_rand(void)
{
    if (!rng)
        rng = 12345u + 7919u * (unsigned)comm_rank() +
              104729u * (unsigned)rt_self.local;
    return (rng = rng * 1103515245u + 12345u) >> 8;
}

static uint64_t off_of(const volatile void *p)
{
    return (uint64_t)((const char *)p - (const char *)tq);
}

void rt_task_setup(void)
{
    tq = rt_region_map(RT_REG_TASK, sizeof(struct tq_area), "ompdsm-task",
                       "task region");
    queue_max = ompdsm_env_u64("OMPDSM_TASK_QUEUE", 16, 0, TQ_SLOTS, 0);
    tiny_ns = 1000 * ompdsm_env_u64("OMPDSM_TASK_TINY_US", 20, 0, 1000000, 0);
}

static struct task_ctx *current(void)
{
    if (cur)
        return cur;
    uint64_t e = __atomic_load_n(&ctr_epoch, __ATOMIC_ACQUIRE);
    if (implicit_ctx.epoch != e) {
        implicit_ctx.ctr = -1;
        implicit_ctx.epoch = e;
    }
    return &implicit_ctx;
}

static uint64_t ctx_id(struct task_ctx *c)
{
    if (!c->id)
        c->id = ((uint64_t)(comm_rank() + 1) << 48) |
                __atomic_add_fetch(&id_seq, 1, __ATOMIC_RELAXED);
    return c->id;
}

/* Is a task whose ancestors are anc a descendant of the task with
 * identity want?  (want 0: any task will do.) */
static int descends(const volatile uint64_t *anc, uint64_t want)
{
    if (!want)
        return 1;
    for (int k = 0; k < TQ_ANC && anc[k]; k++)
        if (anc[k] == want)
            return 1;
    return 0;
}

static int ctr_alloc(void)
{
    int c;
    pthread_mutex_lock(&ctr_mu);
    if (nfree)
        c = ctr_free[--nfree];
    else
        c = ctr_next < TQ_CTRS ? ctr_next++ : -1;
    pthread_mutex_unlock(&ctr_mu);
    return c;
}

/* A finished task gives its counter back once no child can touch it any
 * more; a counter with children still out stays taken until the next
 * drained barrier frees them all. */
static void ctx_end(struct task_ctx *c)
{
    if (c->ctr >= 0 &&
        CTR_PENDING(__atomic_load_n(&tq->ctr[c->ctr], __ATOMIC_ACQUIRE)) == 0) {
        __atomic_store_n(&tq->ctr[c->ctr], 0, __ATOMIC_RELAXED);
        pthread_mutex_lock(&ctr_mu);
        ctr_free[nfree++] = c->ctr;
        pthread_mutex_unlock(&ctr_mu);
    }
}

static void run_fn(void (*fn)(void *), void *data, int final,
                   const uint64_t *anc)
{
    struct task_ctx c = {-1, final, 0, {0}, 0}, *saved = cur;
    memcpy(c.anc, anc, sizeof c.anc);
    struct fn_time *ft = fn_time_of((uint64_t)(uintptr_t)fn);
    int sample = ft && __atomic_fetch_add(&ft->calls, 1, __ATOMIC_RELAXED) %
                       FN_SAMPLE_EVERY == 0;
    uint64_t t0 = sample ? ompdsm_now_ns() : 0;
    struct rt_wait_saved w;
    rt_wait_suspend(&w);
    cur = &c;
    fn(data);
    cur = saved;
    rt_wait_resume(&w);
    if (sample) {
        __atomic_fetch_add(&ft->ns, ompdsm_now_ns() - t0, __ATOMIC_RELAXED);
        __atomic_fetch_add(&ft->samples, 1, __ATOMIC_RELAXED);
    }
    ctx_end(&c);
}

/* Set while this thread takes tasks in a barrier's arrival phase: the
 * tasks it runs then count in node 0's busy word, from before their claim
 * (busy_claim) to their end. */
static __thread int in_arrival;

/* Before a claim in the arrival phase (d 1), and after it failed or its
 * task ended (d -1).  Counting from before the claim: a node that sees
 * busy 0 after its queue was empty knows that nobody holds a task taken
 * from it (a thief counted itself before the claim, and the count came
 * down only after the claim); counted after the claim, a thief that had
 * taken a task but not yet counted it (its dsm_acquire lies between)
 * let the creating node leave with the task waiting for others (issue 15,
 * task_spread on 2 nodes). */
static void busy_claim(int d)
{
    uint64_t old;
    if (in_arrival)
        COMM_CHECK(comm_fetch_add(0, RT_REG_TASK, off_of(&tq->busy),
                                  (uint64_t)(int64_t)d, &old));
}

/* Runs a descriptor copied out of a queue (claimed under busy_claim). */
static void run_desc(struct tq_desc *d, int stolen)
{
    if (stolen) {
        dsm_atomic_drain();
        dsm_acquire();
    }
    run_fn((void (*)(void *))(uintptr_t)d->fn, d->data,
           !!(d->flags & OMPDSM_TASK_FINAL), d->anc);
    busy_claim(-1);
    if (d->parent) {
        int node = (int)(d->parent >> 32) - 1;
        uint32_t idx = (uint32_t)d->parent;
        if (node == comm_rank()) {
            __atomic_fetch_sub(&tq->ctr[idx], 1, __ATOMIC_RELEASE);
        } else {
            /* one child fewer, one more that ran elsewhere: the parent's
             * taskwait must acquire */
            uint64_t old;
            dsm_atomic_drain();
            dsm_release();
            COMM_CHECK(comm_fetch_add(node, RT_REG_TASK, off_of(&tq->ctr[idx]),
                                      CTR_REMOTE - 1, &old));
        }
    }
    __atomic_fetch_add(&n_completed, 1, __ATOMIC_RELAXED);
}

/* Claims a FULL slot of this node's queue holding a descendant of the
 * task want (0: any), newest first (depth first, like a recursive program
 * run serially). */
static int take_local(struct tq_desc *out, uint64_t want)
{
    if (!__atomic_load_n(&tq->count, __ATOMIC_ACQUIRE))
        return 0;
    for (unsigned j = 1; j <= TQ_SLOTS; j++) {
        unsigned i = (push_at + TQ_SLOTS - j) % TQ_SLOTS;
        uint64_t exp = ST_FULL;
        if (tq->state[i] != ST_FULL || !descends(tq->slot[i].anc, want))
            continue;
        busy_claim(1);
        if (!__atomic_compare_exchange_n(&tq->state[i], &exp, ST_TAKEN, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            busy_claim(-1);
            continue;
        }
        memcpy(out, &tq->slot[i], sizeof *out);
        if (!descends(out->anc, want)) {
            /* refilled between the look and the claim: put it back */
            __atomic_store_n(&tq->state[i], ST_FULL, __ATOMIC_RELEASE);
            busy_claim(-1);
            continue;
        }
        __atomic_fetch_sub(&tq->count, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&tq->state[i], ST_EMPTY, __ATOMIC_RELEASE);
        return 1;
    }
    return 0;
}

/* Claims one task from node v's queue that descends from the task want
 * (0: any), scanning from a random slot. */
static int steal_from(int v, struct tq_desc *out, uint64_t want)
{
    uint64_t cnt, st[TQ_SLOTS], old, anc[TQ_ANC];
    COMM_CHECK(comm_get(v, RT_REG_TASK, off_of(&tq->count), &cnt, sizeof cnt));
    if (!cnt)
        return 0;
    COMM_CHECK(comm_get(v, RT_REG_TASK, off_of(tq->state), st, sizeof st));
    unsigned start = next_rand();
    for (unsigned j = 0; j < TQ_SLOTS; j++) {
        unsigned i = (start + j) % TQ_SLOTS;
        if (st[i] != ST_FULL)
            continue;
        if (want) {
            COMM_CHECK(comm_get(v, RT_REG_TASK, off_of(tq->slot[i].anc), anc,
                                sizeof anc));
            if (!descends(anc, want))
                continue;
        }
        busy_claim(1);
        COMM_CHECK(comm_cas(v, RT_REG_TASK, off_of(&tq->state[i]), ST_FULL,
                            ST_TAKEN, &old));
        if (old != ST_FULL) {
            busy_claim(-1);
            continue;
        }
        COMM_CHECK(comm_get(v, RT_REG_TASK, off_of(&tq->slot[i]), out, sizeof *out));
        if (!descends(out->anc, want)) {
            /* refilled between the look and the claim: put it back */
            COMM_CHECK(comm_cas(v, RT_REG_TASK, off_of(&tq->state[i]), ST_TAKEN,
                                ST_FULL, &old));
            busy_claim(-1);
            continue;
        }
        COMM_CHECK(comm_fetch_add(v, RT_REG_TASK, off_of(&tq->count),
                                  (uint64_t)-1, &old));
        COMM_CHECK(comm_cas(v, RT_REG_TASK, off_of(&tq->state[i]), ST_TAKEN,
                            ST_EMPTY, &old));
        return 1;
    }
    return 0;
}

/* Runs one queued task of the team that descends from the task want (0:
 * any): this node's first, then another node's, starting from a random
 * one.  0 when none was found. */
static int run_one(uint64_t want)
{
    struct tq_desc d;
    int nodes = rt_self.group.nodes, me = comm_rank();
    if (take_local(&d, want)) {
        RT_STAT(tasks_local, 1);
        run_desc(&d, 0);
        return 1;
    }
    if (nodes <= 1)
        return 0;
    int first = (int)(next_rand() % (unsigned)nodes);
    for (int k = 0; k < nodes; k++) {
        int v = (first + k) % nodes;
        if (v != me && steal_from(v, &d, want)) {
            RT_STAT(tasks_stolen, 1);
            run_desc(&d, 1);
            return 1;
        }
    }
    return 0;
}

static void kick(void)
{
    __atomic_fetch_add(&ev, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ev_sleep, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &ev, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void rt_task_kick(void)
{
    kick();
}

/* Waiting with nothing to run: spin a little, then sleep in growing
 * steps up to a millisecond, looking for work between them (other nodes'
 * queues are only looked at; this node's events, e0 the event count seen
 * before looking, end a sleep at once). */
static void backoff_ev(unsigned *idle, uint32_t e0)
{
    unsigned n = ++*idle;
    if (n < 16) {
        sched_yield();
        return;
    }
    long us = n < 26 ? 1L << (n - 16) : 1000;
    struct timespec ts = {0, (us > 1000 ? 1000 : us) * 1000};
    __atomic_fetch_add(&ev_sleep, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ev, __ATOMIC_SEQ_CST) == e0)
        syscall(SYS_futex, &ev, FUTEX_WAIT_PRIVATE, e0, &ts, NULL, 0);
    __atomic_fetch_sub(&ev_sleep, 1, __ATOMIC_SEQ_CST);
}

static void backoff(unsigned *idle)
{
    backoff_ev(idle, __atomic_load_n(&ev, __ATOMIC_SEQ_CST));
}

/* Another thread of the node is waiting in a barrier: runs one task of
 * the team unless the node is closed.  1 when it ran one. */
static int help_one(void)
{
    int ran = 0;
    __atomic_fetch_add(&help_busy, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&help_closed, __ATOMIC_SEQ_CST))
        ran = run_one(0);
    __atomic_fetch_sub(&help_busy, 1, __ATOMIC_SEQ_CST);
    return ran;
}

/* The leader, before its node's counts go into a network barrier: no
 * helper starts a task any more, and none is running one.  While one
 * still runs a task, the leader runs the team's tasks too: the helper's
 * task may wait for another to run (task_spread's tasks wait until one
 * has run on another thread), and on one node nobody else would.  help:
 * the caller is a member in a barrier's arrival phase (rt_self is the
 * member's), which may run tasks. */
static void close_node(int help)
{
    unsigned idle = 0;
    __atomic_store_n(&help_closed, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&help_busy, __ATOMIC_SEQ_CST)) {
        uint32_t e0 = __atomic_load_n(&ev, __ATOMIC_SEQ_CST);
        if (help && run_one(0))
            idle = 0;
        else
            backoff_ev(&idle, e0);
    }
}

static void open_node(void)
{
    __atomic_store_n(&help_closed, 0, __ATOMIC_SEQ_CST);
    kick();
}

int rt_task_program(void)
{
    return __atomic_load_n(&prog_tasks, __ATOMIC_RELAXED);
}

int rt_task_help(unsigned *idle)
{
    if (!__atomic_load_n(&prog_tasks, __ATOMIC_RELAXED) || rt_self.nthreads <= 1 ||
        rt_self.level != 1)
        return 0;
    uint32_t e0 = __atomic_load_n(&ev, __ATOMIC_SEQ_CST);
    if (help_one())
        *idle = 0;
    else
        backoff_ev(idle, e0);
    return 1;
}

/* Should a task of fn be deferred now?  Not when this node's queue holds
 * queue_max tasks already (idle nodes have enough to take), nor when
 * tasks of fn measured tiny and the queue is not empty (a descriptor and
 * a steal would cost more than the task). */
static int worth_deferring(uint64_t fn)
{
    uint64_t q = __atomic_load_n(&tq->count, __ATOMIC_RELAXED);
    if (q >= queue_max)
        return 0;
    if (!q)
        return 1;
    struct fn_time *ft = fn_time_of(fn);
    if (!ft)
        return 1;
    uint64_t n = __atomic_load_n(&ft->samples, __ATOMIC_RELAXED),
             ns = __atomic_load_n(&ft->ns, __ATOMIC_RELAXED);
    return n < FN_MIN_SAMPLES || ns / n >= tiny_ns;
}

static int push(void (*fn)(void *), const void *data, unsigned long size,
                int flags)
{
    struct task_ctx *c = current();
    unsigned i, j;
    if (c->ctr < 0 && (c->ctr = ctr_alloc()) < 0)
        return 0;
    /* (TAKEN while this thread writes it: nobody else touches the slot) */
    for (j = 0; j < TQ_SLOTS; j++) {
        uint64_t exp = ST_EMPTY;
        i = (push_at + j) % TQ_SLOTS;
        if (tq->state[i] == ST_EMPTY &&
            __atomic_compare_exchange_n(&tq->state[i], &exp, ST_TAKEN, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            break;
    }
    if (j == TQ_SLOTS)
        return 0;
    struct tq_desc *d = &tq->slot[i];
    d->fn = (uint64_t)(uintptr_t)fn;
    d->parent = ((uint64_t)(comm_rank() + 1) << 32) | (uint32_t)c->ctr;
    d->size = (uint32_t)size;
    d->flags = (uint32_t)flags;
    d->anc[0] = ctx_id(c);
    memcpy(&d->anc[1], c->anc, sizeof d->anc - sizeof d->anc[0]);
    memcpy(d->data, data, size);
    __atomic_fetch_add(&tq->ctr[c->ctr], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&n_created, 1, __ATOMIC_RELAXED);
    /* the creator's writes before the task are the task's to see */
    dsm_atomic_drain();
    dsm_release();
    __atomic_fetch_add(&tq->count, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&tq->state[i], ST_FULL, __ATOMIC_RELEASE);
    push_at = (i + 1) % TQ_SLOTS;
    if (rt_self.nlocal > 1)
        kick(); /* a sibling waiting in a barrier takes it */
    return 1;
}

RT_API void OMPDSM_task(void (*fn)(void *), void *data, unsigned long size,
                        unsigned long align, int flags)
{
    RT_STAT(tasks_created, 1);
    if (current()->final)
        flags |= OMPDSM_TASK_FINAL;
    if (!(flags & (OMPDSM_TASK_IF_FALSE | OMPDSM_TASK_FINAL)) &&
        rt_self.nthreads > 1 && rt_self.level == 1 && size <= TQ_DATA && align <= 16 &&
        worth_deferring((uint64_t)(uintptr_t)fn) && push(fn, data, size, flags)) {
        RT_STAT(tasks_deferred, 1);
        return;
    }
    struct task_ctx *c = current();
    uint64_t anc[TQ_ANC];
    anc[0] = ctx_id(c);
    memcpy(&anc[1], c->anc, sizeof anc - sizeof anc[0]);
    run_fn(fn, data, !!(flags & OMPDSM_TASK_FINAL), anc);
}

void *rt_task_nest_enter(void)
{
    struct task_ctx *c = malloc(sizeof *c), *saved = cur;
    if (!c)
        ompdsm_fatal("out of memory starting a nested region's implicit task");
    *c = (struct task_ctx){-1, 0, 0, {0}, 0};
    cur = c;
    return saved;
}

void rt_task_nest_leave(void *saved)
{
    struct task_ctx *c = cur;
    ctx_end(c); /* (nothing to give back: a nested team's tasks run
                   undeferred, so its implicit tasks take no counter) */
    free(c);
    cur = saved;
}

RT_API void OMPDSM_taskwait(void)
{
    struct task_ctx *c = current();
    unsigned idle = 0;
    if (c->ctr < 0)
        return; /* no child was deferred: all ran already */
    uint64_t v, want = ctx_id(c);
    while (CTR_PENDING(v = __atomic_load_n(&tq->ctr[c->ctr], __ATOMIC_ACQUIRE))) {
        if (run_one(want))
            idle = 0;
        else
            backoff(&idle);
    }
    if (v >= CTR_REMOTE) {
        /* (no child is out: nothing else writes the word now) */
        __atomic_store_n(&tq->ctr[c->ctr], 0, __ATOMIC_RELAXED);
        dsm_atomic_drain();
        dsm_acquire();
    }
}

/* ---- barriers ---- */

RT_API void OMPDSM_task_region(void)
{
    /* Called outside any region by a constructor of each unit with
     * tasks: every region of the program may then create tasks (from a
     * function of that unit), so all of them start with tasks_on. */
    if (rt_self.level == 0) {
        prog_tasks = 1;
        return;
    }
    /* Only a region every member starts (a nested region, run by one
     * thread inside the team's region, would make this node alone wait
     * for arrivals at the outer team's barriers). */
    if (rt_self.level == 1 && rt_self.nthreads > 1 && rt_self.local == 0)
        tasks_on = 1;
}

void rt_task_region_start(void)
{
    /* (a team region: level 1; nested ones never come here; the node's
     * other threads may have started already and must not reset what the
     * leader counts) */
    if (rt_self.local == 0) {
        tasks_on = prog_tasks && rt_self.level == 1 && rt_self.nthreads > 1;
        bar_b = 0;
    }
}

void rt_task_region_end(void)
{
    /* every member is past its last arrival; the next region's first one
     * comes after node 0's next fork */
    if (comm_rank() == 0)
        __atomic_store_n(&tq->arrive, 0, __ATOMIC_RELAXED);
    tasks_on = 0;
}

void rt_task_arrive(struct rt_thread *member)
{
    if (!tasks_on || member->nthreads <= 1) {
        close_node(0);
        return;
    }
    uint64_t target = ++bar_b * (uint64_t)member->group.nodes, seen;
    unsigned idle = 0;
    struct rt_thread saved = rt_self;
    COMM_CHECK(comm_fetch_add(0, RT_REG_TASK, off_of(&tq->arrive), 1, &seen));
    rt_self = *member;
    /* Take tasks until every node has arrived and none of them is still
     * running a task taken here: a node that left while another ran a
     * long task would wait in the network barrier with tasks still
     * queued (a task waiting for its siblings to run elsewhere waited 5 s
     * for nothing in task_spread).  The barrier's rounds complete
     * whatever is left either way. */
    in_arrival = 1;
    for (;;) {
        uint64_t ab[2]; /* arrive, busy */
        /* this node's queue first, then busy: see busy_claim */
        uint64_t queued = __atomic_load_n(&tq->count, __ATOMIC_SEQ_CST);
        if (comm_rank() == 0) {
            ab[0] = __atomic_load_n(&tq->arrive, __ATOMIC_ACQUIRE);
            ab[1] = __atomic_load_n(&tq->busy, __ATOMIC_ACQUIRE);
        } else {
            COMM_CHECK(comm_get(0, RT_REG_TASK, off_of(&tq->arrive), ab,
                                sizeof ab));
        }
        /* (and no helper of this node runs a task: issue 15, on 1 node
         * x 2 threads the leader arrived while its helper ran a task
         * waiting for another to run, closed the node and waited 5 s for
         * it without running the others) */
        if (ab[0] >= target && !ab[1] && !queued &&
            !__atomic_load_n(&help_busy, __ATOMIC_SEQ_CST))
            break;
        uint32_t e0 = __atomic_load_n(&ev, __ATOMIC_SEQ_CST);
        if (run_one(0))
            idle = 0;
        else
            backoff_ev(&idle, e0);
    }
    /* (closing, it may run tasks: as the member, and counted busy) */
    close_node(1);
    in_arrival = 0;
    (void)seen;
    *member = rt_self;
    rt_self = saved;
}

struct task_rec {
    uint64_t created, completed;
};

void rt_task_append(struct comm_buf *up)
{
    if (!n_created && !n_completed)
        return;
    struct task_rec r = {n_created, n_completed};
    if (rt_ext_append(up, RT_REC_TASK, &r, sizeof r) < 0)
        ompdsm_fatal("out of memory for a barrier's task counts");
}

void rt_task_combine(void *acc, const void *in)
{
    struct task_rec a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, in, sizeof b);
    a.created += b.created;
    a.completed += b.completed;
    memcpy(acc, &a, sizeof a);
}

/* Do the team's counts in a barrier's result say tasks are left?  When
 * none are, every counter is free again. */
static int tasks_left(const struct comm_buf *down)
{
    size_t len;
    const void *p = rt_ext_find(down->data, down->len, RT_REC_TASK, &len);
    struct task_rec r;
    if (!p || len != sizeof r)
        return 0;
    memcpy(&r, p, sizeof r);
    if (r.created != r.completed)
        return 1;
    /* (the node is closed: none of its threads runs a task) */
    n_created = n_completed = 0;
    pthread_mutex_lock(&ctr_mu);
    ctr_next = nfree = 0;
    pthread_mutex_unlock(&ctr_mu);
    __atomic_add_fetch(&ctr_epoch, 1, __ATOMIC_RELEASE);
    implicit_ctx.ctr = -1;
    return 0;
}

int rt_task_rounds(struct comm_group g, struct comm_buf *down,
                   struct rt_thread *member)
{
    int rounds = 0;
    while (tasks_left(down)) {
        open_node();
        if (member) {
            struct rt_thread saved = rt_self;
            rt_self = *member;
            while (run_one(0))
                ;
            *member = rt_self;
            rt_self = saved;
            /* a member that ran out keeps taking tasks (new ones, created
             * by tasks still running elsewhere) until every member has */
            dsm_lock_settle();
            rt_task_arrive(member);
        }
        struct comm_buf up = {0};
        comm_buf_free(down);
        rt_task_append(&up);
        struct dsm_sync_ext ext = {up.data, up.len, rt_ext_combine, rt_ext_at_root,
                                   NULL, down};
        dsm_lock_settle();
        dsm_barrier(g, &ext);
        comm_buf_free(&up);
        rounds++;
    }
    open_node();
    return rounds;
}

void rt_task_stats(struct rt_stats *s)
{
    s->tasks_remote = s->tasks_deferred - s->tasks_local;
}
