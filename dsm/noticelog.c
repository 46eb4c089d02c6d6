/* dsm/noticelog.c - notice logs, one per node, and the acquires that
 * read them: how a release outside a barrier publishes its notices in its
 * node's log, how an acquire finds the entries it lacks and applies them
 * (invalidate.c), and the tails barriers carry (dsm_log_tail,
 * dsm_log_advance). */
#include "dsm_int.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

/* A release outside a barrier writes its notices into its node's own log
 * (a ring in its DSM_REG_AREA: no message) and publishes how far the log
 * is complete in its positions (dsm_off_vpos: word 0 the entries written,
 * word 1 + j how far into node j's log the node acquired, its own tail
 * for j = itself).  An acquire that knows the releaser (a lock handed
 * over by a grant or taken over from a cached queue node) reads that
 * node's positions and then exactly the entries it has not applied of the
 * logs they name: everything the releaser wrote or had itself acquired
 * before it released, so happens-before is kept through any chain of
 * locks (a node's positions are the maximum of every acquire it made).
 * An acquire without a known releaser (a flush, dsm_acquire, a lock found
 * free in its queue) reads every node's positions and takes their
 * maximum.  Barriers carry each node's tail and move every position to
 * it.  (Before: one totally ordered log at node 0, read and written by
 * every lock operation of every node.) */

static inline uint64_t *vpos_local(void)
{
    return (uint64_t *)(dsm_g.area + dsm_off_vpos);
}

/* After the positions, a copy of the entries of the node's last release
 * when they are few (DSM_LOG_MIRROR), so that an acquire from a node whose
 * last release is all it lacks (a lock handed back and forth) reads the
 * positions and the entries in one get:
 *   mirror[0] = first index, mirror[1] = end index, then the entries as
 *   struct notice (DSM_MIRROR_WORDS), then a check word equal to the end
 *   index.
 * The check word is cleared before the rest changes and set last; a
 * reader reads forward and trusts the copy only if the check word it
 * read last equals the end index it read first (a seqlock). */
static inline uint64_t *mirror_local(void)
{
    return vpos_local() + dsm_g.size + 1;
}

static inline size_t vpos_words(void)
{
    return DSM_VPOS_WORDS(dsm_g.size);
}

static inline struct dsm_log_entry *log_local(void)
{
    return (struct dsm_log_entry *)(dsm_g.area + dsm_off_log);
}

uint64_t dsm_log_tail(void)
{
    return __atomic_load_n(&vpos_local()[1 + dsm_g.rank], __ATOMIC_ACQUIRE);
}

/* More ranges than a quarter of the ring: publish one entry telling
 * everyone to drop every copy instead. */
static const struct notice *log_shape(const struct notice *v, size_t *n,
                                      struct notice *all)
{
    if (*n <= DSM_LOG_CAP / 4)
        return v;
    *all = (struct notice){0, dsm_g.npages, NOTICE_MULTI, 0};
    *n = 1;
    return all;
}

/* Each sequence word is written last, and the count written (word 0) is
 * published at once: a node that sees a diff of this release land (a flag
 * at its home) before the tail moves finds the entries written but
 * incomplete and waits (acquire_all). */
uint64_t dsm_log_append(const struct notice *v, size_t n)
{
    struct notice all;
    v = log_shape(v, &n, &all);
    uint64_t *pos = vpos_local();
    uint64_t start = __atomic_load_n(&pos[1 + dsm_g.rank], __ATOMIC_RELAXED);
    struct dsm_log_entry *ring = log_local();
    for (size_t i = 0; i < n; i++) {
        struct dsm_log_entry *e = &ring[(start + i) % DSM_LOG_CAP];
        /* seq, read first, and pad2, read last, are cleared before the
         * contents change and set after: a reader that finds both equal
         * to the index it wants read the contents of that lap (log_read;
         * a seqlock, needed only when a reader lags by half the ring). */
        __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->pad2, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        e->page = v[i].page;
        e->npages = v[i].npages;
        e->writer = v[i].writer;
        e->snap = v[i].snap;
        __atomic_store_n(&e->pad2, start + i + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&e->seq, start + i + 1, __ATOMIC_RELEASE);
    }
    uint64_t *m = mirror_local();
    __atomic_store_n(&m[2 + DSM_MIRROR_WORDS], 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (n <= DSM_LOG_MIRROR) {
        __atomic_store_n(&m[0], start, __ATOMIC_RELAXED);
        __atomic_store_n(&m[1], start + n, __ATOMIC_RELAXED);
        memcpy(&m[2], v, n * sizeof *v);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&m[2 + DSM_MIRROR_WORDS], start + n, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&pos[0], start + n, __ATOMIC_SEQ_CST);
    return start + n;
}

void dsm_log_complete(uint64_t tail)
{
    __atomic_store_n(&vpos_local()[1 + dsm_g.rank], tail, __ATOMIC_SEQ_CST);
}

/* Reads entries [from, to) of node j's log into l; 0, or -1 if some were
 * overwritten by a later lap (the caller then drops every copy). */
static int log_read(int j, uint64_t from, uint64_t to, struct notice_list *l)
{
    if (to - from > DSM_LOG_CAP / 2)
        return -1; /* (the writer may lap what we read meanwhile) */
    size_t n = (size_t)(to - from);
    struct dsm_log_entry *e = malloc(n * sizeof *e);
    if (!e)
        ompdsm_fatal("out of memory reading %zu notices", n);
    size_t done = 0;
    while (done < n) {
        uint64_t idx = (from + done) % DSM_LOG_CAP;
        size_t cnt = n - done;
        if (idx + cnt > DSM_LOG_CAP)
            cnt = DSM_LOG_CAP - idx;
        COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_log + idx * sizeof *e,
                            e + done, cnt * sizeof *e));
        done += cnt;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].seq != from + i + 1 || e[i].pad2 != from + i + 1) {
            rc = -1;
            break;
        }
        if (e[i].snap)
            notice_push_snap(l, e[i].page, e[i].writer, e[i].snap);
        else
            notice_push(l, e[i].page, e[i].npages, e[i].writer);
    }
    free(e);
    return rc;
}

/* Node j's positions and mirror (vpos_words()) into w. */
static void vpos_get(int j, uint64_t *w)
{
    COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos, w, vpos_words() * 8));
}

/* Entries [from, to) of node j's log from the mirror in w (vpos_get), if
 * it holds them; 0 if it does. */
static int mirror_read(const uint64_t *w, uint64_t from, uint64_t to,
                       struct notice_list *l)
{
    const uint64_t *m = w + dsm_g.size + 1;
    if (m[2 + DSM_MIRROR_WORDS] != m[1] || m[1] != to || m[0] > from)
        return -1;
    const struct notice *e = (const struct notice *)&m[2];
    for (uint64_t i = from; i < to; i++) {
        const struct notice *x = &e[i - m[0]];
        if (x->snap)
            notice_push_snap(l, x->page, x->writer, x->snap);
        else
            notice_push(l, x->page, x->npages, x->writer);
    }
    return 0;
}

/* Applies the entries of every log j up to target[j] (acquire_lock
 * held), and publishes the new positions; node from's mirror is in w
 * (from < 0: none). */
static void acquire_to(const uint64_t *target, int from, const uint64_t *w)
{
    int me = dsm_g.rank;
    struct notice_list l = {0};
    int lost = 0;
    for (int j = 0; j < dsm_g.size && !lost; j++) {
        if (j == me || target[j] <= dsm_g.log_pos[j])
            continue;
        if (j == from && mirror_read(w, dsm_g.log_pos[j], target[j], &l) == 0) {
            DSM_STAT(log_mirrored, 1);
            continue;
        }
        DSM_STAT(log_reads, 1);
        if (log_read(j, dsm_g.log_pos[j], target[j], &l) < 0)
            lost = 1;
    }
    if (lost) {
        /* Some notices are gone: drop every copy. */
        dsm_invalidate_all();
    } else if (l.n) {
        __atomic_fetch_add(&dsm_g.log_applied, l.n, __ATOMIC_RELAXED);
        notice_normalize(&l);
        dsm_apply_logged(l.v, l.n);
    }
    notice_free(&l);
    uint64_t *pos = vpos_local();
    for (int j = 0; j < dsm_g.size; j++)
        if (j != me && target[j] > dsm_g.log_pos[j]) {
            dsm_g.log_pos[j] = target[j];
            __atomic_store_n(&pos[1 + j], target[j], __ATOMIC_RELEASE);
        }
}

/* An acquire from every node: the maximum of their positions, after
 * waiting for each node's written entries to be complete. */
static void acquire_all(uint64_t *target, uint64_t *w)
{
    int me = dsm_g.rank, n = dsm_g.size;
    for (int j = 0; j < n; j++)
        target[j] = dsm_g.log_pos[j];
    for (int j = 0; j < n; j++) {
        if (j == me)
            continue;
        /* (The positions only: the mirror serves acquires from one node.) */
        COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos, w,
                            ((size_t)n + 1) * 8));
        /* Entries written whose diffs may still be on their way: a node
         * that saw one of those diffs (a flag at its home) must not read
         * the data before them; wait briefly for the tail. */
        for (int tries = 0; w[1 + j] < w[0]; tries++) {
            if (tries > 100)
                sched_yield();
            uint64_t t;
            COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos + (1 + (size_t)j) * 8,
                                &t, 8));
            if (t >= w[0])
                w[1 + j] = t;
        }
        for (int k = 0; k < n; k++)
            if (k != me && w[1 + k] > target[k])
                target[k] = w[1 + k];
    }
}

/* Pushes are serialized, snapshot and put together, so that a node's
 * mailbox for us never goes back to an older snapshot (the transports
 * deliver one node's puts to another in the order they were issued). */
static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;

void dsm_push_positions(int to)
{
    size_t nw = vpos_words();
    uint64_t off = dsm_off_mbox + (uint64_t)dsm_g.rank * nw * 8;
    static const uint64_t zero;
    pthread_mutex_lock(&push_lock);
    /* The check word first, on its own: a reader that finds it cleared or
     * not matching ignores the copied entries (mirror_read). */
    COMM_CHECK(comm_put(to, DSM_REG_AREA, off + (nw - 1) * 8, &zero, 8));
    COMM_CHECK(comm_put(to, DSM_REG_AREA, off, vpos_local(), nw * 8));
    pthread_mutex_unlock(&push_lock);
}

/* Node from's positions as it pushed them to us (dsm_push_positions). */
static void mbox_read(int from, uint64_t *w)
{
    size_t nw = vpos_words();
    const uint64_t *m = (const uint64_t *)(dsm_g.area + dsm_off_mbox) +
                        (size_t)from * nw;
    for (size_t i = 0; i < nw; i++)
        w[i] = __atomic_load_n(&m[i], __ATOMIC_ACQUIRE);
}

void dsm_log_acquire(int from, int pushed)
{
    if (from == dsm_g.rank)
        return; /* released here: nothing new (the node's positions are
                 * shared by its threads) */
    int n = dsm_g.size;
    /* (on the stack for small jobs: a spinning flush comes here each
     * time) */
    enum { SMALL = 64 };
    uint64_t tbuf[SMALL], wbuf[DSM_VPOS_WORDS(SMALL)];
    int small = n <= SMALL;
    uint64_t *target = small ? tbuf : malloc((size_t)n * sizeof *target);
    uint64_t *w = small ? wbuf : malloc(vpos_words() * sizeof *w);
    if (!target || !w)
        ompdsm_fatal("out of memory for log positions");
    pthread_mutex_lock(&dsm_g.acquire_lock);
    if (from < 0) {
        acquire_all(target, w);
    } else {
        if (pushed) {
            mbox_read(from, w);
            DSM_STAT(log_pushed, 1);
        } else {
            vpos_get(from, w);
        }
        for (int j = 0; j < n; j++)
            target[j] = w[1 + j] > dsm_g.log_pos[j] ? w[1 + j] : dsm_g.log_pos[j];
    }
    acquire_to(target, from, w);
    pthread_mutex_unlock(&dsm_g.acquire_lock);
    if (!small) {
        free(target);
        free(w);
    }
}

void dsm_log_advance(const uint64_t *tails)
{
    pthread_mutex_lock(&dsm_g.acquire_lock);
    uint64_t *pos = vpos_local();
    for (int j = 0; j < dsm_g.size; j++)
        if (j != dsm_g.rank && tails[j] > dsm_g.log_pos[j]) {
            dsm_g.log_pos[j] = tails[j];
            __atomic_store_n(&pos[1 + j], tails[j], __ATOMIC_RELEASE);
        }
    pthread_mutex_unlock(&dsm_g.acquire_lock);
}
