/* runtime/diag.c - what each thread of this node waits on, reported to the
 * launcher for its deadlock detection and status (docs/diagnostics.md).
 *
 * A thread records "what and where" when it enters a construct that can
 * wait for other nodes (barrier, lock, critical, ordered, the end of a
 * region, the next fork) and clears it on the way out: a few stores into
 * its own slot, under a sequence number so that the reporter never reads a
 * half-written record.  A thread running user code, sleeping or reading a
 * file is not waiting in the runtime.  A small thread samples the slots
 * every period and sends the node's state to ompdsmrun: every period while
 * all its threads wait (so that a stopped node goes stale), once on any
 * other change.  Beside the waits it counts the node's progress (locks
 * granted, pages fetched, barriers met, ...: work its helper threads or a
 * waiting thread inside the DSM complete), and measures on its own clock
 * how long everything has stood still.  The launcher compares the states
 * of all nodes over two reports (waits, progress and the comm layer's
 * message counts unchanged, messages sent == received): the cheap global
 * test of a deadlock.  With OMPDSM_MONITOR the same thread sends the
 * monitor's samples, and the node's last one as it finishes. */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DIAG_SLOTS = BOOT_STATE_THREADS_MAX, SLOT_HELD = 16 };

/* A flush called again from the same place within this time, with nothing
 * else in between, is a spin on a flag. */
#define FLUSH_SPIN_GAP_NS (100ull * 1000 * 1000)

struct wait_slot {
    uint64_t seq;          /* odd while the record changes */
    int kind;              /* RT_WAIT_*; RT_WAIT_NONE: running */
    int depth;             /* nested waits: the outermost is reported */
    const void *pc;        /* return address into the caller */
    const char *file;      /* or a known site */
    int line;
    const char *name;      /* critical name, region name */
    uint64_t lock;         /* lock id waited for, or ~0 */
    uint64_t since_ns;
    /* flush spin detection (touched by the owner only) */
    const void *flush_pc;
    uint64_t flush_ns;
    const char *region;    /* parallel region running, or NULL */
    uint64_t done_ns[2];   /* finished waits: barrier-like, lock-like */
    /* Locks this thread holds, for the report's "held by node N": written
     * by the owner only, without the sequence (a lock taken or left is no
     * wait; every lock operation of a node once took one mutex of the
     * node here, which two threads of a node taking 20 million locks,
     * NPB UA S, made the bottleneck).  A reader may see the list while it
     * changes; the report that uses it is made while every thread waits. */
    uint32_t nheld;
    uint64_t held[SLOT_HELD];
};

static struct wait_slot slots[DIAG_SLOTS];
static int nslots;
static __thread struct wait_slot *self_slot;
/* the slot of threads beyond DIAG_SLOTS, shared: no held list there */
static struct wait_slot spare_slot;
static uint64_t main_lo, main_hi, main_bias; /* the program's code */

/* The clock of wait records is ompdsm_coarse_ns (the precise clock, which
 * every lock pair read twice, was a third of a re-take from the lock
 * cache).  Its tick (1-4 ms) is far below the deadlock report's seconds;
 * the monitor's sums of wait times stay right on average (a wait's start
 * and end fall anywhere in a tick). */

static struct wait_slot *slot(void)
{
    if (OMPDSM_LIKELY(self_slot != NULL))
        return self_slot;
    int i = __atomic_fetch_add(&nslots, 1, __ATOMIC_ACQ_REL);
    if (i >= DIAG_SLOTS) {
        /* Untracked: this node can then never look blocked. */
        return &spare_slot;
    }
    self_slot = &slots[i];
    return self_slot;
}

static void slot_write_begin(struct wait_slot *s)
{
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void slot_write_end(struct wait_slot *s)
{
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

void rt_wait_begin(int kind, const void *pc, const char *file, int line,
                   const char *name, uint64_t lock)
{
    struct wait_slot *s = slot();
    if (s->depth++)
        return;
    slot_write_begin(s);
    s->kind = kind;
    s->pc = pc;
    s->file = file;
    s->line = line;
    s->name = name;
    s->lock = lock;
    s->since_ns = ompdsm_coarse_ns();
    s->flush_pc = NULL;
    slot_write_end(s);
}

/* Barriers, joins, loop ends and the wait for a fork count as barrier
 * time in the monitor; locks, critical and ordered as lock time. */
static int lock_like(int kind)
{
    return kind == RT_WAIT_LOCK || kind == RT_WAIT_NEST_LOCK ||
           kind == RT_WAIT_CRITICAL || kind == RT_WAIT_ORDERED;
}

void rt_wait_end(void)
{
    struct wait_slot *s = slot();
    if (--s->depth)
        return;
    slot_write_begin(s);
    /* the monitor takes fault time from the dsm's own count; an idle pool
     * thread waits for nobody */
    if (s->kind != RT_WAIT_FAULT && s->kind != RT_WAIT_IDLE) {
        uint64_t now = ompdsm_coarse_ns();
        if (now > s->since_ns)
            s->done_ns[lock_like(s->kind)] += now - s->since_ns;
    }
    s->kind = RT_WAIT_NONE;
    slot_write_end(s);
}

void rt_wait_suspend(struct rt_wait_saved *w)
{
    struct wait_slot *s = slot();
    w->depth = s->depth;
    if (!s->depth)
        return;
    w->kind = s->kind;
    w->pc = s->pc;
    w->file = s->file;
    w->line = s->line;
    w->name = s->name;
    w->lock = s->lock;
    s->depth = 1;
    rt_wait_end();
}

void rt_wait_resume(const struct rt_wait_saved *w)
{
    if (!w->depth)
        return;
    rt_wait_begin(w->kind, w->pc, w->file, w->line, w->name, w->lock);
    slot()->depth = w->depth;
}

void rt_diag_flush(const void *pc)
{
    struct wait_slot *s = slot();
    if (s->depth)
        return;
    uint64_t now = ompdsm_now_ns();
    if (s->kind == RT_WAIT_FLUSH && s->pc == pc) {
        /* Still spinning: only the time of the last flush moves, which
         * the reporter reads without the sequence (a stale value only
         * delays the verdict). */
        __atomic_store_n(&s->flush_ns, now, __ATOMIC_RELAXED);
        return;
    }
    if (s->flush_pc == pc && now - s->flush_ns < FLUSH_SPIN_GAP_NS) {
        slot_write_begin(s);
        s->kind = RT_WAIT_FLUSH;
        s->pc = pc;
        s->file = NULL;
        s->name = NULL;
        s->lock = ~0ull;
        s->since_ns = s->flush_ns;
        slot_write_end(s);
    }
    s->flush_pc = pc;
    __atomic_store_n(&s->flush_ns, now, __ATOMIC_RELAXED);
}

void rt_diag_region(const char *name)
{
    struct wait_slot *s = slot();
    slot_write_begin(s);
    s->region = name;
    slot_write_end(s);
}

void rt_diag_lock_held(uint64_t id, int now_held)
{
    struct wait_slot *s = slot();
    if (s == &spare_slot)
        return;
    uint32_t n = s->nheld;
    if (now_held) {
        /* (more at once than SLOT_HELD go unnamed in a report) */
        if (n < SLOT_HELD) {
            __atomic_store_n(&s->held[n], id, __ATOMIC_RELAXED);
            __atomic_store_n(&s->nheld, n + 1, __ATOMIC_RELEASE);
        }
        return;
    }
    for (uint32_t i = n; i-- > 0;)
        if (s->held[i] == id) {
            __atomic_store_n(&s->held[i], s->held[n - 1], __ATOMIC_RELAXED);
            __atomic_store_n(&s->nheld, n - 1, __ATOMIC_RELEASE);
            break;
        }
}

/* ---- the reporter ---- */

static const char *kind_name(int kind)
{
    switch (kind) {
    case RT_WAIT_BARRIER: return "barrier";
    case RT_WAIT_LOOP_END: return "implicit barrier at the end of the loop";
    case RT_WAIT_SINGLE_END: return "implicit barrier at the end of single";
    case RT_WAIT_COPYPRIVATE: return "copyprivate barrier at the end of single";
    case RT_WAIT_JOIN: return "end of parallel region";
    case RT_WAIT_FORK: return "waiting for node 0's next parallel region";
    case RT_WAIT_LOCK: return "omp_set_lock";
    case RT_WAIT_NEST_LOCK: return "omp_set_nest_lock";
    case RT_WAIT_CRITICAL: return "critical";
    case RT_WAIT_ORDERED: return "ordered";
    case RT_WAIT_FLUSH: return "flush (spinning, no change seen)";
    case RT_WAIT_FAULT: return "page fault (waiting for the page)";
    case RT_WAIT_IDLE: return "idle (a pool thread between regions)";
    default: return "running";
    }
}

static int find_main(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    /* The first object is the program itself. */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (!main_lo || lo < main_lo)
            main_lo = lo;
        if (lo + ph->p_memsz > main_hi)
            main_hi = lo + ph->p_memsz;
    }
    main_bias = info->dlpi_addr;
    return 1;
}

/* The program's address of pc, which addr2line resolves in its file: a
 * call instruction ends just before the return address. */
uint64_t rt_program_pc(const void *pc)
{
    uint64_t a = (uint64_t)(uintptr_t)pc;
    if (!a || a <= main_lo || a > main_hi)
        return 0;
    return a - 1 - main_bias;
}

/* A place without directories, as addr2line -s prints the lines of the
 * same report: a region's name is "file:line (function)". */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void fill_thread(struct boot_thread *t, const struct wait_slot *c,
                        uint64_t now)
{
    memset(t, 0, sizeof *t);
    t->waiting = c->kind != RT_WAIT_NONE;
    if (!t->waiting) {
        if (c->region)
            snprintf(t->what, sizeof t->what, "running");
        else
            snprintf(t->what, sizeof t->what, "running (serial part)");
        if (c->region)
            snprintf(t->where, sizeof t->where, "in parallel region %s",
                     base_name(c->region));
        return;
    }
    t->waited_ms = now > c->since_ns ? (now - c->since_ns) / 1000000 : 0;
    t->pc = rt_program_pc(c->pc);
    const char *k = kind_name(c->kind);
    switch (c->kind) {
    case RT_WAIT_LOCK:
    case RT_WAIT_NEST_LOCK:
        if (c->name) /* the argument as the user wrote it */
            snprintf(t->what, sizeof t->what, "%s(%s)", k, c->name);
        else
            snprintf(t->what, sizeof t->what, "%s(lock %llu)", k,
                     (unsigned long long)c->lock);
        break;
    case RT_WAIT_CRITICAL:
        if (c->name)
            snprintf(t->what, sizeof t->what, "critical(%s)", c->name);
        else
            snprintf(t->what, sizeof t->what, "critical");
        break;
    case RT_WAIT_JOIN:
        snprintf(t->what, sizeof t->what, "%s", k);
        if (c->name)
            snprintf(t->where, sizeof t->where, "%s", base_name(c->name));
        break;
    default:
        snprintf(t->what, sizeof t->what, "%s", k);
        break;
    }
    if (c->lock != ~0ull) {
        t->has_lock = 1;
        t->lock = c->lock;
    }
    if (c->file && c->line > 0)
        snprintf(t->where, sizeof t->where, "%s:%d", base_name(c->file),
                 c->line);
}

/* Work this node has completed, which a thread's wait or the traffic
 * counts need not show: a node whose threads all wait can still move on
 * through its comm service and lazy release threads, or a waiting thread
 * inside the DSM (a lock taken over after a lazy release, pages and diffs
 * fetched, a barrier's rounds).  Flushes and the gets of a flush spin are
 * left out: a spin on a flag nobody sets is a deadlock. */
static uint64_t progress(void)
{
    struct dsm_stats d;
    dsm_stats_get(&d);
    return d.lock_acquires + d.lock_cached + d.pages_fetched + d.barriers +
           d.forks + d.diffs + d.notices_applied + d.lazy_served +
           d.lazy_requests + d.migrations + d.atomics + d.read_faults +
           d.write_faults +
           __atomic_load_n(&rt_st.tasks_created, __ATOMIC_RELAXED) +
           __atomic_load_n(&rt_st.tasks_local, __ATOMIC_RELAXED) +
           __atomic_load_n(&rt_st.tasks_stolen, __ATOMIC_RELAXED);
}

static struct {
    int monitor; /* OMPDSM_MONITOR=1: samples for ompdsmrun --monitor */
    int deadlock_ms;
    int period_ms;
    /* struct boot_state and boot_thread are built in place: 8-aligned */
    _Alignas(uint64_t) unsigned char buf[BOOT_STATE_MAX];
} diag;

/* Fills diag.buf; returns its length. */
static size_t sample(struct boot_state *st)
{
    uint64_t now = ompdsm_now_ns();
    int n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);
    if (n > DIAG_SLOTS)
        n = DIAG_SLOTS;
    memset(st, 0, sizeof *st);
    st->deadlock_ms = (uint32_t)diag.deadlock_ms;
    st->period_ms = (uint32_t)diag.period_ms;
    comm_traffic(&st->tx, &st->rx);
    st->progress = progress();
    st->blocked = n > 0;
    struct boot_thread *t = (struct boot_thread *)(diag.buf + sizeof *st);
    uint64_t solo_held[SLOT_HELD];
    uint32_t nsolo = 0;
    for (int i = 0; i < n; i++) {
        struct wait_slot c;
        uint64_t s0;
        for (int tries = 0;; tries++) {
            s0 = __atomic_load_n(&slots[i].seq, __ATOMIC_ACQUIRE);
            memcpy(&c, &slots[i], sizeof c);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (!(s0 & 1) &&
                __atomic_load_n(&slots[i].seq, __ATOMIC_RELAXED) == s0)
                break;
            if (tries > 1000) {
                c.kind = RT_WAIT_NONE; /* moving: not blocked */
                break;
            }
        }
        /* A flush that has not come back for a while is computing. */
        if (c.kind == RT_WAIT_FLUSH &&
            now - __atomic_load_n(&slots[i].flush_ns, __ATOMIC_RELAXED) >
                FLUSH_SPIN_GAP_NS * 5)
            c.kind = RT_WAIT_NONE;
        st->moves += s0;
        /* A job of one node keeps no held lists for omp locks (lock.c):
         * a lock a thread of it waits for is held by a thread of it. */
        if (rt_solo_locks && nsolo < SLOT_HELD &&
            (c.kind == RT_WAIT_LOCK || c.kind == RT_WAIT_NEST_LOCK))
            solo_held[nsolo++] = c.lock;
        fill_thread(&t[i], &c, now);
        /* A fault waits for the home's service side, never for another
         * node's program, and its get is not counted in flight: shown,
         * but never part of a deadlock (a slow fetch is no alarm). */
        if (!t[i].waiting || c.kind == RT_WAIT_FAULT)
            st->blocked = 0;
    }
    st->nthreads = (uint32_t)n;
    uint64_t *h = (uint64_t *)(t + n);
    uint32_t nh = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = __atomic_load_n(&slots[i].nheld, __ATOMIC_ACQUIRE);
        for (uint32_t j = 0; j < k && j < SLOT_HELD && nh < BOOT_STATE_HELD_MAX;
             j++)
            h[nh++] = __atomic_load_n(&slots[i].held[j], __ATOMIC_RELAXED);
    }
    for (uint32_t j = 0; j < nsolo && nh < BOOT_STATE_HELD_MAX; j++)
        h[nh++] = solo_held[j];
    st->nheld = nh;
    return sizeof *st + (size_t)n * sizeof *t + st->nheld * sizeof *h;
}

/* ompdsmrun --monitor: this node's counters, once a second.  Wait times
 * come from the slots, the wait in progress included, so that a long
 * barrier shows while it lasts. */
static int send_sample(void)
{
    struct dsm_stats d;
    struct comm_stats c;
    dsm_stats_get(&d);
    comm_stats_get(&c);
    uint64_t now = ompdsm_now_ns(), w[2] = {0, 0};
    int n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n && i < DIAG_SLOTS; i++) {
        struct wait_slot c2;
        for (int tries = 0; tries < 1000; tries++) {
            uint64_t s0 = __atomic_load_n(&slots[i].seq, __ATOMIC_ACQUIRE);
            memcpy(&c2, &slots[i], sizeof c2);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (!(s0 & 1) &&
                __atomic_load_n(&slots[i].seq, __ATOMIC_RELAXED) == s0)
                break;
        }
        w[0] += c2.done_ns[0];
        w[1] += c2.done_ns[1];
        if (c2.kind != RT_WAIT_NONE && c2.kind != RT_WAIT_FLUSH &&
            c2.kind != RT_WAIT_FAULT && c2.kind != RT_WAIT_IDLE &&
            now > c2.since_ns)
            w[lock_like(c2.kind)] += now - c2.since_ns;
    }
    struct boot_sample s = {
        .t_ns = now,
        .barrier_ns = w[0],
        .lock_ns = w[1],
        .fault_ns = d.fault_ns,
        .faults = d.read_faults + d.write_faults,
        .bytes = c.put_bytes + c.get_bytes + c.send_bytes,
    };
    return comm_report(BOOT_SAMPLE, &s, sizeof s);
}

/* How long, by this node's clock, it has stood still: blocked in two
 * samples in a row with nothing changed between them, and the samples not
 * further apart than a period allows (a node stopped, or whose sampler was
 * starved, cannot vouch for the time between).  Measured here rather than
 * from the arrival of reports at the launcher, which a relay or a busy
 * machine can delay by seconds: a wait of one second whose reports arrive
 * late must not look like one of five. */
static void stand_still(struct boot_state *st, uint64_t now)
{
    static struct boot_state prev;
    static uint64_t prev_ns, since_ns;
    uint64_t gap_ns = (2ull * (uint64_t)diag.period_ms + 1000) * 1000000;
    if (!(st->blocked && prev.blocked && st->moves == prev.moves &&
          st->tx == prev.tx && st->rx == prev.rx &&
          st->progress == prev.progress && now - prev_ns <= gap_ns))
        since_ns = now;
    uint64_t ms = (now - since_ns) / 1000000;
    st->still_ms = st->blocked ? (uint32_t)(ms > UINT32_MAX ? UINT32_MAX : ms)
                               : 0;
    prev = *st;
    prev_ns = now;
}

static void *diag_main(void *arg)
{
    (void)arg;
    uint64_t last_moves = ~0ull, last_sample = ompdsm_now_ns();
    uint32_t last_blocked = 2;
    /* The first sample at once: a share needs two. */
    if (diag.monitor)
        send_sample();
    for (;;) {
        struct timespec ts = {diag.period_ms / 1000,
                              (long)(diag.period_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        if (diag.monitor &&
            ompdsm_now_ns() - last_sample >= 990ull * 1000 * 1000) {
            last_sample = ompdsm_now_ns();
            send_sample();
        }
        struct boot_state st;
        size_t len = sample(&st);
        stand_still(&st, ompdsm_now_ns());
        if (!st.blocked && st.moves == last_moves &&
            st.blocked == last_blocked)
            continue;
        memcpy(diag.buf, &st, sizeof st);
        int rc = comm_report(BOOT_STATE, diag.buf, len);
        if (rc == -ENOTSUP)
            return NULL;
        if (rc == 0) {
            last_moves = st.moves;
            last_blocked = st.blocked;
        }
    }
    return NULL;
}

/* A thread in a page fault waits for the page's home (or for diffs); the
 * faulting instruction is the place.  rt_program_pc takes return
 * addresses, hence the + 1.  A fault inside a flush spin (the flag's page
 * refetched) is part of the spin and leaves its record alone. */
static __thread int fault_recorded;

static void fault_begin(const void *pc)
{
    if (slot()->kind == RT_WAIT_FLUSH)
        return;
    fault_recorded = 1;
    rt_wait_begin(RT_WAIT_FAULT, pc ? (const char *)pc + 1 : NULL, NULL, 0,
                  NULL, ~0ull);
}

static void fault_end(void)
{
    if (fault_recorded) {
        fault_recorded = 0;
        rt_wait_end();
    }
}

void rt_diag_start(void)
{
    static const struct dsm_fault_hooks fh = {fault_begin, fault_end};
    dsm_set_fault_hooks(&fh);
    const char *v = getenv("OMPDSM_DEADLOCK_S");
    double d = 5.0;
    if (v && *v && rt_parse_fraction(v, &d) < 0)
        ompdsm_fatal("OMPDSM_DEADLOCK_S='%s' is not valid: expected seconds "
                     "(such as 5 or 0.5; 0 turns deadlock detection off)", v);
    diag.deadlock_ms = d > 0 && d * 1000 < 1 ? 1 : (int)(d * 1000);
    /* Two reports fit in the time the state must last, and at most one a
     * second, so that a waiting node costs next to nothing. */
    int p = diag.deadlock_ms / 4;
    diag.period_ms = p <= 0 ? 1000 : p < 50 ? 50 : p > 1000 ? 1000 : p;
    const char *m = getenv("OMPDSM_MONITOR");
    diag.monitor = m && !strcmp(m, "1");
    dl_iterate_phdr(find_main, NULL);
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* A small stack, but not 64 KiB: comm_report builds a message of up
     * to BOOT_STATE_MAX on it, and the thread's TLS and guard page come
     * out of the same size (64 KiB overflowed in comm_report once this
     * thread's own frame grew by a few hundred bytes). */
    pthread_attr_setstacksize(&a, 256 * 1024);
    if (pthread_create(&th, &a, diag_main, NULL) != 0)
        ompdsm_warn("cannot start the diagnostics thread: no deadlock "
                    "detection or status on this node");
    pthread_attr_destroy(&a);
}

void rt_diag_finish(void)
{
    if (!diag.monitor)
        return;
    /* The reporter may hold the connection for the moment of a send. */
    for (int i = 0; i < 200 && send_sample() == -EAGAIN; i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
