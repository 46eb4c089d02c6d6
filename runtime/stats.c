/* runtime/stats.c - the runtime's counters (rt_st, which the constructs
 * add to) and the per-node statistics report at the end of a job:
 * OMPDSM_STATS=1 prints a table on stderr (node 0 gathers every node's
 * row), OMPDSM_STATS=<file>.json writes them as JSON for plots.  Both end
 * with the profiled loops: per loop site, its executions, the speeds and
 * vector every node shares, and each node's time per execution. */
#include "rt.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rt_stats rt_st;

struct row {
    struct rt_stats rt;
    struct dsm_stats dsm;
    struct comm_stats comm;
};

/* Columns: name, which struct, offset, unit divisor for times. */
#define COL(part, field) {#part "_" #field, offsetof(struct row, part) + offsetof(__typeof__(((struct row *)0)->part), field)}
static const struct {
    const char *name;
    size_t off;
} cols[] = {
    COL(dsm, read_faults), COL(dsm, write_faults), COL(dsm, pages_fetched),
    COL(dsm, twins), COL(dsm, exclusive), COL(dsm, diffs), COL(dsm, diff_bytes), COL(dsm, diff_runs),
    COL(dsm, notices_sent), COL(dsm, notices_applied), COL(dsm, invalidations),
    COL(dsm, updates), COL(dsm, barriers), COL(dsm, forks),
    COL(dsm, lock_acquires), COL(dsm, lock_cached), COL(dsm, releases), COL(dsm, acquires),
    COL(dsm, flushes), COL(dsm, atomics), COL(dsm, allocs), COL(dsm, frees),
    COL(dsm, alloc_bytes), COL(dsm, remote_faults), COL(dsm, migrations),
    COL(dsm, migrate_bytes), COL(dsm, migrate_barriers), COL(dsm, protects), COL(dsm, kept), COL(dsm, written_ahead), COL(dsm, lazy_unlocks), COL(dsm, lazy_requests), COL(dsm, lazy_served), COL(dsm, lazy_covered), COL(dsm, lazy_helper_served), COL(dsm, log_reads), COL(dsm, log_mirrored), COL(dsm, log_pushed), COL(dsm, lock_local_handoffs), COL(dsm, flush_idle), COL(dsm, flush_yields), COL(dsm, pushes), COL(dsm, push_bytes), COL(dsm, snap_updates), COL(dsm, snap_bytes), COL(dsm, lock_msgs), COL(dsm, lock_kept), COL(dsm, rebased), COL(dsm, fault_ns), COL(dsm, barrier_ns),
    COL(dsm, lock_ns),
    COL(comm, puts), COL(comm, put_bytes), COL(comm, gets), COL(comm, get_bytes),
    COL(comm, atomics), COL(comm, notifies), COL(comm, fences),
    COL(comm, sends), COL(comm, send_bytes), COL(comm, wait_ns), COL(comm, sleeps),
    COL(rt, regions), COL(rt, team_barriers), COL(rt, loops), COL(rt, singles),
    COL(rt, criticals), COL(rt, region_ns),
    COL(rt, tasks_created), COL(rt, tasks_deferred), COL(rt, tasks_local),
    COL(rt, tasks_stolen), COL(rt, tasks_remote), COL(rt, ws_gate_waits),
};

static uint64_t get(const struct row *r, size_t i)
{
    uint64_t v;
    memcpy(&v, (const char *)r + cols[i].off, 8);
    return v;
}

/* The table into buf (at most cap bytes, NUL-terminated); ids[r] names
 * the node of rows[r].  Only snprintf: the partial report formats it in a
 * signal handler. */
static size_t format_table(char *buf, size_t cap, const char *title,
                           const struct row *rows, const int *ids, int n)
{
    size_t len = 0;
    int w = (int)strlen("counter");
#define PUT(...)                                                             \
    do {                                                                     \
        if (len < cap) {                                                     \
            int k_ = snprintf(buf + len, cap - len, __VA_ARGS__);            \
            len += k_ > 0 ? (size_t)k_ : 0;                                  \
        }                                                                    \
    } while (0)
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(cols); i++)
        if ((int)strlen(cols[i].name) > w)
            w = (int)strlen(cols[i].name);
    PUT("%s\n", title);
    /* every column 14 wide after one blank, as the numbers below */
    PUT("%-*s", w, "counter");
    for (int r = 0; r < n; r++) {
        char nm[24];
        snprintf(nm, sizeof nm, "node%d", ids[r]);
        PUT(" %14s", nm);
    }
    if (n > 1)
        PUT(" %14s", "total");
    PUT("\n");
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(cols); i++) {
        uint64_t tot = 0;
        size_t nl = strlen(cols[i].name);
        int ns = nl > 3 && !strcmp(cols[i].name + nl - 3, "_ns");
        char nm[40];
        snprintf(nm, sizeof nm, ns ? "%.*s_ms" : "%.*s", (int)(ns ? nl - 3 : nl),
                 cols[i].name);
        PUT("%-*s", w, nm);
        for (int r = 0; r < n; r++) {
            uint64_t v = get(&rows[r], i);
            tot += v;
            if (ns)
                PUT(" %14.3f", v / 1e6);
            else
                PUT(" %14llu", (unsigned long long)v);
        }
        if (n > 1 && ns)
            PUT(" %14.3f", tot / 1e6);
        else if (n > 1)
            PUT(" %14llu", (unsigned long long)tot);
        PUT("\n");
    }
#undef PUT
    return len < cap ? len : cap - 1;
}

/* What each node paid per barrier interval (barriers and forks): the
 * counts the coherence steady state is judged by. */
static void print_per_barrier(FILE *f, const struct row *rows, int n)
{
    static const char *const what[] = {"faults", "protection changes",
                                       "sleeps (a wake-up each)"};
    fprintf(f, "per barrier interval        ");
    for (int r = 0; r < n; r++)
        fprintf(f, " %9s%-5d", "node", r);
    fprintf(f, "\n");
    for (int k = 0; k < 3; k++) {
        fprintf(f, "  %-26s", what[k]);
        for (int r = 0; r < n; r++) {
            const struct row *x = &rows[r];
            uint64_t iv = x->dsm.barriers + x->dsm.forks;
            uint64_t v = k == 0 ? x->dsm.read_faults + x->dsm.write_faults
                         : k == 1 ? x->dsm.protects
                                  : x->comm.sleeps;
            fprintf(f, " %14.3f", iv ? (double)v / (double)iv : 0.0);
        }
        fprintf(f, "\n");
    }
}

static void print_table(FILE *f, const struct row *rows, int n)
{
    char title[320];
    size_t cap = 256 + OMPDSM_ARRAY_LEN(cols) * (48 + 15 * ((size_t)n + 1));
    char *buf = malloc(cap);
    int *ids = malloc((size_t)n * sizeof *ids);
    if (!buf || !ids) {
        free(buf);
        free(ids);
        return;
    }
    for (int r = 0; r < n; r++)
        ids[r] = r;
    struct dsm_costs c;
    dsm_machine_costs(&c);
    snprintf(title, sizeof title, "ompdsm statistics (%d node%s, transport "
             "%s, protocol %s, write detection %s)\nthis machine at the start: "
             "a fault %.1f us, a protection change %.1f us, a page copy %.1f us",
             n, n == 1 ? "" : "s", comm_transport_name(), dsm_protocol_name(),
             dsm_wd_mode_name(), c.fault_ns / 1e3, c.prot_ns / 1e3, c.copy_ns / 1e3);
    fwrite(buf, 1, format_table(buf, cap, title, rows, ids, n), f);
    print_per_barrier(f, rows, n);
    free(buf);
    free(ids);
}

/* ---- the partial report of a failed job ---- */

/* A node ended by a signal (a segfault, or the SIGTERM with which
 * ompdsmrun ends a failed or timed-out job) cannot gather the others'
 * rows: it prints its own column, marked partial, so that what was
 * counted is not lost. */
static volatile sig_atomic_t partial_done;

static void partial_report(int sig)
{
    static char buf[8192];
    static struct row mine;
    char title[200];
    int id = comm_rank();
    if (!partial_done) {
        partial_done = 1;
        memcpy(&mine.rt, &rt_st, sizeof rt_st);
        dsm_stats_get(&mine.dsm);
        comm_stats_get(&mine.comm);
        snprintf(title, sizeof title, "ompdsm statistics (partial: node %d "
                 "was ended by %s before the job's end; its own counters "
                 "only)", id,
                 sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS"
                 : "SIGTERM (the job failed or reached its --timeout)");
        size_t len = format_table(buf, sizeof buf, title, &mine, &id, 1);
        for (size_t off = 0; off < len;) {
            ssize_t k = write(2, buf + off, len - off);
            if (k <= 0)
                break;
            off += (size_t)k;
        }
    }
    /* then what the signal would have done: returning from the SIGSEGV
     * handler runs the faulting instruction again, now fatally */
    signal(sig, SIG_DFL);
    if (sig != SIGSEGV && sig != SIGBUS)
        raise(sig);
}

void rt_stats_install(void)
{
    const char *v = getenv("OMPDSM_STATS");
    struct sigaction sa;
    if (!v || !*v || !strcmp(v, "0"))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = partial_report;
    sigemptyset(&sa.sa_mask);
    /* installed before the DSM's own SIGSEGV handler, which passes on the
     * faults that are not its own */
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* ---- profiled loops ---- */

/* What node 0 does not know of another node's copy of a site. */
struct prof_wire {
    uint64_t key;
    uint64_t nhist, measure_ns, cycles, instructions;
    uint64_t hist_ns[RT_PROF_HIST];
    uint64_t ck_waits, ck_wait_ns;
};

static uint64_t site_key(const OMPDSM_loop_site *s)
{
    uint64_t h = 1469598103934665603ull;
    const char *parts[2] = {s->file ? s->file : "", s->func ? s->func : ""};
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (h ^ (uint64_t)(unsigned)s->line) * 1099511628211ull;
}

/* All nodes' wires for all sites: wires[node * nsites + i], nsites being
 * the largest count on any node; 0 or -errno. */
static int prof_gather(struct prof_wire **out, int *nsites_out)
{
    int mine = 0;
    for (struct rt_prof_site *ps = rt_prof_sites; ps; ps = ps->next)
        mine++;
    int64_t cnt = mine;
    int n = comm_size();
    if (n > 1 && comm_allreduce(COMM_WORLD, &cnt, 1, COMM_INT64, COMM_MAX) < 0)
        return -EIO;
    int ns = (int)cnt;
    *nsites_out = ns;
    *out = NULL;
    if (!ns)
        return 0;
    struct prof_wire *w = calloc((size_t)ns, sizeof *w);
    struct prof_wire *all = calloc((size_t)ns * (size_t)n, sizeof *all);
    if (!w || !all) {
        free(w);
        free(all);
        return -ENOMEM;
    }
    int i = 0;
    for (struct rt_prof_site *ps = rt_prof_sites; ps; ps = ps->next, i++) {
        w[i].key = site_key(ps->site);
        w[i].nhist = ps->nhist;
        w[i].measure_ns = ps->measure_ns;
        w[i].ck_waits = ps->ck_waits;
        w[i].ck_wait_ns = ps->ck_wait_ns;
        w[i].cycles = ps->cycles;
        w[i].instructions = ps->instructions;
        memcpy(w[i].hist_ns, ps->hist_ns, sizeof ps->hist_ns);
    }
    int rc = 0;
    if (n > 1)
        rc = comm_allgather(COMM_WORLD, w, (size_t)ns * sizeof *w, all) < 0
                 ? -EIO : 0;
    else
        memcpy(all, w, (size_t)ns * sizeof *w);
    free(w);
    if (rc) {
        free(all);
        return rc;
    }
    *out = all;
    return 0;
}

static const struct prof_wire *wire_of(const struct prof_wire *all, int ns,
                                       int node, uint64_t key)
{
    for (int i = 0; i < ns; i++)
        if (all[node * ns + i].key == key)
            return &all[node * ns + i];
    return NULL;
}

/* Node t's time for execution e, or -1 when it has none. */
static double exec_ns(const struct prof_wire *all, int ns, int t, uint64_t key,
                      uint64_t e)
{
    const struct prof_wire *w = wire_of(all, ns, t, key);
    return w && e < w->nhist ? (double)w->hist_ns[e] : -1;
}

/* max / mean of the team's times for execution e. */
static double imbalance(const struct prof_wire *all, int ns,
                        const struct rt_prof_site *ps, uint64_t key, uint64_t e)
{
    double mx = 0, sum = 0;
    int k = 0;
    for (int t = 0; t < ps->nthreads; t++) {
        double v = exec_ns(all, ns, t, key, e);
        if (v < 0)
            continue;
        mx = v > mx ? v : mx;
        sum += v;
        k++;
    }
    return k && sum > 0 ? mx / (sum / k) : 1;
}

static void print_prof(FILE *f, const struct prof_wire *all, int ns)
{
    if (!rt_prof_sites)
        return;
    fprintf(f, "\nprofiled loops (speeds in iterations per ms; times in ms; "
               "imbalance = max / mean of the nodes' times)\n");
    if (!rt_prof_counters)
        fprintf(f, "hardware counters: none (%s)\n", rt_prof_counters_why);
    for (struct rt_prof_site *ps = rt_prof_sites; ps; ps = ps->next) {
        uint64_t key = site_key(ps->site);
        int nt = ps->nthreads;
        fprintf(f, "%s:%d (%s): %llu executions, %llu measured, %llu "
                   "re-partitions, %llu drifts, chunk %llu\n",
                ps->site->file, ps->site->line,
                ps->site->func ? ps->site->func : "?",
                (unsigned long long)ps->executions,
                (unsigned long long)ps->measurements,
                (unsigned long long)ps->repartitions,
                (unsigned long long)ps->drifts,
                (unsigned long long)ps->chunk);
        if (ps->checks)
            fprintf(f, "  %llu checkpoints, %llu of them re-split the rest "
                       "(OMPDSM_PROFILED_CHECK)\n",
                    (unsigned long long)ps->checks,
                    (unsigned long long)ps->check_splits);
        if (ps->acc_splits || ps->stall_ns || ps->reverts)
            fprintf(f, "  %llu re-partitions by the executions' sums, %llu "
                       "undone by the executions' time; the team's stalls "
                       "outside the loop bodies %.1f ms "
                       "(OMPDSM_PROFILED_STALLS)\n",
                    (unsigned long long)ps->acc_splits,
                    (unsigned long long)ps->reverts,
                    (double)ps->stall_ns / 1e6);
        if (ps->brief)
            fprintf(f, "  (its last measurement took under 0.1 ms on some "
                       "node: not used, static's split; raise eval_size)\n");
        fprintf(f, "  %-12s", "node");
        for (int t = 0; t < nt; t++)
            fprintf(f, " %12d", t);
        fprintf(f, "\n  %-12s", "speed");
        for (int t = 0; t < nt; t++)
            fprintf(f, " %12.1f", ps->speed[t] * 1e6);
        fprintf(f, "\n  %-12s", "vector");
        for (int t = 0; t < nt; t++)
            fprintf(f, " %12llu", (unsigned long long)ps->vec[t]);
        fprintf(f, "\n  %-12s", "measure_ms");
        for (int t = 0; t < nt; t++) {
            const struct prof_wire *w = wire_of(all, ns, t, key);
            fprintf(f, " %12.3f", w ? w->measure_ns / 1e6 : 0.0);
        }
        if (ps->checks) {
            fprintf(f, "\n  %-12s", "ck_waits");
            for (int t = 0; t < nt; t++) {
                const struct prof_wire *w = wire_of(all, ns, t, key);
                fprintf(f, " %12llu", w ? (unsigned long long)w->ck_waits : 0ull);
            }
            fprintf(f, "\n  %-12s", "ck_wait_ms");
            for (int t = 0; t < nt; t++) {
                const struct prof_wire *w = wire_of(all, ns, t, key);
                fprintf(f, " %12.3f", w ? w->ck_wait_ns / 1e6 : 0.0);
            }
        }
        if (rt_prof_counters) {
            fprintf(f, "\n  %-12s", "cycles");
            for (int t = 0; t < nt; t++) {
                const struct prof_wire *w = wire_of(all, ns, t, key);
                fprintf(f, " %12llu", w ? (unsigned long long)w->cycles : 0ull);
            }
            fprintf(f, "\n  %-12s", "instructions");
            for (int t = 0; t < nt; t++) {
                const struct prof_wire *w = wire_of(all, ns, t, key);
                fprintf(f, " %12llu",
                        w ? (unsigned long long)w->instructions : 0ull);
            }
        }
        fprintf(f, "\n");
        /* The first and last eight executions. */
        for (uint64_t e = 0; e < ps->nhist; e++) {
            if (ps->nhist > 16 && e == 8) {
                fprintf(f, "  ... %llu more executions (all in the JSON)\n",
                        (unsigned long long)(ps->nhist - 16));
                e = ps->nhist - 8;
            }
            char lab[32];
            snprintf(lab, sizeof lab, "exec %llu%s", (unsigned long long)e + 1,
                     ps->hist_measured[e] ? " m" : "");
            fprintf(f, "  %-12s", lab);
            for (int t = 0; t < nt; t++)
                fprintf(f, " %12.3f", exec_ns(all, ns, t, key, e) / 1e6);
            fprintf(f, "   imbalance %.3f\n", imbalance(all, ns, ps, key, e));
        }
        if (ps->executions > ps->nhist)
            fprintf(f, "  (times kept for the first %d executions)\n",
                    RT_PROF_HIST);
    }
}

static void json_prof(FILE *f, const struct prof_wire *all, int ns)
{
    fprintf(f, ",\n  \"hardware_counters\": %s", rt_prof_counters ? "true" : "false");
    fprintf(f, ",\n  \"hardware_counters_note\": \"%s\"", rt_prof_counters_why);
    fprintf(f, ",\n  \"profiled_loops\": [");
    const char *sep = "\n";
    for (struct rt_prof_site *ps = rt_prof_sites; ps; ps = ps->next) {
        uint64_t key = site_key(ps->site);
        int nt = ps->nthreads;
        fprintf(f, "%s    {\"file\": \"", sep);
        for (const char *p = ps->site->file; p && *p; p++)
            fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        fprintf(f, "\", \"line\": %d, \"func\": \"%s\", \"nodes\": %d, "
                   "\"executions\": %llu, \"measurements\": %llu, "
                   "\"repartitions\": %llu, \"drifts\": %llu, "
                   "\"checkpoints\": %llu, \"checkpoint_splits\": %llu, "
                   "\"chunk\": %llu, \"brief_measurement\": %s, "
                   "\"acc_splits\": %llu, \"reverts\": %llu, "
                   "\"stall_ms\": %.3f",
                ps->site->line, ps->site->func ? ps->site->func : "", nt,
                (unsigned long long)ps->executions,
                (unsigned long long)ps->measurements,
                (unsigned long long)ps->repartitions,
                (unsigned long long)ps->drifts,
                (unsigned long long)ps->checks,
                (unsigned long long)ps->check_splits,
                (unsigned long long)ps->chunk, ps->brief ? "true" : "false",
                (unsigned long long)ps->acc_splits,
                (unsigned long long)ps->reverts,
                (double)ps->stall_ns / 1e6);
        fprintf(f, ",\n     \"speeds_per_ms\": [");
        for (int t = 0; t < nt; t++)
            fprintf(f, "%s%.6g", t ? ", " : "", ps->speed[t] * 1e6);
        fprintf(f, "], \"weights\": [");
        for (int t = 0; t < nt; t++)
            fprintf(f, "%s%.6g", t ? ", " : "", ps->weight[t]);
        fprintf(f, "], \"vector\": [");
        for (int t = 0; t < nt; t++)
            fprintf(f, "%s%llu", t ? ", " : "", (unsigned long long)ps->vec[t]);
        fprintf(f, "],\n     \"measure_ns\": [");
        for (int t = 0; t < nt; t++) {
            const struct prof_wire *w = wire_of(all, ns, t, key);
            fprintf(f, "%s%llu", t ? ", " : "",
                    w ? (unsigned long long)w->measure_ns : 0ull);
        }
        fprintf(f, "], \"checkpoint_waits\": [");
        for (int t = 0; t < nt; t++) {
            const struct prof_wire *w = wire_of(all, ns, t, key);
            fprintf(f, "%s%llu", t ? ", " : "",
                    w ? (unsigned long long)w->ck_waits : 0ull);
        }
        fprintf(f, "], \"checkpoint_wait_ns\": [");
        for (int t = 0; t < nt; t++) {
            const struct prof_wire *w = wire_of(all, ns, t, key);
            fprintf(f, "%s%llu", t ? ", " : "",
                    w ? (unsigned long long)w->ck_wait_ns : 0ull);
        }
        fprintf(f, "]");
        if (rt_prof_counters) {
            fprintf(f, ", \"cycles\": [");
            for (int t = 0; t < nt; t++) {
                const struct prof_wire *w = wire_of(all, ns, t, key);
                fprintf(f, "%s%llu", t ? ", " : "",
                        w ? (unsigned long long)w->cycles : 0ull);
            }
            fprintf(f, "], \"instructions\": [");
            for (int t = 0; t < nt; t++) {
                const struct prof_wire *w = wire_of(all, ns, t, key);
                fprintf(f, "%s%llu", t ? ", " : "",
                        w ? (unsigned long long)w->instructions : 0ull);
            }
            fprintf(f, "]");
        }
        fprintf(f, ",\n     \"measured\": [");
        for (uint64_t e = 0; e < ps->nhist; e++)
            fprintf(f, "%s%d", e ? ", " : "", ps->hist_measured[e]);
        fprintf(f, "],\n     \"imbalance\": [");
        for (uint64_t e = 0; e < ps->nhist; e++)
            fprintf(f, "%s%.4f", e ? ", " : "", imbalance(all, ns, ps, key, e));
        fprintf(f, "],\n     \"times_ns\": [");
        for (int t = 0; t < nt; t++) {
            fprintf(f, "%s[", t ? ", " : "");
            for (uint64_t e = 0; e < ps->nhist; e++) {
                double v = exec_ns(all, ns, t, key, e);
                fprintf(f, "%s%.0f", e ? ", " : "", v < 0 ? 0 : v);
            }
            fprintf(f, "]");
        }
        fprintf(f, "]}");
        sep = ",\n";
    }
    fprintf(f, "\n  ]");
}

static void write_json(FILE *f, const struct row *rows, int n,
                       const struct prof_wire *prof, int ns,
                       const struct rt_thrash *th)
{
    struct dsm_costs c;
    dsm_machine_costs(&c);
    fprintf(f, "{\n  \"nodes\": %d,\n  \"transport\": \"%s\",\n"
               "  \"write_detection\": \"%s\",\n"
               "  \"machine_costs\": {\"fault_ns\": %llu, \"protect_ns\": %llu, "
               "\"page_copy_ns\": %llu},\n  \"per_node\": [\n",
            n, comm_transport_name(), dsm_wd_mode_name(),
            (unsigned long long)c.fault_ns, (unsigned long long)c.prot_ns,
            (unsigned long long)c.copy_ns);
    for (int r = 0; r < n; r++) {
        fprintf(f, "    {\"node\": %d", r);
        for (size_t i = 0; i < OMPDSM_ARRAY_LEN(cols); i++)
            fprintf(f, ", \"%s\": %llu", cols[i].name,
                    (unsigned long long)get(&rows[r], i));
        fprintf(f, "}%s\n", r + 1 < n ? "," : "");
    }
    fprintf(f, "  ]");
    json_prof(f, prof, ns);
    rt_thrash_json(f, th);
    fprintf(f, "\n}\n");
}

void rt_stats_report(void)
{
    const char *v = getenv("OMPDSM_STATS");
    if (!v || !*v || !strcmp(v, "0"))
        return;
    partial_done = 1; /* the whole report now, not a partial one */
    struct row mine;
    memset(&mine, 0, sizeof mine);
    memcpy(&mine.rt, &rt_st, sizeof rt_st);
    rt_task_stats(&mine.rt);
    dsm_stats_get(&mine.dsm);
    comm_stats_get(&mine.comm);
    int n = comm_size();
    struct row *all = calloc((size_t)n, sizeof *all);
    if (!all)
        return;
    if (n > 1) {
        if (comm_allgather(COMM_WORLD, &mine, sizeof mine, all) < 0) {
            free(all);
            return;
        }
    } else {
        all[0] = mine;
    }
    struct prof_wire *prof = NULL;
    int ns = 0;
    if (prof_gather(&prof, &ns) < 0)
        ompdsm_warn("OMPDSM_STATS: the profiled loops' times could not be "
                    "gathered");
    struct rt_thrash th;
    if (rt_thrash_gather(&th) < 0)
        ompdsm_warn("OMPDSM_STATS: the pages' faults could not be gathered");
    if (comm_rank() == 0) {
        size_t l = strlen(v);
        if (l > 5 && !strcmp(v + l - 5, ".json")) {
            FILE *f = fopen(v, "w");
            if (!f) {
                ompdsm_warn("OMPDSM_STATS: cannot write %s", v);
            } else {
                write_json(f, all, n, prof, ns, &th);
                fclose(f);
            }
        } else if (!strcmp(v, "1")) {
            fflush(stdout);
            print_table(stderr, all, n);
            print_prof(stderr, prof, ns);
            rt_thrash_print(stderr, &th);
        } else {
            ompdsm_warn("OMPDSM_STATS='%s' is not valid: use 1 or a file name "
                        "ending in .json", v);
        }
    }
    free(all);
    free(prof);
    rt_thrash_free(&th);
}
