/* comm/launch/opts.c - ompdsmrun's command line, parsed strictly, and the
 * execvp-like program lookup done before anything is started (so that a
 * typo costs one line and status 2, not N failing nodes). */
#include "launch.h"

#include "comm/util/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char launch_usage[] =
    "usage: ompdsmrun -np N [options] [--] PROGRAM [ARGS...]\n"
    "       ompdsmrun --status [PID]\n"
    "Runs N nodes of PROGRAM (an ompdsm program, or any executable) on this "
    "host,\nor on the hosts of --hostfile or -H.\n"
    "\n"
    "  -np N, -n N, --np N     number of nodes (1 to 4096; required without "
    "hosts;\n"
    "                          with hosts, default: every slot)\n"
    "  --hostfile FILE         hosts, one a line: host [slots=K] (# comments)\n"
    "  -H, --host LIST         hosts: host1,host2:K,... (K slots; default 1)\n"
    "  --map-by slot|node      fill each host's slots in order (default), or\n"
    "                          one node per host in turn\n"
    "  -npernode K             at most K nodes on each host\n"
    "  --oversubscribe         allow more nodes than slots\n"
    "  -x VAR, -x VAR=VALUE    pass VAR (from here, or with VALUE) to every "
    "node\n"
    "  --bind-to core|none     pin node k to the k-th CPU of our affinity "
    "mask\n"
    "                          (T CPUs each with T threads per node, one per\n"
    "                          thread; default: core if N x T <= CPUs)\n"
    "  --threads-per-node T    T OpenMP threads in each node (a number, or\n"
    "                          auto: the CPUs of the node's affinity mask);\n"
    "                          sets OMPDSM_THREADS_PER_NODE on every node\n"
    "  --timeout SEC           end the job after SEC seconds, exit status "
    "124\n"
    "  (a deadlock ends the job with status 125: OMPDSM_DEADLOCK_S)\n"
    "  --tag-output            prefix every output line with \"[node K] \"\n"
    "  --monitor[=FILE]        per-node bars once a second on stderr (or JSON\n"
    "                          lines into FILE; plot: ompdsm-monitor-plot.py)\n"
    "  --status [PID]          print where every thread of a running job "
    "waits\n"
    "                          (the only job of yours, or ompdsmrun PID's)\n"
    "  -h, --help              this text\n"
    "  -V, --version           print the version\n"
    "\n"
    "Options end at the program name or at \"--\"; everything after it is\n"
    "passed to the program untouched.  See docs/ompdsmrun.md.\n";

int launch_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* Digits only: "+4", " 4", "4x", "0x4" and "" are all refused. */
static int parse_np(const char *s, int *out)
{
    long v = 0;
    if (!*s)
        return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        v = v * 10 + (*p - '0');
        if (v > LAUNCH_MAX_NP)
            return -ERANGE;
    }
    if (v < 1)
        return -ERANGE;
    *out = (int)v;
    return 0;
}

/* Non-negative decimal seconds ("2", "0.5"); strtod alone would also take
 * "inf", "nan", hex and leading blanks. */
static int parse_seconds(const char *s, double *out)
{
    int digits = 0, dots = 0;
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digits++;
        else if (*p == '.' && !dots)
            dots++;
        else
            return -EINVAL;
    }
    if (!digits)
        return -EINVAL;
    char *end;
    double v = strtod(s, &end);
    if (*end || v > 1e9)
        return -EINVAL;
    *out = v;
    return 0;
}

enum opt_id {
    OPT_NP, OPT_BIND, OPT_TIMEOUT, OPT_TAG, OPT_HELP, OPT_VERSION,
    OPT_HOSTFILE, OPT_HOSTS, OPT_MAP_BY, OPT_NPERNODE, OPT_OVERSUB, OPT_X,
    OPT_AGENT, OPT_MONITOR, OPT_TPN,
};

static const struct {
    const char *name;
    enum opt_id id;
    int has_value;
} options[] = {
    {"-np", OPT_NP, 1},          {"-n", OPT_NP, 1},
    {"--np", OPT_NP, 1},         {"--bind-to", OPT_BIND, 1},
    {"--timeout", OPT_TIMEOUT, 1}, {"--tag-output", OPT_TAG, 0},
    {"-h", OPT_HELP, 0},         {"--help", OPT_HELP, 0},
    {"-V", OPT_VERSION, 0},      {"--version", OPT_VERSION, 0},
    {"--hostfile", OPT_HOSTFILE, 1}, {"--machinefile", OPT_HOSTFILE, 1},
    {"-H", OPT_HOSTS, 1},        {"--host", OPT_HOSTS, 1},
    {"--map-by", OPT_MAP_BY, 1}, {"-npernode", OPT_NPERNODE, 1},
    {"--npernode", OPT_NPERNODE, 1}, {"--oversubscribe", OPT_OVERSUB, 0},
    {"-x", OPT_X, 1},            {"--agent", OPT_AGENT, 0},
    {"--monitor", OPT_MONITOR, 2}, /* 2: a value only as --monitor=FILE */
    {"--threads-per-node", OPT_TPN, 1},
};

/* An environment variable's name, optionally followed by =value. */
static int valid_xvar(const char *s)
{
    const char *p = s;
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
        return 0;
    for (p++; *p && *p != '='; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

int launch_parse_opts(int argc, char **argv, struct launch_opts *o, char *err,
                      size_t errlen)
{
    int i = 1, have_np = 0, have_bind = 0, have_timeout = 0, have_map = 0;

    memset(o, 0, sizeof *o);
    o->action = LAUNCH_RUN;
    o->bind = LAUNCH_BIND_AUTO;
    if (errlen)
        err[0] = 0;
    /* Not a job: asks a running one where its threads are. */
    if (argc >= 2 && (!strcmp(argv[1], "--status") ||
                      !strncmp(argv[1], "--status=", 9))) {
        o->action = LAUNCH_STATUS;
        if (argv[1][8] == '=')
            o->status_of = argv[1] + 9;
        else if (argc >= 3)
            o->status_of = argv[2];
        if (argc > (argv[1][8] == '=' ? 2 : 3))
            return launch_errf(err, errlen, "--status takes at most the pid "
                               "of an ompdsmrun, nothing else");
        return 0;
    }

    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1])
            break; /* the program ("-" alone is a name too) */

        /* --opt=value and -np=value; the name is what precedes '=' */
        char name[32];
        const char *eq = strchr(a, '=');
        /* Never NULL, so that no option's case has to check: has_val
         * says whether one was given. */
        const char *val = "";
        int has_val = 0;
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        if (nlen >= sizeof name)
            return launch_errf(err, errlen, "unknown option '%s'", a);
        memcpy(name, a, nlen);
        name[nlen] = 0;
        if (eq) {
            val = eq + 1;
            has_val = 1;
        }

        size_t k;
        for (k = 0; k < OMPDSM_ARRAY_LEN(options); k++)
            if (!strcmp(name, options[k].name))
                break;
        if (k == OMPDSM_ARRAY_LEN(options))
            return launch_errf(err, errlen, "unknown option '%s' (see ompdsmrun "
                        "--help)", a);
        if (options[k].has_value == 1 && !has_val) {
            if (i + 1 >= argc)
                return launch_errf(err, errlen, "option %s needs a value", name);
            val = argv[++i];
        } else if (!options[k].has_value && has_val) {
            return launch_errf(err, errlen, "option %s takes no value", name);
        }

        switch (options[k].id) {
        case OPT_NP: {
            if (have_np++)
                return launch_errf(err, errlen, "the number of nodes is given "
                            "twice");
            int rc = parse_np(val, &o->np);
            if (rc)
                return launch_errf(err, errlen, "%s '%s' is not valid: expected a "
                            "number of nodes from 1 to %d", name, val,
                            LAUNCH_MAX_NP);
            break;
        }
        case OPT_BIND:
            if (have_bind++)
                return launch_errf(err, errlen, "--bind-to is given twice");
            if (!strcmp(val, "core"))
                o->bind = LAUNCH_BIND_CORE;
            else if (!strcmp(val, "none"))
                o->bind = LAUNCH_BIND_NONE;
            else
                return launch_errf(err, errlen, "--bind-to '%s' is not valid: "
                            "expected core or none", val);
            break;
        case OPT_TIMEOUT:
            if (have_timeout++)
                return launch_errf(err, errlen, "--timeout is given twice");
            if (parse_seconds(val, &o->timeout))
                return launch_errf(err, errlen, "--timeout '%s' is not valid: "
                            "expected seconds (a number >= 0; 0 means none)",
                            val);
            break;
        case OPT_TAG:
            o->tag_output = 1;
            break;
        case OPT_MONITOR:
            if (o->monitor++)
                return launch_errf(err, errlen, "--monitor is given twice");
            if (has_val && !*val)
                return launch_errf(err, errlen, "--monitor= needs a file name");
            o->monitor_file = has_val ? val : NULL;
            break;
        case OPT_HELP:
            o->action = LAUNCH_HELP;
            return 0;
        case OPT_VERSION:
            o->action = LAUNCH_VERSION;
            return 0;
        case OPT_HOSTFILE:
            if (o->hostfile || o->hostlist)
                return launch_errf(err, errlen, "give the hosts once: one "
                            "--hostfile or one -H");
            if (!*val)
                return launch_errf(err, errlen, "--hostfile needs a file name");
            o->hostfile = val;
            break;
        case OPT_HOSTS:
            if (o->hostfile || o->hostlist)
                return launch_errf(err, errlen, "give the hosts once: one "
                            "--hostfile or one -H");
            o->hostlist = val;
            break;
        case OPT_MAP_BY:
            if (have_map++)
                return launch_errf(err, errlen, "--map-by is given twice");
            if (!strcmp(val, "slot"))
                o->map_by = LAUNCH_MAP_SLOT;
            else if (!strcmp(val, "node"))
                o->map_by = LAUNCH_MAP_NODE;
            else
                return launch_errf(err, errlen, "--map-by '%s' is not valid: "
                            "expected slot or node", val);
            break;
        case OPT_NPERNODE:
            if (o->npernode)
                return launch_errf(err, errlen, "-npernode is given twice");
            if (parse_np(val, &o->npernode))
                return launch_errf(err, errlen, "%s '%s' is not valid: expected a "
                            "number of nodes per host from 1 to %d", name,
                            val, LAUNCH_MAX_NP);
            break;
        case OPT_OVERSUB:
            o->oversubscribe = 1;
            break;
        case OPT_X:
            if (!valid_xvar(val))
                return launch_errf(err, errlen, "-x '%s' is not valid: expected "
                            "VAR or VAR=VALUE", val);
            if (o->nxvars == LAUNCH_MAX_XVARS)
                return launch_errf(err, errlen, "more than %d -x options",
                            LAUNCH_MAX_XVARS);
            o->xvars[o->nxvars++] = val;
            break;
        case OPT_TPN: {
            /* passed on as the variable, after any -x of it */
            static char tpn_var[64];
            int t = 0;
            if (o->threads_per_node)
                return launch_errf(err, errlen, "--threads-per-node is given "
                            "twice");
            if (!strcmp(val, "auto"))
                t = -1;
            else if (parse_np(val, &t) || t > LAUNCH_MAX_TPN)
                return launch_errf(err, errlen, "--threads-per-node '%s' is "
                            "not valid: expected a number of threads from 1 "
                            "to %d, or auto", val, LAUNCH_MAX_TPN);
            o->threads_per_node = t;
            snprintf(tpn_var, sizeof tpn_var, "OMPDSM_THREADS_PER_NODE=%s", val);
            if (o->nxvars == LAUNCH_MAX_XVARS)
                return launch_errf(err, errlen, "more than %d -x options",
                            LAUNCH_MAX_XVARS);
            o->xvars[o->nxvars++] = tpn_var;
            break;
        }
        case OPT_AGENT:
            /* Started by another ompdsmrun; everything else comes over
             * stdin (docs/cluster.md). */
            if (i != 1 || argc != 2)
                return launch_errf(err, errlen, "--agent is for ompdsmrun's own "
                            "use and takes nothing else");
            o->action = LAUNCH_AGENT;
            return 0;
        }
    }

    int hosts = o->hostfile || o->hostlist;
    if (!hosts && (have_map || o->npernode || o->oversubscribe))
        return launch_errf(err, errlen, "%s needs hosts (--hostfile or -H)",
                    have_map ? "--map-by" : o->npernode ? "-npernode"
                                                        : "--oversubscribe");
    if (!have_np && !hosts)
        return launch_errf(err, errlen, "missing -np N (the number of nodes)");
    if (i >= argc)
        return launch_errf(err, errlen, "missing the program to run");
    o->prog_argv = argv + i;
    o->prog_argc = argc - i;
    return 0;
}

/* 0 if path is an executable regular file, else -errno. */
static int check_exec(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -errno;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (!S_ISREG(st.st_mode))
        return -EACCES;
    if (access(path, X_OK) < 0)
        return -errno;
    return 0;
}

int launch_find_program(const char *name, char **path, char *err,
                        size_t errlen)
{
    int rc;

    *path = NULL;
    if (!*name) {
        launch_errf(err, errlen, "the program name is empty");
        return -ENOENT;
    }
    if (strchr(name, '/')) {
        rc = check_exec(name);
        if (rc) {
            launch_errf(err, errlen, "cannot run '%s': %s", name, strerror(-rc));
            return rc;
        }
        *path = strdup(name);
        return *path ? 0 : -ENOMEM;
    }

    /* Like execvp: the first executable match wins; a match that is not
     * executable is remembered so the message can say so. */
    const char *env = getenv("PATH");
    const char *dirs = env ? env : "/bin:/usr/bin";
    int seen = 0;
    size_t nlen = strlen(name);
    for (const char *p = dirs;; p++) {
        const char *colon = strchr(p, ':');
        size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
        char *cand = malloc(dlen + nlen + 3);
        if (!cand)
            return -ENOMEM;
        if (dlen == 0) /* an empty entry means the current directory */
            sprintf(cand, "./%s", name);
        else
            sprintf(cand, "%.*s/%s", (int)dlen, p, name);
        rc = check_exec(cand);
        if (!rc) {
            *path = cand;
            return 0;
        }
        free(cand);
        if (rc != -ENOENT && rc != -ENOTDIR)
            seen = rc;
        if (!colon)
            break;
        p = colon;
    }
    if (seen) {
        launch_errf(err, errlen, "cannot run '%s': found in PATH but %s", name,
             seen == -EISDIR ? "it is a directory" : "it is not executable");
        return seen;
    }
    /* mpirun would run ./name here; we do not: like a shell, the current
     * directory is searched only when PATH says so, so that a program
     * there never silently shadows or replaces the one PATH names. */
    char *here = malloc(nlen + 3);
    if (!here)
        return -ENOMEM;
    sprintf(here, "./%s", name);
    rc = check_exec(here);
    free(here);
    if (!rc) {
        launch_errf(err, errlen, "program '%s' not found in PATH, but the current "
             "directory has one: did you mean ./%s?", name, name);
        return -ENOENT;
    }
    launch_errf(err, errlen, "program '%s' not found in PATH", name);
    return -ENOENT;
}
