/* runtime/stats.c - the per-node statistics report at the end of a job:
 * OMPDSM_STATS=1 prints a table on stderr (node 0 gathers every node's
 * row), OMPDSM_STATS=<file>.json writes them as JSON for plots. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    COL(dsm, lock_acquires), COL(dsm, releases), COL(dsm, acquires),
    COL(dsm, flushes), COL(dsm, atomics), COL(dsm, allocs), COL(dsm, frees),
    COL(dsm, alloc_bytes), COL(dsm, fault_ns), COL(dsm, barrier_ns),
    COL(dsm, lock_ns),
    COL(comm, puts), COL(comm, put_bytes), COL(comm, gets), COL(comm, get_bytes),
    COL(comm, atomics), COL(comm, notifies), COL(comm, fences),
    COL(comm, sends), COL(comm, send_bytes), COL(comm, wait_ns), COL(comm, sleeps),
    COL(rt, regions), COL(rt, team_barriers), COL(rt, loops), COL(rt, singles),
    COL(rt, criticals), COL(rt, region_ns),
};

static uint64_t get(const struct row *r, size_t i)
{
    uint64_t v;
    memcpy(&v, (const char *)r + cols[i].off, 8);
    return v;
}

static void print_table(FILE *f, const struct row *rows, int n)
{
    fprintf(f, "ompdsm statistics (%d node%s, transport %s, protocol %s)\n", n,
            n == 1 ? "" : "s", comm_transport_name(),
            dsm_protocol_name());
    fprintf(f, "%-16s", "counter");
    for (int r = 0; r < n; r++)
        fprintf(f, "        node%-6d", r);
    fprintf(f, " %14s\n", "total");
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(cols); i++) {
        uint64_t tot = 0;
        size_t nl = strlen(cols[i].name);
        int ns = nl > 3 && !strcmp(cols[i].name + nl - 3, "_ns");
        char nm[32];
        if (ns)
            snprintf(nm, sizeof nm, "%.*s_ms", (int)(nl - 3), cols[i].name);
        fprintf(f, "%-16s", ns ? nm : cols[i].name);
        for (int r = 0; r < n; r++) {
            uint64_t v = get(&rows[r], i);
            tot += v;
            if (ns)
                fprintf(f, " %14.3f", v / 1e6);
            else
                fprintf(f, " %14llu", (unsigned long long)v);
        }
        if (ns)
            fprintf(f, " %14.3f\n", tot / 1e6);
        else
            fprintf(f, " %14llu\n", (unsigned long long)tot);
    }
}

static void write_json(FILE *f, const struct row *rows, int n)
{
    fprintf(f, "{\n  \"nodes\": %d,\n  \"transport\": \"%s\",\n  \"per_node\": [\n",
            n, comm_transport_name());
    for (int r = 0; r < n; r++) {
        fprintf(f, "    {\"node\": %d", r);
        for (size_t i = 0; i < OMPDSM_ARRAY_LEN(cols); i++)
            fprintf(f, ", \"%s\": %llu", cols[i].name,
                    (unsigned long long)get(&rows[r], i));
        fprintf(f, "}%s\n", r + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

void rt_stats_report(void)
{
    const char *v = getenv("OMPDSM_STATS");
    if (!v || !*v || !strcmp(v, "0"))
        return;
    struct row mine;
    memset(&mine, 0, sizeof mine);
    memcpy(&mine.rt, &rt_st, sizeof rt_st);
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
    if (comm_rank() == 0) {
        size_t l = strlen(v);
        if (l > 5 && !strcmp(v + l - 5, ".json")) {
            FILE *f = fopen(v, "w");
            if (!f) {
                ompdsm_warn("OMPDSM_STATS: cannot write %s", v);
            } else {
                write_json(f, all, n);
                fclose(f);
            }
        } else if (!strcmp(v, "1")) {
            fflush(stdout);
            print_table(stderr, all, n);
        } else {
            ompdsm_warn("OMPDSM_STATS='%s' is not valid: use 1 or a file name "
                        "ending in .json", v);
        }
    }
    free(all);
}
