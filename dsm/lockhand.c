/* dsm/lockhand.c - hand-over of a lock between threads of one node: the
 * node-local entries that dsm_lock, dsm_trylock and dsm_unlock (lock.c)
 * take and leave around the queue lock across nodes.
 *
 * The node's threads that want one lock meet inside the node first, on a
 * lock of the node's own (an entry per lock some thread of the node holds
 * or waits for), and only the thread that holds the entry takes part in
 * the MCS queue across nodes (lock.c): the node holds at most one queue node per
 * lock.  A thread that unlocks while another thread of its node waits on
 * the entry leaves the lock with the node (`global`): the entry is free,
 * and whichever of the node's threads takes it next holds the lock with no
 * message, through the same queue node, and with no release and no
 * acquire between the two (they share the node's page copies; the entry's
 * mutex orders their accesses).  With lazy release the hand-over counts as
 * a skipped release (the writes become visible elsewhere within about
 * 1 ms, or when another node takes the lock); with it off it releases, as
 * every unlock does.
 *
 * Not FIFO inside the node: a running thread may take the entry again
 * before a waiter that was asleep wakes up (as a pthread mutex), which
 * keeps a lock that is passed every microsecond from waiting for a wake-up
 * per pair: with a strict hand-over to the next waiter (a ticket lock) two
 * threads of one node on 2 busy cores paid a wake-up a pair, many times
 * what the former lock, which let one thread run on while the other
 * queued across nodes, took even over tcp (docs/design.md, "Hand-over
 * inside a node").
 *
 * Fairness across nodes: while a waiter of another node is linked behind
 * the node's queue node, at most OMPDSM_LOCK_LOCAL (K) hand-overs in a row
 * stay in the node (dsm_unlock counts them in the entry's `passes`); the
 * next unlock hands the lock on through the queue as before, and the
 * node's next thread queues again behind that waiter.
 * With no other node waiting the hand-overs are unbounded (nobody to
 * starve).  OMPDSM_LOCK_LOCAL=0 turns the layer off (every thread queues
 * across nodes, as before).
 *
 * Waiting spins as comm's waits do when nodes outnumber the cores
 * (ompdsm_spin_us: 2 us by default; OMPDSM_SPIN_US, OMP_WAIT_POLICY), then
 * yields LOCAL_YIELDS times, then sleeps on the entry's release count (a
 * futex; a 200 ms timeout only bounds a lost wake-up).  Why short: the
 * sections under a lock are short, and a waiter that spins longer holds a
 * core the holder may need (with 2 threads per node on 2 busy cores, a
 * longer spin made a local lock pair many times slower than no spin, with
 * the FIFO version: docs/design.md, "Hand-over inside a node"). */
#include "dsm_int.h"
#include "comm/util/futex.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

enum { LSTRIPES = 64, LOCAL_YIELDS = 4 };

static struct lstripe {
    pthread_mutex_t mu;
    struct dsm_llock *active, *free;
} lstripes[LSTRIPES];
static uint64_t local_spin_ns;

void dsm_llock_init(void)
{
    for (int i = 0; i < LSTRIPES; i++)
        pthread_mutex_init(&lstripes[i].mu, NULL);
    local_spin_ns = ompdsm_spin_us(1) * 1000;
}

static struct lstripe *lstripe(uint32_t id)
{
    return &lstripes[id % LSTRIPES];
}

/* Lock id's entry, made if there is none (stripe mutex held). */
static struct dsm_llock *lfind(struct lstripe *s, uint32_t id)
{
    struct dsm_llock *e = s->active;
    while (e && e->id != id)
        e = e->next;
    if (e)
        return e;
    e = s->free;
    if (e) {
        s->free = e->next;
    } else {
        e = calloc(1, sizeof *e);
        if (!e)
            ompdsm_fatal("out of memory for a lock's node-local entry");
    }
    e->id = id;
    e->users = 0;
    e->held = 0;
    e->waiting = 0;
    e->global = 0;
    e->passes = 0;
    e->next = s->active;
    s->active = e;
    return e;
}

/* Takes the entry (stripe mutex held, entry free): returns whether the
 * node holds the lock already (handed over). */
static int ltake(struct dsm_llock *e)
{
    __atomic_store_n(&e->held, 1, __ATOMIC_RELAXED);
    int g = (int)e->global;
    e->global = 0;
    return g;
}

/* Takes lock id's entry, waiting while another thread of the node holds
 * it.  Returns it, *handed: whether the node holds the lock already;
 * *t0: when it started to wait, if it waited. */
struct dsm_llock *dsm_llock_acquire(uint32_t id, int *handed, uint64_t *t0)
{
    struct lstripe *s = lstripe(id);
    pthread_mutex_lock(&s->mu);
    struct dsm_llock *e = lfind(s, id);
    e->users++;
    if (!e->held) {
        *handed = ltake(e);
        pthread_mutex_unlock(&s->mu);
        return e;
    }
    __atomic_store_n(&e->waiting, e->waiting + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->mu);
    /* Spin and yield while it looks held, then sleep until it is freed. */
    *t0 = ompdsm_now_ns();
    uint64_t end = *t0 + local_spin_ns;
    unsigned yields = 0;
    for (;;) {
        if (__atomic_load_n(&e->held, __ATOMIC_RELAXED)) {
            if (local_spin_ns && ompdsm_now_ns() < end) {
                for (int i = 0; i < 64; i++)
                    ompdsm_cpu_relax();
                continue;
            }
            if (yields < LOCAL_YIELDS) {
                yields++;
                sched_yield();
                continue;
            }
        }
        pthread_mutex_lock(&s->mu);
        if (!e->held) {
            __atomic_store_n(&e->waiting, e->waiting - 1, __ATOMIC_RELAXED);
            *handed = ltake(e);
            pthread_mutex_unlock(&s->mu);
            return e;
        }
        e->sleepers++;
        uint32_t v = e->seq;
        pthread_mutex_unlock(&s->mu);
        struct timespec ts = {0, 200 * 1000 * 1000};
        ompdsm_futex(&e->seq, FUTEX_WAIT_PRIVATE, v, &ts);
        pthread_mutex_lock(&s->mu);
        e->sleepers--;
        pthread_mutex_unlock(&s->mu);
    }
}

/* Takes lock id's entry if it is free (NULL otherwise); *handed: whether
 * the node holds the lock already. */
struct dsm_llock *dsm_llock_try(uint32_t id, int *handed)
{
    struct lstripe *s = lstripe(id);
    pthread_mutex_lock(&s->mu);
    struct dsm_llock *e = lfind(s, id);
    if (e->held) {
        pthread_mutex_unlock(&s->mu);
        return NULL;
    }
    e->users++;
    *handed = ltake(e);
    pthread_mutex_unlock(&s->mu);
    return e;
}

/* Frees the entry (stripe mutex held): returns whether to wake a sleeper
 * (after the mutex is released). */
static int lfree_locked(struct lstripe *s, struct dsm_llock *e)
{
    __atomic_store_n(&e->held, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELEASE);
    if (--e->users == 0) {
        struct dsm_llock **pp = &s->active;
        while (*pp != e)
            pp = &(*pp)->next;
        *pp = e->next;
        e->next = s->free;
        s->free = e;
        return 0;
    }
    return e->sleepers != 0;
}

/* (an entry reused meanwhile only sees a spurious wake-up) */
static void lwake(struct dsm_llock *e)
{
    ompdsm_futex(&e->seq, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The holder of e leaves: with `keep`, the node keeps the lock for the
 * next of its threads that takes the entry. */
void dsm_llock_release(struct dsm_llock *e, int keep)
{
    struct lstripe *s = lstripe(e->id);
    pthread_mutex_lock(&s->mu);
    e->global = (uint32_t)keep;
    int wake = lfree_locked(s, e);
    pthread_mutex_unlock(&s->mu);
    if (wake)
        lwake(e);
}

/* Whether threads of this node wait for the entry the caller holds: a
 * waiter stops waiting only by taking the entry, so while the caller holds
 * it a count seen is still there (and a waiter it misses takes the entry
 * after the lock went back to its queue, as without the hand-over). */
int dsm_llock_waiting(const struct dsm_llock *e)
{
    return __atomic_load_n(&e->waiting, __ATOMIC_RELAXED) != 0;
}
