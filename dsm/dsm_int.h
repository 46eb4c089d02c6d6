/* dsm/dsm_int.h - state and helpers shared by the files of dsm/; other
 * layers use dsm.h.  Grouped by the file that defines each declaration. */
#ifndef OMPDSM_DSM_INT_H
#define OMPDSM_DSM_INT_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include "dsm.h"

/* ---- page states (one byte per page, per node) ----
 * RO is 0 so that a freshly mapped, zeroed state array means "every page is
 * a valid read-only copy", which is the truth at dsm_start: every node wrote
 * the same initial values into its own copy. */
enum page_state {
    PG_RO = 0,      /* valid copy, PROT_READ */
    PG_INVALID = 1, /* stale, PROT_NONE: the next access fetches from home */
    PG_DIRTY = 2,   /* written this interval, PROT_READ|WRITE; non-home
                     * pages have a twin */
    PG_FETCHING = 3, /* a fault is fetching it (page lock held): an acquire
                      * must wait for it and then drop what it fetched */
};

/* ---- write notices (notice.c) ----
 * A notice says pages [page, page+npages) were written by `writer` in the
 * interval, or by several nodes (writer == NOTICE_MULTI). */
#define NOTICE_MULTI (-1)
/* Written by a remote atomic, which pushes nothing (software write
 * detection): every copy is refetched or dropped, even one that writers
 * push to.  Merging keeps it over any writer. */
#define NOTICE_FORCE (-2)
struct notice {
    uint32_t page;
    uint32_t npages;
    int32_t writer;
    uint32_t pad;
    uint64_t snap; /* 0, or where the writer's bytes are (snap.c) */
};
struct notice_list {
    struct notice *v;
    size_t n, cap;
};
int notice_push(struct notice_list *l, uint32_t page, uint32_t npages,
                int32_t writer);
/* notice_push of a one-page notice with the writer's snapshot of the
 * bytes its release wrote (snap.c).  A notice merged or coalesced with
 * another loses its snapshot (it holds one release's bytes of one page),
 * and notices with one never coalesce. */
int notice_push_snap(struct notice_list *l, uint32_t page, int32_t writer,
                     uint64_t snap);
/* Sorts and coalesces a list whose entries all have one writer each. */
void notice_normalize(struct notice_list *l);
/* Merges two normalized lists into out (normalized); pages written by
 * different writers become NOTICE_MULTI.  out may not alias a or b. */
int notice_merge(const struct notice *a, size_t na, const struct notice *b,
                 size_t nb, struct notice_list *out);
void notice_free(struct notice_list *l);

/* ---- diffs (diff.c) ----
 * A diff is a list of byte runs (struct comm_run, comm.h) where `cur`
 * differs from `twin`, ready for comm_putv. */
/* Finds the changed runs of one page (len a multiple of 8), byte-exact;
 * returns the number of runs written to runs (at most len/2 needed). */
size_t diff_page(const void *twin, const void *cur, size_t len,
                 struct comm_run *runs);
/* The same at a granule of g bytes (1, 2, 4 or 8): a g-aligned block with
 * any changed byte goes whole.  Correct only where every scalar object of
 * the page is g-aligned and a multiple of g long, so that the unchanged
 * bytes of such a block belong to an object this node wrote (see
 * dsm_set_granule). */
size_t diff_page_g(const void *twin, const void *cur, size_t len,
                   struct comm_run *runs, unsigned g);
/* Applies runs taken from src to dst (same page size). */
void diff_apply(void *dst, const void *src, const struct comm_run *runs,
                size_t nruns);

/* ---- the node's state (heap.c) ---- */
/* Page locks are striped: page pg uses plock[pg % DSM_PLOCK_STRIPES].  The
 * pages of a batch that stays inside one aligned block of this many pages
 * have distinct locks, which is what lets a fault's read-ahead, a release
 * and an invalidation lock runs of pages in increasing order. */
enum { DSM_PLOCK_STRIPES = 256 };

struct dsm_state {
    int rank, size;
    int solo;               /* one node: no protocol at all */
    char *app;              /* application view (the heap's address) */
    char *sys;              /* system view: always read-write */
    int fd;                 /* memfd backing both views */
    size_t heap_size;
    size_t page_size;
    unsigned page_shift;
    uint32_t npages;
    volatile uint8_t *state; /* per page: enum page_state */
    uint16_t *home;          /* per page: home_encode(home node) (home.c) */
    void **twin;             /* per page: twin copy of a dirty non-home page */
    uint8_t *granule;        /* per page: diff granule, 0 or 1 = byte-exact */
    /* Page locks, striped: a fault, a release and an invalidation of one
     * page never run at the same time on this node. */
    pthread_mutex_t plock[DSM_PLOCK_STRIPES];

    /* Pages written in the current interval (state PG_DIRTY), guarded by
     * dirty_lock.  extra_notices: pages written by atomics at their home,
     * and dirty pages whose diff an acquire had to send early; their
     * notices go out with the next release. */
    pthread_mutex_t dirty_lock;
    uint32_t *dirty;
    size_t ndirty, dirty_cap;
    struct notice_list extra_notices; /* under dirty_lock */
    /* Exclusive pages: homed here, written, and fetched by no other node
     * since this node last published a notice for them (their byte in
     * DSM_REG_AREA at dsm_off_fetched says so).  They stay PG_DIRTY and
     * writable across releases with no notice; a release that finds one
     * fetched protects it and publishes its notice (release.c).  Under
     * dirty_lock; only releases change it. */
    uint32_t *excl;
    size_t nexcl, excl_cap;
    int excl_on;            /* OMPDSM_HOME_EXCLUSIVE (default on) */
    /* Pages kept writable (OMPDSM_KEEP_WRITABLE, keep.c): per page, its
     * write history and keeping state (keep.c says the bits); a kept
     * page stays PG_DIRTY and writable across barriers with its twin
     * brought up to date, instead of being write-protected and faulted
     * again. */
    uint32_t *keep;
    int keep_on;
    int lock_keep;          /* OMPDSM_LOCK_KEEP (default on): release.c */
    unsigned keep_gap;      /* OMPDSM_KEEP_GAP: 0 = measured (keep.c) */
    uint32_t *kept;         /* the pages kept writable, under dirty_lock */
    size_t nkept, kept_cap;
    uint32_t *kept_wrote;   /* kept pages dsm_wrote named since the last
                             * release, under dirty_lock */
    size_t nkept_wrote, kept_wrote_cap;
    /* One release at a time per node: a release carries the writes of every
     * thread of the node, so a thread's own release must not finish (and
     * hand its lock on) before a concurrent release that took its writes
     * has put them at their homes and published them. */
    pthread_mutex_t release_lock;

    /* Notices released since the last barrier (own writes); the barrier
     * publishes their union.  since_fork keeps them across barriers for a
     * region run by a sub-team. */
    pthread_mutex_t interval_lock;
    struct notice_list interval;
    struct notice_list since_fork;
    int track_since_fork;

    /* Per node j: the position in j's notice log up to which this node
     * acquired (noticelog.c); log_applied counts the entries applied. */
    uint64_t *log_pos;
    uint64_t log_applied;
    pthread_mutex_t acquire_lock;

    uint32_t wide_lock;     /* lock of atomics too wide for a compare-swap */
    int update_protocol;    /* OMPDSM_PROTOCOL=update */
    uint32_t readahead;     /* OMPDSM_READAHEAD: pages fetched after a fault */
    int byte_diffs;         /* OMPDSM_DIFF_GRANULE=byte: ignore granules */
    int home_block;         /* OMPDSM_HOME_POLICY=block (home.c) */
    size_t home_block_min;  /* OMPDSM_HOME_BLOCK_MIN (home.c) */
    int mig_policy;         /* OMPDSM_MIGRATION: enum mig_policy (migrate.c) */
    int wd;                 /* enum wd_mode (wd.c): how writes are found */
    int tpn;                /* threads per node (dsm_volatile_threads) */

    /* DSM_REG_AREA: lock tails, queue nodes, and at node 0 the chunk table
     * and the notice log. */
    char *area;
    size_t area_len;
    int area_fd;

    /* Chunks: the heap is carved into chunks claimed by nodes. */
    size_t chunk_size;
    unsigned chunk_shift;
    uint32_t nchunks;
    uint32_t global_chunks;  /* chunks used by program globals */
    size_t global_bump;      /* next free byte of the globals area */
    int started;
};
extern struct dsm_state dsm_g;

static inline uint32_t page_of(const void *p)
{
    return (uint32_t)(((const char *)p - dsm_g.app) >> dsm_g.page_shift);
}
static inline char *page_app(uint32_t pg)
{
    return dsm_g.app + ((size_t)pg << dsm_g.page_shift);
}
static inline char *page_sys(uint32_t pg)
{
    return dsm_g.sys + ((size_t)pg << dsm_g.page_shift);
}
static inline uint64_t page_off(uint32_t pg)
{
    return (uint64_t)pg << dsm_g.page_shift;
}
static inline pthread_mutex_t *page_lock(uint32_t pg)
{
    return &dsm_g.plock[pg % DSM_PLOCK_STRIPES];
}
/* Whether page pg begins a block of DSM_PLOCK_STRIPES pages: runs of
 * pages locked together never cross one. */
static inline int starts_stripe_block(uint32_t pg)
{
    return pg % DSM_PLOCK_STRIPES == 0;
}
/* Page runs handled as one batch: contiguous pages that do not cross a
 * stripe block, so that their page locks are distinct and always taken in
 * increasing order (DSM_PLOCK_STRIPES).  The length of the run that
 * starts at pages[i] of the sorted pages[0..n). */
static inline uint32_t page_run_len(const uint32_t *pages, size_t n, size_t i)
{
    size_t j = i;
    while (j + 1 < n && pages[j + 1] == pages[j] + 1 &&
           !starts_stripe_block(pages[j + 1]))
        j++;
    return (uint32_t)(j - i + 1);
}
static inline void page_run_lock(uint32_t pg, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        pthread_mutex_lock(page_lock(pg + k));
}
static inline void page_run_unlock(uint32_t pg, uint32_t n)
{
    for (uint32_t k = n; k-- > 0;)
        pthread_mutex_unlock(page_lock(pg + k));
}
/* mprotect of the application view of pages [pg, pg+n); fatal on error. */
void dsm_protect(uint32_t pg, uint32_t n, int prot);
/* Write-protects the pages of [pg, pg+n) marked in mark, one mprotect per
 * stretch. */
void dsm_protect_marked(uint32_t pg, uint32_t n, const uint8_t *mark);
/* Anonymous, lazily touched memory for a per-page table; fatal on error. */
void *dsm_table(size_t bytes, const char *what);
/* Appends pg to a growing page list (v, n, cap); ends the job when out of
 * memory.  The caller holds whatever lock guards the list. */
void dsm_page_list_push(uint32_t **v, size_t *n, size_t *cap, uint32_t pg);
/* Sorts a page list (v not NULL); the second form also drops repeats. */
void dsm_page_list_sort(uint32_t *v, size_t n);
void dsm_page_list_sort_unique(uint32_t *v, size_t *n);
/* The heap pages [*first, *last] that [p, p+len) overlaps; 0 if none. */
int dsm_heap_pages(const void *p, size_t len, uint32_t *first, uint32_t *last);
/* Tells home that this node is about to fetch pages [pg, pg+n) (all homed
 * there, within one stripe block; dsm_off_fetched); call before the get:
 * the transports order a get after earlier puts to the same peer. */
void dsm_mark_fetch(uint32_t pg, uint32_t n, int home);
/* Twins come from a pool of page buffers: a new twin holding page pg's
 * current bytes, and the return of one (after a diff). */
void *dsm_twin_copy(uint32_t pg);
void dsm_twin_free(void *t);

/* Layout of DSM_REG_AREA (offsets, same on every node). */
enum {
    DSM_LOG_CAP = 1 << 16,      /* notice log entries (of each node) */
    DSM_LOCK_SLOTS = 1 << 18,   /* lock tails per manager node */
    DSM_QNODES = 32768,         /* lock queue nodes per node */
};
struct dsm_area_hdr {
    volatile uint64_t chunk_next; /* node 0: next unclaimed chunk */
    char pad0[56];
    volatile uint64_t lock_next;  /* next lock id: each node's own count
                                   * before dsm_start, node 0's after */
    char pad1[56];
    volatile uint64_t lazy_state; /* lazy release (lazy.c): skipped
                                   * releases << 32 | those covered */
    char pad3[56];
    volatile uint64_t lazy_bell;  /* rung by a lazy release request */
    char pad4[56];
};
/* An entry of a node's notice log (a ring of DSM_LOG_CAP in its own
 * DSM_REG_AREA at dsm_off_log, written only by that node's releases). */
struct dsm_log_entry {
    uint64_t seq;     /* index + 1, written last */
    uint32_t page;
    uint32_t npages;
    int32_t writer;
    uint32_t pad;
    uint64_t snap;
    uint64_t pad2;
};
/* A lock's queue node, in its waiter's DSM_REG_AREA. */
struct dsm_qnode {
    volatile uint64_t next;  /* successor's lock word, 0 while none, or a
                              * lock-caching state (lock.c) */
    volatile uint64_t grant; /* set to 1 by the predecessor */
    volatile uint64_t want;  /* a hint from a waiter behind a cached lock:
                              * its node must not re-take it from the cache */
    volatile uint64_t reply; /* the answer to a lock request sent as a
                              * message (lock.c), and its argument */
    volatile uint64_t reply_arg;
    char pad[24];
};
extern size_t dsm_off_chunks, dsm_off_log, dsm_off_locks, dsm_off_qnodes;
/* A node's log positions (noticelog.c), size + 1 words at dsm_off_vpos,
 * written only by that node: word 0, the entries of its own log written
 * (their diffs possibly still on their way); word 1 + j, how far into
 * node j's log it acquired (j = itself: its entries complete, diffs at
 * their homes).  Every position it claims names complete entries, so a
 * node acquiring from it reads them without waiting. */
extern size_t dsm_off_vpos;
/* After them, a copy of the node's last release's entries when there are
 * at most DSM_LOG_MIRROR (noticelog.c): 2 words, 2 per entry, 1. */
enum { DSM_LOG_MIRROR = 16 };
#define DSM_MIRROR_WORDS (sizeof(struct notice) / 8 * DSM_LOG_MIRROR)
#define DSM_VPOS_WORDS(nodes) ((size_t)(nodes) + 1 + 2 + DSM_MIRROR_WORDS + 1)
/* Per node h, at dsm_off_mbox + h * DSM_VPOS_WORDS(size) * 8: a copy of
 * node h's positions and mirror that h pushed before a grant or a lazy
 * release ack to this node (noticelog.c, dsm_push_positions). */
extern size_t dsm_off_mbox;
/* At a page's home, the byte at dsm_off_fetched + page: 0 = another node
 * may have fetched the page since the home last published a notice for it
 * (the initial state: every node starts with a copy of every page), 1 = no
 * node has.  A node stores 0 there before every fetch (dsm_mark_fetch);
 * the home exchanges it with 1 when it decides at a release whether the
 * page needs a notice. */
extern size_t dsm_off_fetched;
/* A node's snapshots of the bytes its releases wrote to pages it is home
 * of (snap.c): a ring of DSM_SNAP_BYTES at dsm_off_snap, and at
 * dsm_off_snap_head how far it has been written.  A record is at most
 * DSM_SNAP_MAX bytes. */
enum { DSM_SNAP_BYTES = 1 << 20, DSM_SNAP_MAX = 1 << 15 };
extern size_t dsm_off_snap, dsm_off_snap_head;
/* At a release, for home page pg (written here, page lock not held) that
 * gets a notice: with want (a release through the log, release_lock
 * held), takes its marks into a snapshot and returns its handle when they
 * are this release's alone and few; otherwise 0 (the notice names the
 * whole page), the marks cleared where they were few, left where many or
 * without want (pushed: the push takes them). */
uint64_t dsm_snap_home(uint32_t pg, int want, int pushed, int concurrent);
/* Home page pg written here got no notice: its marks stay, and may hold
 * writes this release published (no snapshot until they are cleared). */
void dsm_snap_home_kept(uint32_t pg, int pushed);
/* Every get of whole pages [pg, pg+n) from their home into dst (the
 * copies, or a buffer for them): tells the home first (dsm_mark_fetch),
 * and notes the home's snapshot ring head before and after the get where
 * its snapshots are applied, so that a snapshot older than the copy is
 * not applied over it.  comm_get's result. */
int dsm_fetch_pages(uint32_t pg, uint32_t n, int home, void *dst);
/* Whether node j's snapshots are applied here (and fetches from it note
 * its heads): write detection, one thread a node, j reached over shm
 * (over a network a record and the head would cost two round trips, more
 * than the fetch they save). */
int dsm_snap_peer(int j);
/* Applies node j's snapshot of page pg (a notice from j's log; j passed
 * dsm_snap_peer) to this node's copy: 1 if the copy is now current (or invalid), 0 if
 * the notice must be applied as a notice. */
int dsm_snap_apply(int j, uint32_t pg, uint64_t snap);
/* Lazy release (lazy.c): at dsm_off_lazy_ask + 8 * r, requests from
 * node r that this node release (a count, bumped by r); at dsm_off_lazy_ack
 * + 8 * h, the count of this node's requests node h has served. */
extern size_t dsm_off_lazy_ask, dsm_off_lazy_ack;

/* ---- page homes (home.c) ----
 * The home map: per page, home_encode(node), or DSM_HOME_UNKNOWN while
 * this node has not learned the home (it asks node 0's chunk table at the
 * page's first use).  Unknown is 0 so that the lazily zeroed map starts
 * all-unknown. */
enum { DSM_HOME_UNKNOWN = 0, DSM_HOME_MAX_NODES = 0xfffe };
static inline uint16_t home_encode(int node)
{
    return (uint16_t)(node + 1);
}
/* The node, or -1 for DSM_HOME_UNKNOWN. */
static inline int home_decode(uint16_t e)
{
    return (int)e - 1;
}
/* Home of a page as far as this node knows it, or -1; never a message. */
static inline int dsm_home_known(uint32_t pg)
{
    return home_decode(__atomic_load_n(&dsm_g.home[pg], __ATOMIC_RELAXED));
}
/* Parses the placement policy and maps the home map (dsm_init). */
void dsm_home_init(void);
/* Home of a page; looks it up in node 0's chunk table the first time. */
int dsm_home(uint32_t pg);
/* Whether the policy block-distributes an allocation of size bytes over
 * the nodes (OMPDSM_HOME_POLICY, OMPDSM_HOME_BLOCK_MIN). */
int dsm_home_spreads(size_t size);
/* Places the pages of a global at heap offset off (dsm_global_alloc). */
void dsm_home_global(uint64_t off, size_t size);
/* Gives the global pages [0, gpages) still without a home to node 0
 * (dsm_start). */
void dsm_home_globals_done(uint32_t gpages);
/* Records chunks [first, first+n), just claimed by this node, in node 0's
 * chunk table and places their pages: block-distributed over the nodes
 * when dpages (their data pages) is not 0, else all this node's. */
void dsm_home_record_run(uint32_t first, uint32_t n, uint64_t dpages);

/* Makes node the home of page pg in this node's map (home migration, at
 * a barrier every node passes; migrate.c). */
void dsm_home_move(uint32_t pg, int node);

/* Node 0's chunk table: one entry per chunk, DSM_CHUNK_ENT_SIZE bytes at
 * dsm_off_chunks.  Word 0: owner + 1 (0: never claimed), and bit 32 set
 * for a block-distributed run; word 1, for such a run: its first chunk
 * << 40 | its data pages. */
enum { DSM_CHUNK_ENT_SIZE = 16 };
#define DSM_CHUNK_RUN_BIT (1ull << 32)
#define DSM_CHUNK_FIRST_SHIFT 40
#define DSM_CHUNK_DPAGES_MASK ((1ull << DSM_CHUNK_FIRST_SHIFT) - 1)
struct dsm_chunk_ent {
    int owner;       /* claiming node, -1 if never claimed */
    int run;         /* part of a block-distributed run */
    uint32_t first;  /* run: its first chunk */
    uint64_t dpages; /* run: its data pages */
};
/* dpages 0 encodes a plain chunk (first is then not stored). */
static inline void chunk_ent_encode(uint64_t w[2], int owner, uint32_t first,
                                    uint64_t dpages)
{
    w[0] = (uint64_t)(uint16_t)(owner + 1) | (dpages ? DSM_CHUNK_RUN_BIT : 0);
    w[1] = dpages ? ((uint64_t)first << DSM_CHUNK_FIRST_SHIFT) |
                        (dpages & DSM_CHUNK_DPAGES_MASK)
                  : 0;
}
static inline struct dsm_chunk_ent chunk_ent_decode(const uint64_t w[2])
{
    struct dsm_chunk_ent e = {(int)(uint16_t)w[0] - 1, 0, 0, 0};
    if (w[0] >> 32) {
        e.run = 1;
        e.first = (uint32_t)(w[1] >> DSM_CHUNK_FIRST_SHIFT);
        e.dpages = w[1] & DSM_CHUNK_DPAGES_MASK;
    }
    return e;
}


/* ---- faults (fault.c) ---- */
int dsm_fault_install(void);
/* Brings page pg into the state an access needs (the fault handler's work,
 * callable directly). */
void dsm_page_access(uint32_t pg, int write);

/* ---- pages kept writable (keep.c, OMPDSM_KEEP_WRITABLE) ----
 * The fault path reports write-fault times and asks which pages to make
 * writable ahead; releases ask which pages stay writable at a barrier and
 * hand over the kept pages their mode must see. */
/* The modes of a release, as far as pages kept writable go (keep.c says
 * what each does with them): a lock release or flush (other threads may
 * be writing), a barrier's or fork's (every thread of the node inside),
 * and one of a node whose threads do not write meanwhile (the barrier
 * root's hook release, a fork's receiver). */
enum rel_mode { REL_LOCK, REL_BARRIER, REL_QUIET };
/* A write fault took ns (the pages kept writable weigh it against their
 * scans). */
void dsm_keep_fault_ns(uint64_t ns);
/* A barrier release scanned a kept page and found it unwritten in ns. */
void dsm_keep_scan_ns(uint64_t ns);
/* Whether this node wrote page pg in one of the last few barrier
 * intervals (as long as a page stays kept writable): the fault handler
 * makes such pages writable ahead of a write fault on the page before. */
int dsm_keep_recent(uint32_t pg);
/* Whether page pg, written now, is worth keeping writable: written lately
 * enough (its gap) and not homed here and written by another node. */
int dsm_keep_ok(uint32_t pg);
/* Counts a barrier release of pg; was_kept: it was kept (writable with no
 * fault) since the last release.  Returns whether it stays kept, if
 * keeping is allowed. */
int dsm_keep_count(uint32_t pg, int written, int was_kept);
/* Lists pg as kept (takes dirty_lock), once. */
void dsm_keep_list(uint32_t pg);
/* Whether pg was kept since the last barrier release (dsm_keep_take
 * leaves such pages listed); unlists it (takes dirty_lock). */
int dsm_keep_unlist(uint32_t pg);
/* A barrier release is done: the next interval begins. */
void dsm_keep_interval_end(void);
/* Hands the kept pages that a release of this mode must see to the batch
 * (v, nv, cap), and keeps the rest kept.  Callers hold release_lock,
 * except the barrier root's hook release. */
void dsm_keep_take(enum rel_mode mode, int solo, uint32_t **v, size_t *nv,
                   size_t *cap);
/* A solo lock release (dsm_solo_writer) found kept page pg written: it
 * stays kept, its count of lock releases without a write restarts. */
void dsm_keep_lock_written(uint32_t pg);
/* Another node wrote pages [pg, pg+n): those homed here are never kept,
 * and one kept now stops being kept, except on a node of one thread
 * (dsm_solo_writer), where it stays kept and its twin takes the page's
 * bytes.  Called at a barrier after its release, at a fork's receiver
 * after its release, or at an acquire, after the release that every
 * acquire and every flush with kept pages makes first: no write of the
 * node since.  Elsewhere a kept page that changed since its twin gets
 * its notice with the next release (an extra notice), as a dirty page
 * that an acquire invalidates does. */
void dsm_keep_shared(uint32_t pg, uint32_t n);

/* ---- releases (release.c) ---- */
/* Whether the calling thread is the only one of its node that may write
 * shared memory now: one thread a node (dsm_g.tpn), not the lazy release
 * helper, page protection with OMPDSM_KEEP_WRITABLE and OMPDSM_LOCK_KEEP
 * on.  Its lock releases (not its flushes) then leave written pages
 * writable (release.c), and its acquires refetch kept pages instead of
 * invalidating them (invalidate.c). */
int dsm_solo_writer(void);
/* Puts the runs of page pg into its home's copy and counts the diff. */
void dsm_diff_put(uint32_t pg, int home, const struct comm_run *runs, size_t n);
/* A dirty non-home page (page lock held) made read-only, its diff sent
 * home and its notice queued with the next release's extra notices; the
 * caller fences.  Returns whether a diff went out. */
int dsm_flush_dirty(uint32_t pg);
/* The same for a kept page an acquire rebases (invalidate.c): the twin is
 * brought up to date and the page stays dirty and writable. */
int dsm_rebase_diff(uint32_t pg);
/* Sends diffs of every dirty page to its home, write-protects them, and
 * appends their notices to *out (normalized). */
void dsm_release_pages(struct notice_list *out);
/* Releases and records the notices in the interval accumulator (barriers
 * and forks: no thread of the node writes shared memory meanwhile). */
void dsm_release_interval(struct notice_list *published);
/* dsm_release for a node none of whose threads writes shared memory
 * meanwhile (a fork's receiver): pages kept writable stay so. */
void dsm_release_quiet(void);
/* Sends the diff of page pg now if it is dirty here and not homed here;
 * its notice goes out with the next release. */
void dsm_release_page(uint32_t pg);
/* An acquire after a release by node `from` (the lock's last holder,
 * handing it over): releases, then applies the notices of every log entry
 * that node had acquired or written (its positions), and no other; from
 * < 0 (releaser unknown) acquires every node's positions, as dsm_acquire
 * does (docs/design.md, "Notice logs per node"). */
void dsm_acquire_from(int from, int pushed);

/* ---- applying notices: invalidate or update (invalidate.c) ---- */
/* Applies notices read from notice logs: their snapshots (snap.c) first,
 * then the rest as dsm_apply_notices; v is changed. */
void dsm_apply_logged(struct notice *v, size_t n);
/* Applies notices: invalidates (or updates) stale copies. */
void dsm_apply_notices(const struct notice *v, size_t n);
/* Invalidates every valid non-home page (log overrun). */
void dsm_invalidate_all(void);
/* A fault is about to fetch page pg, invalidated here by a notice: if no
 * other notice arrived since, later notices refetch the page instead of
 * invalidating it, a few times (OMPDSM_ADAPTIVE_UPDATE). */
void dsm_refetched(uint32_t pg);

/* ---- notice logs, one per node (noticelog.c) ---- */
/* Writes the normalized notices v[0..n) into this node's log after its
 * tail (release_lock held; more ranges than a quarter of the log become
 * one entry that drops every copy) and publishes them as written.
 * Returns the tail they end at, for dsm_log_complete. */
uint64_t dsm_log_append(const struct notice *v, size_t n);
/* After the diffs of the entries up to tail are at their homes: they are
 * complete (acquirers may apply them without waiting). */
void dsm_log_complete(uint64_t tail);
/* The acquire of dsm_acquire_from and dsm_flush, after their release:
 * from node from's positions (pushed: as that node pushed them into our
 * mailbox), or every node's (from < 0). */
void dsm_log_acquire(int from, int pushed);
/* Puts this node's positions and mirror into node to's mailbox for this
 * node; a grant or ack notified after it tells the taker it may acquire
 * from them (dsm_acquire_from's pushed) instead of getting them. */
void dsm_push_positions(int to);
/* Whether a release through the log that sent no diff must still fence
 * the count written it pushed (OMPDSM_LOG_PUSH: with 3 nodes or more,
 * another node could tell a peer of the release before the push lands). */
int dsm_log_fence_alone(void);
/* Whether a release's diffs reach everyone who could read them before its
 * pushed positions do, with no fence (2 nodes that push: noticelog.c). */
int dsm_log_diffs_ordered(void);
/* This node's log tail (own entries complete), for a barrier's payload. */
uint64_t dsm_log_tail(void);
/* A barrier carried tails: positions below them need no reading (the
 * barrier's notices covered those entries). */
void dsm_log_advance(const uint64_t *tails);

/* ---- lazy release (lazy.c) ----
 * OMPDSM_LAZY_RELEASE, docs/design.md "Lazy release": a lock cached at its
 * node at unlock skips the unlock's release; whoever takes the lock from
 * another node first asks that node to release and waits until it did
 * (dsm_lazy_request), which the node's release helper thread does.
 * dsm_lazy_start starts the helper (dsm_start), dsm_lazy_stop ends it
 * (dsm_fini). */
void dsm_lazy_start(void);
void dsm_lazy_stop(void);
/* Returns whether it waited for the holder's ack (which comes after the
 * holder pushed its positions). */
int dsm_lazy_request(int holder);
/* The same, split between the two nodes when the taker's request went to
 * the holder as a message (lock.c): the holder's side, run there, returns
 * 0 (its release is done) or the count of the taker's ask; the taker then
 * waits for the holder's ack of that count. */
uint64_t dsm_lazy_ask_here(int who);
void dsm_lazy_wait_ack(int holder, uint64_t count);
/* An unlock is about to leave its lock cached and skip its release
 * (before its compare-swap: a taker must find the skip counted), and did
 * (after it); also an unlock that hands its lock to a thread of the same
 * node (lock.c), whose writes must still be released within about 1 ms. */
void dsm_lazy_skip(void);
void dsm_lazy_skipped(void);
/* Releases if an unlock skipped its release since the last release. */
void dsm_lazy_flush(void);
/* Serves waiting release requests now, when no other thread is (a lock
 * operation's thread answers sooner than the polling helper). */
void dsm_lazy_poll(void);
/* After a release through the log covered this node's skipped releases:
 * serves the asks that came meanwhile (dsm_lazy_request reads the state
 * again after asking, so one of the two sides always sees the other). */
void dsm_lazy_after_cover(void);
/* comm_wait_ge that serves other nodes' requests for a release while it
 * waits (lock grants, lazy release acks). */
int dsm_lazy_wait_ge(const volatile uint64_t *p, uint64_t target);
/* Under release_lock, before a REL_LOCK release takes its batch (which
 * holds every write of the node's skipped releases): no skipped release
 * is pending any more; returns the skips that release covers. */
uint32_t dsm_lazy_covering(void);
/* Under release_lock, after that release is in the log: publishes that it
 * covers skips. */
void dsm_lazy_covered(uint32_t skips);
/* Whether an unlock skipped a release that no release covers yet: a flush
 * must then release. */
int dsm_lazy_owed(void);

/* ---- home migration (migrate.c) ----
 * Each node counts, per page, its uses of the page in the interval between
 * two barriers of all nodes: remote faults (policy faults) or bytes of
 * diffs sent (policy diffs); the home's own write faults count for the
 * home.  The counts ride up on that barrier's payload, the barrier's root
 * decides, copies each moving page from its old home to its new one while
 * every node waits inside the barrier, and the release carries the moves,
 * which every node applies before leaving (docs/design.md, "Home
 * migration"). */
enum mig_policy { MIG_OFF = 0, MIG_FAULTS = 1, MIG_DIFFS = 2 };
/* One node's count for one page, going up. */
struct mig_rec {
    uint32_t page;
    uint16_t node;  /* the counting node */
    uint16_t home;  /* the page's home during the interval */
    uint32_t count; /* faults, or bytes */
    uint32_t pad;   /* 16 bytes: what follows in a payload stays aligned */
};
/* A decided move, going down. */
struct mig_move {
    uint32_t page;
    uint16_t from, to;
};
/* Parses OMPDSM_MIGRATION and its settings (dsm_init, after the homes). */
void dsm_mig_init(void);
void dsm_mig_note_(uint32_t pg, uint32_t n, uint32_t amount);
/* A fault on pages [pg, pg+n) (remote fetches, or a write fault) under
 * policy faults; nothing when migration is off. */
static inline void dsm_mig_fault(uint32_t pg, uint32_t n)
{
    if (OMPDSM_UNLIKELY(dsm_g.mig_policy == MIG_FAULTS))
        dsm_mig_note_(pg, n, 1);
}
/* bytes written to page pg (a diff, or a whole page for a write fault at
 * its home) under policy diffs. */
static inline void dsm_mig_bytes(uint32_t pg, uint64_t bytes)
{
    if (OMPDSM_UNLIKELY(dsm_g.mig_policy == MIG_DIFFS))
        dsm_mig_note_(pg, 1, bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes);
}
/* Appends this node's section of a barrier's upward payload (u64 count,
 * records) and forgets the counts sent; world is 0 for a barrier of a
 * sub-team, which carries none and keeps the counts. */
int dsm_mig_report(struct comm_buf *up, int world);
/* Forgets what this node counted since the last barrier of all nodes:
 * node 0 at a fork, after releasing its serial part (which says nothing
 * of who uses a page inside parallel regions). */
void dsm_mig_forget(void);
/* At the barrier's root, after every write is at its home: decides the
 * moves from every node's records, copies the moving pages to their new
 * homes, and appends the down section (u64 count, moves) to out. */
int dsm_mig_decide(const struct mig_rec *r, size_t n, struct comm_buf *out);
/* On every node as it leaves the barrier: the new homes take effect. */
void dsm_mig_apply(const struct mig_move *m, size_t n);

/* ---- software write detection (wd.c) ----
 * WD_OFF: writes are found by page protection (write faults and twins);
 * WD_ON: ompcc's pass marks every store in the shadow, valid pages stay
 * writable and releases send the marked bytes; WD_CHECK: page protection,
 * and every diff is checked against the marks (a missed write ends the
 * job). */
enum wd_mode { WD_OFF = 0, WD_ON = 1, WD_CHECK = 2 };
/* Reads OMPDSM_WD (dsm_init). */
void dsm_wd_init(void);
/* Decides the mode (dsm_start, after the globals' chunks are known): on
 * when every ompcc unit was compiled with the pass, the job has several
 * nodes and the machine has protection keys; maps the shadow, and under
 * WD_ON makes the globals valid and writable and the rest invalid. */
void dsm_wd_start(void);
/* Pages [pg, pg+n) became valid (WD_ON: a release scans up to the
 * highest). */
void dsm_wd_valid(uint32_t pg, uint32_t n);
/* The next page at or after pg with its written byte set, which it clears
 * (atomically when threads of the node may be writing), or UINT32_MAX. */
uint32_t dsm_wd_next(uint32_t pg, int concurrent);
/* Marks [p, p+len) as written by this node (the runtime's own stores
 * into the heap: OMPDSM_wd_mark). */
void dsm_wd_mark(const void *p, size_t len);
/* Whether any page has its written byte set (a flush with nothing to
 * publish skips its release). */
int dsm_wd_any(void);
/* Takes page pg's marks as runs of page offsets (at most page_size/2 + 1),
 * clearing them (its written byte first): each mark before its bytes are
 * read, when concurrent. */
size_t dsm_wd_take(uint32_t pg, struct comm_run *runs, int concurrent);
/* Whether page pg has marks, and if so the bytes [*lo, *hi) of the page
 * they lie in (multiples of 32); clears nothing. */
int dsm_wd_extent(uint32_t pg, uint32_t *lo, uint32_t *hi);
/* dsm_wd_take of the marks in bytes [lo, hi) only (dsm_wd_extent's),
 * leaving the page's byte: marks a store makes outside meanwhile are the
 * next release's. */
size_t dsm_wd_take_in(uint32_t pg, struct comm_run *runs, int concurrent,
                      uint32_t lo, uint32_t hi);
/* Clears the marks of bytes [lo, hi) of page pg (multiples of 32), at
 * once: only where what they mark is published whole. */
void dsm_wd_clear_in(uint32_t pg, uint32_t lo, uint32_t hi);
/* Sends the marks of valid page pg (page lock held) to its home, and
 * pushes them, before an acquire makes the page stale; with several
 * threads a node the page is protected first (PROT_NONE), so that a store
 * of another thread is marked already or faults and waits.  Returns
 * whether a diff went out (its notice is an extra notice). */
int dsm_wd_flush(uint32_t pg);
/* Drops page pg's marks (its home moved away: they are not this node's
 * to send). */
void dsm_wd_clear(uint32_t pg);
/* WD_CHECK: fails the job when a byte of the runs (a twin's diff of page
 * pg) has no mark. */
void dsm_wd_check(uint32_t pg, const struct comm_run *runs, size_t n);
/* WD_CHECK: page pg got a twin; its marks start again. */
void dsm_wd_check_twin(uint32_t pg);
/* Clears the marks of bytes [off, off+n) of page pg (a volatile object
 * written through to its home already), and tells whether one byte is
 * marked. */
void dsm_wd_unmark(uint32_t pg, size_t off, size_t n);
int dsm_wd_byte_marked(uint32_t pg, size_t off);
/* A protection-key fault at addr: a call guarded by OMPDSM_wd_guard wrote
 * the heap; the page gets a twin and becomes writable until the guard
 * ends.  Returns 0 if it was not that. */
int dsm_wd_guard_fault(const void *addr);

/* ---- updates pushed to stable readers (push.c) ----
 * Under WD_ON, a node that fetched a page homed elsewhere subscribes to it
 * at the next barrier of all nodes; writers then put their marked bytes
 * into every subscriber's copy at each release, and notices leave such
 * copies alone. */
enum { PUSH_JOIN = 1, PUSH_LEAVE = 2 };
/* A subscription change riding a barrier of all nodes (8 bytes). */
struct push_rec {
    uint32_t page;
    uint16_t node;
    uint8_t op;   /* PUSH_JOIN or PUSH_LEAVE */
    uint8_t pad;
};
/* Reads OMPDSM_PUSH and maps the tables (dsm_wd_start, under WD_ON). */
void dsm_push_init(void);
/* The page's subscribers (a node mask, the same on every node). */
uint64_t dsm_push_subs(uint32_t pg);
/* This node subscribes to pg (writers push to its copy). */
int dsm_push_subscribed(uint32_t pg);
/* A fault fetched pages [pg, pg+n) homed elsewhere: join them. */
void dsm_push_fetched(uint32_t pg, uint32_t n);
/* Appends the barrier's section (u64 count, push_rec records): this
 * node's joins since the last barrier of all nodes and the leaves of
 * subscriptions whose period ended; none for a sub-team's barrier
 * (world 0), which keeps them for the next. */
int dsm_push_report(struct comm_buf *out, int world);
/* Every node, after the barrier's notices: the changes take effect; this
 * node's copies of the pages it leaves are invalidated. */
void dsm_push_apply(const struct push_rec *r, size_t n);
/* Whether a join among r[0..n) is of a page the barrier's notices v[0..nv)
 * name with another writer than the joiner, so that the joiner refetches
 * it (the same answer on every node). */
int dsm_push_join_stale(const struct push_rec *r, size_t n,
                        const struct notice *v, size_t nv);
/* Queues a push of page pg's runs (read from the page when it goes) for
 * dsm_push_flush, which a release calls after fencing its diffs to the
 * homes, and which returns whether any went out (a fence must follow). */
void dsm_push_defer(uint32_t pg, const struct comm_run *runs, size_t n);
int dsm_push_flush(void);
/* Whether a refetch of pg must merge (pushes may land in this node's copy:
 * subscribed or being subscribed), and the merging refetch itself: bytes a
 * push changed while the page came stay (page lock held). */
int dsm_push_merge_needed(uint32_t pg);
void dsm_push_refetch(uint32_t pg, int home);
/* Puts the runs of page pg into every subscriber's copy but this node's
 * and the home's (page lock held); returns whether any went out (a fence
 * must follow before the release completes). */
int dsm_push_send(uint32_t pg, const struct comm_run *runs, size_t n);

/* ---- the machine's costs (probe.c) ---- */
/* Measures them (dsm_start, after the fault handler is installed). */
void dsm_probe(void);
/* A fault of the probe's own page (the fault handler asks first). */
int dsm_probe_fault(const void *addr);

/* ---- allocation (alloc.c) ---- */
/* Sets up the size classes and settings (dsm_init). */
void dsm_alloc_init(void);
/* Frees queued by other nodes become reusable at a barrier. */
void dsm_alloc_at_barrier(void);

/* ---- per-page counters for the thrashing report (pagestat.c) ---- */
/* Counts a fault or a diff of page pg (no-ops unless enabled). */
void dsm_pagestat_fault(uint32_t pg, int write);
void dsm_pagestat_diff(uint32_t pg, const struct comm_run *runs, size_t n);

/* ---- locks (lock.c) ---- */
/* Locks the calling thread holds. */
int dsm_lock_depth(void);
/* Whether this node's releases of cached locks are lazy (lazy.c). */
int dsm_lazy_on(void);
/* Whether the calling thread is the lazy release helper (lazy.c). */
int dsm_lazy_on_helper(void);
/* Lock word (lock.c): names a waiter's queue node, as a lock's tail at its
 * manager and as a queue node's successor: (node + 1) << 32 | qnode index;
 * 0 means none (a free lock, no successor yet). */
enum { DSM_LOCKWORD_NONE = 0 };
static inline uint64_t lockword_encode(int node, uint32_t q)
{
    return ((uint64_t)(uint32_t)(node + 1) << 32) | q;
}
static inline void lockword_decode(uint64_t w, int *node, uint32_t *q)
{
    *node = (int)(w >> 32) - 1;
    *q = (uint32_t)w;
}

/* Registers the handler of lock requests sent as messages (lock.c,
 * OMPDSM_LOCK_MSG); before the nodes connect. */
void dsm_lock_msg_init(void);

/* ---- hand-over between threads of a node (lockhand.c) ----
 * A lock's node-local entry: the node's threads that want the lock take
 * it first, and only its holder queues across nodes. */
struct dsm_llock {
    struct dsm_llock *next;  /* in its stripe's active or free list */
    uint32_t id;
    /* The rest under the stripe's mutex, but `held` and `seq` are read
     * without it while spinning, and `seq` is the futex word. */
    uint32_t users;      /* threads holding or waiting */
    uint32_t held;       /* a thread of the node holds the entry */
    uint32_t waiting;    /* threads waiting for it */
    uint32_t sleepers;   /* of them asleep on `seq` */
    uint32_t seq;        /* bumped when the entry becomes free */
    uint32_t global;     /* free, but the node holds the lock through q */
    uint32_t q;          /* the node's queue node, while held or global */
    uint32_t passes;     /* hand-overs in a row with another node waiting */
};

/* Sets up the entries (once, before the first lock operation). */
void dsm_llock_init(void);
/* Takes lock id's entry, waiting while another thread of the node holds
 * it; *handed: the node holds the lock already; *t0: when it waited. */
struct dsm_llock *dsm_llock_acquire(uint32_t id, int *handed, uint64_t *t0);
/* Takes lock id's entry if it is free (NULL otherwise); *handed as above. */
struct dsm_llock *dsm_llock_try(uint32_t id, int *handed);
/* Frees the entry; keep: the node keeps the lock for the next taker. */
void dsm_llock_release(struct dsm_llock *e, int keep);
/* Whether threads of this node wait for the entry the caller holds. */
int dsm_llock_waiting(const struct dsm_llock *e);

/* ---- statistics (stats.c) ----
 * Each thread counts into a block of its own (a plain add and a relaxed
 * store: one writer); dsm_stats_get sums the blocks.  A counter every
 * thread of a node added to with one atomic read-modify-write moved its
 * cache line between the cores at every lock: NPB UA S on 1 node x 2
 * threads took 1.30-1.41 s with the lock count left out and 2.05-2.34 s
 * with it (clang -fopenmp, 2 threads: 1.60-1.98 s).  A thread beyond the
 * blocks counts into dsm_st with atomics, as every thread once did. */
extern struct dsm_stats dsm_st;
#define DSM_STAT(f, v) \
    dsm_stat_add(offsetof(struct dsm_stats, f), (uint64_t)(v))

/* ---- message tags of the dsm layer ---- */
enum { DSM_TAG_FREE = 1 };

#endif
