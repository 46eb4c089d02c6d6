/* dsm/snap.c - snapshots of a home's own writes, so that a copy can be
 * brought up to date at a lock or flush acquire without a fault, a
 * protection change or a fetch of the page.
 *
 * A node writes the pages it is home of in place: the master copy shows
 * its writes before it releases them.  A reader that refreshed lines of
 * its copy from the master at an acquire would see writes of a release
 * not yet made (a flag set after the data it guards), while its copies of
 * the other pages that release wrote still lack them: a program that
 * spins on a flag and then reads the data (NPB LU's flush loops) would
 * read old data.  So a release through the log (a lock's, a flush's, an
 * ordered turn's; not a barrier's) copies the bytes it wrote to each such
 * page, found by their write-detection marks, as exact runs into a ring
 * in its DSM_REG_AREA, and the notice carries where (struct notice.snap);
 * an acquire over shm applies exactly those runs to a valid copy, with no
 * fault, protection change or page fetch (invalidate.c; the notice is
 * then dropped), and what it cannot apply (the ring lapped it, another
 * transport, a notice merged with another) stays a notice: the page is
 * refetched whole or dropped, as before.  Exact runs, not the lines
 * around them: the reader may have written neighbouring bytes since.
 *
 * So a snapshot must hold this release's writes only: marks a release
 * leaves on a home page (one nobody fetched since its last notice, a
 * barrier's, which does not pay to clear them, or too many for a
 * snapshot) make the page's next notice one of the whole page, which
 * clears them where they are few.  And it must not be
 * older than the copy: a copy fetched after the release (a fault before
 * the acquire that brings the notice) may hold later writes of the same
 * bytes.  A fetch from a home over shm reads the home's ring head before
 * and after its get: a record that ends at or before the first was
 * written before the fetch began (the copy has it), one that ends after
 * the second was begun after the fetch ended (the copy is older: apply),
 * one in between is applied as a notice of the whole page.
 *
 * A record at ring position pos (a byte count that only grows; records
 * never straddle the ring's end): u32 runs, u32 bytes, the runs as
 * struct comm_run (page offsets), the bytes, padded to 8.  snap =
 * pos << SNAP_LEN_BITS | record length.  The node publishes how far it
 * has written (dsm_off_snap_head) before it writes a record; a reader
 * that read a record and then finds the head less than a ring ahead of
 * its end read it whole. */
#include "dsm_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A snapshot's bytes at most (more: a fetch of the page costs little
 * more than the copies). */
enum { SNAP_LEN_BITS = 20, SNAP_DATA_MAX = 4096 };

static uint8_t *old_marks; /* per page: marks of an earlier release may remain */
static uint8_t *peer_shm;  /* per node: reached over shm */
/* Per page: the home's ring head around the copy's last fetch, and that
 * home + 1 (0: never fetched; heads of another home's ring say nothing). */
static struct fetched {
    uint64_t before, after;
    int32_t home;
} *fetched;
static pthread_once_t old_once = PTHREAD_ONCE_INIT;

static void old_init(void)
{
    old_marks = dsm_table(dsm_g.npages, "home marks");
    fetched = dsm_table((size_t)dsm_g.npages * sizeof *fetched, "fetch heads");
    peer_shm = dsm_table((size_t)dsm_g.size, "shm peers");
    for (int j = 0; j < dsm_g.size; j++)
        peer_shm[j] = strcmp(comm_peer_transport(j), "shm") == 0;
}

int dsm_snap_peer(int j)
{
    if (dsm_g.wd != WD_ON || dsm_g.tpn > 1)
        return 0;
    pthread_once(&old_once, old_init);
    return peer_shm[j];
}

static uint64_t ring_head(int home)
{
    uint64_t h;
    COMM_CHECK(comm_get(home, DSM_REG_AREA, dsm_off_snap_head, &h, 8));
    return h;
}

int dsm_fetch_pages(uint32_t pg, uint32_t n, int home, void *dst)
{
    dsm_mark_fetch(pg, n, home);
    if (!dsm_snap_peer(home))
        return comm_get(home, DSM_REG_HEAP, page_off(pg), dst,
                        (size_t)n << dsm_g.page_shift);
    uint64_t before = ring_head(home);
    int rc = comm_get(home, DSM_REG_HEAP, page_off(pg), dst,
                      (size_t)n << dsm_g.page_shift);
    if (rc < 0)
        return rc;
    uint64_t after = ring_head(home);
    for (uint32_t k = 0; k < n; k++)
        fetched[pg + k] = (struct fetched){before, after, home + 1};
    return rc;
}

static inline uint64_t *snap_head(void)
{
    return (uint64_t *)(dsm_g.area + dsm_off_snap_head);
}

static inline uint64_t rec_len(size_t nruns, size_t bytes)
{
    return OMPDSM_ALIGN_UP(8 + nruns * sizeof(struct comm_run) + bytes, (size_t)8);
}

/* Copies the runs of home page pg into the ring: the handle, or 0 (too
 * many bytes).  Under release_lock: one writer a node. */
static uint64_t snap_put(uint32_t pg, const struct comm_run *runs, size_t n)
{
    size_t bytes = 0;
    for (size_t k = 0; k < n; k++)
        bytes += runs[k].len;
    uint64_t len = rec_len(n, bytes);
    if (!n || bytes > SNAP_DATA_MAX || len > DSM_SNAP_MAX)
        return 0;
    uint64_t pos = __atomic_load_n(snap_head(), __ATOMIC_RELAXED);
    if (pos % DSM_SNAP_BYTES + len > DSM_SNAP_BYTES)
        pos += DSM_SNAP_BYTES - pos % DSM_SNAP_BYTES;
    /* (published before the record changes: a reader of what was here
     * finds it lapped) */
    __atomic_store_n(snap_head(), pos + len, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    char *r = dsm_g.area + dsm_off_snap + pos % DSM_SNAP_BYTES;
    uint32_t hdr[2] = {(uint32_t)n, (uint32_t)bytes};
    memcpy(r, hdr, 8);
    memcpy(r + 8, runs, n * sizeof *runs);
    char *d = r + 8 + n * sizeof *runs;
    const char *page = (const char *)page_sys(pg);
    for (size_t k = 0; k < n; k++) {
        memcpy(d, page + runs[k].off, runs[k].len);
        d += runs[k].len;
    }
    return pos << SNAP_LEN_BITS | len;
}

uint64_t dsm_snap_home(uint32_t pg, int want, int pushed, int concurrent)
{
    static __thread struct comm_run *runs;
    pthread_once(&old_once, old_init);
    if (pushed) {
        old_marks[pg] = 0; /* (the push takes them all) */
        return 0;
    }
    if (!want) {
        old_marks[pg] = 1; /* (a barrier leaves them: clearing costs) */
        return 0;
    }
    uint64_t h = 0;
    uint32_t lo, hi;
    pthread_mutex_lock(page_lock(pg));
    if (!dsm_wd_extent(pg, &lo, &hi)) {
        old_marks[pg] = 0;
    } else if (hi - lo > 2 * SNAP_DATA_MAX) {
        old_marks[pg] = 1; /* (too many for a snapshot; left, at no cost) */
    } else if (!old_marks[pg]) {
        if (!runs && !(runs = malloc((dsm_g.page_size / 2 + 1) * sizeof *runs)))
            ompdsm_fatal("out of memory for a snapshot");
        h = snap_put(pg, runs, dsm_wd_take_in(pg, runs, concurrent, lo, hi));
    } else {
        /* Older marks among them: cleared, the notice names the whole
         * page, which covers every store whose mark the clear catches half
         * done (its data is in place before its mark after it, which is
         * before the notice). */
        dsm_wd_clear_in(pg, lo, hi);
        old_marks[pg] = 0;
    }
    pthread_mutex_unlock(page_lock(pg));
    return h;
}

void dsm_snap_home_kept(uint32_t pg, int pushed)
{
    pthread_once(&old_once, old_init);
    old_marks[pg] = !pushed;
}

int dsm_snap_apply(int j, uint32_t pg, uint64_t snap)
{
    static __thread char *buf;
    if (!buf && !(buf = malloc(DSM_SNAP_MAX)))
        ompdsm_fatal("out of memory for a snapshot");
    uint64_t pos = snap >> SNAP_LEN_BITS, len = snap & ((1u << SNAP_LEN_BITS) - 1);
    pthread_mutex_lock(page_lock(pg));
    int st = dsm_g.state[pg];
    /* (a copy fetched from another home came before j was home: older) */
    const struct fetched *f = &fetched[pg];
    int same = f->home == j + 1;
    if (st == PG_INVALID || (st == PG_RO && same && pos + len <= f->before)) {
        pthread_mutex_unlock(page_lock(pg));
        return 1; /* (a fault fetches it whole; the copy has it) */
    }
    if (st != PG_RO || (same && pos + len <= f->after)) {
        pthread_mutex_unlock(page_lock(pg));
        return 0;
    }
    uint64_t head;
    COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_snap + pos % DSM_SNAP_BYTES, buf, len));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    COMM_CHECK(comm_get(j, DSM_REG_AREA, dsm_off_snap_head, &head, 8));
    uint32_t hdr[2];
    memcpy(hdr, buf, 8);
    if (head > pos + DSM_SNAP_BYTES || rec_len(hdr[0], hdr[1]) != len) {
        pthread_mutex_unlock(page_lock(pg));
        return 0; /* (overwritten meanwhile) */
    }
    const struct comm_run *runs = (const struct comm_run *)(buf + 8);
    const char *d = buf + 8 + hdr[0] * sizeof *runs;
    char *page = (char *)page_sys(pg);
    for (uint32_t k = 0; k < hdr[0]; k++) {
        memcpy(page + runs[k].off, d, runs[k].len);
        d += runs[k].len;
    }
    pthread_mutex_unlock(page_lock(pg));
    DSM_STAT(snap_updates, 1);
    DSM_STAT(snap_bytes, hdr[1]);
    return 1;
}
