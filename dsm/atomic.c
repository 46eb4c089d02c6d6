/* dsm/atomic.c - OpenMP atomic updates of shared variables.  The update is
 * a compare-swap loop on the aligned 8-byte word holding the variable, at
 * the page's home, so every node's atomics on it serialise there.  The
 * updating node writes the result into its own copy (and twin) too, so a
 * later read by the same thread sees its own update, and records a notice so
 * other nodes drop their copies at their next acquire.  An update of a
 * word homed at a node reached over tcp is posted instead: sent as a
 * message that the home applies, with no wait (dsm_atomic_post, below). */
#include "dsm_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t wide_lock = PTHREAD_MUTEX_INITIALIZER;

/* Atomics of one node on a page it is not home of: with several threads in
 * the node, two updates of one word could write their results into the
 * node's copy in the opposite order from the one they took effect at the
 * home, leaving the copy with the older value (which the node keeps when
 * it is the page's only writer).  So a node's threads update such a page
 * one at a time, from their compare-swap at the home to the write into
 * the copy (striped by page). */
enum { ATOMIC_STRIPES = 64 };
static pthread_mutex_t remote_lock[ATOMIC_STRIPES] = {
    [0 ... ATOMIC_STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER};

/* Per stripe (under its remote_lock): the word of the last remote update
 * and the value it left at the home.  A page another node writes is
 * invalid here after every acquire, and the updates of a loop of atomics
 * on it found no guess in the copy and read the word from the home first:
 * two round trips an update where one does when nobody else updated the
 * word meanwhile (and a failed compare-swap returns the value anyway). */
static struct {
    uint64_t hoff; /* word's offset + 1; 0: none */
    uint64_t word;
} last_remote[ATOMIC_STRIPES];

static uint64_t apply(uint64_t word, size_t off, size_t size,
                      dsm_atomic_fn fn, const void *arg, void *out_old,
                      void *out_new)
{
    unsigned char bytes[8];
    memcpy(bytes, &word, 8);
    if (out_old)
        memcpy(out_old, bytes + off, size);
    fn(bytes + off, arg);
    if (out_new)
        memcpy(out_new, bytes + off, size);
    memcpy(&word, bytes, 8);
    return word;
}

/* Local atomics (private memory, or a job of one node). */
static void local_update(void *p, size_t size, dsm_atomic_fn fn,
                         const void *arg, void *out_old, void *out_new)
{
    uintptr_t a = (uintptr_t)p;
    size_t off = a & 7;
    if (size > 8 || off + size > 8) {
        /* long double and misaligned objects: a lock inside the node. */
        pthread_mutex_lock(&wide_lock);
        if (out_old)
            memcpy(out_old, p, size);
        fn(p, arg);
        if (out_new)
            memcpy(out_new, p, size);
        pthread_mutex_unlock(&wide_lock);
        return;
    }
    uint64_t *w = (uint64_t *)(a - off);
    uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nw;
    do {
        nw = apply(old, off, size, fn, arg, out_old, out_new);
    } while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
}

void dsm_atomic_update(void *p, size_t size, dsm_atomic_fn fn, const void *arg,
                       void *out_old, void *out_new)
{
    if (!dsm_in_heap(p) || dsm_g.solo || !dsm_g.started) {
        local_update(p, size, fn, arg, out_old, out_new);
        return;
    }
    DSM_STAT(atomics, 1);
    uintptr_t a = (uintptr_t)p;
    size_t off = a & 7;
    uint32_t pg = page_of(p);
    if (size > 8 || off + size > 8) {
        /* Too wide for a remote compare-swap: a lock of their own. */
        dsm_lock(dsm_g.wide_lock);
        dsm_touch(p, size, 1);
        if (out_old)
            memcpy(out_old, p, size);
        fn(p, arg);
        dsm_wd_wrote(p, size);
        if (out_new)
            memcpy(out_new, p, size);
        dsm_unlock(dsm_g.wide_lock);
        return;
    }
    int home = dsm_home(pg);
    uint64_t hoff = (uint64_t)((char *)(a - off) - dsm_g.app);
    uint64_t guess, got, nw;
    pthread_mutex_t *rl = NULL;
    uint32_t stripe = 0;
    if (home != dsm_g.rank) {
        stripe = pg % ATOMIC_STRIPES;
        rl = &remote_lock[stripe];
        pthread_mutex_lock(rl);
        /* Stores this node made to the page and not yet released are not
         * at the home: release the page first, or the compare-swap would
         * work on (and our twin update would then hide) an older value. */
        dsm_release_page(pg);
        /* The page lock is held from the first guess to the write into
         * the copy, the compare-swap at the home included: a sibling
         * thread's refetch of the page (after an acquire made it stale)
         * that came between the compare-swap and that write got a value
         * another node left at the home after ours, and the write put our
         * older result over it, with that node's notice already applied
         * (tests/omp/atomic_flush_rounds.c on 2 nodes x 2 threads over
         * shm: a thread spun 5 s on a count it never saw complete). */
        pthread_mutex_lock(page_lock(pg));
        int valid = dsm_g.state[pg] == PG_RO;
        if (valid)
            memcpy(&guess, dsm_g.sys + hoff, 8);
        /* Our copy, if valid, is the best first guess; then the value our
         * last update of the word left; otherwise ask the home, so that fn
         * never sees bytes that were never the value. */
        if (!valid && last_remote[stripe].hoff == hoff + 1)
            guess = last_remote[stripe].word;
        else if (!valid)
            COMM_CHECK(comm_get(home, DSM_REG_HEAP, hoff, &guess, 8));
    } else {
        memcpy(&guess, dsm_g.sys + hoff, 8);
    }
    for (;;) {
        nw = apply(guess, off, size, fn, arg, out_old, out_new);
        COMM_CHECK(comm_cas(home, DSM_REG_HEAP, hoff, guess, nw, &got));
        if (got == guess)
            break;
        guess = got;
    }
    if (home != dsm_g.rank) {
        last_remote[stripe].hoff = hoff + 1;
        last_remote[stripe].word = nw;
        if (dsm_g.state[pg] != PG_INVALID) {
            memcpy(dsm_g.sys + hoff + off, (char *)&nw + off, size);
            if (dsm_g.twin[pg])
                memcpy((char *)dsm_g.twin[pg] + ((hoff + off) & (dsm_g.page_size - 1)),
                       (char *)&nw + off, size);
        }
        pthread_mutex_unlock(page_lock(pg));
        pthread_mutex_unlock(rl);
    }
    /* Under write detection the update went to the home only, and
     * subscribers' copies were not pushed to: they must refetch. */
    pthread_mutex_lock(&dsm_g.dirty_lock);
    notice_push(&dsm_g.extra_notices, pg, 1,
                dsm_g.wd == WD_ON ? NOTICE_FORCE : dsm_g.rank);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
}

/* ---- posted updates ----
 * Over tcp a compare-swap at the home is a round trip through the home's
 * service thread, and a loop of atomics on a shared sum ran at that pace
 * (docs/design.md, "Atomics").  The atomic construct reads no result, so an update of
 * a word homed at a tcp peer is sent there as a message (DSM_TAG_POSTED),
 * which the home's service thread applies with a compare-swap loop on its
 * memory, and the updating thread goes on.  This node's copy of the page
 * gets the update too, applied to its own value, so the thread reads its
 * own update (a copy that is stale reads the other nodes' updates only at
 * the next acquire, as a read racing with them may).  The copy must be
 * valid for that: an invalid one is fetched first, once.
 *
 * The update must be at the home before this node's next release (whose
 * notice sends other nodes there) and before its next fetch of the page:
 * the tcp transport serves one node's requests to another in the order it
 * sent them, messages included, so a fetch of the page comes after, and a
 * release first drains: one fetch-and-add of 0 at each home posted to
 * since the last drain, whose reply comes after every message before it.
 * dsm_atomic_drain is called by the lock layer (dsm_lock, dsm_trylock,
 * dsm_unlock, dsm_lock_settle before barriers) and by the runtime before
 * its other releases and acquires (flush, ordered, fork, tasks). */
enum { DSM_TAG_POSTED = 2 }; /* (after dsm_int.h's DSM_TAG_FREE) */
enum { POST_ARG_MAX = 40 };

struct posted {
    uint64_t hoff;  /* the word's offset in the heap */
    uint8_t off, size, arglen, pad[5];
    unsigned char arg[POST_ARG_MAX];
};

static dsm_atomic_fn post_fn;
/* Per home: updates posted, and the count the last drain covered. */
static uint64_t *posted_n, *drained_n;
static int8_t *post_tcp; /* per peer: reached over tcp (1), not (0) */
static pthread_once_t post_once = PTHREAD_ONCE_INIT;

static void post_msg(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag;
    (void)arg;
    struct posted m;
    if (len < offsetof(struct posted, arg) || len > sizeof m)
        ompdsm_fatal("malformed posted atomic update from node %d", src);
    memcpy(&m, buf, len);
    if (m.hoff + 8 > dsm_g.heap_size || m.hoff & 7 || m.off + m.size > 8 ||
        m.arglen > POST_ARG_MAX || !post_fn)
        ompdsm_fatal("malformed posted atomic update from node %d", src);
    uint64_t *w = (uint64_t *)(dsm_g.sys + m.hoff);
    uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nw;
    do {
        nw = apply(old, m.off, m.size, post_fn, m.arg, NULL, NULL);
    } while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
}

static void post_init(void)
{
    uint64_t *n = calloc((size_t)dsm_g.size, sizeof *n);
    drained_n = calloc((size_t)dsm_g.size, sizeof *drained_n);
    post_tcp = calloc((size_t)dsm_g.size, sizeof *post_tcp);
    if (!n || !drained_n || !post_tcp)
        ompdsm_fatal("out of memory for posted atomic updates");
    for (int r = 0; r < dsm_g.size; r++)
        post_tcp[r] = !strcmp(comm_peer_transport(r), "tcp");
    /* (last: a drain by a thread that never posted looks at it alone) */
    __atomic_store_n(&posted_n, n, __ATOMIC_RELEASE);
}

void dsm_atomic_set_post_fn(dsm_atomic_fn fn)
{
    post_fn = fn;
    comm_set_handler(DSM_TAG_POSTED, post_msg, NULL);
}

int dsm_atomic_post(void *p, size_t size, const void *arg, size_t arglen)
{
    if (!post_fn || !dsm_in_heap(p) || dsm_g.solo || !dsm_g.started ||
        arglen > POST_ARG_MAX)
        return 0;
    uintptr_t a = (uintptr_t)p;
    size_t off = a & 7;
    if (size > 8 || off + size > 8)
        return 0;
    uint32_t pg = page_of(p);
    int home = dsm_home(pg);
    if (home == dsm_g.rank)
        return 0;
    pthread_once(&post_once, post_init);
    if (!post_tcp[home])
        return 0;
    DSM_STAT(atomics, 1);
    struct posted m = {0};
    m.hoff = (uint64_t)((char *)(a - off) - dsm_g.app);
    m.off = (uint8_t)off;
    m.size = (uint8_t)size;
    m.arglen = (uint8_t)arglen;
    memcpy(m.arg, arg, arglen);
    uint32_t stripe = pg % ATOMIC_STRIPES;
    pthread_mutex_t *rl = &remote_lock[stripe], *l = page_lock(pg);
    pthread_mutex_lock(rl);
    /* (stores of ours not yet at the home go first: see dsm_atomic_update) */
    dsm_release_page(pg);
    pthread_mutex_lock(l);
    if (dsm_g.state[pg] == PG_INVALID) {
        pthread_mutex_unlock(l);
        dsm_touch(p, size, 0);
        pthread_mutex_lock(l);
    }
    if (dsm_g.state[pg] == PG_INVALID) { /* (invalidated again meanwhile) */
        pthread_mutex_unlock(l);
        pthread_mutex_unlock(rl);
        return 0;
    }
    uint64_t word, nw;
    memcpy(&word, dsm_g.sys + m.hoff, 8);
    nw = apply(word, off, size, post_fn, m.arg, NULL, NULL);
    memcpy(dsm_g.sys + m.hoff + off, (char *)&nw + off, size);
    if (dsm_g.twin[pg])
        memcpy((char *)dsm_g.twin[pg] + ((m.hoff + off) & (dsm_g.page_size - 1)),
               (char *)&nw + off, size);
    /* Sent before the page lock goes: a sibling thread that refetches the
     * page (a fault after an acquire invalidated it, or an update) issues
     * its get after this message, so the home has applied it when it
     * serves the get.  Sent after the unlock, a get could overtake it and
     * leave the copy without this update and no notice left to repair it
     * (our own notices are skipped here): tests/omp/
     * parallel_num_threads_over.c on 2 nodes x 2 threads over tcp spun for
     * ever in 3 runs of 100. */
    COMM_CHECK(comm_send(home, DSM_TAG_POSTED, &m,
                         offsetof(struct posted, arg) + arglen));
    pthread_mutex_unlock(l);
    __atomic_fetch_add(&posted_n[home], 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(rl);
    pthread_mutex_lock(&dsm_g.dirty_lock);
    notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
    return 1;
}

void dsm_atomic_drain(void)
{
    uint64_t *posted = __atomic_load_n(&posted_n, __ATOMIC_ACQUIRE);
    if (!posted)
        return;
    for (int h = 0; h < dsm_g.size; h++) {
        uint64_t n = __atomic_load_n(&posted[h], __ATOMIC_ACQUIRE);
        if (n <= __atomic_load_n(&drained_n[h], __ATOMIC_ACQUIRE))
            continue;
        uint64_t old;
        COMM_CHECK(comm_fetch_add(h, DSM_REG_AREA,
                                  offsetof(struct dsm_area_hdr, lazy_state), 0,
                                  &old));
        uint64_t d = __atomic_load_n(&drained_n[h], __ATOMIC_RELAXED);
        while (d < n && !__atomic_compare_exchange_n(&drained_n[h], &d, n, 0,
                                                     __ATOMIC_RELEASE,
                                                     __ATOMIC_RELAXED))
            ;
    }
}
