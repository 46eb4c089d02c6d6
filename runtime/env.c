/* runtime/env.c - the OpenMP environment variables, parsed strictly once
 * at start into the internal control variables; a bad value is one clear
 * message naming the variable and what it accepts. */
#include "rt.h"

#include <ctype.h>
#include <sched.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rt_icv rt_icv;

int rt_parse_schedule(const char *s, int *kind, long long *chunk)
{
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {
        {"static", OMPDSM_SCHED_STATIC},   {"dynamic", OMPDSM_SCHED_DYNAMIC},
        {"guided", OMPDSM_SCHED_GUIDED},   {"auto", OMPDSM_SCHED_AUTO},
        {"profiled", OMPDSM_SCHED_PROFILED},
    };
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strcspn(s, ", \t");
    size_t i;
    for (i = 0; i < OMPDSM_ARRAY_LEN(kinds); i++)
        if (strlen(kinds[i].name) == len && !strncasecmp(s, kinds[i].name, len))
            break;
    if (i == OMPDSM_ARRAY_LEN(kinds))
        return -EINVAL;
    *kind = kinds[i].kind;
    *chunk = 0;
    s += len;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return 0;
    if (*s++ != ',')
        return -EINVAL;
    uint64_t c;
    if (ompdsm_parse_u64(s, 0, &c) < 0 || c < 1 || c > (1ull << 40))
        return -EINVAL;
    *chunk = (long long)c;
    return 0;
}

int rt_parse_fraction(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || v > 1e6)
        return -EINVAL;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

/* One "file:line=settings" entry of OMPDSM_PROFILED (len bytes at s). */
static int parse_override(const char *s, size_t len, struct rt_prof_override *o)
{
    char buf[512];
    if (len >= sizeof buf)
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = 0;
    while (len && isspace((unsigned char)buf[len - 1]))
        buf[--len] = 0;
    char *eq = strchr(buf, '=');
    if (!eq)
        return -EINVAL;
    *eq = 0;
    for (char *e = eq; e > buf && isspace((unsigned char)e[-1]); e--)
        e[-1] = 0;
    char *where = buf, *what = eq + 1;
    while (isspace((unsigned char)*where))
        where++;
    memset(o, 0, sizeof *o);
    o->chunk = o->eval_size = o->eval_skip = -1;
    if (!strcmp(where, "*")) {
        strcpy(o->file, "*");
    } else {
        char *colon = strrchr(where, ':');
        uint64_t line;
        if (!colon || colon == where || (size_t)(colon - where) >= sizeof o->file ||
            ompdsm_parse_u64(colon + 1, 0, &line) < 0 || !line ||
            line > 100000000)
            return -EINVAL;
        memcpy(o->file, where, (size_t)(colon - where));
        o->line = (int)line;
    }
    while (isspace((unsigned char)*what))
        what++;
    if (isalpha((unsigned char)*what)) {
        /* A schedule of its own (the baseline ompdsm-tune compares). */
        if (rt_parse_schedule(what, &o->kind, &o->chunk) < 0 ||
            o->kind == OMPDSM_SCHED_AUTO)
            return -EINVAL;
        return 0;
    }
    o->kind = OMPDSM_SCHED_PROFILED;
    long long *f[3] = {&o->chunk, &o->eval_size, &o->eval_skip};
    for (int i = 0; i < 3 && *what; i++) {
        char num[32];
        size_t l = strcspn(what, ",");
        if (l >= sizeof num)
            return -EINVAL;
        memcpy(num, what, l);
        num[l] = 0;
        uint64_t v;
        /* An empty field keeps the clause's value. */
        if (l && (ompdsm_parse_u64(num, 0, &v) < 0 || v > (1ull << 40)))
            return -EINVAL;
        if (l)
            *f[i] = (long long)v;
        what += l;
        if (*what == ',') {
            what++;
            if (!*what || i == 2)
                return -EINVAL;
        }
    }
    return *what ? -EINVAL : 0;
}

int rt_parse_prof_overrides(const char *s, struct rt_prof_override **out,
                            int *n)
{
    struct rt_prof_override *v = NULL;
    int cnt = 0;
    while (*s) {
        size_t l = strcspn(s, ";");
        const char *e = s;
        while (e < s + l && isspace((unsigned char)*e))
            e++;
        if (e < s + l) {
            struct rt_prof_override *nv = realloc(v, (size_t)(cnt + 1) * sizeof *v);
            if (!nv) {
                free(v);
                return -ENOMEM;
            }
            v = nv;
            if (parse_override(s, l, &v[cnt]) < 0) {
                free(v);
                return -EINVAL;
            }
            cnt++;
        }
        s += l;
        if (*s == ';')
            s++;
    }
    *out = v;
    *n = cnt;
    return 0;
}

static double env_fraction(const char *name, double def)
{
    const char *v = getenv(name);
    double x;
    if (!v || !*v)
        return def;
    if (rt_parse_fraction(v, &x) < 0)
        ompdsm_fatal("%s='%s' is not valid: expected a non-negative fraction "
                     "such as %g", name, v, def);
    return x;
}

static int env_int(const char *name, int def, int min, int max)
{
    return (int)ompdsm_env_u64(name, (uint64_t)def, (uint64_t)min,
                               (uint64_t)max, 0);
}

/* A program linked with another OpenMP runtime too (-lgomp, -fopenmp
 * with gcc, a library that needs libgomp) calls that runtime's omp_*
 * functions, which know nothing of the nodes: every node would report
 * thread 0 of 1.  Say so at start rather than give wrong answers quietly. */
static void check_omp_symbols(void)
{
    void *f = dlsym(RTLD_DEFAULT, "omp_get_thread_num");
    Dl_info mine, theirs;
    if (!f || !dladdr((void *)rt_env_init, &mine) || !dladdr(f, &theirs) ||
        mine.dli_fbase == theirs.dli_fbase || ompdsm_log_rank > 0)
        return;
    ompdsm_warn("omp_get_thread_num comes from %s, not from libompdsm (%s): "
                "the program is linked with another OpenMP runtime, whose "
                "omp_* functions know nothing of the nodes; link with ompcc "
                "alone, without -lgomp, -lomp or gcc's -fopenmp",
                theirs.dli_fname ? theirs.dli_fname : "another object",
                mine.dli_fname ? mine.dli_fname : "?");
}

/* valgrind's own SIGSEGV handling does not hand the DSM the page faults
 * it lives on: a 1-node run never ends, a 2-node one prints nothing.  Its
 * preloaded libraries give it away. */
static void check_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    if (p && strstr(p, "vgpreload_"))
        ompdsm_fatal("ompdsm programs cannot run under valgrind: its SIGSEGV "
                     "handling conflicts with the page faults the shared "
                     "memory works with; use OMPDSM_HEAP_CHECK=1 for writes "
                     "past shared blocks, or run valgrind on the program "
                     "built with gcc -fopenmp (docs/debugging.md)");
}

void rt_env_init(int nodes)
{
    check_valgrind();
    check_omp_symbols();
    /* OMPDSM_THREADS_PER_NODE: T threads in each node process (hybrid
     * nodes), "auto" = the CPUs of the node's affinity mask.  Unset, T
     * follows OMP_NUM_THREADS when that asks for more threads than nodes
     * (the team total, nodes x T, so it must divide by the nodes). */
    const char *tv = getenv("OMPDSM_THREADS_PER_NODE");
    int tpn_given = tv && *tv;
    if (tpn_given && !strcmp(tv, "auto")) {
        cpu_set_t set;
        int c = 0;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            c = CPU_COUNT(&set);
        rt_icv.threads_per_node = c > 0 ? (c > RT_MAX_TPN ? RT_MAX_TPN : c) : 1;
    } else {
        rt_icv.threads_per_node = env_int("OMPDSM_THREADS_PER_NODE", 1, 1,
                                          RT_MAX_TPN);
    }

    /* OMP_NUM_THREADS may be a list: its first element is the team
     * total, the others nthreads-var at nested levels (nest.c). */
    const char *v = getenv("OMP_NUM_THREADS");
    int nt = -1;
    rt_icv.nt_list_len = 0;
    if (v && *v) {
        for (const char *e = v;; e++) {
            char item[32];
            size_t l = strcspn(e, ",");
            uint64_t x;
            if (l >= sizeof item)
                l = sizeof item - 1;
            memcpy(item, e, l);
            item[l] = 0;
            if (ompdsm_parse_u64(item, 0, &x) < 0 || x < 1 || x > 1000000)
                ompdsm_fatal("OMP_NUM_THREADS='%s' is not valid: expected a "
                             "positive integer (or a comma-separated list)",
                             v);
            if (rt_icv.nt_list_len < 8)
                rt_icv.nt_list[rt_icv.nt_list_len++] = (int)x;
            e += strcspn(e, ",");
            if (!*e)
                break;
        }
        nt = rt_icv.nt_list[0];
        if (!tpn_given && nt > nodes) {
            if (nt % nodes || nt / nodes > RT_MAX_TPN)
                ompdsm_fatal("OMP_NUM_THREADS=%d is the team total over %d "
                             "nodes (nodes x threads per node), so it must "
                             "be a multiple of %d (at most %d threads per "
                             "node); or set OMPDSM_THREADS_PER_NODE",
                             nt, nodes, nodes, RT_MAX_TPN);
            rt_icv.threads_per_node = nt / nodes;
        }
    }
    rt_icv.max_threads = nodes * rt_icv.threads_per_node;
    if (nt < 0)
        nt = rt_icv.max_threads;
    if (nt > rt_icv.max_threads) {
        if (rt_icv.threads_per_node > 1)
            ompdsm_fatal("OMP_NUM_THREADS=%d exceeds the %d threads of this "
                         "job (%d nodes x OMPDSM_THREADS_PER_NODE=%d)", nt,
                         rt_icv.max_threads, nodes, rt_icv.threads_per_node);
        if (ompdsm_log_rank <= 0)
            ompdsm_warn("OMP_NUM_THREADS=%d exceeds the %d threads of this "
                        "job (%d nodes x %d); using %d",
                        nt, rt_icv.max_threads, nodes,
                        rt_icv.threads_per_node, rt_icv.max_threads);
        nt = rt_icv.max_threads;
    }
    rt_icv.dv.nthreads = nt;
    rt_icv.dv.dynamic = ompdsm_env_bool("OMP_DYNAMIC", 0);
    rt_icv.dv.nested = ompdsm_env_bool("OMP_NESTED", 0);
    rt_icv.dv.sched_kind = OMPDSM_SCHED_STATIC;
    rt_icv.dv.sched_chunk = 0;
    v = getenv("OMP_SCHEDULE");
    if (v && *v &&
        rt_parse_schedule(v, &rt_icv.dv.sched_kind, &rt_icv.dv.sched_chunk) < 0)
        ompdsm_fatal("OMP_SCHEDULE='%s' is not valid: expected static, dynamic, "
                     "guided, auto or profiled, optionally followed by "
                     "',chunk' with a positive chunk size", v);
    v = getenv("OMP_STACKSIZE");
    rt_icv.stacksize = 0;
    if (v && *v) {
        /* A number without suffix is in kilobytes (OpenMP). */
        char buf[64];
        snprintf(buf, sizeof buf, "%s", v);
        size_t l = strlen(buf);
        while (l && isspace((unsigned char)buf[l - 1]))
            buf[--l] = 0;
        int has_suffix = l && isalpha((unsigned char)buf[l - 1]);
        uint64_t x;
        if (ompdsm_parse_u64(buf, 1, &x) < 0 || !x)
            ompdsm_fatal("OMP_STACKSIZE='%s' is not valid: expected a size "
                         "such as 4M, 512K or 8192 (kilobytes)", v);
        rt_icv.stacksize = has_suffix ? x : x * 1024;
    }
    /* unset: a team may have up to RT_MAX_TPN threads on each node */
    rt_icv.thread_limit = env_int("OMP_THREAD_LIMIT", nodes * RT_MAX_TPN, 1,
                                  1000000);
    const char *tl = getenv("OMP_THREAD_LIMIT");
    rt_icv.nest_limit = tl && *tl ? rt_icv.thread_limit : 4096;
    /* As libgomp: OMP_MAX_ACTIVE_LEVELS if set; else OMP_NESTED=true, or a
     * list in OMP_NUM_THREADS, allow every level; else one. */
    const char *nv = getenv("OMP_NESTED");
    int levels = rt_icv.dv.nested || ((!nv || !*nv) && rt_icv.nt_list_len > 1)
                     ? RT_MAX_LEVELS : 1;
    rt_icv.max_active_levels = env_int("OMP_MAX_ACTIVE_LEVELS", levels, 0,
                                       1000000);
    if (rt_icv.max_active_levels > RT_MAX_LEVELS)
        rt_icv.max_active_levels = RT_MAX_LEVELS;
    rt_icv.dv.nested = rt_icv.max_active_levels > 1;
    /* A re-partition must promise 5% (noise on a shared machine is about
     * that); an execution whose per-node times stray 20% from the
     * prediction is measured again. */
    rt_icv.prof_gain = env_fraction("OMPDSM_PROFILED_GAIN", 0.05);
    rt_icv.prof_drift = env_fraction("OMPDSM_PROFILED_DRIFT", 0.2);
    static const char *const onoff[] = {"on", "off"};
    rt_icv.prof_share = ompdsm_env_choice("OMPDSM_PROFILED_SHARE", onoff, 2,
                                          0) == 0;
    /* on by default since the quiet runs of issue 39 (docs/performance.md,
     * "CG under three kinds of slowness"): off, a first execution's
     * measurement (its page faults) left CG A homogeneous at 1.7x
     * static's time; on, every CG kernel was within 1.2% of static's or
     * faster, and faster with a node on a slower CPU or under a quota */
    rt_icv.prof_stalls = ompdsm_env_choice("OMPDSM_PROFILED_STALLS", onoff,
                                           2, 0) == 0;
    v = getenv("OMPDSM_PROFILED");
    rt_icv.prof_over = NULL;
    rt_icv.nprof_over = 0;
    if (v && *v && rt_parse_prof_overrides(v, &rt_icv.prof_over,
                                           &rt_icv.nprof_over) < 0)
        ompdsm_fatal("OMPDSM_PROFILED='%s' is not valid: expected entries "
                     "file:line=[chunk][,[eval_size][,eval_skip]] or "
                     "file:line=static|dynamic|guided|profiled[,chunk], "
                     "separated by ';' (file '*': every profiled loop)", v);
}
