/* dsm/volatile.c - volatile objects (OpenMP 3.0: an access to one is as
 * if a flush of the object came before a read and after a write): a read
 * refetches the object's bytes from their home, a write sends them there
 * at once, and neither touches any other data; a read that keeps seeing
 * the same value yields now and then, since it is usually a spin loop
 * waiting for another node. */
#include "dsm_int.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

static int vol_hybrid; /* dsm_volatile_threads: several threads per node */

void dsm_volatile_threads(int threads_per_node)
{
    vol_hybrid = threads_per_node > 1;
    dsm_g.tpn = threads_per_node;
}

void dsm_threads_at_least(int n)
{
    if (n > __atomic_load_n(&dsm_g.tpn, __ATOMIC_RELAXED))
        dsm_volatile_threads(n);
}

/* Calls fn on each piece of [p, p+len) that lies within one heap page. */
static void vol_pieces(const volatile void *p, size_t len,
                       void (*fn)(uint32_t pg, size_t off, size_t n))
{
    const char *a = (const char *)p, *end = a + len;
    while (a < end) {
        uint32_t pg = page_of(a);
        size_t off = (size_t)(a - page_app(pg));
        size_t n = dsm_g.page_size - off;
        if (n > (size_t)(end - a))
            n = (size_t)(end - a);
        fn(pg, off, n);
        a += n;
    }
}

/* Refetches bytes [off, off+n) of page pg from its home into this node's
 * copy, and into its twin when the page is dirty, so that the next diff
 * does not take the home's value for a write of ours; bytes of a dirty page
 * that another thread of this node stored and has not yet written through
 * are kept.  An invalid copy is fetched whole (the read would fault
 * anyway). */
static void vol_refetch(uint32_t pg, size_t off, size_t n)
{
    int home = dsm_home(pg);
    if (home == dsm_g.rank)
        return; /* the home's copy is the master: diffs land in it */
    for (;;) {
        uint8_t st = __atomic_load_n(&dsm_g.state[pg], __ATOMIC_ACQUIRE);
        if (st == PG_INVALID || st == PG_FETCHING) {
            dsm_page_access(pg, 0);
            continue;
        }
        pthread_mutex_lock(page_lock(pg));
        st = dsm_g.state[pg];
        if (st == PG_RO || st == PG_DIRTY) {
            char buf[256], *b = n <= sizeof buf ? buf : malloc(n);
            if (!b)
                ompdsm_fatal("out of memory refetching %zu volatile bytes", n);
            if (comm_get(home, DSM_REG_HEAP, page_off(pg) + off, b, n) < 0)
                ompdsm_fatal("refetch of a volatile object (page %u) from "
                             "node %d failed", pg, home);
            if (dsm_g.wd == WD_ON && vol_hybrid) {
                /* A marked byte was stored by a thread of this node whose
                 * write-through is still to come: it stays. */
                unsigned char *c = (unsigned char *)page_sys(pg) + off;
                for (size_t i = 0; i < n; i++)
                    if (!dsm_wd_byte_marked(pg, off + i))
                        c[i] = ((const unsigned char *)b)[i];
            } else if (st == PG_DIRTY && dsm_g.twin[pg] && vol_hybrid) {
                /* A byte that differs from the twin was stored by a thread
                 * of this node whose write-through is still to come (hybrid
                 * nodes): it stays.  The others take the home's value, each
                 * with a compare-swap from the twin's, so that such a store
                 * landing meanwhile wins too. */
                unsigned char *c = (unsigned char *)page_sys(pg) + off;
                unsigned char *tw = (unsigned char *)dsm_g.twin[pg] + off;
                const unsigned char *h = (const unsigned char *)b;
                for (size_t i = 0; i < n; i++) {
                    unsigned char exp = tw[i];
                    if (h[i] != exp &&
                        __atomic_compare_exchange_n(&c[i], &exp, h[i], 0,
                                                    __ATOMIC_SEQ_CST,
                                                    __ATOMIC_RELAXED))
                        tw[i] = h[i];
                }
            } else {
                memcpy(page_sys(pg) + off, b, n);
                if (st == PG_DIRTY && dsm_g.twin[pg])
                    memcpy((char *)dsm_g.twin[pg] + off, b, n);
            }
            if (b != buf)
                free(b);
            pthread_mutex_unlock(page_lock(pg));
            return;
        }
        pthread_mutex_unlock(page_lock(pg));
    }
}

static int any_marked(uint32_t pg, size_t off, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dsm_wd_byte_marked(pg, off + i))
            return 1;
    return 0;
}

/* Sends bytes [off, off+n) of page pg to its home now, and makes the twin
 * agree, so that a later diff does not send them again (over a newer
 * value another node wrote through meanwhile). */
static void vol_write_through(uint32_t pg, size_t off, size_t n)
{
    int home = dsm_home(pg);
    if (home == dsm_g.rank)
        return; /* written in place into the master copy */
    pthread_mutex_lock(page_lock(pg));
    if (dsm_g.state[pg] == PG_DIRTY && dsm_g.twin[pg]) {
        if (vol_hybrid &&
            !memcmp((char *)dsm_g.twin[pg] + off, page_sys(pg) + off, n)) {
            /* a sibling thread wrote these bytes through (or a release
             * sent them) after our store: the home has them, or a newer
             * value from another node that ours must not overwrite */
            pthread_mutex_unlock(page_lock(pg));
            return;
        }
        memcpy((char *)dsm_g.twin[pg] + off, page_sys(pg) + off, n);
    }
    if (dsm_g.wd == WD_ON) {
        if (vol_hybrid && !any_marked(pg, off, n)) {
            /* No byte still marked: a sibling thread's write-through (or
             * a release) sent them after our store, with our value or a
             * newer one; sending the copy's bytes now would put them over
             * what other nodes wrote since (tests/omp/volatile_spin.c on
             * 4 nodes x 2 threads over tcp lost the token so) */
            pthread_mutex_unlock(page_lock(pg));
            return;
        }
        dsm_wd_unmark(pg, off, n); /* (sent now: a later diff must not) */
    }
    if (comm_put(home, DSM_REG_HEAP, page_off(pg) + off, page_sys(pg) + off,
                 n) < 0 ||
        comm_fence(home) < 0)
        ompdsm_fatal("write-through of a volatile object (page %u) to node %d "
                     "failed", pg, home);
    pthread_mutex_unlock(page_lock(pg));
}

/* A spin loop on a volatile object must let the writer run when there are
 * more nodes than cores: after VOL_SPINS reads of one object that saw the
 * same bytes, each further such read yields. */
enum { VOL_SPINS = 64 };
static __thread const volatile void *vol_last;
static __thread uint64_t vol_last_val;
static __thread unsigned vol_same;

void dsm_volatile_read(const volatile void *p, size_t len)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (dsm_g.solo || !dsm_g.started || !dsm_in_heap((const void *)p) || !len)
        return;
    vol_pieces(p, len, vol_refetch);
    if (len <= 8) {
        uint64_t v = 0;
        memcpy(&v, (const void *)p, len);
        if (p == vol_last && v == vol_last_val) {
            if (++vol_same > VOL_SPINS)
                sched_yield();
        } else {
            vol_last = p;
            vol_last_val = v;
            vol_same = 0;
        }
    }
}

void dsm_volatile_write(const volatile void *p, size_t len)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (dsm_g.solo || !dsm_g.started || !dsm_in_heap((const void *)p) || !len)
        return;
    vol_pieces(p, len, vol_write_through);
    vol_last = NULL;
}
