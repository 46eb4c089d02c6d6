/* dsm/lock.c - distributed locks: an MCS queue lock across nodes, with
 * lock affinity.  The lock's tail word lives at its manager node (id mod
 * nodes); each waiter enqueues a queue node in its own memory with one
 * remote compare-swap, links itself behind its predecessor, and then sleeps
 * on its own memory until the predecessor hands the lock over.  FIFO, so
 * no node starves; waiting is local, so no remote polling.  Acquire and
 * release carry release consistency (release.c).
 *
 * Lock affinity (OMPDSM_LOCK_CACHE, on by default): a node that releases a
 * lock nobody waits for keeps it.  Its queue node stays the lock's tail and
 * its `next` word says CACHED; re-taking the lock on this node is a local
 * compare-swap of that word back to NONE, with no message.  Every change
 * of a cached queue node's `next` word is one compare-swap on that word, by
 * whoever makes it:
 *
 *   QUEUED(id) -> CACHED(id) the holder releases with no successor linked
 *   CACHED(id) -> QUEUED(id) a thread of the holder's node re-takes it
 *   QUEUED(id) -> successor a successor links behind a held lock (it is
 *                           granted at the holder's unlock)
 *   CACHED(id) -> DEAD      the successor takes the released lock; the
 *                           queue node is its owner's to recycle
 *   CACHED(id) -> TAKEN     omp_test_lock takes the released lock, then
 *                           swings the tail to itself (see try_behind)
 *   TAKEN -> TAKEN|succ     a successor finds it taken by a test: the
 *                           tester hands the lock on to it
 *
 * QUEUED(id) is a queue node in lock id's queue, holding or waiting, with
 * no successor linked (NONE without lock affinity): the lock id in it lets
 * an omp_test_lock that remembers the tail tell from that word alone that
 * the lock is still held (try_hinted).
 *
 * So the successor's link and its takeover are decided by the same word:
 * whichever compare-swap lands first wins, the other fails and sees the
 * winner's value, and nothing depends on the order in which a notify and
 * a remote atomic arrive (over tcp they are separate requests).  A
 * successor that loses a race to a local re-take (its CAS finds NONE where
 * it expected CACHED, or CACHED where it expected NONE) retries with the
 * value it saw, and sets the queue node's `want` hint so that the holder's
 * node stops re-taking from its cache and queues behind it instead: the
 * retries end once the hint lands.
 *
 * Threads of one node (OMPDSM_LOCK_LOCAL, on by default) meet on a lock of
 * the node's own before one of them enters the queue across nodes, and an
 * unlock leaves the lock with the node while another of its threads waits:
 * see lockhand.c.  A job of one node takes none of these paths: its locks
 * are futex words of the process ("one node" below). */
#include "dsm_int.h"
#include "comm/util/futex.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* `next` word values besides NONE and a successor's lock word (whose high
 * half is a node number + 1, so at least 1 and far below bit 62). */
#define QN_DEAD ((uint64_t)1)
#define QN_TAKEN ((uint64_t)2)
#define QN_TAKEN_LINK ((uint64_t)1 << 62) /* | successor's lock word */
#define QN_CACHED ((uint64_t)1 << 63)     /* | lock id */
/* | QN_CACHED | lock id: the holder's node skipped the release of its last
 * unlock (lazy release): a taker from another node asks it to release. */
#define QN_LAZY ((uint64_t)1 << 61)
#define QN_QUEUED ((uint64_t)1 << 60) /* | lock id */

static inline uint64_t qn_cached(uint32_t id)
{
    return QN_CACHED | id;
}

static int lazy_on(void);

/* The CACHED word this node's unlocks leave. */
static inline uint64_t qn_cached_here(uint32_t id)
{
    return qn_cached(id) | (lazy_on() ? QN_LAZY : 0);
}

/* Whether w is a CACHED word for lock id, lazy or not. */
static inline int is_cached(uint64_t w, uint32_t id)
{
    return (w & ~QN_LAZY) == qn_cached(id);
}

/* A lock taken over from node `from`, whose CACHED word was w: if that
 * node skipped its release, it releases now, before the taker acquires.
 * Returns whether that node pushed its positions to us with its ack. */
static int took_cached(int from, uint64_t w)
{
    if ((w & QN_LAZY) && from != dsm_g.rank)
        return dsm_lazy_request(from);
    return 0;
}

/* Local hand-overs in a row while a waiter of another node is queued
 * (OMPDSM_LOCK_LOCAL's default; see lockhand.c). */
enum { LOCAL_MAX_DEF = 16 };

/* A re-take from the cache skips the acquire: the lock's last release was
 * this node's own, so the lock brings nothing new.  But a program may poll
 * through a lock for data that another node published by other means (a
 * flush), and an acquire is what makes that visible; so a node acquires at
 * a re-take when its last lock acquire is older than this, by the coarse
 * clock (ompdsm_coarse_ns: one tick, 1-4 ms, so in effect at the first
 * re-take in a new tick; far cheaper to read than the precise clock,
 * whose three reads were about half of a re-take: docs/design.md, "Lock
 * affinity"). */
enum { LOCK_FRESH_NS = 1000 * 1000 };

/* Cached locks of this node, direct-mapped by id (0: empty, else id + 1). */
enum { CACHE_SLOTS = DSM_QNODES };

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t qnext;          /* next never-used queue node */
static uint32_t qfree[DSM_QNODES];
static uint32_t nqfree;
/* Queue nodes passed on to another node but not yet DEAD: recycled once
 * they are. */
static uint32_t qpend[DSM_QNODES];
static uint32_t nqpend;
static uint32_t cache_id[CACHE_SLOTS];
static uint32_t cache_q[CACHE_SLOTS];
static uint64_t last_acquire_ns;

static int cache_on = -1, lazy = -1;
static uint32_t local_max; /* OMPDSM_LOCK_LOCAL: 0 off */
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_init(void)
{
    static const char *const onoff[] = {"on", "off"};
    cache_on = ompdsm_env_choice("OMPDSM_LOCK_CACHE", onoff, 2, 0) == 0;
    lazy = cache_on && ompdsm_env_choice("OMPDSM_LAZY_RELEASE", onoff, 2, 0) == 0;
    local_max = (uint32_t)ompdsm_env_u64("OMPDSM_LOCK_LOCAL", LOCAL_MAX_DEF, 0,
                                         UINT32_MAX, 0);
    dsm_llock_init();
}

static int caching(void)
{
    pthread_once(&cache_once, cache_init);
    return cache_on;
}

/* A queue node's `next` word while it is in lock id's queue with no
 * successor linked. */
static uint64_t qn_alone(uint32_t id)
{
    return caching() ? QN_QUEUED | id : DSM_LOCKWORD_NONE;
}

static int lazy_on(void)
{
    pthread_once(&cache_once, cache_init);
    return lazy;
}

int dsm_lazy_on(void)
{
    return lazy_on();
}

static uint32_t local_on(void)
{
    pthread_once(&cache_once, cache_init);
    return local_max;
}

/* Locks held by this thread, to find their queue node (and node-local
 * entry) at unlock. */
enum { HELD_MAX = 64 };
static __thread struct {
    uint32_t id;
    uint32_t q;
    struct dsm_llock *e;
    int migratory; /* came from another node (see unlock_global) */
} held[HELD_MAX];
static __thread int nheld;

int dsm_lock_depth(void)
{
    return nheld;
}

static inline struct dsm_qnode *qnode(uint32_t q)
{
    return (struct dsm_qnode *)(dsm_g.area + dsm_off_qnodes) + q;
}

static inline uint64_t qoff(uint32_t q, size_t field)
{
    return dsm_off_qnodes + (uint64_t)q * sizeof(struct dsm_qnode) + field;
}

/* Moves the DEAD queue nodes of the pending list to the free list (qlock
 * held). */
static void reap_locked(void)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < nqpend; i++) {
        uint32_t q = qpend[i];
        if (__atomic_load_n(&qnode(q)->next, __ATOMIC_ACQUIRE) == QN_DEAD)
            qfree[nqfree++] = q;
        else
            qpend[k++] = q;
    }
    nqpend = k;
}

static void evict(uint32_t slot);

static uint32_t qnode_get(void)
{
    pthread_mutex_lock(&qlock);
    if (!nqfree && qnext == DSM_QNODES)
        reap_locked();
    /* Cached locks hold queue nodes: give some back to their queues. */
    for (uint32_t k = 0; !nqfree && qnext == DSM_QNODES && k < CACHE_SLOTS; k++)
        if (cache_id[k])
            evict(k);
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

static void qnode_put_locked(uint32_t q)
{
    qfree[nqfree++] = q;
}

static void qnode_put(uint32_t q)
{
    pthread_mutex_lock(&qlock);
    qnode_put_locked(q);
    pthread_mutex_unlock(&qlock);
}

/* A queue node found not CACHED where it was cached: free once DEAD. */
static void qnode_retire_locked(uint32_t q)
{
    if (__atomic_load_n(&qnode(q)->next, __ATOMIC_ACQUIRE) == QN_DEAD)
        qnode_put_locked(q);
    else
        qpend[nqpend++] = q;
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

static void remember(uint32_t id, uint32_t q, struct dsm_llock *e)
{
    if (nheld == HELD_MAX)
        ompdsm_fatal("a thread holds more than %d locks at once", HELD_MAX);
    held[nheld].id = id;
    held[nheld].q = q;
    held[nheld].e = e;
    held[nheld].migratory = 0;
    nheld++;
}

/* Hands the lock to successor succ.  The grant word says from whom the
 * successor acquires (node from + 1): the node whose release it must
 * see, which is this node, or for a test that hands on a lock it took
 * from a cached queue node, that node (try_behind). */
/* (a grant word's bit: the granter pushed its positions before it) */
#define GRANT_PUSHED ((uint64_t)1 << 32)

static void grant(uint64_t succ, int from)
{
    int snode;
    uint32_t sq;
    lockword_decode(succ, &snode, &sq);
    uint64_t v = (uint64_t)from + 1;
    if (from == dsm_g.rank && snode != dsm_g.rank && !dsm_g.solo &&
        dsm_g.started) {
        /* The successor acquires from us: our positions travel with the
         * grant (the notify is ordered after the puts). */
        dsm_push_positions(snode);
        v |= GRANT_PUSHED;
    }
    COMM_CHECK(comm_notify(snode, DSM_REG_AREA,
                           qoff(sq, offsetof(struct dsm_qnode, grant)), v));
}

/* The node named by a grant word, and whether it pushed its positions. */
static int granter(uint32_t q, int *pushed)
{
    uint64_t v = __atomic_load_n(&qnode(q)->grant, __ATOMIC_ACQUIRE);
    *pushed = (v & GRANT_PUSHED) != 0;
    return (int)(uint32_t)(v & ~GRANT_PUSHED) - 1;
}

/* Waits, without a doorbell, for a successor that swapped the tail to link
 * behind q: its compare-swap is on its way, so the wait is short, but it
 * rings nothing, so the wait polls and backs off to sleeping. */
static uint64_t await_link(uint32_t id, uint32_t q)
{
    uint64_t next;
    for (unsigned n = 0;; n++) {
        next = __atomic_load_n(&qnode(q)->next, __ATOMIC_ACQUIRE);
        if (next != qn_alone(id))
            return next;
        if (n < 1000) {
            ompdsm_cpu_relax();
        } else if (n < 1100) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Releases a lock held through queue node q to its queue (no caching):
 * the tail goes back to free, or the successor is granted. */
static void release_to_queue(uint32_t id, uint32_t q)
{
    int mgr;
    uint64_t off;
    where(id, &mgr, &off);
    struct dsm_qnode *qn = qnode(q);
    uint64_t me = lockword_encode(dsm_g.rank, q);
    uint64_t next = __atomic_load_n(&qn->next, __ATOMIC_ACQUIRE);
    if (next == qn_alone(id)) {
        uint64_t old;
        COMM_CHECK(comm_cas(mgr, DSM_REG_AREA, off, me, DSM_LOCKWORD_NONE, &old));
        if (old == me) {
            /* Out of the queue: a test that remembers q as the tail must
             * not read QUEUED(id) there any more. */
            __atomic_store_n(&qn->next, QN_DEAD, __ATOMIC_RELEASE);
            return;
        }
        /* A successor swapped itself in but has not linked yet. */
        if (caching()) {
            next = await_link(id, q);
        } else {
            if (comm_wait_ge(&qn->next, 1) < 0)
                ompdsm_fatal("releasing lock %u: the job is failing", id);
            next = __atomic_load_n(&qn->next, __ATOMIC_ACQUIRE);
        }
    }
    grant(next, dsm_g.rank);
}

/* Gives the cached lock in slot k back to its queue (qlock held).  Re-takes
 * it first; a queue node another node took meanwhile is retired. */
static void evict(uint32_t k)
{
    uint32_t id = cache_id[k] - 1, q = cache_q[k];
    cache_id[k] = 0;
    uint64_t exp = qn_cached_here(id);
    if (!__atomic_compare_exchange_n(&qnode(q)->next, &exp, qn_alone(id),
                                     0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        qnode_retire_locked(q);
        return;
    }
    /* Whoever takes it from the queue next cannot ask us to release. */
    if (lazy_on())
        dsm_lazy_flush();
    release_to_queue(id, q);
    qnode_put_locked(q);
    OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u evicted from the cache", id);
}

/* How long a test of this node waits, before it re-takes a lock cached
 * here, for the test of another node that asked for it (the want hint:
 * try_behind) to take it: that test is a round trip away, and a re-take
 * comes first otherwise.  The test waits; it never fails for it (a test
 * of a free lock that nobody takes must succeed). */
enum { TEST_YIELD_NS = 1000 * 1000 };

/* Re-takes lock id if this node has it cached: 1 with *qp its queue node,
 * now held.  For a test (test) of a lock another node's tests asked for,
 * first waits up to TEST_YIELD_NS for that node to take it. */
static int cache_retake(uint32_t id, uint32_t *qp, int test)
{
    if (!caching())
        return 0;
    uint32_t k = id % CACHE_SLOTS;
    pthread_mutex_lock(&qlock);
    if (cache_id[k] != id + 1) {
        pthread_mutex_unlock(&qlock);
        return 0;
    }
    uint32_t q = cache_q[k];
    struct dsm_qnode *qn = qnode(q);
    uint64_t exp = qn_cached_here(id);
    if (test && __atomic_load_n(&qn->want, __ATOMIC_ACQUIRE)) {
        pthread_mutex_unlock(&qlock);
        uint64_t t0 = ompdsm_now_ns();
        while (__atomic_load_n(&qn->next, __ATOMIC_ACQUIRE) == exp &&
               ompdsm_now_ns() - t0 < TEST_YIELD_NS)
            sched_yield();
        pthread_mutex_lock(&qlock);
        if (cache_id[k] != id + 1 || cache_q[k] != q) { /* (evicted) */
            pthread_mutex_unlock(&qlock);
            return 0;
        }
    }
    cache_id[k] = 0;
    /* A waiter behind it asked for it: queue behind the waiter, which
     * takes the cached queue node (a tester of another node either took
     * it while this test waited, and this test fails in the queue, or did
     * not, and this test takes it the long way). */
    if (__atomic_load_n(&qn->want, __ATOMIC_ACQUIRE) ||
        !__atomic_compare_exchange_n(&qn->next, &exp, qn_alone(id), 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        qnode_retire_locked(q);
        pthread_mutex_unlock(&qlock);
        return 0;
    }
    pthread_mutex_unlock(&qlock);
    *qp = q;
    return 1;
}

/* Lists queue node q, just made CACHED for lock id, in the cache; the
 * slot's former lock goes back to its queue. */
static void cache_put(uint32_t id, uint32_t q)
{
    uint32_t k = id % CACHE_SLOTS;
    pthread_mutex_lock(&qlock);
    if (cache_id[k])
        evict(k);
    cache_id[k] = id + 1;
    cache_q[k] = q;
    pthread_mutex_unlock(&qlock);
}

/* One step behind a predecessor whose `next` word is cur, for the taker
 * whose lock word is me (follow, and follow_here on the predecessor's
 * node): link behind a held lock, take a cached one (DEAD), or leave the
 * link for the test that took it (TAKEN). */
static uint64_t follow_want(uint32_t id, uint64_t cur, uint64_t me, int pnode)
{
    if (cur == qn_alone(id))
        return me;
    if (is_cached(cur, id))
        return QN_DEAD;
    if (cur == QN_TAKEN)
        return QN_TAKEN_LINK | me;
    int who;
    uint32_t q;
    lockword_decode(me, &who, &q);
    ompdsm_fatal("lock %u: the queue node before node %d's (at node %d) is in "
                 "state %#llx: lock queue corrupted", id, who, pnode,
                 (unsigned long long)cur);
}

/* Behind predecessor (pnode, pq) after swapping the tail: links (and is
 * granted later) or takes the lock from a cached queue node.  One
 * compare-swap on the predecessor's `next` word decides each step.
 * Returns the node to acquire from. */
static int follow(uint32_t id, uint32_t q, int pnode, uint32_t pq,
                  int *pushed)
{
    uint64_t me = lockword_encode(dsm_g.rank, q);
    uint64_t noff = qoff(pq, offsetof(struct dsm_qnode, next));
    uint64_t cur = qn_alone(id), old;
    int hinted = 0;
    for (;;) {
        uint64_t want = follow_want(id, cur, me, pnode);
        COMM_CHECK(comm_cas(pnode, DSM_REG_AREA, noff, cur, want, &old));
        if (old == cur) {
            if (want == QN_DEAD) {
                *pushed = took_cached(pnode, cur);
                return pnode;
            }
            break;
        }
        cur = old;
        if (!hinted && cur != QN_TAKEN) {
            /* Raced with the holder's node re-taking or caching it. */
            COMM_CHECK(comm_notify(pnode, DSM_REG_AREA,
                                   qoff(pq, offsetof(struct dsm_qnode, want)), 1));
            hinted = 1;
        }
    }
    if (dsm_lazy_wait_ge(&qnode(q)->grant, 1) < 0)
        ompdsm_fatal("waiting for lock %u: the job is failing", id);
    return granter(q, pushed);
}

/* A thread's run of failed tests of one lock (id1: id + 1; 0 none), since
 * when, and when it last left the want hint. */
enum { TEST_STARVE_NS = 2 * 1000 * 1000 };
static __thread struct {
    uint32_t id1;
    uint64_t since, hinted;
} starve;

/* omp_test_lock behind tail `tail` (a lock cached at a node is free): takes
 * the lock from that queue node (CACHED -> TAKEN) and swings the tail to q.
 * If a waiter swapped itself in behind the cached node meanwhile, the lock
 * goes to that waiter and the test fails.  Returns whether it got it;
 * *from: the node to acquire from; *seen: the word found at the queue node
 * when it was not CACHED, TAKEN when the test took the lock from it. */
static int try_behind(uint32_t id, uint32_t q, int mgr, uint64_t off,
                      uint64_t tail, int *from, int *pushed, uint64_t *seen)
{
    int pnode;
    uint32_t pq;
    lockword_decode(tail, &pnode, &pq);
    uint64_t noff = qoff(pq, offsetof(struct dsm_qnode, next));
    uint64_t old, exp = qn_cached_here(id);
    COMM_CHECK(comm_cas(pnode, DSM_REG_AREA, noff, exp, QN_TAKEN, &old));
    if (old != exp && is_cached(old, id)) {
        exp = old; /* (the holder's node is not lazy where we are, or is) */
        COMM_CHECK(comm_cas(pnode, DSM_REG_AREA, noff, exp, QN_TAKEN, &old));
    }
    *seen = old == exp ? QN_TAKEN : old;
    if (old != exp) {
        /* Held (by pq's node, no waiter linked).  A node polling with
         * tests may never find free a lock that the holder's node re-takes
         * from its cache at once after each unlock (over tcp a test takes
         * a round trip, a re-take none: the polling node starved for good
         * when it waited for the holder's node to give way).  A thread
         * whose tests of this lock have failed for TEST_STARVE_NS leaves
         * the want hint that a blocked waiter leaves (follow), at most once
         * every TEST_STARVE_NS: the holder's node then leaves the lock
         * cached and free to tests for a while (cache_retake). */
        if (old == (QN_QUEUED | id)) {
            uint64_t now = ompdsm_now_ns();
            if (starve.id1 != id + 1) {
                starve.id1 = id + 1;
                starve.since = now;
                starve.hinted = 0;
            }
            if (now - starve.since >= TEST_STARVE_NS &&
                now - starve.hinted >= TEST_STARVE_NS) {
                starve.hinted = now;
                COMM_CHECK(comm_notify(pnode, DSM_REG_AREA,
                                       qoff(pq, offsetof(struct dsm_qnode, want)), 1));
            }
        }
        return 0;
    }
    /* Whoever gets the lock now (we, or a waiter we hand it to) acquires
     * after the holder's release. */
    int got_pushed = took_cached(pnode, exp);
    uint64_t me = lockword_encode(dsm_g.rank, q);
    COMM_CHECK(comm_cas(mgr, DSM_REG_AREA, off, tail, me, &old));
    if (old == tail) {
        /* Nobody can be behind pq any more. */
        COMM_CHECK(comm_cas(pnode, DSM_REG_AREA, noff, QN_TAKEN, QN_DEAD, &old));
        *from = pnode;
        *pushed = got_pushed;
        return 1;
    }
    /* The waiter that swapped the tail from pq is on its way to pq's next
     * word; it finds TAKEN and leaves its lock word there. */
    uint64_t next = QN_TAKEN;
    for (unsigned n = 0; next == QN_TAKEN; n++) {
        COMM_CHECK(comm_get(pnode, DSM_REG_AREA, noff, &next, 8));
        if (n > 50)
            sched_yield();
    }
    if (!(next & QN_TAKEN_LINK))
        ompdsm_fatal("lock %u: a taken queue node is in state %#llx", id,
                     (unsigned long long)next);
    COMM_CHECK(comm_cas(pnode, DSM_REG_AREA, noff, next, QN_DEAD, &old));
    /* The waiter gets the lock of a holder whose release was skipped: when
     * that holder is this node, took_cached asked nothing (the lock was to
     * stay here), so release before the grant as an unlock would. */
    if ((exp & QN_LAZY) && pnode == dsm_g.rank)
        dsm_release();
    /* (we acquired nothing: the waiter acquires from the lock's holder) */
    grant(next & ~QN_TAKEN_LINK, pnode);
    return 0;
}

/* Where a test of this node last found each lock held: the tail it saw at
 * the lock's manager (direct-mapped by id, under qlock; 0: none). */
static struct {
    uint32_t id1; /* id + 1 */
    uint64_t tail;
} hints[CACHE_SLOTS];

static uint64_t hint_get(uint32_t id)
{
    pthread_mutex_lock(&qlock);
    uint64_t t = hints[id % CACHE_SLOTS].id1 == id + 1
                     ? hints[id % CACHE_SLOTS].tail : 0;
    pthread_mutex_unlock(&qlock);
    return t;
}

static void hint_set(uint32_t id, uint64_t tail)
{
    pthread_mutex_lock(&qlock);
    hints[id % CACHE_SLOTS].id1 = tail ? id + 1 : 0;
    hints[id % CACHE_SLOTS].tail = tail;
    pthread_mutex_unlock(&qlock);
}

/* omp_test_lock of a lock a test of this node found held before: asks the
 * queue node that was its tail, not the manager.  The compare-swap that
 * would take a lock cached there (CACHED -> TAKEN) also says, when it
 * fails, whether that queue node is still in lock id's queue (QUEUED(id):
 * the lock is held, by it or ahead of it): then the test fails in one
 * round trip, where asking the manager for the tail and then its queue
 * node took two.  Any other word (DEAD, another lock's state, a successor
 * link, which a queue node keeps after handing the lock on) means the
 * memory is stale: -1, and the test asks the manager. */
static int try_hinted(uint32_t id, uint32_t q, int mgr, uint64_t off,
                      int *from, int *pushed)
{
    uint64_t tail = hint_get(id), seen = 0;
    if (!tail)
        return -1;
    if (try_behind(id, q, mgr, off, tail, from, pushed, &seen)) {
        hint_set(id, 0); /* (we are the tail) */
        return 1;
    }
    if (seen == (QN_QUEUED | id) || seen == QN_TAKEN)
        return 0; /* (TAKEN: handed on to a waiter, in try_behind) */
    hint_set(id, 0);
    return -1;
}

/* ---- lock requests by message (OMPDSM_LOCK_MSG) ----
 * Over tcp each remote compare-swap above is a round trip through the
 * peer's service thread.  Taking a lock that another node keeps cached
 * cost six of them: the swap of the tail at the manager (two
 * compare-swaps when the first guess, a free lock, was wrong), two
 * compare-swaps on the holder's `next` word (it expects QUEUED first),
 * the read of the holder's lazy state and the get of its log positions
 * (the suites' cpcrit over tcp: about 60% of its time).  With
 * OMPDSM_LOCK_MSG (auto: the peers reached over tcp) the taker sends one
 * message instead: to the manager (DSM_LM_ACQ), whose handler swaps the
 * tail on its own memory and, when the predecessor's queue node is its
 * own, takes the predecessor's step there too; a predecessor at a third
 * node gets that step forwarded (DSM_LM_FOLLOW); one on the taker's own
 * node is left to the taker (LR_TAIL).  The step at the predecessor's
 * node (follow_here) is follow() and took_cached() on that node's own
 * words: the same compare-swaps on the same words, so a handler mixes
 * with the remote protocol, a test, an unlock or a re-take from the cache
 * as a remote taker does.  It answers with one notify of the taker's
 * queue node `reply` word, after pushing the node's log positions when it
 * gave the lock (LR_GIVEN), or after asking for the release its node
 * skipped (LR_ASKED: the taker then waits for the ack, as in
 * dsm_lazy_request); a taker linked behind a held lock (LR_LINKED) waits
 * for its grant as before.  So one round trip and a wake-up of the
 * taker, where there were six round trips.  Handlers never wait on other
 * nodes: a release the holder owes is made by its own threads. */
enum { DSM_TAG_LOCK = 3 }; /* (after atomic.c's DSM_TAG_POSTED) */
enum { DSM_LM_ACQ = 1, DSM_LM_FOLLOW = 2 };
struct lock_msg {
    uint32_t kind;
    uint32_t id;
    uint32_t q;  /* the taker's queue node */
    uint32_t pq; /* DSM_LM_FOLLOW: the predecessor's queue node, here */
    int32_t who; /* the taker */
    uint32_t pad;
};
/* A reply word: kind << LR_SHIFT | (node + 1), the node the taker acquires
 * from; LR_ASKED's ack count and LR_TAIL's tail are in reply_arg. */
#define LR_SHIFT 60
enum { LR_FREE = 1, LR_GIVEN, LR_ASKED, LR_LINKED, LR_TAIL };

static int8_t *msg_peer; /* per peer: lock requests go by message */
static pthread_once_t msg_once = PTHREAD_ONCE_INIT;

static void msg_init(void)
{
    static const char *const modes[] = {"auto", "on", "off"};
    int mode = ompdsm_env_choice("OMPDSM_LOCK_MSG", modes, 3, 0);
    msg_peer = dsm_table((size_t)dsm_g.size, "lock message peers");
    for (int j = 0; j < dsm_g.size; j++) {
        if (j == dsm_g.rank || mode == 2)
            continue;
        const char *tr = comm_peer_transport(j);
        msg_peer[j] = !strcmp(tr, "tcp") || (mode == 1 && !strcmp(tr, "shm"));
    }
}

static int msg_to(int peer)
{
    if (peer == dsm_g.rank || !caching())
        return 0;
    pthread_once(&msg_once, msg_init);
    return msg_peer[peer];
}

static void lock_reply(int who, uint32_t q, uint64_t kind, int from, uint64_t arg)
{
    if (kind == LR_ASKED || kind == LR_TAIL)
        COMM_CHECK(comm_put(who, DSM_REG_AREA,
                            qoff(q, offsetof(struct dsm_qnode, reply_arg)), &arg, 8));
    COMM_CHECK(comm_notify(who, DSM_REG_AREA,
                           qoff(q, offsetof(struct dsm_qnode, reply)),
                           kind << LR_SHIFT | (uint32_t)(from + 1)));
}

/* follow() and took_cached() for the taker (who, q), behind this node's
 * queue node pq, in a message handler. */
static void follow_here(uint32_t id, int who, uint32_t q, uint32_t pq)
{
    struct dsm_qnode *pn = qnode(pq);
    uint64_t me = lockword_encode(who, q);
    uint64_t cur = qn_alone(id), want;
    int hinted = 0;
    for (;;) {
        want = follow_want(id, cur, me, dsm_g.rank);
        uint64_t seen = cur;
        if (__atomic_compare_exchange_n(&pn->next, &cur, want, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            cur = seen;
            break;
        }
        if (!hinted && cur != QN_TAKEN) {
            /* (raced with a re-take here: see follow) */
            __atomic_store_n(&pn->want, 1, __ATOMIC_RELEASE);
            hinted = 1;
        }
    }
    if (want != QN_DEAD) {
        lock_reply(who, q, LR_LINKED, dsm_g.rank, 0);
        return;
    }
    uint64_t n = (cur & QN_LAZY) ? dsm_lazy_ask_here(who) : 0;
    if (n) {
        lock_reply(who, q, LR_ASKED, dsm_g.rank, n);
        return;
    }
    dsm_push_positions(who); /* (the reply's notify follows it) */
    lock_reply(who, q, LR_GIVEN, dsm_g.rank, 0);
}

static void lock_msg(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag;
    (void)arg;
    struct lock_msg m;
    if (len != sizeof m)
        ompdsm_fatal("malformed lock request from node %d", src);
    memcpy(&m, buf, sizeof m);
    int n = dsm_g.size;
    if ((m.kind != DSM_LM_ACQ && m.kind != DSM_LM_FOLLOW) || m.who < 0 ||
        m.who >= n || m.who == dsm_g.rank || m.q >= DSM_QNODES ||
        m.pq >= DSM_QNODES || m.id / (uint32_t)n >= DSM_LOCK_SLOTS ||
        (m.kind == DSM_LM_ACQ && (m.who != src || (int)(m.id % (uint32_t)n) !=
                                                      dsm_g.rank)))
        ompdsm_fatal("malformed lock request from node %d", src);
    if (m.kind == DSM_LM_FOLLOW) {
        follow_here(m.id, m.who, m.q, m.pq);
        return;
    }
    int mgr;
    uint64_t off;
    where(m.id, &mgr, &off);
    /* (a swap: what the taker's compare-swap loop ends with) */
    uint64_t old = __atomic_exchange_n((uint64_t *)(dsm_g.area + off),
                                       lockword_encode(m.who, m.q),
                                       __ATOMIC_SEQ_CST);
    if (old == DSM_LOCKWORD_NONE) {
        lock_reply(m.who, m.q, LR_FREE, -1, 0);
        return;
    }
    int pnode;
    uint32_t pq;
    lockword_decode(old, &pnode, &pq);
    if (pnode == dsm_g.rank) {
        follow_here(m.id, m.who, m.q, pq);
    } else if (pnode == m.who) {
        lock_reply(m.who, m.q, LR_TAIL, -1, old);
    } else {
        m.kind = DSM_LM_FOLLOW;
        m.pq = pq;
        COMM_CHECK(comm_send(pnode, DSM_TAG_LOCK, &m, sizeof m));
    }
}

void dsm_lock_msg_init(void)
{
    comm_set_handler(DSM_TAG_LOCK, lock_msg, NULL);
}

/* Sends the request (kind, to node `to`) for queue node q and waits for
 * its answer: the lock, held through q, and in *from the node to acquire
 * from (-1: every node). */
static void by_message(uint32_t id, uint32_t q, int kind, int to, uint32_t pq,
                       int *from, int *pushed)
{
    struct dsm_qnode *qn = qnode(q);
    __atomic_store_n(&qn->reply, 0, __ATOMIC_RELEASE);
    struct lock_msg m = {(uint32_t)kind, id, q, pq, dsm_g.rank, 0};
    COMM_CHECK(comm_send(to, DSM_TAG_LOCK, &m, sizeof m));
    DSM_STAT(lock_msgs, 1);
    if (dsm_lazy_wait_ge(&qn->reply, 1) < 0)
        ompdsm_fatal("waiting for lock %u: the job is failing", id);
    uint64_t r = __atomic_load_n(&qn->reply, __ATOMIC_ACQUIRE);
    uint64_t a = __atomic_load_n(&qn->reply_arg, __ATOMIC_ACQUIRE);
    int node = (int)(uint32_t)r - 1;
    *pushed = 0;
    switch (r >> LR_SHIFT) {
    case LR_FREE:
        *from = -1;
        return;
    case LR_GIVEN:
        *from = node;
        *pushed = 1;
        return;
    case LR_ASKED:
        dsm_lazy_wait_ack(node, a);
        *from = node;
        *pushed = 1; /* (the ack follows the holder's push: lazy.c) */
        return;
    case LR_LINKED:
        if (dsm_lazy_wait_ge(&qn->grant, 1) < 0)
            ompdsm_fatal("waiting for lock %u: the job is failing", id);
        *from = granter(q, pushed);
        return;
    case LR_TAIL: {
        int pnode;
        uint32_t ppq;
        lockword_decode(a, &pnode, &ppq);
        *from = follow(id, q, pnode, ppq, pushed);
        return;
    }
    default:
        ompdsm_fatal("lock %u: malformed answer %#llx to a lock request", id,
                     (unsigned long long)r);
    }
}

/* Enqueues queue node q on lock id; returns whether it got the lock (a
 * test fails instead of waiting), and in *from the node to acquire from,
 * -1 if unknown (a lock found free in its queue: every node). */
static int enqueue(uint32_t id, uint32_t q, int try_only, int *from,
                   int *pushed)
{
    *from = -1;
    *pushed = 0;
    int mgr;
    uint64_t off;
    where(id, &mgr, &off);
    struct dsm_qnode *qn = qnode(q);
    __atomic_store_n(&qn->next, qn_alone(id), __ATOMIC_RELAXED);
    __atomic_store_n(&qn->want, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&qn->grant, 0, __ATOMIC_RELEASE);
    uint64_t me = lockword_encode(dsm_g.rank, q);
    uint64_t guess = DSM_LOCKWORD_NONE, old;
    /* A failed test's queue node never entered the queue: it goes back
     * DEAD, not QUEUED(id), or a test of another node that remembers it as
     * the tail (it may have been once) would find the lock held for as
     * long as it stays free: two nodes polling each other's free queue
     * nodes failed for ever. */
    if (try_only && caching()) {
        int got = try_hinted(id, q, mgr, off, from, pushed);
        if (got == 0)
            __atomic_store_n(&qn->next, QN_DEAD, __ATOMIC_RELEASE);
        if (got >= 0)
            return got;
    }
    if (!try_only && msg_to(mgr)) {
        by_message(id, q, DSM_LM_ACQ, mgr, 0, from, pushed);
        return 1;
    }
    for (;;) {
        COMM_CHECK(comm_cas(mgr, DSM_REG_AREA, off, guess, me, &old));
        if (old == guess)
            break;
        if (try_only) {
            if (!caching())
                return 0;
            uint64_t seen = 0;
            if (try_behind(id, q, mgr, off, old, from, pushed, &seen))
                return 1;
            hint_set(id, seen == (QN_QUEUED | id) ? old : 0);
            __atomic_store_n(&qn->next, QN_DEAD, __ATOMIC_RELEASE);
            return 0;
        }
        guess = old;
    }
    if (guess == DSM_LOCKWORD_NONE)
        return 1;
    int pnode;
    uint32_t pq;
    lockword_decode(guess, &pnode, &pq);
    if (msg_to(pnode)) {
        by_message(id, q, DSM_LM_FOLLOW, pnode, pq, from, pushed);
        return 1;
    }
    if (caching()) {
        *from = follow(id, q, pnode, pq, pushed);
        return 1;
    }
    COMM_CHECK(comm_notify(pnode, DSM_REG_AREA,
                           qoff(pq, offsetof(struct dsm_qnode, next)), me));
    if (comm_wait_ge(&qn->grant, 1) < 0)
        ompdsm_fatal("waiting for lock %u: the job is failing", id);
    *from = granter(q, pushed);
    return 1;
}

/* The acquire of a re-take from the cache, when the last one is stale. */
static void retake_acquire(void)
{
    uint64_t now = ompdsm_coarse_ns();
    if (now - __atomic_load_n(&last_acquire_ns, __ATOMIC_RELAXED) < LOCK_FRESH_NS)
        return;
    __atomic_store_n(&last_acquire_ns, now, __ATOMIC_RELAXED);
    dsm_acquire();
}

static void acquired(uint32_t id, uint32_t q, struct dsm_llock *e, int cached,
                     int from, int pushed)
{
    remember(id, q, e);
    DSM_STAT(lock_acquires, 1);
    if (e)
        e->q = q;
    if (cached) {
        DSM_STAT(lock_cached, 1);
        OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u re-taken from the cache", id);
        retake_acquire();
        return;
    }
    OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u acquired", id);
    held[nheld - 1].migratory = from >= 0 && from != dsm_g.rank;
    __atomic_store_n(&last_acquire_ns, ompdsm_coarse_ns(), __ATOMIC_RELAXED);
    dsm_acquire_from(from, pushed);
}

/* ---- one node ----
 * A job of one node shares nothing: a lock is a word of the process (its
 * slot in the dsm area, which no other node reads), taken as a futex
 * mutex (dsm_word_*, below) with the value 2, and nothing is released or
 * acquired. */
static uint32_t *solo_word(uint32_t id)
{
    int mgr;
    uint64_t off;
    where(id, &mgr, &off);
    return (uint32_t *)(dsm_g.area + off);
}

enum { SOLO_MINE = 2 };

static void solo_lock(uint32_t id)
{
    uint32_t *w = solo_word(id);
    if (dsm_word_try(w, SOLO_MINE))
        return;
    uint64_t t0 = ompdsm_now_ns();
    if (!dsm_word_spin(w, SOLO_MINE))
        dsm_word_sleep(w, SOLO_MINE);
    DSM_STAT(lock_ns, ompdsm_now_ns() - t0);
}

/* ---- a futex mutex in a word (dsm.h) ----
 * 0 free, else the holder's value with bit 0 set while threads sleep on
 * it (Drepper's mutex, with the holder's value in place of 1).  A brief
 * spin, then a futex (200 ms timeout: only a bound for a lost wake-up). */
int dsm_word_spin(uint32_t *w, uint32_t mine)
{
    for (int i = 0; i < 100; i++) {
        __builtin_ia32_pause();
        if (dsm_word_try(w, mine))
            return 1;
    }
    return 0;
}

void dsm_word_sleep(uint32_t *w, uint32_t mine)
{
    for (;;) {
        uint32_t c = __atomic_load_n(w, __ATOMIC_RELAXED);
        if (c == 0) {
            /* Taken with the sleepers' bit: the one woken cannot tell
             * whether others sleep, so it wakes one at its unlock. */
            if (__atomic_compare_exchange_n(w, &c, mine | 1, 0, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return;
            continue;
        }
        if (!(c & 1) && !__atomic_compare_exchange_n(w, &c, c | 1, 0, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED))
            continue;
        struct timespec ts = {0, 200 * 1000 * 1000};
        ompdsm_futex(w, FUTEX_WAIT_PRIVATE, c | 1, &ts);
    }
}

void dsm_word_wake(uint32_t *w)
{
    ompdsm_futex(w, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* ---- the lock operations (dsm.h) ---- */

int dsm_lock_fast(uint32_t id)
{
    if (!dsm_g.solo || !dsm_word_try(solo_word(id), SOLO_MINE))
        return 0;
    remember(id, UINT32_MAX, NULL);
    DSM_STAT(lock_acquires, 1);
    return 1;
}

void dsm_lock(uint32_t id)
{
    if (dsm_g.solo) {
        solo_lock(id);
        remember(id, UINT32_MAX, NULL);
        DSM_STAT(lock_acquires, 1);
        return;
    }
    dsm_atomic_drain();
    /* (lock_ns counts waits and messages: a re-take from the cache or a
     * free entry reads no clock) */
    uint64_t t0 = 0;
    struct dsm_llock *e = NULL;
    if (local_on()) {
        int handed;
        e = dsm_llock_acquire(id, &handed, &t0);
        if (handed) {
            /* Left with the node by a thread of it. */
            uint32_t q = e->q;
            remember(id, q, e);
            DSM_STAT(lock_acquires, 1);
            OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u handed over in the node", id);
            /* (as a re-take from the cache: see LOCK_FRESH_NS) */
            retake_acquire();
            if (t0)
                DSM_STAT(lock_ns, ompdsm_now_ns() - t0);
            return;
        }
    }
    uint32_t q;
    int from = -1, pushed = 0;
    int cached = cache_retake(id, &q, 0);
    if (!cached) {
        if (!t0)
            t0 = ompdsm_now_ns();
        q = qnode_get();
        enqueue(id, q, 0, &from, &pushed);
    }
    acquired(id, q, e, cached, from, pushed);
    if (t0)
        DSM_STAT(lock_ns, ompdsm_now_ns() - t0);
}

int dsm_trylock(uint32_t id)
{
    if (dsm_g.solo)
        return dsm_lock_fast(id);
    dsm_atomic_drain();
    struct dsm_llock *e = NULL;
    if (local_on()) {
        int handed;
        e = dsm_llock_try(id, &handed);
        if (!e)
            return 0; /* another thread of the node holds it */
        if (handed) {
            starve.id1 = 0;
            remember(id, e->q, e);
            DSM_STAT(lock_acquires, 1);
            retake_acquire();
            return 1;
        }
    }
    uint32_t q;
    int from = -1, pushed = 0;
    int cached = cache_retake(id, &q, 1);
    if (!cached) {
        q = qnode_get();
        if (!enqueue(id, q, 1, &from, &pushed)) {
            qnode_put(q);
            if (e)
                dsm_llock_release(e, 0);
            /* A thread polling omp_test_lock serves the lazy release the
             * lock's new holder may be waiting for (it took the lock from
             * this node's cache): otherwise only the helper would, after
             * a sleep of up to 20 ms, and the poll fails all that time. */
            dsm_lazy_poll();
            return 0;
        }
    }
    starve.id1 = 0;
    acquired(id, q, e, cached, from, pushed);
    return 1;
}

/* A node waiting at a barrier answers no lazy release request: only its
 * release helper does, which polls at up to 20 ms (release.c).  The taker
 * of a lock this node left with its release skipped waits for that answer
 * while this node waits for the taker at the barrier (a critical section
 * between a single and a barrier: docs/design.md, "Lazy release").  The
 * barrier does the skipped releases at its start (dsm_release_interval),
 * which spares the requests of later takers, but not a request already
 * made, and in a program with tasks the team's arrival comes first and
 * waits for the taker.  So do the releases, then serve what was asked,
 * before any of it; posted atomic updates are drained first. */
void dsm_lock_settle(void)
{
    dsm_atomic_drain();
    if (dsm_g.solo || !dsm_g.started || !lazy_on())
        return;
    dsm_lazy_flush();
    dsm_lazy_poll();
}

/* Unlock of a lock held through queue node q: to the next waiter of the
 * queue, or into the cache.  migratory: the lock came from another node,
 * which is likely to want it back (NPB UA's mortar points on a partition
 * boundary): its unlock releases at once rather than lazily, so that the
 * next taker finds nothing owed and waits for no request's answer (the
 * holder serves one only when it next runs a lock operation or its helper
 * polls).  A lock re-taken from the cache stays lazy. */
static void unlock_global(uint32_t id, uint32_t q, int migratory)
{
    int lz = lazy_on() && !migratory;
    if (!lz)
        dsm_release();

    if (caching()) {
        /* Keep it unless a successor linked: the compare-swap decides
         * against a successor's link (see the top of the file).  A lazy
         * unlock that keeps it skips its release: a node that takes it
         * over asks for the release first (took_cached). */
        uint64_t next = qn_alone(id);
        if (lz) {
            DSM_STAT(lazy_unlocks, 1);
            dsm_lazy_skip();
        }
        if (__atomic_compare_exchange_n(&qnode(q)->next, &next,
                                        qn_cached_here(id), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            cache_put(id, q);
            if (lz)
                dsm_lazy_skipped();
            OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u released (cached)", id);
            return;
        }
        if (lz)
            dsm_release();
        grant(next, dsm_g.rank);
        qnode_put(q);
        OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u handed on", id);
        return;
    }
    release_to_queue(id, q);
    qnode_put(q);
    OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u released", id);
}

void dsm_unlock(uint32_t id)
{
    dsm_atomic_drain();
    int k;
    for (k = nheld - 1; k >= 0; k--)
        if (held[k].id == id)
            break;
    if (k < 0)
        ompdsm_fatal("unlock of lock %u, which this thread does not hold", id);
    uint32_t q = held[k].q;
    struct dsm_llock *e = held[k].e;
    int migratory = held[k].migratory;
    held[k] = held[--nheld];
    if (dsm_g.solo) {
        dsm_word_unlock(solo_word(id));
        return;
    }
    if (!e) {
        unlock_global(id, q, migratory);
        return;
    }
    /* A thread of this node waits: leave the lock with the node, unless a
     * waiter of another node is linked behind us and the node has had its
     * turns. */
    int remote = __atomic_load_n(&qnode(q)->next, __ATOMIC_ACQUIRE) !=
                 qn_alone(id);
    if ((!remote || e->passes < local_max) && dsm_llock_waiting(e)) {
        e->passes = remote ? e->passes + 1 : 0;
        int lz = lazy_on();
        if (lz)
            dsm_lazy_skip();
        else
            dsm_release();
        DSM_STAT(lock_local_handoffs, 1);
        OMPDSM_TRACE(OMPDSM_TR_LOCK, "lock %u left with the node", id);
        dsm_llock_release(e, 1);
        if (lz)
            dsm_lazy_skipped();
        return;
    }
    e->passes = 0;
    unlock_global(id, q, migratory);
    dsm_llock_release(e, 0);
}
