/* runtime/envtab.c - every environment variable any part of ompdsm reads
 * or sets, in one table {name, who reads it, default, what it accepts,
 * one-line doc}, and OMP_DISPLAY_ENV, which prints the ones in force.
 * Each layer still parses its own variables where it uses them (strictly,
 * once); this table is what the user sees of them, and docs/env.md must
 * list exactly its names (tests/unit/env_doc.py). */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the value in force of variables whose layer can say ---- */

static const char *bool_text(int b)
{
    return b ? "TRUE" : "FALSE";
}

static void show_dynamic(char *b, size_t n) { snprintf(b, n, "%s", bool_text(rt_icv.dv.dynamic)); }
static void show_nested(char *b, size_t n) { snprintf(b, n, "%s", bool_text(rt_icv.dv.nested)); }
static void show_nthreads(char *b, size_t n) { snprintf(b, n, "%d", rt_icv.dv.nthreads); }
static void show_thread_limit(char *b, size_t n) { snprintf(b, n, "%d", rt_icv.thread_limit); }
static void show_levels(char *b, size_t n) { snprintf(b, n, "%d", rt_icv.max_active_levels); }
static void show_tpn(char *b, size_t n) { snprintf(b, n, "%d", rt_icv.threads_per_node); }

static void show_schedule(char *b, size_t n)
{
    static const char *const kinds[] = {
        [OMPDSM_SCHED_STATIC] = "STATIC", [OMPDSM_SCHED_DYNAMIC] = "DYNAMIC",
        [OMPDSM_SCHED_GUIDED] = "GUIDED", [OMPDSM_SCHED_AUTO] = "AUTO",
        [OMPDSM_SCHED_PROFILED] = "PROFILED",
    };
    int k = rt_icv.dv.sched_kind;
    const char *name = k >= 0 && k < (int)OMPDSM_ARRAY_LEN(kinds) && kinds[k]
                           ? kinds[k] : "STATIC";
    if (rt_icv.dv.sched_chunk > 0)
        snprintf(b, n, "%s,%lld", name, rt_icv.dv.sched_chunk);
    else
        snprintf(b, n, "%s", name);
}

static void show_stacksize(char *b, size_t n)
{
    if (rt_icv.stacksize)
        snprintf(b, n, "%lluB", rt_icv.stacksize);
    else
        snprintf(b, n, "0");
}

/* A size with the largest suffix that divides it, as the variables accept
 * it (16G, 64K). */
static void show_size(char *b, size_t n, uint64_t v)
{
    static const char suffix[] = "BKMGT";
    int k = 0;
    while (k < 4 && v && !(v & 1023)) {
        v >>= 10;
        k++;
    }
    if (k)
        snprintf(b, n, "%llu%c", (unsigned long long)v, suffix[k]);
    else
        snprintf(b, n, "%llu", (unsigned long long)v);
}

static void show_transport(char *b, size_t n) { snprintf(b, n, "%s", comm_transport_name()); }
static void show_protocol(char *b, size_t n) { snprintf(b, n, "%s", dsm_protocol_name()); }
static void show_page(char *b, size_t n) { show_size(b, n, dsm_page_size()); }
static void show_heap_size(char *b, size_t n) { show_size(b, n, dsm_heap_size()); }
static void show_heap_base(char *b, size_t n) { snprintf(b, n, "%p", dsm_heap_base()); }
static void show_block_min(char *b, size_t n)
{
    const char *e = getenv("OMPDSM_HOME_BLOCK_MIN");
    if (e && *e)
        snprintf(b, n, "%s", e);
    else
        show_size(b, n, dsm_page_size() + 1);
}

/* ---- the table ---- */

enum rt_env_reader {
    RT_ENV_OPENMP, /* an OpenMP variable (runtime/env.c) */
    RT_ENV_NODE,   /* an ompdsm setting read by every node at start */
    RT_ENV_SET,    /* set by the launcher for each node, not by users */
    RT_ENV_OMPCC,  /* read by the ompcc command, not by programs */
    RT_ENV_LAUNCH, /* read by ompdsmrun, not by the nodes */
    RT_ENV_TEST,   /* read by the test tools (tests/cluster/netns.sh) */
};

struct rt_env_var {
    const char *name;
    int reader;        /* enum rt_env_reader */
    const char *def;   /* default, briefly */
    const char *kind;  /* what it accepts */
    const char *doc;   /* one line */
    /* The value in force, when the layer that reads it can say; without
     * it OMP_DISPLAY_ENV shows the variable as set, or its default. */
    void (*show)(char *buf, size_t len);
};

static const struct rt_env_var vars[] = {
    {"OMP_DYNAMIC", RT_ENV_OPENMP, "false", "bool",
     "accepted and reported; team sizes are never adjusted", show_dynamic},
    {"OMP_NESTED", RT_ENV_OPENMP, "false", "bool",
     "true: nested regions may have more than one thread at every level",
     show_nested},
    {"OMP_NUM_THREADS", RT_ENV_OPENMP, "nodes x threads per node",
     "count[,count...]", "team size of parallel regions", show_nthreads},
    {"OMP_SCHEDULE", RT_ENV_OPENMP, "static", "kind[,chunk]",
     "schedule of schedule(runtime) loops", show_schedule},
    {"OMP_STACKSIZE", RT_ENV_OPENMP, "system", "size (K, M, G; kilobytes)",
     "stack size of runtime-created threads", show_stacksize},
    {"OMP_THREAD_LIMIT", RT_ENV_OPENMP, "nodes x 256", "count",
     "upper bound on team sizes", show_thread_limit},
    {"OMP_MAX_ACTIVE_LEVELS", RT_ENV_OPENMP, "1", "count",
     "nested regions with more than one thread; 0: every region has one",
     show_levels},
    {"OMP_WAIT_POLICY", RT_ENV_OPENMP, "unset", "active|passive",
     "active: waits spin up to 100 ms before they sleep; passive: they "
     "sleep at once", NULL},
    {"OMP_DISPLAY_ENV", RT_ENV_OPENMP, "false", "true|false|verbose",
     "print the settings in force at start (node 0, stderr)", NULL},

    {"OMPDSM_TRANSPORT", RT_ENV_NODE, "auto", "auto|shm|tcp|verbs",
     "how nodes reach each other", show_transport},
    {"OMPDSM_HEAP_SIZE", RT_ENV_NODE, "16G", "size", "size of the shared heap",
     show_heap_size},
    {"OMPDSM_HEAP_CHECK", RT_ENV_NODE, "0", "bool",
     "guard words after shared blocks, checked at free and barriers", NULL},
    {"OMPDSM_HEAP_BASE", RT_ENV_NODE, "0x200000000000", "address",
     "virtual address of the shared heap", show_heap_base},
    {"OMPDSM_PAGE_SIZE", RT_ENV_NODE, "64K", "power-of-two size",
     "coherence unit", show_page},
    {"OMPDSM_PROTOCOL", RT_ENV_NODE, "invalidate", "invalidate|update",
     "what an acquire does to stale copies", show_protocol},
    {"OMPDSM_DIFF_GRANULE", RT_ENV_NODE, "type", "type|byte",
     "diff granule of large globals", NULL},
    {"OMPDSM_HOME_EXCLUSIVE", RT_ENV_NODE, "on", "on|off",
     "home pages no other node fetched stay writable across releases", NULL},
    {"OMPDSM_KEEP_WRITABLE", RT_ENV_NODE, "on", "on|off",
     "pages written in every interval stay writable across barriers", NULL},
    {"OMPDSM_LOCK_KEEP", RT_ENV_NODE, "on", "on|off",
     "nodes of one thread keep pages written under locks writable, and "
     "refetch them under their writes", NULL},
    {"OMPDSM_KEEP_GAP", RT_ENV_NODE, "0", "0..15",
     "barriers a written page stays kept without a write (0: measured)", NULL},
    {"OMPDSM_WD", RT_ENV_NODE, "auto", "auto|on|off|check",
     "how writes to the heap are found: the compiler pass's marks (auto: when "
     "every unit has them) or page protection", NULL},
    {"OMPDSM_PUSH", RT_ENV_NODE, "off", "on|off",
     "with write detection: writers push their bytes to the pages' stable "
     "readers", NULL},
    {"OMPDSM_LOG_PUSH", RT_ENV_NODE, "auto", "auto|on|off",
     "releases push their log positions to peers instead of acquires "
     "getting them (auto: peers over tcp)", NULL},
    {"OMPDSM_ADAPTIVE_UPDATE", RT_ENV_NODE, "on", "on|off",
     "refetch at the acquire the copies faulted back after invalidation", NULL},
    {"OMPDSM_LOCK_CACHE", RT_ENV_NODE, "on", "on|off",
     "a released lock stays at its node until another node asks", NULL},
    {"OMPDSM_LOCK_MSG", RT_ENV_NODE, "auto", "auto|on|off",
     "a lock held or managed by another node is asked for with one message "
     "to that node instead of remote atomics (auto: peers over tcp)", NULL},
    {"OMPDSM_LAZY_RELEASE", RT_ENV_NODE, "on", "on|off",
     "an unlock that keeps its lock cached releases only when another node takes it", NULL},
    {"OMPDSM_LOCK_LOCAL", RT_ENV_NODE, "16", "0..4294967295",
     "lock hand-overs in a row between a node's threads while another node waits (0: off)", NULL},
    {"OMPDSM_READAHEAD", RT_ENV_NODE, "3", "0..255",
     "invalid pages fetched after a read fault", NULL},
    {"OMPDSM_HOME_POLICY", RT_ENV_NODE, "block", "block|first",
     "initial homes of large objects", NULL},
    {"OMPDSM_HOME_BLOCK_MIN", RT_ENV_NODE, "page size + 1", "size",
     "size from which objects are block-distributed", show_block_min},
    {"OMPDSM_MIGRATION", RT_ENV_NODE, "off", "off|faults|diffs",
     "moves page homes to their main users at barriers", NULL},
    {"OMPDSM_MIGRATION_MIN", RT_ENV_NODE, "2", "count",
     "faults (or KiB of diffs) before a page may move", NULL},
    {"OMPDSM_MIGRATION_STREAK", RT_ENV_NODE, "1", "1..255",
     "intervals in a row a page's new home must be its sole user", NULL},
    {"OMPDSM_MIGRATION_FORCE", RT_ENV_NODE, "0", "barriers",
     "tests: every page used moves home every N barriers", NULL},
    {"OMPDSM_STATS", RT_ENV_NODE, "unset", "1|file.json",
     "per-node statistics at exit", NULL},
    {"OMPDSM_TRACE", RT_ENV_NODE, "unset", "comm,coll,dsm,fault,lock,rt,sched,boot|all",
     "debug trace on stderr", NULL},
    {"OMPDSM_DEADLOCK_S", RT_ENV_NODE, "5", "seconds (0: off)",
     "report a deadlock once every thread waited this long, unchanged", NULL},
    {"OMPDSM_MONITOR", RT_ENV_NODE, "unset", "1",
     "send counters once a second (set by ompdsmrun --monitor)", NULL},
    {"OMPDSM_SPIN_US", RT_ENV_NODE, "50, or 2 with more local nodes than cores",
     "microseconds", "spin before sleeping on a futex", NULL},
    {"OMPDSM_TREE_FANOUT", RT_ENV_NODE, "4", "2..16",
     "fan-out of barrier and broadcast trees", NULL},
    {"OMPDSM_IFACE", RT_ENV_NODE, "the route toward the launcher", "name|a.b.c.d/len",
     "network the tcp transport uses between hosts", NULL},
    {"OMPDSM_TCP_ADDR", RT_ENV_NODE, "unset", "IPv4",
     "address the tcp transport listens on; wins over OMPDSM_IFACE", NULL},
    {"OMPDSM_TCP_TIMEOUT_S", RT_ENV_NODE, "30", "2..3600",
     "seconds a tcp peer may leave data unacknowledged or keepalives "
     "unanswered before the network to it counts as failed", NULL},
    {"OMPDSM_IB_DEVICE", RT_ENV_NODE, "the first with an active port", "name",
     "RDMA device of the verbs transport (ibv_devices)", NULL},
    {"OMPDSM_IB_PORT", RT_ENV_NODE, "1", "1..255",
     "port of that device", NULL},
    {"OMPDSM_IB_GID_INDEX", RT_ENV_NODE, "0", "0..255",
     "GID index (RoCE; InfiniBand when set)", NULL},
    {"OMPDSM_IB_REG", RT_ENV_NODE, "auto", "auto|chunks|whole",
     "how the verbs transport registers regions (on demand, chunks, pinned whole)", NULL},
    {"OMPDSM_IB_CHUNK", RT_ENV_NODE, "64M", "4K..1T, a power of two",
     "chunk registered at a time without on-demand paging", NULL},
    {"OMPDSM_PROFILED", RT_ENV_NODE, "unset", "file:line=chunk,eval_size,eval_skip;...",
     "per-loop overrides of profiled loops (ompdsm-tune)", NULL},
    {"OMPDSM_PROFILED_GAIN", RT_ENV_NODE, "0.05", "fraction",
     "predicted gain a profiled loop needs to re-partition", NULL},
    {"OMPDSM_PROFILED_STEP", RT_ENV_NODE, "1", "fraction in (0, 1]",
     "how far a re-partition moves towards the measured speeds", NULL},
    {"OMPDSM_PROFILED_DRIFT", RT_ENV_NODE, "0.2", "fraction",
     "drift from the prediction that makes a profiled loop measure again", NULL},
    {"OMPDSM_PROFILED_SHARE", RT_ENV_NODE, "on", "on|off",
     "profiled loops with the same bounds share one partition", NULL},
    {"OMPDSM_PROFILED_CHECK", RT_ENV_NODE, "0.25", "fraction in [0, 1)",
     "when a measuring execution re-measures and re-splits its rest (0: never)", NULL},
    {"OMPDSM_PROFILED_RESERVE_MS", RT_ENV_NODE, "10", "milliseconds",
     "own work a thread runs after its checkpoint record while the others' come (0: wait)", NULL},
    {"OMPDSM_PROFILED_STALLS", RT_ENV_NODE, "on", "on|off",
     "profiled loops count a thread's run delay outside the loop body in its time", NULL},
    {"OMPDSM_THREADS_PER_NODE", RT_ENV_NODE, "1", "1..256|auto",
     "OpenMP threads in each node process (auto: CPUs of its affinity mask)",
     show_tpn},
    {"OMPDSM_TASK_QUEUE", RT_ENV_NODE, "16", "0..256",
     "queued tasks per node beyond which new tasks run undeferred", NULL},
    {"OMPDSM_TASK_TINY_US", RT_ENV_NODE, "20", "microseconds",
     "tasks measured shorter run undeferred unless the queue is empty", NULL},

    {"OMPDSM_RANK", RT_ENV_SET, "", "", "this node's number", NULL},
    {"OMPDSM_SIZE", RT_ENV_SET, "", "", "number of nodes", NULL},
    {"OMPDSM_LOCAL_RANK", RT_ENV_SET, "", "", "this node's number on its host", NULL},
    {"OMPDSM_LOCAL_SIZE", RT_ENV_SET, "", "", "number of nodes on this host", NULL},
    {"OMPDSM_BOOT", RT_ENV_SET, "", "host:port", "the launcher's bootstrap socket", NULL},
    {"OMPDSM_JOBID", RT_ENV_SET, "", "", "names the job", NULL},
    {"OMPDSM_JOB_KEY", RT_ENV_SET, "", "64 hex digits",
     "the job's secret; the node removes it from its environment at start",
     NULL},
    {"OMPDSM_BIND_THREADS", RT_ENV_SET, "0", "0|1",
     "1: the node is bound to one CPU per thread; each thread pins itself "
     "to one", NULL},
    {"OMPDSM_REEXEC", RT_ENV_SET, "", "1",
     "a node re-executed itself without address randomisation", NULL},

    {"OMPDSM_RSH", RT_ENV_LAUNCH, "ssh -o BatchMode=yes -o ConnectTimeout=10", "command",
     "starts the agent on another host", NULL},
    {"OMPDSM_LAUNCH_FANOUT", RT_ENV_LAUNCH, "32", "1..4096",
     "fan-out of the tree of per-host agents", NULL},

    {"OMPDSM_NETNS_PREFIX", RT_ENV_TEST, "", "prefix",
     "the namespace hosts tests/cluster/netns.sh rsh runs in", NULL},
    {"OMPDSM_NETNS_HIDE", RT_ENV_TEST, "", "HOST:DIR",
     "netns.sh rsh hides DIR on HOST", NULL},
    {"OMPDSM_NETNS_SWAP", RT_ENV_TEST, "", "HOST:FILE:OTHER",
     "netns.sh rsh HOST runs its command with OTHER mounted over FILE", NULL},

    {"OMPDSM_CC", RT_ENV_OMPCC, "clang-19", "command", "ompcc's backend compiler", NULL},
    {"OMPDSM_LIBDIR", RT_ENV_OMPCC, "where ompcc found libompdsm", "directory",
     "libompdsm.so ompcc links against", NULL},
    {"OMPDSM_WD_COMPILE", RT_ENV_OMPCC, "on", "on|off",
     "ompcc compiles with the write-detection pass", NULL},
};

/* ---- OMP_DISPLAY_ENV ---- */

static void display(FILE *f, const struct rt_env_var *v)
{
    char buf[128];
    const char *val = buf;
    if (v->show) {
        v->show(buf, sizeof buf);
    } else {
        const char *e = getenv(v->name);
        val = e && *e ? e : v->def;
    }
    fprintf(f, "  %s = '%s'\n", v->name, val);
}

void rt_display_env(void)
{
    static const char *const modes[] = {"false", "true", "verbose"};
    int mode = ompdsm_env_choice("OMP_DISPLAY_ENV", modes, 3, 0);
    if (!mode || comm_rank() != 0)
        return;
    FILE *f = stderr;
    /* The OpenMP version ompcc defines as _OPENMP (3.0). */
    fprintf(f, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '200805'\n");
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(vars); i++)
        if (vars[i].reader == RT_ENV_OPENMP && vars[i].show)
            display(f, &vars[i]);
    /* verbose: the implementation's own settings too (OpenMP leaves their
     * choice to the implementation, as libgomp's GOMP_* lines). */
    if (mode == 2)
        for (size_t i = 0; i < OMPDSM_ARRAY_LEN(vars); i++)
            if (vars[i].reader == RT_ENV_NODE)
                display(f, &vars[i]);
    fprintf(f, "OPENMP DISPLAY ENVIRONMENT END\n");
    fflush(f);
}
