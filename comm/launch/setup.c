/* comm/launch/setup.c - AG_SETUP, an agent's part of the job as its parent
 * sends it on the agent's stdin: the job's key, working directory, program
 * and arguments, the variables every node gets, job size and id, the rsh
 * command and fan-out, --bind-to, and the hosts of its subtree with their
 * ranks and OMPDSM_BOOT.  NUL-ended strings, integers in decimal, read
 * back strictly. */
#include "launch.h"

#include "comm/util/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#define SETUP_MAGIC "ompdsm-agent-2" /* 2: the key */

struct sbuf {
    unsigned char *p;
    size_t len, cap;
    int oom;
};

static void sb_str(struct sbuf *b, const char *s)
{
    size_t n = strlen(s) + 1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void sb_int(struct sbuf *b, long v)
{
    char s[32];
    snprintf(s, sizeof s, "%ld", v);
    sb_str(b, s);
}

/* The variables every node gets, whatever the remote environment has:
 * OMPDSM_* and OMP_* of ours, and -x (env_extra). */
static int forwarded(const struct launch_job *job, const char *e)
{
    if (strncmp(e, "OMPDSM_", 7) != 0 && strncmp(e, "OMP_", 4) != 0)
        return 0;
    /* An address of this host means nothing on another one. */
    if (launch_own_var(e) || !strncmp(e, "OMPDSM_TCP_ADDR=", 16))
        return 0;
    for (int x = 0; x < job->nenv_extra; x++) {
        size_t n = strcspn(job->env_extra[x], "=");
        if (!strncmp(e, job->env_extra[x], n) && e[n] == '=')
            return 0; /* -x gives it */
    }
    return 1;
}

static void sb_host(struct sbuf *b, const struct launch_job *job, int h)
{
    const struct launch_host *host = &job->hosts.h[h];
    sb_str(b, host->name);
    sb_str(b, job->host_boot[h]);
    sb_int(b, host->nnodes);
    for (int k = 0; k < host->nnodes; k++)
        sb_int(b, host->ranks[k]);
}

unsigned char *launch_setup_encode(const struct launch_job *job,
                                   const struct launch_link *l, size_t *len)
{
    struct sbuf b = {0};
    int nenv = 0;

    sb_str(&b, SETUP_MAGIC);
    /* On the rsh's stdin, never on a command line that ps shows. */
    sb_str(&b, job->key_hex);
    sb_str(&b, job->cwd);
    sb_str(&b, job->prog_path);
    sb_int(&b, job->opts.prog_argc);
    for (int i = 0; i < job->opts.prog_argc; i++)
        sb_str(&b, job->opts.prog_argv[i]);
    for (char **e = environ; *e; e++)
        nenv += forwarded(job, *e);
    sb_int(&b, nenv + job->nenv_extra);
    for (char **e = environ; *e; e++)
        if (forwarded(job, *e))
            sb_str(&b, *e);
    for (int x = 0; x < job->nenv_extra; x++)
        sb_str(&b, job->env_extra[x]);
    sb_int(&b, job->size);
    sb_str(&b, job->jobid);
    sb_str(&b, job->rsh);
    sb_int(&b, job->fanout);
    sb_int(&b, (long)job->opts.bind);
    sb_int(&b, 1 + l->nsub);
    sb_host(&b, job, l->host);
    for (int i = 0; i < l->nsub; i++)
        sb_host(&b, job, l->sub[i]);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

struct cursor {
    const unsigned char *p, *end;
    int bad;
};

static const char *next_str(struct cursor *c)
{
    if (c->bad)
        return "";
    const unsigned char *z = memchr(c->p, 0, (size_t)(c->end - c->p));
    if (!z) {
        c->bad = 1;
        return "";
    }
    const char *s = (const char *)c->p;
    c->p = z + 1;
    return s;
}

static long next_int(struct cursor *c, long lo, long hi)
{
    uint64_t v;
    const char *s = next_str(c);
    if (c->bad || ompdsm_parse_u64(s, 0, &v) < 0 || (long)v < lo ||
        (long)v > hi) {
        c->bad = 1;
        return lo;
    }
    return (long)v;
}

static char *dup_or_bad(struct cursor *c, const char *s)
{
    char *d = strdup(s);
    if (!d)
        c->bad = 1;
    return d;
}

int launch_setup_decode(struct launch_job *job, const unsigned char *p,
                        size_t len, char *err, size_t errlen)
{
    struct cursor c = {p, p + len, 0};

    if (strcmp(next_str(&c), SETUP_MAGIC) != 0) {
        snprintf(err, errlen, "the launcher speaks another agent protocol "
                 "(is the same ompdsm installed on every host?)");
        return -EINVAL;
    }
    if (ompdsm_key_parse(next_str(&c), job->key) < 0)
        c.bad = 1;
    ompdsm_key_hex(job->key, job->key_hex);
    job->cwd = dup_or_bad(&c, next_str(&c));
    job->prog_path = dup_or_bad(&c, next_str(&c));
    int argc = (int)next_int(&c, 1, 1 << 20);
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    if (!argv)
        c.bad = 1;
    for (int i = 0; i < argc && !c.bad; i++)
        argv[i] = dup_or_bad(&c, next_str(&c));
    job->opts.prog_argv = argv;
    job->opts.prog_argc = argc;
    int nenv = (int)next_int(&c, 0, 1 << 20);
    job->env_extra = calloc((size_t)nenv + 1, sizeof(char *));
    if (!job->env_extra)
        c.bad = 1;
    for (int i = 0; i < nenv && !c.bad; i++)
        job->env_extra[i] = dup_or_bad(&c, next_str(&c));
    job->nenv_extra = nenv;
    job->size = (int)next_int(&c, 1, LAUNCH_MAX_NP);
    snprintf(job->jobid, sizeof job->jobid, "%s", next_str(&c));
    job->rsh = dup_or_bad(&c, next_str(&c));
    job->fanout = (int)next_int(&c, 1, LAUNCH_FANOUT_MAX);
    job->opts.bind = (enum launch_bind)next_int(&c, 0, 2);
    int nh = (int)next_int(&c, 1, LAUNCH_MAX_NP);
    if (!c.bad) {
        job->hosts.h = calloc((size_t)nh, sizeof *job->hosts.h);
        job->host_boot = calloc((size_t)nh, sizeof *job->host_boot);
        job->host_local = calloc((size_t)nh, sizeof *job->host_local);
        if (!job->hosts.h || !job->host_boot || !job->host_local)
            c.bad = 1;
    }
    for (int i = 0; i < nh && !c.bad; i++) {
        struct launch_host *h = &job->hosts.h[i];
        job->hosts.n = i + 1;
        h->name = dup_or_bad(&c, next_str(&c));
        snprintf(job->host_boot[i], sizeof job->host_boot[i], "%s",
                 next_str(&c));
        h->nnodes = (int)next_int(&c, 0, job->size);
        h->slots = h->nnodes;
        h->ranks = calloc((size_t)h->nnodes + 1, sizeof(int));
        if (!h->ranks)
            c.bad = 1;
        for (int k = 0; k < h->nnodes && !c.bad; k++)
            h->ranks[k] = (int)next_int(&c, 0, job->size - 1);
    }
    if (c.bad || c.p != c.end) {
        snprintf(err, errlen, "a bad setup message from the launcher");
        return -EINVAL;
    }
    job->host_local[0] = 1;
    return 0;
}

