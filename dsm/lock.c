/* dsm/lock.c - distributed locks: an MCS queue lock across nodes.  The
 * lock's tail word lives at its manager node (id mod nodes); each waiter
 * enqueues a queue node in its own memory with one remote compare-swap,
 * links itself behind its predecessor with a notify, and then sleeps on its
 * own memory until the predecessor hands the lock over.  FIFO, so no node
 * starves; waiting is local, so no remote polling.  Acquire and release
 * carry release consistency (release.c). */
#include "dsm_int.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t qnext;          /* next never-used queue node */
static uint32_t qfree[DSM_QNODES];
static uint32_t nqfree;

/* Locks held by this thread, to find their queue node at unlock. */
enum { HELD_MAX = 64 };
static __thread struct {
    uint32_t id;
    uint32_t q;
} held[HELD_MAX];
static __thread int nheld;

int dsm_lock_depth(void)
{
    return nheld;
}

static uint32_t qnode_get(void)
{
    pthread_mutex_lock(&qlock);
    uint32_t q;
    if (nqfree)
        q = qfree[--nqfree];
    else if (qnext < DSM_QNODES)
        q = qnext++;
    else
        ompdsm_fatal("more than %d locks held or awaited at once on this node",
                     DSM_QNODES);
    pthread_mutex_unlock(&qlock);
    return q;
}

static void qnode_put(uint32_t q)
{
    pthread_mutex_lock(&qlock);
    qfree[nqfree++] = q;
    pthread_mutex_unlock(&qlock);
}

static inline struct dsm_qnode *qnode(uint32_t q)
{
    return (struct dsm_qnode *)(dsm_g.area + dsm_off_qnodes) + q;
}

static inline uint64_t qoff(uint32_t q, size_t field)
{
    return dsm_off_qnodes + (uint64_t)q * sizeof(struct dsm_qnode) + field;
}

static void where(uint32_t id, int *mgr, uint64_t *off)
{
    uint64_t slot = id / (uint32_t)dsm_g.size;
    if (slot >= DSM_LOCK_SLOTS)
        ompdsm_fatal("lock id %u is out of range (too many locks: at most %llu)",
                     id, (unsigned long long)DSM_LOCK_SLOTS * dsm_g.size);
    *mgr = (int)(id % (uint32_t)dsm_g.size);
    *off = dsm_off_locks + slot * 8;
}

uint32_t dsm_lock_alloc(void)
{
    uint64_t id;
    if (dsm_g.solo || !dsm_g.started) {
        /* Before the start every node counts in its own header; node 0's
         * count is where the ids handed out afterwards begin. */
        struct dsm_area_hdr *h = (struct dsm_area_hdr *)dsm_g.area;
        id = __atomic_fetch_add(&h->lock_next, 1, __ATOMIC_RELAXED);
    } else {
        COMM_CHECK(comm_fetch_add(0, DSM_REG_AREA,
                                  offsetof(struct dsm_area_hdr, lock_next), 1,
                                  &id));
    }
    if (id >= (uint64_t)DSM_LOCK_SLOTS * (uint64_t)dsm_g.size)
        ompdsm_fatal("too many locks: at most %llu",
                     (unsigned long long)DSM_LOCK_SLOTS * dsm_g.size);
    return (uint32_t)id;
}

static void remember(uint32_t id, uint32_t q)
{
    if (nheld == HELD_MAX)
        ompdsm_fatal("a thread holds more than %d locks at once", HELD_MAX);
    held[nheld].id = id;
    held[nheld].q = q;
    nheld++;
}

/* Enqueues; returns 1 if acquired at once (the lock was free). */
static int enqueue(uint32_t id, uint32_t q, int try_only, int *got)
{
    int mgr;
    uint64_t off;
    where(id, &mgr, &off);
    struct dsm_qnode *qn = qnode(q);
    __atomic_store_n(&qn->next, DSM_LOCKWORD_NONE, __ATOMIC_RELAXED);
    __atomic_store_n(&qn->grant, 0, __ATOMIC_RELEASE);
    uint64_t me = lockword_encode(dsm_g.rank, q);
    uint64_t guess = DSM_LOCKWORD_NONE, old;
    for (;;) {
        COMM_CHECK(comm_cas(mgr, DSM_REG_AREA, off, guess, me, &old));
        if (old == guess)
            break;
        if (try_only) {
            *got = 0;
            return 0;
        }
        guess = old;
    }
    if (guess == DSM_LOCKWORD_NONE) {
        *got = 1;
        return 1;
    }
    int pnode;
    uint32_t pq;
    lockword_decode(guess, &pnode, &pq);
    COMM_CHECK(comm_notify(pnode, DSM_REG_AREA,
                           qoff(pq, offsetof(struct dsm_qnode, next)), me));
    if (comm_wait_ge(&qn->grant, 1) < 0)
        ompdsm_fatal("waiting for lock %u: the job is failing", id);
    *got = 1;
    return 0;
}

void dsm_lock(uint32_t id)
{
    uint64_t t0 = ompdsm_now_ns();
    uint32_t q = qnode_get();
    int got;
    enqueue(id, q, 0, &got);
    remember(id, q);
    DSM_STAT(lock_acquires, 1);
    OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u acquired", id);
    dsm_acquire();
    DSM_STAT(lock_ns, ompdsm_now_ns() - t0);
}

int dsm_trylock(uint32_t id)
{
    uint32_t q = qnode_get();
    int got;
    enqueue(id, q, 1, &got);
    if (!got) {
        qnode_put(q);
        return 0;
    }
    remember(id, q);
    DSM_STAT(lock_acquires, 1);
    dsm_acquire();
    return 1;
}

void dsm_unlock(uint32_t id)
{
    int k;
    for (k = nheld - 1; k >= 0; k--)
        if (held[k].id == id)
            break;
    if (k < 0)
        ompdsm_fatal("unlock of lock %u, which this thread does not hold", id);
    uint32_t q = held[k].q;
    held[k] = held[--nheld];
    dsm_release();

    int mgr;
    uint64_t off;
    where(id, &mgr, &off);
    struct dsm_qnode *qn = qnode(q);
    uint64_t me = lockword_encode(dsm_g.rank, q);
    uint64_t next = __atomic_load_n(&qn->next, __ATOMIC_ACQUIRE);
    if (next == DSM_LOCKWORD_NONE) {
        uint64_t old;
        COMM_CHECK(comm_cas(mgr, DSM_REG_AREA, off, me, DSM_LOCKWORD_NONE, &old));
        if (old == me) {
            qnode_put(q);
            OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u released (free)", id);
            return;
        }
        /* A successor swapped itself in but has not linked yet. */
        if (comm_wait_ge(&qn->next, 1) < 0)
            ompdsm_fatal("releasing lock %u: the job is failing", id);
        next = __atomic_load_n(&qn->next, __ATOMIC_ACQUIRE);
    }
    int snode;
    uint32_t sq;
    lockword_decode(next, &snode, &sq);
    COMM_CHECK(comm_notify(snode, DSM_REG_AREA,
                           qoff(sq, offsetof(struct dsm_qnode, grant)), 1));
    qnode_put(q);
    OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u handed to node %d", id, snode);
}
