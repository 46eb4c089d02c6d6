/* comm/launch/hosts.c - the hosts of a multi-host job: --hostfile (Open MPI
 * syntax) and -H lists parsed strictly, the nodes mapped onto their slots
 * (--map-by slot|node, -npernode, --oversubscribe), and the shape of the
 * agent tree over them.  Pure code, no
 * I/O but reading the file, so that every rule has a unit test. */
#include "launch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void launch_hosts_free(struct launch_hosts *hs)
{
    for (int i = 0; i < hs->n; i++) {
        free(hs->h[i].name);
        free(hs->h[i].ranks);
    }
    free(hs->h);
    hs->h = NULL;
    hs->n = 0;
}

/* A name ssh and the remote shell take as one word: [user@]host with
 * letters, digits, '.', '-' and '_', not starting with '-' (which ssh
 * would read as an option). */
/* An IPv6 literal ("fe80::1", "[::1]", 7 colons written out); "a:2:3"
 * is rather a mistyped -H slots. */
static int looks_ipv6(const char *s, size_t len)
{
    int colons = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '[' || (s[i] == ':' && i + 1 < len && s[i + 1] == ':'))
            return 1;
        colons += s[i] == ':';
    }
    return colons >= 3;
}

#define IPV6_ONLY "ompdsm reaches hosts over IPv4 only (the bootstrap, the " \
    "agents' sockets and the tcp transport): give the host's IPv4 address " \
    "or a name that resolves to one"

static int valid_host(const char *s, size_t len)
{
    if (!len || s[0] == '-' || len >= LAUNCH_HOST_MAX)
        return 0;
    int ats = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '@') {
            if (ats++ || i == 0 || i + 1 == len)
                return 0;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

/* Digits only, 1..LAUNCH_MAX_NP. */
static int parse_count(const char *s, size_t len, int *out)
{
    long v = 0;
    if (!len)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
        if (v > LAUNCH_MAX_NP)
            return -ERANGE;
    }
    if (v < 1)
        return -ERANGE;
    *out = (int)v;
    return 0;
}

/* Appends a host; where says where it came from, for messages. */
static int add_host(struct launch_hosts *hs, const char *name, size_t len,
                    int slots, const char *where, char *err, size_t errlen)
{
    for (int i = 0; i < hs->n; i++)
        if (strlen(hs->h[i].name) == len && !memcmp(hs->h[i].name, name, len))
            return launch_errf(err, errlen, "%shost '%.*s' is listed twice (give it "
                        "once, with all its slots)", where, (int)len, name);
    if (hs->n >= LAUNCH_MAX_NP)
        return launch_errf(err, errlen, "%smore than %d hosts", where,
                    LAUNCH_MAX_NP);
    struct launch_host *h = realloc(hs->h, (size_t)(hs->n + 1) * sizeof *h);
    if (!h)
        return launch_errf(err, errlen, "out of memory");
    hs->h = h;
    h = &hs->h[hs->n];
    memset(h, 0, sizeof *h);
    h->name = strndup(name, len);
    if (!h->name)
        return launch_errf(err, errlen, "out of memory");
    h->slots = slots;
    hs->n++;
    return 0;
}

int launch_parse_hostfile(const char *text, const char *fname,
                          struct launch_hosts *hs, char *err, size_t errlen)
{
    int lineno = 0;
    const char *p = text;

    memset(hs, 0, sizeof *hs);
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t llen = eol ? (size_t)(eol - p) : strlen(p);
        char where[300];
        lineno++;
        snprintf(where, sizeof where, "%s:%d: ", fname, lineno);

        /* Words of the line up to a '#'. */
        const char *w[8];
        size_t wl[8];
        int nw = 0;
        for (size_t i = 0; i < llen && p[i] != '#';) {
            if (p[i] == ' ' || p[i] == '\t' || p[i] == '\r') {
                i++;
                continue;
            }
            size_t j = i;
            while (j < llen && p[j] != ' ' && p[j] != '\t' && p[j] != '\r' &&
                   p[j] != '#')
                j++;
            if (nw == 8) {
                launch_hosts_free(hs);
                return launch_errf(err, errlen, "%stoo many words (expected: host "
                            "[slots=K])", where);
            }
            w[nw] = p + i;
            wl[nw++] = j - i;
            i = j;
        }
        p = eol ? eol + 1 : p + llen;
        if (!nw)
            continue;

        if (looks_ipv6(w[0], wl[0])) {
            launch_hosts_free(hs);
            return launch_errf(err, errlen, "%s'%.*s' is an IPv6 address: "
                               IPV6_ONLY, where, (int)wl[0], w[0]);
        }
        if (!valid_host(w[0], wl[0])) {
            launch_hosts_free(hs);
            return launch_errf(err, errlen, "%s'%.*s' is not a host name (letters, "
                        "digits, '.', '-', '_', optionally user@)", where,
                        (int)wl[0], w[0]);
        }
        int slots = 1, have_slots = 0;
        for (int k = 1; k < nw; k++) {
            const char *eq = memchr(w[k], '=', wl[k]);
            size_t klen = eq ? (size_t)(eq - w[k]) : wl[k];
            if (!eq || (klen != 5 || memcmp(w[k], "slots", 5) != 0)) {
                launch_hosts_free(hs);
                return launch_errf(err, errlen, "%sunknown key '%.*s' (only "
                            "slots=K is understood)", where, (int)wl[k],
                            w[k]);
            }
            if (have_slots++) {
                launch_hosts_free(hs);
                return launch_errf(err, errlen, "%sslots given twice", where);
            }
            if (parse_count(eq + 1, wl[k] - klen - 1, &slots)) {
                launch_hosts_free(hs);
                return launch_errf(err, errlen, "%sslots='%.*s' is not valid: "
                            "expected a number from 1 to %d", where,
                            (int)(wl[k] - klen - 1), eq + 1, LAUNCH_MAX_NP);
            }
        }
        int rc = add_host(hs, w[0], wl[0], slots, where, err, errlen);
        if (rc) {
            launch_hosts_free(hs);
            return rc;
        }
    }
    if (!hs->n)
        return launch_errf(err, errlen, "hostfile %s names no host", fname);
    return 0;
}

int launch_parse_hostlist(const char *list, struct launch_hosts *hs,
                          char *err, size_t errlen)
{
    const char *p = list;

    memset(hs, 0, sizeof *hs);
    if (!*list)
        return launch_errf(err, errlen, "-H needs a host list (host1,host2:2,...)");
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *colon = memchr(p, ':', len);
        size_t nlen = colon ? (size_t)(colon - p) : len;
        int slots = 1;

        if (looks_ipv6(p, len)) {
            launch_hosts_free(hs);
            return launch_errf(err, errlen, "-H: '%.*s' is an IPv6 address: "
                               IPV6_ONLY, (int)len, p);
        }
        if (!valid_host(p, nlen)) {
            launch_hosts_free(hs);
            return launch_errf(err, errlen, "-H: '%.*s' is not a host name "
                        "(host or host:slots, separated by commas)", (int)len,
                        p);
        }
        if (colon && parse_count(colon + 1, len - nlen - 1, &slots)) {
            launch_hosts_free(hs);
            return launch_errf(err, errlen, "-H: '%.*s' has bad slots: expected a "
                        "number from 1 to %d after ':'", (int)len, p,
                        LAUNCH_MAX_NP);
        }
        int rc = add_host(hs, p, nlen, slots, "-H: ", err, errlen);
        if (rc) {
            launch_hosts_free(hs);
            return rc;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int launch_map_nodes(struct launch_hosts *hs, const struct launch_opts *o,
                     int *np, int **node_host, char *err, size_t errlen)
{
    int H = hs->n, cap_total = 0, n = *np;

    *node_host = NULL;
    if (o->npernode) {
        for (int i = 0; i < H; i++)
            if (o->npernode > hs->h[i].slots && !o->oversubscribe)
                return launch_errf(err, errlen, "-npernode %d exceeds the %d "
                            "slot%s of host %s (add --oversubscribe to run "
                            "more nodes than slots)", o->npernode,
                            hs->h[i].slots, hs->h[i].slots == 1 ? "" : "s",
                            hs->h[i].name);
        if ((long)o->npernode * H > LAUNCH_MAX_NP)
            return launch_errf(err, errlen, "-npernode %d on %d hosts is more than "
                        "%d nodes", o->npernode, H, LAUNCH_MAX_NP);
        cap_total = o->npernode * H;
        if (!n)
            n = cap_total;
        if (n > cap_total)
            return launch_errf(err, errlen, "-np %d is more than -npernode %d x %d "
                        "host%s", n, o->npernode, H, H == 1 ? "" : "s");
    } else {
        long total = 0;
        for (int i = 0; i < H; i++)
            total += hs->h[i].slots;
        if (!n)
            n = total > LAUNCH_MAX_NP ? LAUNCH_MAX_NP : (int)total;
        if (n > total && !o->oversubscribe)
            return launch_errf(err, errlen, "-np %d is more than the %ld slot%s of "
                        "the %d host%s (add --oversubscribe to run more "
                        "nodes than slots)", n, total, total == 1 ? "" : "s",
                        H, H == 1 ? "" : "s");
    }

    /* How many nodes each host may take before the round-robin over all
     * hosts (oversubscription) starts. */
    int *cap = calloc((size_t)H, sizeof *cap);
    /* One spare entry: n is at least 1 here, which the analyzer cannot see. */
    int *nh = calloc((size_t)n + 1, sizeof *nh);
    if (!cap || !nh) {
        free(cap);
        free(nh);
        return launch_errf(err, errlen, "out of memory");
    }
    for (int i = 0; i < H; i++) {
        cap[i] = o->npernode ? o->npernode : hs->h[i].slots;
        hs->h[i].nnodes = 0;
    }
    int r = 0;
    if (o->map_by == LAUNCH_MAP_NODE) {
        /* One node per host in turn, skipping full hosts. */
        while (r < n) {
            int placed = 0;
            for (int i = 0; i < H && r < n; i++)
                if (hs->h[i].nnodes < cap[i]) {
                    nh[r++] = i;
                    hs->h[i].nnodes++;
                    placed = 1;
                }
            if (!placed)
                break;
        }
    } else {
        for (int i = 0; i < H && r < n; i++)
            while (hs->h[i].nnodes < cap[i] && r < n) {
                nh[r++] = i;
                hs->h[i].nnodes++;
            }
    }
    /* Only with --oversubscribe: the rest round-robin over every host. */
    for (int i = 0; r < n; i = (i + 1) % H) {
        nh[r++] = i;
        hs->h[i].nnodes++;
    }
    free(cap);

    for (int i = 0; i < H; i++) {
        free(hs->h[i].ranks);
        hs->h[i].ranks = malloc((size_t)(hs->h[i].nnodes ? hs->h[i].nnodes
                                                         : 1) * sizeof(int));
        if (!hs->h[i].ranks) {
            free(nh);
            return launch_errf(err, errlen, "out of memory");
        }
        hs->h[i].nnodes = 0;
    }
    for (r = 0; r < n; r++) {
        struct launch_host *h = &hs->h[nh[r]];
        h->ranks[h->nnodes++] = r;
    }
    *np = n;
    *node_host = nh;
    return 0;
}

void launch_tree_split(const int *hosts, int n, int fanout,
                       void (*fn)(void *arg, int host, const int *sub,
                                  int nsub),
                       void *arg)
{
    int groups = n < fanout ? n : fanout;
    for (int g = 0, at = 0; g < groups; g++) {
        /* Near-equal groups keep the tree's depth at log_fanout(n). */
        int size = n / groups + (g < n % groups);
        fn(arg, hosts[at], hosts + at + 1, size - 1);
        at += size;
    }
}

int launch_load_hosts(const struct launch_opts *o, struct launch_hosts *hs,
                      char *err, size_t errlen)
{
    memset(hs, 0, sizeof *hs);
    if (o->hostlist)
        return launch_parse_hostlist(o->hostlist, hs, err, errlen);
    if (!o->hostfile)
        return 0;

    FILE *f = fopen(o->hostfile, "r");
    if (!f)
        return launch_errf(err, errlen, "cannot read hostfile %s: %s", o->hostfile,
                    strerror(errno));
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *t = cap >= (16u << 20) ? NULL : realloc(text, cap * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
    }
    int rd_err = ferror(f);
    fclose(f);
    if (!text)
        return launch_errf(err, errlen, "hostfile %s is too large", o->hostfile);
    if (rd_err) {
        free(text);
        return launch_errf(err, errlen, "cannot read hostfile %s", o->hostfile);
    }
    text[len] = 0;
    if (memchr(text, 0, len)) {
        free(text);
        return launch_errf(err, errlen, "hostfile %s is not a text file",
                    o->hostfile);
    }
    int rc = launch_parse_hostfile(text, o->hostfile, hs, err, errlen);
    free(text);
    return rc;
}
