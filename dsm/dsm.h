/* dsm/dsm.h - the DSM layer's interface: a shared heap at the same virtual
 * address on every node, kept coherent by SCASH's protocol (eager release
 * consistency, multiple writers, home-based, invalidate or update), with
 * distributed locks, flushes and atomics.
 *
 * Life cycle (one per node, after comm_init):
 *   dsm_init()        creates the heap and registers its regions
 *   comm_connect()
 *   dsm_global_alloc() ... and initial values written by every node
 *   dsm_start()       all heap pages become valid, read-only copies; the
 *                     protocol runs from here on
 *   ...
 *   dsm_fini()
 *
 * Threads: every function is safe for several application threads of a
 * node, except the collective ones (dsm_barrier, dsm_fork_*), which exactly
 * one thread per node calls, after the node's threads have met.
 *
 * Errors: the protocol cannot recover from a lost node; such failures are
 * fatal (ompdsm_fatal) and name the node, page and operation. */
#ifndef OMPDSM_DSM_H
#define OMPDSM_DSM_H

#include <stddef.h>
#include <stdint.h>
#include "comm/comm.h"

/* The comm regions dsm registers: the shared heap's system view (fetches
 * and diffs address pages in it by heap offset) and the dsm area (lock
 * words, queue nodes, the notice log, fetch marks; layout in dsm_int.h). */
enum {
    DSM_REG_HEAP = COMM_REG_FIRST,
    DSM_REG_AREA = COMM_REG_FIRST + 1,
    DSM_REG_NEXT = COMM_REG_FIRST + 2, /* first id free for the layers above */
};

/* ---- life cycle ---- */
int dsm_init(void);
int dsm_start(void);
void dsm_fini(void);

/* The coherence protocol in force: "invalidate" or "update"
 * (OMPDSM_PROTOCOL). */
const char *dsm_protocol_name(void);
/* What this machine charged at the start of the job (0: not measured,
 * one node): a fault's signal round trip, an mprotect of one page, a copy
 * of one page; medians of 9 (dsm/probe.c). */
struct dsm_costs {
    uint64_t fault_ns, prot_ns, copy_ns;
};
void dsm_machine_costs(struct dsm_costs *out);
/* How writes are detected (OMPDSM_WD): "off" (page protection), "on"
 * (ompcc's marks) or "check"; decided at dsm_start. */
const char *dsm_wd_mode_name(void);
/* The caller (the runtime, the kernel in a system call it made) wrote
 * [p, p+len) through the application view: under write detection a write
 * the compiler pass did not mark; nothing otherwise. */
void dsm_wd_wrote(const void *p, size_t len);
/* The number of ompcc translation units of the program (before
 * dsm_start): write detection needs every one compiled with the pass. */
void dsm_wd_units(unsigned units);

/* The heap: [base, base + size). */
void *dsm_heap_base(void);
size_t dsm_heap_size(void);
size_t dsm_page_size(void);
static inline int dsm_in_heap(const void *p);
extern char *dsm_heap_lo_, *dsm_heap_hi_;
static inline int dsm_in_heap(const void *p)
{
    return (const char *)p >= dsm_heap_lo_ && (const char *)p < dsm_heap_hi_;
}

/* ---- allocation (no messages in the common case) ---- */
/* Deterministic allocation for program globals, before dsm_start: every
 * node calling the same sequence gets the same addresses.  name is for
 * messages.  Large objects are block-distributed over the nodes' homes
 * (OMPDSM_HOME_POLICY). */
void *dsm_global_alloc(size_t size, size_t align, const char *name);
/* Declares that every scalar object of the global at p (returned by
 * dsm_global_alloc for `size` bytes) is aligned to, and a multiple of,
 * `granule` bytes (1, 2, 4 or 8; the translator derives it from the
 * type): diffs of its pages may then move whole granules, far fewer runs
 * for arrays of doubles whose values change in some bytes only.  Only a
 * global of a page or more, which has its pages to itself, is affected;
 * before dsm_start. */
void dsm_set_granule(void *p, size_t size, unsigned granule);
/* malloc-style allocation from this node's arena; any node may free what
 * any node allocated.  NULL with errno ENOMEM when the heap is exhausted
 * (after one message naming the size asked for and what is left). */
void *dsm_malloc(size_t size);
void *dsm_calloc(size_t n, size_t size);
void *dsm_realloc(void *p, size_t size);
void *dsm_memalign(size_t align, size_t size);
void dsm_free(void *p);
/* The program's call that asks for the next block (a return address; the
 * runtime sets it): named in heap error messages as file:line. */
extern __thread const void *dsm_alloc_caller;
/* Usable size of a block from dsm_malloc & co. */
size_t dsm_usable_size(const void *p);
/* Short-lived LIFO allocation for a function's locals that a parallel
 * region shares; freed in reverse order with dsm_stack_free. */
void *dsm_stack_alloc(size_t size, size_t align);
void dsm_stack_free(void *p);

/* ---- consistency ---- */
/* Extra payload a barrier carries for the layer above (reductions,
 * copyprivate data, schedule speeds). */
struct dsm_sync_ext {
    const void *up;      /* this node's contribution */
    size_t uplen;
    comm_combine_fn combine;
    /* On the root, after every node's writes are visible to it: may read
     * and write shared memory (e.g. store reduction results); the writes
     * are released before the barrier completes.  It runs on the root's
     * barrier thread while every other member waits inside the barrier:
     * its faults are served (by the homes' transports, not their
     * application threads), but it must not lock, unlock, flush, or start
     * a barrier or fork, which would wait for members that cannot
     * answer.  It must name what it writes with dsm_wrote (a page kept
     * writable takes writes without a fault, OMPDSM_KEEP_WRITABLE). */
    int (*at_root)(void *ctx, struct comm_buf *acc);
    void *ctx;
    struct comm_buf *down; /* receives the root's combined ext payload */
};
/* Barrier over a group with consistency: afterwards every member sees every
 * write any member made before it.  ext may be NULL. */
int dsm_barrier(struct comm_group g, struct dsm_sync_ext *ext);
/* Fork: rank 0 releases its writes and broadcasts data (e.g. which region
 * to run); the others receive it and acquire.  Between two forks on a
 * channel there must be a dsm_barrier on it. */
int dsm_fork_send(struct comm_group g, const void *data, size_t len);
int dsm_fork_recv(struct comm_group g, struct comm_buf *data);
/* Says that [p, p+len) was written where no release follows that looks at
 * every page kept writable: a barrier's at_root hook.  Costs nothing
 * outside the shared heap. */
void dsm_wrote(const void *p, size_t len);
/* Release (make this node's writes visible to the next acquirer) and
 * acquire (see every write released before).  flush = both. */
void dsm_release(void);
void dsm_acquire(void);
void dsm_flush(void);
/* A hand-off through the layer above (an ordered region's turn): after
 * its release, the releaser puts its notice-log positions into node to's
 * mailbox (dsm_release_push, before the signal to `to`: puts and notifies
 * from one node to another arrive in order), and the next holder, once
 * signalled, acquires from exactly what that node released or had itself
 * acquired (dsm_acquire_pushed: no get when the releaser's last release
 * is all it lacks).  from == this node: nothing to apply. */
void dsm_release_push(int to);
void dsm_acquire_pushed(int from);
/* Flush with a list: the listed range is guaranteed; the rest too (OpenMP
 * programs such as NPB LU rely on flush(flag) ordering their other data). */
void dsm_flush_range(const void *p, size_t len);
/* A volatile object [p, p+len) (OpenMP 3.0's volatile): read refetches its
 * bytes from its home into this node's copy (as if a flush of the object
 * came before the read), write sends them to the home at once (as if one
 * came after the write); neither touches any other data.  A read that
 * keeps seeing the same value yields the CPU now and then, since it is
 * usually a spin loop waiting for another node.  Outside the heap, or on
 * one node, only a fence. */
void dsm_volatile_read(const volatile void *p, size_t len);
void dsm_volatile_write(const volatile void *p, size_t len);
/* Several threads of this node use volatile objects (hybrid nodes): a
 * sibling may see a store, and act on it, before the storing thread's
 * write-through.  Then a refetch keeps the bytes a thread of this node
 * stored and did not yet write through, and a write-through whose bytes
 * all equal the twin's (written through already, or sent by a release,
 * since the store) sends nothing, so that it cannot overwrite a newer
 * value another node wrote through meanwhile.  Called at start. */
void dsm_volatile_threads(int threads_per_node);
/* The node has at least n application threads from now on (as
 * dsm_volatile_threads, never lowering the count): called before a thread
 * that may write shared memory starts (a nested team's worker).  A node
 * believed to have one thread keeps pages writable across its lock
 * releases (dsm_solo_writer, OMPDSM_LOCK_KEEP), which is wrong the moment
 * a second thread writes. */
void dsm_threads_at_least(int n);
/* Regions whose writes must be tracked cumulatively from a fork to the
 * join (a sub-team region: nodes outside it see its writes at the join). */
void dsm_track_since_fork(int on);

/* ---- locks (distributed, FIFO-fair, with release/acquire consistency) ---- */
/* A new lock id.  Before dsm_start it sends no message and is
 * deterministic: nodes calling it in the same sequence get the same ids
 * (for locks every node knows from the start, such as named critical
 * sections); afterwards each call gets an id no other call got, from
 * node 0. */
uint32_t dsm_lock_alloc(void);
void dsm_lock(uint32_t id);
int dsm_trylock(uint32_t id);
/* Takes lock id at once if that needs no wait and no message (one node:
 * a free lock); returns 0 otherwise, having done nothing, so that the
 * caller's slow path (a wait record for the deadlock report) runs only
 * for the locks that may wait. */
int dsm_lock_fast(uint32_t id);
void dsm_unlock(uint32_t id);
/* Before this node's threads wait at a barrier: posted atomic updates are
 * drained, the releases its lazy unlocks skipped are done now, through
 * the log, and requests for them from other nodes are served, so that a
 * node taking such a lock before the barrier needs no answer from a node
 * that waits there. */
void dsm_lock_settle(void);

/* ---- atomics on shared words, performed at the page's home ---- */
/* Applies *p = f(*p) atomically with respect to other dsm atomics, where f
 * is given as a combine function on a copy of the old value; returns via
 * out_old/out_new (either may be NULL).  p may be outside the heap (then a
 * local atomic). */
typedef void (*dsm_atomic_fn)(void *value, const void *arg);
void dsm_atomic_update(void *p, size_t size, dsm_atomic_fn fn, const void *arg,
                       void *out_old, void *out_new);
/* An update whose result the caller does not read, of a word homed at a
 * node reached over tcp: sent to the home, which applies fn_post(value,
 * arg) to it, with no wait; this node's copy gets the update too.  arg:
 * arglen bytes (at most 40, no pointers) copied into the message.
 * Returns 0 when it posted nothing (another transport, the own node, a
 * wider object, no fn_post): then use dsm_atomic_update.  Posted updates
 * are at their homes once dsm_atomic_drain returns, which the lock
 * functions call and the runtime calls before its other releases and
 * acquires. */
void dsm_atomic_set_post_fn(dsm_atomic_fn fn_post); /* every node, at start */
int dsm_atomic_post(void *p, size_t size, const void *arg, size_t arglen);
void dsm_atomic_drain(void);

/* ---- explicit access ---- */
/* Makes [p, p+len) readable (write=0) or writable (write=1) now, as the
 * fault handler would; for system calls and the runtime. */
void dsm_touch(const void *p, size_t len, int write);

/* Called on the faulting thread around the handling of each page fault in
 * the shared heap (pc: the faulting instruction), so that the runtime can
 * show a thread waiting for a page; a few stores, signal context. */
struct dsm_fault_hooks {
    void (*begin)(const void *pc);
    void (*end)(void);
};
void dsm_set_fault_hooks(const struct dsm_fault_hooks *h);
/* Names the program's object at a heap address for messages ("x[12]
 * (declared at f.c:3)"), into buf; the layer above knows the names. */
typedef void (*dsm_namer_fn)(const void *addr, char *buf, size_t len);
void dsm_set_namer(dsm_namer_fn fn);

/* ---- statistics ---- */
struct dsm_stats {
    uint64_t read_faults, write_faults;
    uint64_t pages_fetched;
    uint64_t twins;
    uint64_t exclusive; /* pages kept writable with no notice, per release */
    uint64_t diffs, diff_bytes, diff_runs;
    uint64_t notices_sent, notices_applied;
    uint64_t invalidations, updates;
    uint64_t barriers, forks;
    uint64_t lock_acquires, releases, acquires, flushes;
    uint64_t lock_cached; /* lock acquires that re-took a lock cached here */
    uint64_t atomics;
    uint64_t fault_ns, barrier_ns, lock_ns;
    uint64_t allocs, frees, alloc_bytes;
    /* Home migration (OMPDSM_MIGRATION): faults this node took on pages
     * homed elsewhere (read faults that fetched, write faults that made a
     * twin; counted under any policy), pages whose home
     * moved to this node and their bytes, and (node 0) barriers that moved
     * at least one page. */
    uint64_t remote_faults, migrations, migrate_bytes, migrate_barriers;
    /* mprotect calls, and page-releases that left a page homed elsewhere
     * writable with its twin brought up to date (OMPDSM_KEEP_WRITABLE). */
    uint64_t protects, kept;
    /* Pages a write fault made writable after the faulting one. */
    uint64_t written_ahead;
    /* Lazy release (OMPDSM_LAZY_RELEASE): unlocks that left their lock
     * cached and skipped their release; lock takeovers from another node
     * that asked it to release; such requests this node served; takeovers
     * that found the skipped releases covered already; of the serves,
     * the ones the release helper thread made. */
    uint64_t lazy_unlocks, lazy_requests, lazy_served, lazy_covered;
    uint64_t lazy_helper_served;
    /* Acquires' reads of another node's notice log (one get each), and
     * reads the positions' copy of its last release's entries made
     * needless (docs/design.md, "Notice logs per node"). */
    uint64_t log_reads, log_mirrored;
    /* Acquires from a node that took its positions from the copy that
     * node pushed with its grant or lazy release ack (no get). */
    uint64_t log_pushed;
    /* Unlocks that handed their lock to a thread of the same node, with no
     * message and no release (dsm/lockhand.c, OMPDSM_LOCK_LOCAL). */
    uint64_t lock_local_handoffs;
    /* Flushes that had nothing to publish (no release) and found no new
     * notice (dsm_flush: a spin on a flag). */
    uint64_t flush_idle;
    /* Flushes that applied nothing new and yielded the CPU (the first,
     * second, fourth ... of a row, then every 64th: dsm_flush). */
    uint64_t flush_yields;
    /* Software write detection: puts of marked bytes into subscribers'
     * copies (dsm/push.c), and their bytes. */
    uint64_t pushes, push_bytes;
    /* Copies brought up to date by a home's snapshot of a release's bytes
     * (dsm/snap.c), and the bytes. */
    uint64_t snap_updates, snap_bytes;
    /* Lock acquires from another node made by one message to the lock's
     * manager or its last holder instead of remote atomics
     * (OMPDSM_LOCK_MSG). */
    uint64_t lock_msgs;
    /* Lock releases and flushes of a node with one thread that left a
     * written page writable with its twin brought up to date
     * (OMPDSM_LOCK_KEEP), and kept pages an acquire refetched from their
     * home under the node's writes instead of invalidating them. */
    uint64_t lock_kept, rebased;
};
#define DSM_STATS_LOCK_LOCAL 1 /* (lock_local_handoffs exists) */
void dsm_stats_get(struct dsm_stats *out);
/* Each thread counts into a block of its own (stats.c); dsm_stat_add is
 * inline here for the layer above's one counter, the lock acquires of a
 * job of one node (runtime/lock.c), which take no dsm call at all. */
extern __thread struct dsm_stats *dsm_st_self
    __attribute__((tls_model("initial-exec")));
void dsm_stat_slow(size_t off, uint64_t v);
static inline void dsm_stat_add(size_t off, uint64_t v)
{
    struct dsm_stats *b = dsm_st_self;
    if (__builtin_expect(b != NULL, 1)) {
        uint64_t *p = (uint64_t *)((char *)b + off);
        __atomic_store_n(p, *p + v, __ATOMIC_RELAXED);
    } else {
        dsm_stat_slow(off, v);
    }
}

/* ---- lock.c: a futex mutex in a word of one process ----
 * For a job of one node, which shares nothing: 0 free, else the holder's
 * value (even, not 0), with bit 0 set while threads sleep on it.  The
 * DSM's own locks of one node hold 2; the runtime's omp locks the holder's
 * token, in the lock object itself (runtime/lock.c). */
static inline int dsm_word_try(uint32_t *w, uint32_t mine)
{
    uint32_t z = 0;
    return __atomic_compare_exchange_n(w, &z, mine, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}
/* A brief spin; whether it took the word. */
int dsm_word_spin(uint32_t *w, uint32_t mine);
/* Sleeps until it takes the word. */
void dsm_word_sleep(uint32_t *w, uint32_t mine);
/* Wakes one thread sleeping on w. */
void dsm_word_wake(uint32_t *w);
/* Frees the word, waking a sleeper; returns the holder's value. */
static inline uint32_t dsm_word_unlock(uint32_t *w)
{
    uint32_t old = __atomic_exchange_n(w, 0, __ATOMIC_RELEASE);
    if (old & 1)
        dsm_word_wake(w);
    return old & ~1u;
}

/* ---- pagestat.c: per-page counters for the thrashing report ---- */
struct dsm_page_stat {
    uint64_t addr;           /* the page's address */
    uint32_t page;
    uint32_t read_faults, write_faults;
    uint32_t locked_writes;  /* write faults of a thread holding a lock */
    uint32_t epochs;         /* barrier intervals with write faults */
    uint32_t lo, hi;         /* bytes its diffs changed: [lo, hi); hi 0:
                              * none (the home writes without diffs) */
    uint32_t pad;
    uint64_t diff_bytes;
};
/* Starts counting (OMPDSM_STATS); before dsm_start's first fault. */
void dsm_pagestat_enable(void);
/* This node's pages with the most faults, most first; returns how many
 * (0 when not enabled). */
int dsm_pagestat_top(struct dsm_page_stat *out, int max);

#endif
