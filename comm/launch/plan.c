/* comm/launch/plan.c - the launcher's plan of a multi-host job: which hosts
 * are this one (their nodes are forked here), which address each host's
 * nodes reach the bootstrap socket at (the route lookup toward that host),
 * the agent tree over the other hosts, and what every node gets wherever
 * it runs (working directory, absolute program path, -x variables). */
#include "launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The host part of [user@]host. */
static const char *host_part(const char *name)
{
    const char *at = strchr(name, '@');
    return at ? at + 1 : name;
}

static int resolve(const char *name, struct in_addr *a, char *err,
                   size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res;
    int rc = getaddrinfo(host_part(name), NULL, &hints, &res);
    if (rc)
        return launch_errf(err, errlen, "host %s: cannot resolve its address: %s "
                    "(IPv4 addresses or names are needed)", name,
                    gai_strerror(rc));
    *a = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

static int is_ours(struct in_addr a)
{
    if ((ntohl(a.s_addr) >> 24) == 127)
        return 1;
    struct ifaddrs *ifs, *i;
    int ours = 0;
    if (getifaddrs(&ifs) < 0)
        return 0;
    for (i = ifs; i && !ours; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == a.s_addr)
            ours = 1;
    freeifaddrs(ifs);
    return ours;
}

/* Our address on the route toward a: what the host at a sees us as.  A
 * UDP connect sends nothing; it only makes the kernel pick the route. */
static int route_source(struct in_addr a, char *out, size_t len, char *err,
                        size_t errlen)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9),
                             .sin_addr = a};
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return launch_errf(err, errlen, "no route to %s: %s", inet_ntoa(a),
                    strerror(e));
    }
    socklen_t sl = sizeof sa;
    int rc = getsockname(fd, (struct sockaddr *)&sa, &sl);
    close(fd);
    if (rc < 0)
        return launch_errf(err, errlen, "getsockname: %s", strerror(errno));
    inet_ntop(AF_INET, &sa.sin_addr, out, (socklen_t)len);
    return 0;
}

int launch_route_source(const char *dst, char *out, size_t len, char *err,
                        size_t errlen)
{
    struct in_addr a;
    if (inet_pton(AF_INET, dst, &a) != 1)
        return launch_errf(err, errlen, "'%s' is not an IPv4 address", dst);
    return route_source(a, out, len, err, errlen);
}

static void add_link(void *arg, int host, const int *sub, int nsub)
{
    if (launch_link_add(arg, host, sub, nsub) < 0) {
        fprintf(stderr, "ompdsmrun: out of memory\n");
        exit(1);
    }
}

/* The hosts' addresses and the remote ones, between the two steps. */
static struct in_addr *addr;
static int *remote, nremote;

int launch_plan_hosts(struct launch_job *job, char *err, size_t errlen)
{
    int H = job->hosts.n, rc = 0;

    addr = calloc((size_t)H, sizeof *addr);
    remote = calloc((size_t)H, sizeof *remote);

    job->host_local = calloc((size_t)H, sizeof *job->host_local);
    job->host_boot = calloc((size_t)H, sizeof *job->host_boot);
    job->links = calloc((size_t)H, sizeof *job->links);
    if (!addr || !remote || !job->host_local || !job->host_boot ||
        !job->links) {
        rc = launch_errf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < H; i++) {
        struct launch_host *h = &job->hosts.h[i];
        for (int k = 0; k < h->nnodes; k++) {
            job->nodes[h->ranks[k]].host = i;
            job->nodes[h->ranks[k]].local_rank = k;
            job->nodes[h->ranks[k]].link = -1;
        }
        if ((rc = resolve(h->name, &addr[i], err, errlen)) < 0)
            goto out;
        job->host_local[i] = is_ours(addr[i]) && !strchr(h->name, '@');
        if (!job->host_local[i] && h->nnodes)
            remote[nremote++] = i;
    }
    job->remote = nremote > 0;
    /* Our own nodes must be reachable from the others too: they connect
     * to us, and then listen, at the address we use toward the first
     * remote host, the only one our bootstrap socket listens on. */
    if (job->remote)
        rc = route_source(addr[remote[0]], job->boot_host,
                          sizeof job->boot_host, err, errlen);
out:
    return rc;
}

int launch_plan_links(struct launch_job *job, char *err, size_t errlen)
{
    int H = job->hosts.n, rc = 0;

    const char *port = strrchr(job->boot.addr, ':') + 1;
    for (int i = 0; i < H; i++) {
        char src[64];
        if (job->host_local[i]) {
            snprintf(job->host_boot[i], sizeof job->host_boot[i], "%s:%s",
                     job->boot_host, port);
            continue;
        }
        if ((rc = route_source(addr[i], src, sizeof src, err, errlen)) < 0)
            goto out;
        snprintf(job->host_boot[i], sizeof job->host_boot[i], "%s:%s", src,
                 port);
    }
    launch_tree_split(remote, nremote, job->fanout, add_link, job);
    /* The same path on every host, whatever their cwd resolution. */
    if (job->prog_path[0] != '/') {
        char *abs = malloc(strlen(job->cwd) + strlen(job->prog_path) + 2);
        if (!abs)
            return launch_errf(err, errlen, "out of memory");
        sprintf(abs, "%s/%s", job->cwd, job->prog_path);
        free(job->prog_path);
        job->prog_path = abs;
    }
out:
    free(addr);
    free(remote);
    addr = NULL;
    remote = NULL;
    return rc;
}

int launch_plan_env(struct launch_job *job, char *err, size_t errlen)
{
    /* -x: every node gets VAR=value, here and elsewhere. */
    job->env_extra = calloc((size_t)job->opts.nxvars + 2, sizeof(char *));
    if (!job->env_extra)
        return launch_errf(err, errlen, "out of memory");
    for (int i = 0; i < job->opts.nxvars; i++) {
        const char *x = job->opts.xvars[i];
        char *e;
        if (strchr(x, '=')) {
            e = strdup(x);
        } else {
            const char *v = getenv(x);
            if (!v)
                return launch_errf(err, errlen, "-x %s: %s is not set here (give "
                            "-x %s=VALUE)", x, x, x);
            e = malloc(strlen(x) + strlen(v) + 2);
            if (e)
                sprintf(e, "%s=%s", x, v);
        }
        if (!e)
            return launch_errf(err, errlen, "out of memory");
        job->env_extra[job->nenv_extra++] = e;
    }
    /* The nodes send samples only when asked: no cost otherwise. */
    if (job->opts.monitor) {
        char *e = strdup("OMPDSM_MONITOR=1");
        if (!e)
            return launch_errf(err, errlen, "out of memory");
        job->env_extra[job->nenv_extra++] = e;
    }

    const char *f = getenv("OMPDSM_LAUNCH_FANOUT");
    job->fanout = LAUNCH_FANOUT_DEFAULT;
    if (f) {
        char *end;
        long v = strtol(f, &end, 10);
        if (!*f || *end || f[0] < '0' || f[0] > '9' || v < 1 ||
            v > LAUNCH_FANOUT_MAX)
            return launch_errf(err, errlen, "OMPDSM_LAUNCH_FANOUT='%s' is not "
                        "valid: expected a number of agents from 1 to %d",
                        f, LAUNCH_FANOUT_MAX);
        job->fanout = (int)v;
    }
    const char *rsh = getenv("OMPDSM_RSH");
    if (rsh && !rsh[strspn(rsh, " \t")])
        return launch_errf(err, errlen, "OMPDSM_RSH is empty: unset it (ssh is "
                    "used) or name a command that runs a command on a "
                    "host, like ssh");
    job->rsh = strdup(rsh ? rsh : "ssh -o BatchMode=yes -o ConnectTimeout=10");

    char buf[4096];
    if (!getcwd(buf, sizeof buf))
        return launch_errf(err, errlen, "getcwd: %s", strerror(errno));
    job->cwd = strdup(buf);
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n < 0)
        return launch_errf(err, errlen, "readlink /proc/self/exe: %s",
                    strerror(errno));
    buf[n] = 0;
    job->self_exe = strdup(buf);
    if (!job->rsh || !job->cwd || !job->self_exe)
        return launch_errf(err, errlen, "out of memory");
    return 0;
}
