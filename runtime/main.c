/* runtime/main.c - start and end of a node: translation-unit registration,
 * the start-up sequence (bootstrap, heap, shared globals, protocol), node
 * 0 running the program while the others serve parallel regions, and an
 * orderly end on every node with the program's exit status. */
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

static int rt_started;
struct rt_area *rt_area;

static OMPDSM_unit *units, **units_tail = &units;
static OMPDSM_region **regions;
static int nregions;
static const char **crit_names; /* sorted, unique */
static uint32_t ncrit;
/* Lock ids of the critical sections: [0] the unnamed one, [1 + i] the
 * one named crit_names[i]. */
static uint32_t *crit_locks;
static int shutting_down;

/* Messages on the fork channel. */
enum { RT_MSG_REGION = 1, RT_MSG_SHUTDOWN = 2 };
struct rt_fork_msg {
    uint32_t type;
    int32_t region;     /* region id */
    int32_t nthreads;   /* team size */
    int32_t status;     /* shutdown: exit status */
    uint64_t ws_base;   /* work-share counter at the fork */
    /* The encountering task's data-environment ICVs, which the region's
     * implicit tasks inherit (omp_set_schedule, omp_set_num_threads, ...
     * called in the serial part on node 0). */
    int32_t icv_nthreads, icv_dynamic, icv_nested, icv_max_active_levels;
    int32_t icv_sched_kind, pad;
    int64_t icv_sched_chunk;
    /* Node 0's sequence on the sub-team channel: sub-teams of different
     * sizes leave the members' counters apart. */
    uint64_t team_chan_seq;
    /* then the frame bytes */
};

RT_API void OMPDSM_register_unit(OMPDSM_unit *unit)
{
    if (unit->abi_version != OMPDSM_ABI_VERSION) {
        fprintf(stderr, "ompdsm: %s was compiled for ABI version %d, but this "
                        "libompdsm provides version %d; recompile it with this "
                        "ompcc\n", unit->file, unit->abi_version,
                OMPDSM_ABI_VERSION);
        exit(1);
    }
    if (rt_started)
        ompdsm_fatal("%s registered after start (dlopen of translated code is "
                     "not supported)", unit->file);
    unit->next = NULL;
    *units_tail = unit;
    units_tail = &unit->next;
}

static OMPDSM_region *rt_region_by_id(int id)
{
    if (id < 0 || id >= nregions)
        ompdsm_fatal("asked to run parallel region %d, but only %d exist: do "
                     "all nodes run the same executable?", id, nregions);
    return regions[id];
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

uint32_t rt_critical_id(const char *name)
{
    if (!name)
        return crit_locks[0];
    const char **hit = bsearch(&name, crit_names, ncrit, sizeof *crit_names,
                               cmp_str);
    if (!hit)
        ompdsm_fatal("critical section '%s' was not registered by ompcc", name);
    return crit_locks[hit - crit_names + 1];
}

/* Allocates every unit's globals (same order on every node, so the same
 * addresses), runs the initialisers, numbers regions and critical names. */
static void setup_units(void)
{
    size_t nc = 0;
    unsigned nunits = 0;
    for (OMPDSM_unit *u = units; u; u = u->next) {
        nunits++;
        for (unsigned i = 0; i < u->nglobals; i++) {
            OMPDSM_global *g = &u->globals[i];
            *g->slot = dsm_global_alloc(g->size, g->align ? g->align : 1,
                                        g->name);
            dsm_set_granule(*g->slot, g->size, (unsigned)g->granule);
        }
        nregions += (int)u->nregions;
        nc += u->ncriticals;
    }
    dsm_wd_units(nunits);
    for (OMPDSM_unit *u = units; u; u = u->next)
        if (u->init)
            u->init();
    regions = calloc((size_t)nregions + 1, sizeof *regions);
    crit_names = calloc(nc + 1, sizeof *crit_names);
    if (!regions || !crit_names)
        ompdsm_fatal("out of memory at start");
    int r = 0;
    for (OMPDSM_unit *u = units; u; u = u->next) {
        for (unsigned i = 0; i < u->nregions; i++) {
            u->regions[i]->id = r;
            regions[r++] = u->regions[i];
        }
        for (unsigned i = 0; i < u->ncriticals; i++)
            crit_names[ncrit++] = u->criticals[i];
    }
    qsort(crit_names, ncrit, sizeof *crit_names, cmp_str);
    uint32_t w = 0;
    for (uint32_t i = 0; i < ncrit; i++)
        if (!w || strcmp(crit_names[w - 1], crit_names[i]))
            crit_names[w++] = crit_names[i];
    ncrit = w;
    /* Before dsm_start: the same ids on every node, with no message. */
    crit_locks = malloc(((size_t)ncrit + 1) * sizeof *crit_locks);
    if (!crit_locks)
        ompdsm_fatal("out of memory at start");
    for (uint32_t i = 0; i <= ncrit; i++)
        crit_locks[i] = dsm_lock_alloc();
}

/* Nodes must share one address layout (pointers to code and data travel
 * in shared memory): run without address randomisation.  ompdsmrun sets
 * this already; under other launchers re-execute once. */
static void ensure_no_aslr(char **argv)
{
    const char *sz = getenv("OMPDSM_SIZE");
    int multi = (sz && strcmp(sz, "1")) || getenv("PMIX_RANK") ||
                getenv("PMIX_NAMESPACE");
    if (!multi)
        return;
    int pers = personality(0xffffffff);
    if (pers == -1 || (pers & ADDR_NO_RANDOMIZE))
        return;
    if (getenv("OMPDSM_REEXEC")) {
        fprintf(stderr, "ompdsm: warning: cannot disable address "
                        "randomisation; pointers to code in shared data may "
                        "not work across nodes\n");
        return;
    }
    if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1)
        return;
    setenv("OMPDSM_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    /* If that failed, carry on with randomisation. */
}

const OMPDSM_unit *rt_units(void)
{
    return units;
}

static void finish_node(int status)
{
    rt_diag_finish();
    rt_stats_report();
    dsm_fini();
    comm_fini();
    fflush(NULL);
    _exit(status);
}

/* In a conforming program every other node waits for the next fork when
 * node 0 ends, so the shutdown barrier completes at once.  If the threads
 * met different numbers of barriers or work-sharing constructs, the others
 * wait elsewhere, the fork and barrier pair with the wrong partners, and
 * nothing would ever end: a watchdog ends the job instead.  Generous, since
 * a node may be descheduled for a while on a loaded machine. */
#define RT_SHUTDOWN_WAIT_S 10
static void *shutdown_watchdog(void *arg)
{
    (void)arg;
    /* nanosleep only: the node _exits when the end completes. */
    struct timespec ts = {RT_SHUTDOWN_WAIT_S, 0};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
    ompdsm_fatal("the program is not conforming: node 0 ended it after %llu "
                 "barriers of the team of all %d nodes (region ends "
                 "included), but the other nodes did not meet it at the end "
                 "within %d s: they wait in another barrier or work-sharing "
                 "construct (the threads met different numbers of barriers "
                 "or work-sharing constructs)",
                 (unsigned long long)rt_world_barriers, comm_size(),
                 RT_SHUTDOWN_WAIT_S);
    return NULL;
}

static void broadcast_shutdown(int status)
{
    struct rt_fork_msg m = {RT_MSG_SHUTDOWN, -1, 0, status, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pthread_t wd;
    /* It watches the end as a whole: the last barriers of dsm_fini and
     * comm_fini too, which a mismatch can leave waiting instead (the
     * shutdown barrier then matched one of theirs).  _exit ends it. */
    if (comm_size() > 1 &&
        pthread_create(&wd, NULL, shutdown_watchdog, NULL) == 0)
        pthread_detach(wd);
    dsm_atomic_drain();
    dsm_fork_send(COMM_WORLD, &m, sizeof m);
    /* The barrier pairing this fork, so the channel's rule holds.  Not
     * a wait for the deadlock detection: a mismatch here has its own,
     * more telling diagnosis (the watchdog). */
    dsm_barrier(COMM_WORLD, NULL);
}

/* exit() on node 0 outside parallel regions ends the job in order; exit()
 * anywhere else cannot (the other nodes are inside a region): end the job. */
static void on_exit_handler(int status, void *arg)
{
    (void)arg;
    if (!rt_started || shutting_down)
        return;
    shutting_down = 1;
    fflush(NULL);
    if (comm_rank() == 0 && rt_self.level == 0) {
        broadcast_shutdown(status);
        finish_node(status);
    }
    char msg[160];
    snprintf(msg, sizeof msg, "node %d called exit(%d) inside a parallel region",
             comm_rank(), status);
    /* Status 0 too: exit(0) asks for the job to end successfully. */
    comm_abort_job(status, msg);
    _exit(status);
}

static void rt_worker_loop(void)
{
    struct comm_buf b = {0};
    for (;;) {
        rt_wait_begin(RT_WAIT_FORK, NULL, NULL, 0, NULL, ~0ull);
        dsm_fork_recv(COMM_WORLD, &b);
        rt_wait_end();
        struct rt_fork_msg m;
        if (b.len < sizeof m)
            ompdsm_fatal("malformed fork message (%zu bytes)", b.len);
        memcpy(&m, b.data, sizeof m);
        if (m.type == RT_MSG_SHUTDOWN) {
            dsm_barrier(COMM_WORLD, NULL);
            shutting_down = 1;
            comm_buf_free(&b);
            /* The program's status is node 0's to report: were every node
             * to exit with it, the launcher would name whichever it reaped
             * first as the node that failed. */
            finish_node(0);
        }
        OMPDSM_region *r = rt_region_by_id(m.region);
        rt_icv.dv.nthreads = m.icv_nthreads;
        rt_icv.dv.dynamic = m.icv_dynamic;
        rt_icv.dv.nested = m.icv_nested;
        rt_icv.max_active_levels = m.icv_max_active_levels;
        rt_icv.dv.sched_kind = m.icv_sched_kind;
        rt_icv.dv.sched_chunk = m.icv_sched_chunk;
        comm_coll_set_seq(1, m.team_chan_seq);
        /* counted here as node 0 counts them in OMPDSM_parallel */
        uint64_t t0 = ompdsm_now_ns();
        RT_STAT(regions, 1);
        rt_team_run(r, (char *)b.data + sizeof m, b.len - sizeof m, m.nthreads,
                    m.ws_base);
        RT_STAT(region_ns, ompdsm_now_ns() - t0);
    }
}

void rt_fork_send(int region, int nthreads, uint64_t ws_base, const void *frame,
                  size_t frame_size)
{
    struct comm_buf b = {0};
    struct rt_fork_msg m = {RT_MSG_REGION, region, nthreads, 0, ws_base,
                            rt_icv.dv.nthreads, rt_icv.dv.dynamic, rt_icv.dv.nested,
                            rt_icv.max_active_levels, rt_icv.dv.sched_kind, 0,
                            rt_icv.dv.sched_chunk, comm_coll_seq(1)};
    if (comm_buf_append(&b, &m, sizeof m) < 0 ||
        comm_buf_append(&b, frame, frame_size) < 0)
        ompdsm_fatal("out of memory forking a region");
    dsm_atomic_drain();
    dsm_fork_send(COMM_WORLD, b.data, b.len);
    comm_buf_free(&b);
}

void *rt_region_map(int reg, size_t len, const char *name, const char *what)
{
    len = OMPDSM_ALIGN_UP(len, (size_t)4096);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
        ompdsm_fatal("memfd for the %s: %s", what, strerror(errno));
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        ompdsm_fatal("mmap of the %s: %s", what, strerror(errno));
    COMM_CHECK(comm_register(reg, p, len, fd));
    return p;
}

/* Thread numbers and team layouts are computed on every node from
 * OMPDSM_THREADS_PER_NODE: all must have the same (auto counts each
 * node's CPUs, which may differ across hosts). */
static void check_threads_per_node(void)
{
    if (comm_size() < 2)
        return;
    int64_t v[2] = {rt_icv.threads_per_node, -rt_icv.threads_per_node};
    if (comm_allreduce(COMM_WORLD, v, 2, COMM_INT64, COMM_MAX) < 0)
        ompdsm_fatal("cannot compare the nodes' threads per node");
    if (v[0] != -v[1])
        ompdsm_fatal("the nodes have different threads per node (from %lld "
                     "to %lld; node %d has %d): OMPDSM_THREADS_PER_NODE must "
                     "give every node the same number (auto counts each "
                     "node's CPUs: give the number instead)",
                     (long long)-v[1], (long long)v[0], comm_rank(),
                     rt_icv.threads_per_node);
}

static void setup_rt_region(void)
{
    rt_area = rt_region_map(RT_REG_AREA, rt_area_len(comm_size()), "ompdsm-rt",
                            "runtime region");
}

RT_API int OMPDSM_main(int argc, char **argv, char **envp,
                       int (*user_main)(int, char **, char **))
{
    ensure_no_aslr(argv);
    if (comm_init() < 0)
        ompdsm_fatal("cannot start the node (bootstrap failed)");
    rt_solo_locks = comm_size() == 1;
    rt_env_init(comm_size());
    rt_stats_install(); /* before the DSM's SIGSEGV handler, which chains */
    dsm_init();
    dsm_volatile_threads(rt_icv.threads_per_node);
    rt_atomic_start();
    setup_rt_region();
    rt_task_setup();
    if (comm_connect() < 0)
        ompdsm_fatal("cannot connect the nodes");
    setup_units();
    dsm_start();
    check_threads_per_node();
    rt_display_env();
    rt_started = 1;
    rt_diag_start();
    rt_thrash_start();
    rt_self.nthreads = 1;
    rt_self.group = (struct comm_group){0, 1};
    on_exit(on_exit_handler, NULL);
    if (comm_rank() == 0)
        exit(user_main(argc, argv, envp));
    rt_worker_loop();
    return 0;
}
