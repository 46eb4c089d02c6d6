/* dsm/fault.c - page faults: the SIGSEGV handler serves only protection
 * faults inside the shared heap and passes every other fault to the handler
 * that was installed before (so a real segfault in user code still ends the
 * program with SIGSEGV).  A read fault fetches the page from its home; a
 * write fault makes a twin (or, at the home, just marks the page dirty).
 *
 * The rules the handler relies on:
 * - What runs in SIGSEGV context: all of dsm_page_access, on the faulting
 *   thread, in place of its access: page locks, dirty_lock, twin_lock
 *   (heap.c), malloc (twins, the dirty list) and the transport's get and
 *   put.  None of that is async-signal-safe in general; it is safe here
 *   because the fault is synchronous (an access of the thread's own code
 *   to the shared heap), so the handler interrupts no code of its own and
 *   no lock the thread does not hold at that access.
 * - Hence the locks a thread may hold when it touches the shared heap
 *   through the application view: none of the locks above, none of the
 *   transport's, and not malloc's (the runtime and the dsm never read or
 *   write shared memory while inside those; the dsm itself reads and
 *   writes pages through the system view, which never faults).  Holding a
 *   dsm lock (dsm_lock) or a runtime lock is fine: the fault path never
 *   takes them.
 * - Nothing here waits for another node's application thread: a fetch is
 *   served by the home's service side, so a fault always completes while
 *   every other node sits in a barrier (the barrier root's hooks, which
 *   read and write shared memory then, rely on it). */
#include "dsm_int.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static struct sigaction old_segv;

/* x86 page-fault error code (REG_ERR): set when the access was a write. */
#define X86_PF_WRITE 0x2

/* Pages a write fault makes writable after the faulting one, at most. */
enum { WRITEAHEAD_MAX = 15 };

/* Fetches page pg from its home into the system view (page lock held). */
static void fetch_page(uint32_t pg, int home)
{
    if (dsm_fetch_pages(pg, 1, home, page_sys(pg)) < 0)
        ompdsm_fatal("fetch of page %u (%p) from node %d failed", pg,
                     (void *)page_app(pg), home);
    DSM_STAT(pages_fetched, 1);
}

static void add_dirty(uint32_t pg)
{
    pthread_mutex_lock(&dsm_g.dirty_lock);
    dsm_page_list_push(&dsm_g.dirty, &dsm_g.ndirty, &dsm_g.dirty_cap, pg);
    pthread_mutex_unlock(&dsm_g.dirty_lock);
}

/* A page this node is about to write (page lock held, valid copy): a twin
 * if it is homed elsewhere, listed dirty, PG_DIRTY; the caller makes it
 * writable. */
static void make_dirty(uint32_t pg, int home)
{
    if (home != dsm_g.rank) {
        dsm_g.twin[pg] = dsm_twin_copy(pg);
        DSM_STAT(twins, 1);
        if (dsm_g.wd == WD_CHECK)
            dsm_wd_check_twin(pg);
    } else {
        /* The home keeps no twin: its bytes are unknown.  Under policy
         * diffs its write counts a whole page, less what the other
         * nodes' diffs to the page covered (decided in dsm/migrate.c). */
        dsm_mig_bytes(pg, dsm_g.page_size);
    }
    /* Listed before it becomes writable: once any thread can store to
     * it, a release on another thread must find it in the list (and
     * then wait for this page lock), or that store would be missed. */
    add_dirty(pg);
    dsm_g.state[pg] = PG_DIRTY;
}

void dsm_page_access(uint32_t pg, int write)
{
    uint64_t t0 = ompdsm_now_ns();
    /* Under software write detection every valid page is writable: only
     * an invalid one faults, and the fault makes it valid and writable. */
    int wd = dsm_g.wd == WD_ON;
    if (wd)
        write = 0;
    pthread_mutex_t *l = page_lock(pg);
    pthread_mutex_lock(l);
    uint8_t st = dsm_g.state[pg];
    int home = dsm_home(pg);
    if (wd && st == PG_INVALID && home == dsm_g.rank) {
        /* A page of the heap no node used before the start: the home's
         * copy is the master, there is nothing to fetch. */
        dsm_g.state[pg] = PG_RO;
        dsm_protect(pg, 1, PROT_READ | PROT_WRITE);
        dsm_wd_valid(pg, 1);
        pthread_mutex_unlock(l);
        return;
    }
    if (st == PG_INVALID && home != dsm_g.rank) {
        /* Announce the fetch before it reads the home (a full fence: the
         * store must be visible before the loads), so that an acquire that
         * checks this page without its lock cannot miss a fetch that might
         * read data older than the notices it applies. */
        __atomic_store_n(&dsm_g.state[pg], PG_FETCHING, __ATOMIC_SEQ_CST);
        dsm_refetched(pg);
    }
    if (!write) {
        if (st == PG_INVALID) {
            /* Read ahead: the invalid pages right after this one with the
             * same home come in the same get and the same mprotect (loops
             * walk arrays forward).  Only where this node is walking that
             * home's pages: the page before this one is a valid copy from
             * the same home.  A single page read across a partition
             * boundary (a stencil's neighbour plane) fetches nothing more:
             * pages after it that their home writes and nobody else reads
             * would lose their exclusivity to the fetch, and their home
             * would write-protect them and send notices at every release
             * (Himeno, docs/performance.md).  Their locks are only tried,
             * never waited for, and the run stays inside one stripe block
             * (DSM_PLOCK_STRIPES), so lock order never matters. */
            uint32_t n = 1, ra = dsm_g.readahead;
            if (ra && (pg == 0 ||
                       (dsm_g.state[pg - 1] != PG_RO &&
                        dsm_g.state[pg - 1] != PG_DIRTY) ||
                       dsm_home_known(pg - 1) != home))
                ra = 0;
            while (n <= ra && !starts_stripe_block(pg + n) &&
                   pg + n < dsm_g.npages &&
                   dsm_g.state[pg + n] == PG_INVALID &&
                   dsm_home_known(pg + n) == home &&
                   pthread_mutex_trylock(page_lock(pg + n)) == 0) {
                if (dsm_g.state[pg + n] != PG_INVALID) {
                    pthread_mutex_unlock(page_lock(pg + n));
                    break;
                }
                __atomic_store_n(&dsm_g.state[pg + n], PG_FETCHING,
                                 __ATOMIC_SEQ_CST);
                n++;
            }
            if (dsm_fetch_pages(pg, n, home, page_sys(pg)) < 0)
                ompdsm_fatal("fetch of pages %u-%u (%p) from node %d failed",
                             pg, pg + n - 1, (void *)page_app(pg), home);
            DSM_STAT(pages_fetched, n);
            DSM_STAT(remote_faults, 1);
            dsm_mig_fault(pg, n);
            for (uint32_t k = 0; k < n; k++)
                dsm_g.state[pg + k] = PG_RO;
            dsm_protect(pg, n, wd ? PROT_READ | PROT_WRITE : PROT_READ);
            if (wd) {
                dsm_wd_valid(pg, n);
                dsm_push_fetched(pg, n);
            }
            for (uint32_t k = 1; k < n; k++)
                pthread_mutex_unlock(page_lock(pg + k));
            DSM_STAT(read_faults, 1);
            dsm_pagestat_fault(pg, 0);
            OMPDSM_TRACE(OMPDSM_TR_FAULT, "read fault page %u (+%u ahead) from "
                         "node %d", pg, n - 1, home);
        }
    } else if (st != PG_DIRTY) {
        if (st == PG_INVALID && home != dsm_g.rank) {
            fetch_page(pg, home);
            dsm_mig_fault(pg, 1); /* the fetch; the write counts below */
        }
        make_dirty(pg, home);
        if (home != dsm_g.rank)
            DSM_STAT(remote_faults, 1);
        dsm_mig_fault(pg, 1);
        /* Write-ahead: the valid read-only pages right after this one,
         * homed elsewhere, that this node wrote lately (dsm_keep_recent)
         * become writable in the same mprotect, as read-ahead fetches in
         * one get: a loop that writes a block of pages again takes one
         * fault for the block.  A guess that was wrong costs a twin and an
         * empty diff, and publishes nothing (a page homed here has no twin
         * to tell, so none is written ahead).  Their locks are only tried,
         * within one stripe block. */
        uint32_t n = 1;
        while (n <= WRITEAHEAD_MAX && !starts_stripe_block(pg + n) &&
               pg + n < dsm_g.npages && dsm_g.state[pg + n] == PG_RO &&
               dsm_home_known(pg + n) >= 0 && dsm_home_known(pg + n) != dsm_g.rank &&
               dsm_keep_recent(pg + n) &&
               pthread_mutex_trylock(page_lock(pg + n)) == 0) {
            if (dsm_g.state[pg + n] != PG_RO) {
                pthread_mutex_unlock(page_lock(pg + n));
                break;
            }
            make_dirty(pg + n, dsm_home_known(pg + n));
            n++;
        }
        dsm_protect(pg, n, PROT_READ | PROT_WRITE);
        for (uint32_t k = 1; k < n; k++)
            pthread_mutex_unlock(page_lock(pg + k));
        DSM_STAT(write_faults, 1);
        DSM_STAT(written_ahead, n - 1);
        dsm_pagestat_fault(pg, 1);
        OMPDSM_TRACE(OMPDSM_TR_FAULT, "write fault page %u (home %d)%s (+%u ahead)",
                     pg, home, st == PG_INVALID ? " after fetch" : "", n - 1);
    }
    pthread_mutex_unlock(l);
    uint64_t ns = ompdsm_now_ns() - t0;
    DSM_STAT(fault_ns, ns);
    if (write && (st == PG_RO || (st == PG_INVALID && home == dsm_g.rank)))
        dsm_keep_fault_ns(ns); /* (a fault a kept page saves fetches nothing) */
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    if (old_segv.sa_flags & SA_SIGINFO) {
        if (old_segv.sa_sigaction) {
            old_segv.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (old_segv.sa_handler == SIG_IGN) {
        /* Ignoring SIGSEGV would loop forever on the same instruction. */
    } else if (old_segv.sa_handler != SIG_DFL) {
        old_segv.sa_handler(sig);
        return;
    }
    /* Restore the default action; returning re-executes the faulting
     * instruction, which now kills the process with SIGSEGV as usual. */
    signal(sig, SIG_DFL);
}

static struct dsm_fault_hooks hooks;

void dsm_set_fault_hooks(const struct dsm_fault_hooks *h)
{
    hooks = *h;
}

#ifndef SEGV_PKUERR
#define SEGV_PKUERR 4
#endif

static void segv_handler(int sig, siginfo_t *si, void *ucv)
{
    char *a = si->si_addr;
    if (sig == SIGSEGV && dsm_probe_fault(a))
        return;
    if (sig == SIGSEGV && si->si_code == SEGV_PKUERR && dsm_g.started) {
        /* A call into code the pass did not compile wrote the heap. */
        int saved = errno;
        if (dsm_wd_guard_fault(a)) {
            errno = saved;
            return;
        }
    }
    if (sig == SIGSEGV && si->si_code == SEGV_ACCERR && dsm_in_heap(a) &&
        dsm_g.started) {
        int saved = errno;
        int write;
#if defined(__x86_64__)
        ucontext_t *uc = ucv;
        write = (uc->uc_mcontext.gregs[REG_ERR] & X86_PF_WRITE) != 0;
#else
        /* Without the error code: a fault on a readable page is a write. */
        write = dsm_g.state[page_of(a)] != PG_INVALID;
#endif
        const void *pc = NULL;
#if defined(__x86_64__)
        pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
#endif
        if (hooks.begin)
            hooks.begin(pc);
        dsm_page_access(page_of(a), write);
        if (hooks.end)
            hooks.end();
        errno = saved;
        return;
    }
    chain(sig, si, ucv);
}

int dsm_fault_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old_segv) < 0)
        ompdsm_fatal("sigaction(SIGSEGV): %s", strerror(errno));
    return 0;
}

void dsm_touch(const void *p, size_t len, int write)
{
    uint32_t pg, end;
    if (!len || dsm_g.solo || !dsm_g.started || !dsm_heap_pages(p, len, &pg, &end))
        return;
    if (dsm_g.wd == WD_ON)
        write = 0; /* (valid pages are writable) */
    for (; pg <= end; pg++) {
        uint8_t st = dsm_g.state[pg];
        if (st == PG_INVALID || (write && st != PG_DIRTY))
            dsm_page_access(pg, write);
    }
}
