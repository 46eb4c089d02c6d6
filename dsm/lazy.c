/* dsm/lazy.c - lazy release (OMPDSM_LAZY_RELEASE, docs/design.md "Lazy
 * release"): the count of unlocks that skipped their release and of the
 * ones a release covers, the request a node taking such a lock over makes
 * of the node that holds the writes, and the helper thread and lock
 * operations that serve those requests. */
#include "dsm_int.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>

/* An unlock that leaves its lock cached here skips its release
 * (dsm_lazy_skip): the pages written under it stay dirty and writable.
 * Whoever takes such a lock over from another node (lock.c: the CACHED
 * word carries QN_LAZY) makes sure we released since (dsm_lazy_request):
 * - our lazy_state word counts skipped releases (high half) and, of them,
 *   the ones a completed release through the log covers (low half); the
 *   skip is counted before the unlock's compare-swap, so a taker that
 *   reads both halves equal knows the release it needs is done;
 * - otherwise it bumps its count in our dsm_off_lazy_ask table and waits
 *   for our ack of that count in its dsm_off_lazy_ack table.  A thread of
 *   ours that does a lock operation, or our release helper thread, which
 *   polls, takes a snapshot of the counts, releases everything dirty here
 *   through the log (the release any unlock did before), and only then
 *   acks each count it saw.
 * The taker then acquires as after any lock transfer: the log holds our
 * notices, their diffs are at their homes.  The helper is a thread of its
 * own because a release waits on other nodes (the log reservation,
 * fences), which the comm service thread must never do; it polls rather
 * than sleeping on the node's doorbell, where every notify to the node
 * would wake it. */
/* An unlock skipped its release since the last REL_LOCK release, and
 * when the first one did. */
static int lazy_pending;
static uint64_t lazy_since_ns;
static pthread_t lazy_thread;
static int lazy_started, lazy_stop_flag;
static uint64_t *lazy_served; /* per requester: the count acked */

static volatile uint64_t *lazy_word(size_t base, int r)
{
    return (volatile uint64_t *)(dsm_g.area + base + (size_t)r * 8);
}

static volatile uint64_t *lazy_state(void)
{
    return &((struct dsm_area_hdr *)dsm_g.area)->lazy_state;
}

/* Whether a lazy_state word says every skipped release is covered. */
static inline int covered(uint64_t w)
{
    return (uint32_t)(w >> 32) == (uint32_t)w;
}

uint32_t dsm_lazy_covering(void)
{
    __atomic_store_n(&lazy_pending, 0, __ATOMIC_RELAXED);
    return (uint32_t)(__atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE) >> 32);
}

void dsm_lazy_covered(uint32_t skips)
{
    uint64_t w = __atomic_load_n(lazy_state(), __ATOMIC_RELAXED), nw;
    do {
        nw = (w & ~(uint64_t)UINT32_MAX) | skips;
    } while (!__atomic_compare_exchange_n(lazy_state(), &w, nw, 0,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

int dsm_lazy_owed(void)
{
    if (__atomic_load_n(&lazy_pending, __ATOMIC_ACQUIRE))
        return 1;
    uint64_t lw = __atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE);
    return !covered(lw);
}

/* Writes under a lock released lazily become visible at most about this
 * long after the unlock, even to a node that never takes the lock: at the
 * node's next lazy unlock after this time, or at its helper's next poll. */
enum { LAZY_MAX_NS = 1000 * 1000 };

static int lazy_overdue(void)
{
    return __atomic_load_n(&lazy_pending, __ATOMIC_ACQUIRE) &&
           ompdsm_now_ns() - __atomic_load_n(&lazy_since_ns, __ATOMIC_RELAXED) >
               LAZY_MAX_NS;
}

/* Whether another node asked for a release not yet served. */
static int lazy_unserved(void)
{
    for (int r = 0; r < dsm_g.size; r++)
        if (__atomic_load_n(lazy_word(dsm_off_lazy_ask, r), __ATOMIC_ACQUIRE) >
            __atomic_load_n(&lazy_served[r], __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* Serves the requests there are: one release, then an ack of each count
 * seen before it (lazy_serve_lock held). */
static pthread_mutex_t lazy_serve_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *lazy_seen;

static void lazy_serve(int helper)
{
    for (int r = 0; r < dsm_g.size; r++)
        lazy_seen[r] = __atomic_load_n(lazy_word(dsm_off_lazy_ask, r),
                                       __ATOMIC_ACQUIRE);
    dsm_release(); /* (under release_lock: after any release in progress) */
    for (int r = 0; r < dsm_g.size; r++) {
        if (lazy_seen[r] <= lazy_served[r])
            continue;
        __atomic_store_n(&lazy_served[r], lazy_seen[r], __ATOMIC_RELAXED);
        DSM_STAT(lazy_served, 1);
        if (helper)
            DSM_STAT(lazy_helper_served, 1);
        dsm_push_positions(r); /* (the ack follows it: comm_notify) */
        COMM_CHECK(comm_notify(r, DSM_REG_AREA,
                               dsm_off_lazy_ack + (size_t)dsm_g.rank * 8,
                               lazy_seen[r]));
    }
}

/* The helper polls every LAZY_POLL_MIN_NS while a skipped release is not
 * yet covered (a request may come), backing off to LAZY_POLL_MAX_NS while
 * everything is covered (a taker then needs nobody). */
enum { LAZY_POLL_MIN_NS = 100 * 1000, LAZY_POLL_MAX_NS = 20 * 1000 * 1000 };

static __thread int on_helper;

int dsm_lazy_on_helper(void)
{
    return on_helper;
}

static void *lazy_helper(void *arg)
{
    (void)arg;
    on_helper = 1;
    uint64_t period = LAZY_POLL_MIN_NS;
    while (!__atomic_load_n(&lazy_stop_flag, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, (long)period};
        nanosleep(&ts, NULL);
        if (lazy_unserved() || lazy_overdue()) {
            pthread_mutex_lock(&lazy_serve_lock);
            lazy_serve(1);
            pthread_mutex_unlock(&lazy_serve_lock);
        }
        uint64_t w = __atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE);
        if (!covered(w))
            period = LAZY_POLL_MIN_NS;
        else if (period < LAZY_POLL_MAX_NS)
            period *= 2;
    }
    return NULL;
}

/* A lock operation of this node's threads serves waiting requests itself:
 * a thread that is running answers sooner than the polling helper.  Only
 * where the scan is short. */
enum { LAZY_POLL_NODES = 16 };

void dsm_lazy_after_cover(void)
{
    if (!lazy_started) /* (nobody asks a node that releases eagerly) */
        return;
    /* (the covering store, then the asks: dsm_lazy_request's pair) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    dsm_lazy_poll();
}

void dsm_lazy_poll(void)
{
    if (!lazy_started || dsm_g.size > LAZY_POLL_NODES || !lazy_unserved() ||
        pthread_mutex_trylock(&lazy_serve_lock))
        return;
    lazy_serve(0);
    pthread_mutex_unlock(&lazy_serve_lock);
}

void dsm_lazy_start(void)
{
    lazy_served = calloc((size_t)dsm_g.size, sizeof *lazy_served);
    lazy_seen = calloc((size_t)dsm_g.size, sizeof *lazy_seen);
    if (!lazy_served || !lazy_seen)
        ompdsm_fatal("out of memory for the lazy release helper");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&lazy_thread, NULL, lazy_helper, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        ompdsm_fatal("cannot start the lazy release helper: %s", strerror(rc));
    lazy_started = 1;
}

void dsm_lazy_stop(void)
{
    if (!lazy_started)
        return;
    __atomic_store_n(&lazy_stop_flag, 1, __ATOMIC_RELEASE);
    pthread_join(lazy_thread, NULL);
    lazy_started = 0;
}

int dsm_lazy_request(int holder)
{
    uint64_t w;
    /* (an atomic read) */
    COMM_CHECK(comm_fetch_add(holder, DSM_REG_AREA,
                              offsetof(struct dsm_area_hdr, lazy_state), 0, &w));
    if (covered(w)) {
        DSM_STAT(lazy_covered, 1);
        return 0;
    }
    uint64_t old;
    COMM_CHECK(comm_fetch_add(holder, DSM_REG_AREA,
                              dsm_off_lazy_ask + (size_t)dsm_g.rank * 8, 1, &old));
    /* Asked, then the state again: the holder covers (dsm_lazy_covered)
     * and then looks for asks (dsm_lazy_after_cover), so either it sees
     * this ask and acks it, or this read sees the skip covered.  Without
     * it an ask that landed just after the holder's release covered the
     * skip waited for the helper's next poll, up to LAZY_POLL_MAX_NS (20
     * ms; the suites' cpcrit over tcp: 4.7 ms a lock).  (The holder still
     * acks it later: a release with nothing to publish, a push, a
     * notify.) */
    COMM_CHECK(comm_fetch_add(holder, DSM_REG_AREA,
                              offsetof(struct dsm_area_hdr, lazy_state), 0, &w));
    if (covered(w)) {
        DSM_STAT(lazy_covered, 1);
        return 0;
    }
    /* Wakes the holder's threads that wait (dsm_lazy_wait_ge), not its
     * helper. */
    COMM_CHECK(comm_notify(holder, DSM_REG_AREA,
                           offsetof(struct dsm_area_hdr, lazy_bell), old + 1));
    if (dsm_lazy_wait_ge(lazy_word(dsm_off_lazy_ack, holder), old + 1) < 0)
        ompdsm_fatal("waiting for node %d's lazy release: the job is failing",
                     holder);
    DSM_STAT(lazy_requests, 1);
    return 1;
}

/* The holder's side of dsm_lazy_request, run on this node (the holder) by
 * a lock message handler (lock.c) for node `who`, which took over a lock
 * this node left cached with its release skipped: the same reads and ask
 * as the remote ones, on this node's own words.  Returns 0 when a release
 * through the log covers the skips, else the count of who's ask, which
 * this node acks once it released (a lock operation of its threads or its
 * helper does: a handler never releases). */
uint64_t dsm_lazy_ask_here(int who)
{
    uint64_t w = __atomic_load_n(lazy_state(), __ATOMIC_SEQ_CST);
    if (covered(w)) {
        DSM_STAT(lazy_covered, 1);
        return 0;
    }
    uint64_t old = __atomic_fetch_add(lazy_word(dsm_off_lazy_ask, who), 1,
                                      __ATOMIC_SEQ_CST);
    w = __atomic_load_n(lazy_state(), __ATOMIC_SEQ_CST);
    if (covered(w)) {
        DSM_STAT(lazy_covered, 1);
        return 0;
    }
    __atomic_store_n(&((struct dsm_area_hdr *)dsm_g.area)->lazy_bell, old + 1,
                     __ATOMIC_RELEASE);
    comm_doorbell_ring();
    return old + 1;
}

void dsm_lazy_wait_ack(int holder, uint64_t count)
{
    if (dsm_lazy_wait_ge(lazy_word(dsm_off_lazy_ack, holder), count) < 0)
        ompdsm_fatal("waiting for node %d's lazy release: the job is failing",
                     holder);
    DSM_STAT(lazy_requests, 1);
}

struct lazy_wait {
    const volatile uint64_t *p;
    uint64_t target;
};

/* (No comm operation in a wait's predicate: the serving happens outside
 * the wait.) */
static int lazy_wait_pred(void *arg)
{
    const struct lazy_wait *w = arg;
    return __atomic_load_n(w->p, __ATOMIC_ACQUIRE) >= w->target ||
           lazy_unserved();
}

int dsm_lazy_wait_ge(const volatile uint64_t *p, uint64_t target)
{
    if (!lazy_started || dsm_g.size > LAZY_POLL_NODES)
        return comm_wait_ge(p, target);
    struct lazy_wait w = {p, target};
    for (;;) {
        int rc = comm_wait_until(lazy_wait_pred, &w);
        if (rc < 0 || __atomic_load_n(p, __ATOMIC_ACQUIRE) >= target)
            return rc;
        dsm_lazy_poll();
        sched_yield(); /* (the helper may be serving: no busy loop) */
    }
}

void dsm_lazy_skip(void)
{
    __atomic_fetch_add(lazy_state(), (uint64_t)1 << 32, __ATOMIC_ACQ_REL);
    if (!__atomic_load_n(&lazy_pending, __ATOMIC_RELAXED)) {
        __atomic_store_n(&lazy_since_ns, ompdsm_now_ns(), __ATOMIC_RELAXED);
        __atomic_store_n(&lazy_pending, 1, __ATOMIC_RELEASE);
    }
}

void dsm_lazy_skipped(void)
{
    if (lazy_overdue())
        dsm_release();
    else
        dsm_lazy_poll();
}

void dsm_lazy_flush(void)
{
    /* The counts, not lazy_pending: a release that has taken its batch
     * but not yet written its log entries covers nothing yet. */
    uint64_t w = lazy_started ? __atomic_load_n(lazy_state(), __ATOMIC_ACQUIRE) : 0;
    if (!covered(w))
        dsm_release();
}
