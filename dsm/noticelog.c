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

/* Positions pushed to every peer (OMPDSM_LOG_PUSH): a get over tcp is a
 * round trip, and a spinning flush did one per node each time (the
 * suites' tasks, a flush per term: 33 us each).  Where the transport
 * between two nodes is tcp (or shm too, OMPDSM_LOG_PUSH=on, for tests),
 * each pushes its positions into the other's mailbox at every release
 * through the log, and an acquire from every node (a flush) reads that
 * mailbox from its own memory.  The rule is symmetric (so is the
 * transport of a pair), hence each side knows whether the other pushes.
 *
 * A release pushes the whole block (positions and mirror) once its tail
 * moved.  On 2 nodes that is all: whatever the peer can learn of the
 * release reaches it from this node over the same connection after the
 * push (a later release's diff at its home, a grant, the reply to a get
 * or compare-swap of a lock word), and the transports deliver one node's
 * puts, notifies and replies to another in order.  With 3 nodes or more
 * a third node can tell it sooner (a lock freed at its manager, a diff at
 * a third home), so the release first pushes the count of entries
 * written (word 0) before any diff goes out and fences it with the diffs
 * (alone if there are none): once the release returns, every peer's
 * mailbox says at least that its entries are written, and an acquire
 * that finds them written but not complete waits for the block, which is
 * on its way (as it waits for the tail with gets, acquire_all).
 *
 * A push that would put what the peer's mailbox already holds is skipped
 * (vpos_gen): the block a release pushed to every peer serves the grant
 * or ordered turn that follows it. */
static uint8_t *bc_peer; /* per node: it and we push positions to each other */
static int bc_any;
static pthread_once_t bc_once = PTHREAD_ONCE_INIT;
/* Counts the changes of this node's positions and mirror (bumped after
 * each); pushed_gen[j], the count when the last block pushed to j was
 * read (push_lock). */
static uint64_t vpos_gen;
static uint64_t *pushed_gen;

static inline void vpos_changed(void)
{
    __atomic_fetch_add(&vpos_gen, 1, __ATOMIC_RELEASE);
}

static void bc_init(void)
{
    static const char *const modes[] = {"auto", "on", "off"};
    int mode = ompdsm_env_choice("OMPDSM_LOG_PUSH", modes, 3, 0);
    bc_peer = dsm_table((size_t)dsm_g.size, "log push peers");
    pushed_gen = dsm_table((size_t)dsm_g.size * sizeof *pushed_gen,
                           "pushed positions");
    for (int j = 0; j < dsm_g.size; j++) {
        if (j == dsm_g.rank || mode == 2)
            continue;
        const char *tr = comm_peer_transport(j);
        /* (verbs: an RDMA read's response is not ordered after the
         * responder's earlier RDMA writes to us, which the 2-node
         * argument above needs; tcp orders them, comm/tcp_int.h) */
        bc_peer[j] = !strcmp(tr, "tcp") || (mode == 1 && !strcmp(tr, "shm"));
        bc_any |= bc_peer[j];
    }
}

static inline int bc_on(void)
{
    pthread_once(&bc_once, bc_init);
    return bc_any;
}

int dsm_log_fence_alone(void)
{
    return bc_on() && dsm_g.size > 2;
}

/* On 2 nodes that push, a release's diffs need no fence either: they go
 * to the one other node, before the block that says they are complete,
 * and this node's own later gets from it are ordered after them (comm.h);
 * nobody else could read the home's bytes early. */
int dsm_log_diffs_ordered(void)
{
    return bc_on() && dsm_g.size == 2;
}

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

/* Pushes are serialized, snapshot and put together, so that a node's
 * mailbox for us never goes back to an older snapshot (the transports
 * deliver one node's puts to another in the order they were issued). */
static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t mbox_off(void)
{
    return dsm_off_mbox + (uint64_t)dsm_g.rank * vpos_words() * 8;
}

/* The count of entries written, alone, into every pushing peer's mailbox
 * (word 0 of our slot: the rest of the slot stays as last pushed). */
static void push_written(void)
{
    pthread_mutex_lock(&push_lock);
    uint64_t w = __atomic_load_n(&vpos_local()[0], __ATOMIC_ACQUIRE);
    for (int j = 0; j < dsm_g.size; j++)
        if (bc_peer[j])
            COMM_CHECK(comm_put(j, DSM_REG_AREA, mbox_off(), &w, 8));
    pthread_mutex_unlock(&push_lock);
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
    /* The mirror holds the last DSM_LOG_MIRROR entries of the releases
     * before too, while they end where this one starts: an acquirer that
     * missed several releases (a node whose lock release publishes a page
     * also at its acquire, OMPDSM_LOCK_KEEP) still finds them all.  The
     * oldest go first. */
    uint64_t m0 = m[0], m1 = m[1];
    int go_on = m[2 + DSM_MIRROR_WORDS] == m1 && m1 == start && m0 < m1 &&
                n <= DSM_LOG_MIRROR;
    __atomic_store_n(&m[2 + DSM_MIRROR_WORDS], 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (go_on) {
        struct notice *e = (struct notice *)&m[2];
        uint64_t held = m1 - m0;
        if (held + n > DSM_LOG_MIRROR) {
            uint64_t drop = held + n - DSM_LOG_MIRROR;
            memmove(e, e + drop, (size_t)(held - drop) * sizeof *e);
            held -= drop;
            __atomic_store_n(&m[0], m0 + drop, __ATOMIC_RELAXED);
        }
        memcpy(e + held, v, n * sizeof *v);
        __atomic_store_n(&m[1], start + n, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&m[2 + DSM_MIRROR_WORDS], start + n, __ATOMIC_RELAXED);
    } else if (n <= DSM_LOG_MIRROR) {
        __atomic_store_n(&m[0], start, __ATOMIC_RELAXED);
        __atomic_store_n(&m[1], start + n, __ATOMIC_RELAXED);
        memcpy(&m[2], v, n * sizeof *v);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&m[2 + DSM_MIRROR_WORDS], start + n, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&pos[0], start + n, __ATOMIC_SEQ_CST);
    vpos_changed();
    if (dsm_log_fence_alone())
        push_written();
    return start + n;
}

void dsm_log_complete(uint64_t tail)
{
    __atomic_store_n(&vpos_local()[1 + dsm_g.rank], tail, __ATOMIC_SEQ_CST);
    vpos_changed();
    if (bc_on())
        for (int j = 0; j < dsm_g.size; j++)
            if (bc_peer[j])
                dsm_push_positions(j);
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

/* Node from's positions as it pushed them to us (dsm_push_positions). */
static void mbox_read(int from, uint64_t *w)
{
    size_t nw = vpos_words();
    const uint64_t *m = (const uint64_t *)(dsm_g.area + dsm_off_mbox) +
                        (size_t)from * nw;
    for (size_t i = 0; i < nw; i++)
        w[i] = __atomic_load_n(&m[i], __ATOMIC_ACQUIRE);
}

/* Applies the entries of every log j up to target[j] (acquire_lock
 * held), and publishes the new positions; node from's mirror is in w
 * (from < 0: none), and a pushing peer j's in all + j * vpos_words() when
 * all is not NULL (acquire_all read the mailboxes). */
static void acquire_to(const uint64_t *target, int from, const uint64_t *w,
                       const uint64_t *all)
{
    int me = dsm_g.rank;
    struct notice_list l = {0};
    int lost = 0;
    for (int j = 0; j < dsm_g.size && !lost; j++) {
        if (j == me || target[j] <= dsm_g.log_pos[j])
            continue;
        const uint64_t *m = j == from ? w
                            : all && bc_peer[j] ? all + (size_t)j * vpos_words()
                                                : NULL;
        if (m && mirror_read(m, dsm_g.log_pos[j], target[j], &l) == 0) {
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
    int moved = 0;
    for (int j = 0; j < dsm_g.size; j++)
        if (j != me && target[j] > dsm_g.log_pos[j]) {
            dsm_g.log_pos[j] = target[j];
            __atomic_store_n(&pos[1 + j], target[j], __ATOMIC_RELEASE);
            moved = 1;
        }
    if (moved)
        vpos_changed();
}

/* Waits until pushing peer j's mailbox shows its written entries complete
 * (the push of its tail follows the push of the count written at once,
 * unless the peer is slow to run: then yield, and after a while ask it
 * with gets, which also notice a peer that is gone); w its block, read
 * again when the tail came. */
static void mbox_wait_tail(int j, uint64_t *w)
{
    const uint64_t *m = (const uint64_t *)(dsm_g.area + dsm_off_mbox) +
                        (size_t)j * vpos_words();
    for (int tries = 0; w[1 + j] < w[0]; tries++) {
        if (tries < 2000) {
            if (tries > 100)
                sched_yield();
            if (__atomic_load_n(&m[1 + j], __ATOMIC_ACQUIRE) >= w[0])
                mbox_read(j, w);
            continue;
        }
        uint64_t t;
        COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos + (1 + (size_t)j) * 8,
                            &t, 8));
        if (t >= w[0]) {
            mbox_read(j, w);
            if (w[1 + j] < t)
                w[1 + j] = t; /* (the block's push is still on its way) */
        } else {
            sched_yield();
        }
    }
}

/* An acquire from every node: the maximum of their positions, after
 * waiting for each node's written entries to be complete.  A pushing
 * peer's positions come from its mailbox (into all + j * vpos_words(),
 * all not NULL when bc_any), the others' by a get into w. */
static void acquire_all(uint64_t *target, uint64_t *w, uint64_t *all)
{
    int me = dsm_g.rank, n = dsm_g.size;
    for (int j = 0; j < n; j++)
        target[j] = dsm_g.log_pos[j];
    for (int j = 0; j < n; j++) {
        if (j == me)
            continue;
        uint64_t *p = w;
        if (all && bc_peer[j]) {
            p = all + (size_t)j * vpos_words();
            mbox_read(j, p);
            mbox_wait_tail(j, p);
        } else {
            /* (The positions only: the mirror serves acquires from one
             * node.) */
            COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_vpos, w,
                                ((size_t)n + 1) * 8));
            /* Entries written whose diffs may still be on their way: a
             * node that saw one of those diffs (a flag at its home) must
             * not read the data before them; wait briefly for the tail. */
            for (int tries = 0; w[1 + j] < w[0]; tries++) {
                if (tries > 100)
                    sched_yield();
                uint64_t t;
                COMM_CHECK(comm_get(j, DSM_REG_AREA,
                                    dsm_off_vpos + (1 + (size_t)j) * 8, &t, 8));
                if (t >= w[0])
                    w[1 + j] = t;
            }
        }
        for (int k = 0; k < n; k++)
            if (k != me && p[1 + k] > target[k])
                target[k] = p[1 + k];
    }
}

void dsm_push_positions(int to)
{
    size_t nw = vpos_words();
    uint64_t off = mbox_off();
    static const uint64_t zero;
    pthread_mutex_lock(&push_lock);
    /* (read before the block: a change after it pushes again) */
    uint64_t g = __atomic_load_n(&vpos_gen, __ATOMIC_ACQUIRE);
    if (bc_on() && g && pushed_gen[to] == g) {
        pthread_mutex_unlock(&push_lock);
        return; /* its mailbox holds this already */
    }
    /* The check word first, on its own: a reader that finds it cleared or
     * not matching ignores the copied entries (mirror_read). */
    COMM_CHECK(comm_put(to, DSM_REG_AREA, off + (nw - 1) * 8, &zero, 8));
    COMM_CHECK(comm_put(to, DSM_REG_AREA, off, vpos_local(), nw * 8));
    pushed_gen[to] = g;
    pthread_mutex_unlock(&push_lock);
}

void dsm_log_acquire(int from, int pushed)
{
    if (from == dsm_g.rank)
        return; /* released here: nothing new (the node's positions are
                 * shared by its threads) */
    int n = dsm_g.size;
    /* (on the stack for small jobs: a spinning flush comes here each
     * time) */
    enum { SMALL = 64, FEW = 4 };
    uint64_t tbuf[SMALL], wbuf[DSM_VPOS_WORDS(SMALL)];
    uint64_t abuf[FEW * DSM_VPOS_WORDS(FEW)];
    int small = n <= SMALL;
    uint64_t *target = small ? tbuf : malloc((size_t)n * sizeof *target);
    uint64_t *w = small ? wbuf : malloc(vpos_words() * sizeof *w);
    uint64_t *all = NULL;
    if (from < 0 && bc_on())
        all = n <= FEW ? abuf : malloc((size_t)n * vpos_words() * sizeof *all);
    if (!target || !w || (from < 0 && bc_any && !all))
        ompdsm_fatal("out of memory for log positions");
    pthread_mutex_lock(&dsm_g.acquire_lock);
    if (from < 0) {
        acquire_all(target, w, all);
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
    acquire_to(target, from, w, all);
    pthread_mutex_unlock(&dsm_g.acquire_lock);
    if (!small) {
        free(target);
        free(w);
    }
    if (all && all != abuf)
        free(all);
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
    vpos_changed();
    pthread_mutex_unlock(&dsm_g.acquire_lock);
}
