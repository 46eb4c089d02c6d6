/* dsm/atomic.c - OpenMP atomic updates of shared variables.  The update is
 * a compare-swap loop on the aligned 8-byte word holding the variable, at
 * the page's home, so every node's atomics on it serialise there.  The
 * updating node writes the result into its own copy (and twin) too, so a
 * later read by the same thread sees its own update, and records a notice so
 * other nodes drop their copies at their next acquire. */
#include "dsm_int.h"

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
        pthread_mutex_lock(page_lock(pg));
        int valid = dsm_g.state[pg] == PG_RO;
        if (valid)
            memcpy(&guess, dsm_g.sys + hoff, 8);
        pthread_mutex_unlock(page_lock(pg));
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
        pthread_mutex_t *l = page_lock(pg);
        pthread_mutex_lock(l);
        if (dsm_g.state[pg] != PG_INVALID) {
            memcpy(dsm_g.sys + hoff + off, (char *)&nw + off, size);
            if (dsm_g.twin[pg])
                memcpy((char *)dsm_g.twin[pg] + ((hoff + off) & (dsm_g.page_size - 1)),
                       (char *)&nw + off, size);
        }
        pthread_mutex_unlock(l);
        pthread_mutex_unlock(rl);
    }
    pthread_mutex_lock(&dsm_g.dirty_lock);
    notice_push(&dsm_g.extra_notices, pg, 1, dsm_g.rank);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
}
