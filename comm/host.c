/* comm/host.c - what a node tells the others about its host and build, and
 * what it concludes from theirs: host identity (kernel boot id, network
 * namespace, host name), the address the tcp transport advertises
 * (OMPDSM_TCP_ADDR, OMPDSM_IFACE, or a route lookup), and the build ids of
 * the executable and libompdsm, which must match node 0's. */
#include "transport.h"

#include <arpa/inet.h>
#include <elf.h>
#include <errno.h>
#include <ifaddrs.h>
#include <link.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int comm_card_same_host(const struct comm_card *a, const struct comm_card *b)
{
    return !strcmp(a->boot_id, b->boot_id) && a->netns == b->netns &&
           !strcmp(a->host, b->host);
}

/* Formats an IPv4 address (network order) into buf. */
static const char *ip_str(uint32_t addr, char buf[INET_ADDRSTRLEN])
{
    return inet_ntop(AF_INET, &addr, buf, INET_ADDRSTRLEN);
}

/* OMPDSM_IFACE: an interface name (its first IPv4 address) or a.b.c.d/len
 * (the first address of an up interface inside that subnet). */
static int iface_addr(const char *spec, uint32_t *out)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0) {
        ompdsm_err("OMPDSM_IFACE=%s: getifaddrs: %s", spec, strerror(errno));
        return -errno;
    }
    uint32_t net = 0, mask = 0;
    int bysubnet = strchr(spec, '/') != NULL;
    if (bysubnet) {
        char ip[INET_ADDRSTRLEN];
        const char *slash = strchr(spec, '/');
        uint64_t len;
        struct in_addr ia;
        if ((size_t)(slash - spec) >= sizeof ip ||
            ompdsm_parse_u64(slash + 1, 0, &len) < 0 || len > 32) {
            ompdsm_err("OMPDSM_IFACE='%s' is neither an interface name nor "
                       "a.b.c.d/len", spec);
            freeifaddrs(ifs);
            return -EINVAL;
        }
        memcpy(ip, spec, (size_t)(slash - spec));
        ip[slash - spec] = 0;
        if (inet_pton(AF_INET, ip, &ia) != 1) {
            ompdsm_err("OMPDSM_IFACE='%s' is neither an interface name nor "
                       "a.b.c.d/len", spec);
            freeifaddrs(ifs);
            return -EINVAL;
        }
        mask = len ? htonl(~0u << (32 - len)) : 0;
        net = ia.s_addr & mask;
    }
    char names[256] = "";
    int found = 0;
    for (struct ifaddrs *a = ifs; a; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
            continue;
        uint32_t ad = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
        char ip[INET_ADDRSTRLEN];
        if (strlen(names) < sizeof names - 40)
            snprintf(names + strlen(names), sizeof names - strlen(names),
                     "%s%s %s", names[0] ? ", " : "", a->ifa_name,
                     ip_str(ad, ip));
        if (found || !(a->ifa_flags & IFF_UP))
            continue;
        if (bysubnet ? (ad & mask) == net : !strcmp(a->ifa_name, spec)) {
            *out = ad;
            found = 1;
        }
    }
    freeifaddrs(ifs);
    if (!found) {
        ompdsm_err("OMPDSM_IFACE=%s: no up interface of this host %s (it "
                   "has: %s); name one of those or a subnet a.b.c.d/len", spec,
                   bysubnet ? "has an IPv4 address in that subnet"
                            : "has that name and an IPv4 address",
                   names[0] ? names : "none");
        return -ENODEV;
    }
    return 0;
}

/* The source address the kernel would use toward dst (a route lookup: a
 * UDP connect sends nothing); 0 when there is no route. */
static uint32_t route_src(uint32_t dst)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9),
                             .sin_addr.s_addr = dst};
    socklen_t sl = sizeof sa;
    uint32_t src = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        src = sa.sin_addr.s_addr;
    close(fd);
    return src;
}

/* The first address of an up, non-loopback interface (0 if none). */
static uint32_t first_external_addr(void)
{
    struct ifaddrs *ifs;
    uint32_t got = 0;
    if (getifaddrs(&ifs) < 0)
        return 0;
    for (struct ifaddrs *a = ifs; a && !got; a = a->ifa_next)
        if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET &&
            (a->ifa_flags & IFF_UP) && !(a->ifa_flags & IFF_LOOPBACK))
            got = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(ifs);
    return got;
}

/* Under PMIx there is no connection to a launcher to look the route up
 * from: look it up toward node 0's host instead; node 0's own host, which
 * resolves its name to loopback, takes its first external address unless
 * the whole job runs on it. */
static uint32_t pmix_addr(const char **how)
{
    const char *h0 = comm_boot_pmix_node0();
    uint32_t addr = 0;
    *how = "route to node 0's host";
    if (h0) {
        struct addrinfo hints = {.ai_family = AF_INET}, *res;
        if (getaddrinfo(h0, NULL, &hints, &res) == 0) {
            addr = route_src(((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr);
            freeaddrinfo(res);
        }
    }
    if ((!addr || (ntohl(addr) >> 24) == 127) &&
        comm_boot_pmix_local_size() < comm_g.size) {
        addr = first_external_addr();
        *how = "first external interface";
    }
    return addr;
}

/* The address the tcp transport listens on and advertises, by precedence:
 * OMPDSM_TCP_ADDR (one address), OMPDSM_IFACE (an interface or subnet),
 * the route toward the launcher (our end of its connection) or, under
 * PMIx, toward node 0; loopback when none applies (one host). */
int comm_tcp_addr_choose(uint32_t *out, const char **how)
{
    const char *fixed = getenv("OMPDSM_TCP_ADDR");
    const char *iface = getenv("OMPDSM_IFACE");
    if (fixed && *fixed) {
        struct in_addr ia;
        if (inet_pton(AF_INET, fixed, &ia) != 1) {
            ompdsm_err("OMPDSM_TCP_ADDR='%s' is not an IPv4 address", fixed);
            return -EINVAL;
        }
        *out = ia.s_addr;
        *how = "OMPDSM_TCP_ADDR";
        return 0;
    }
    if (iface && *iface) {
        *how = "OMPDSM_IFACE";
        return iface_addr(iface, out);
    }
    *out = comm_boot_local_addr();
    *how = "route to the launcher";
    if (!*out && comm_boot_pmix_node0())
        *out = pmix_addr(how);
    if (!*out) {
        *out = htonl(INADDR_LOOPBACK);
        *how = "loopback";
    }
    return 0;
}

static void read_boot_id(char *out, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    out[0] = 0;
    if (f) {
        if (!fgets(out, (int)len, f))
            out[0] = 0;
        fclose(f);
    }
    out[strcspn(out, "\n")] = 0;
}

/* Network namespaces (and containers) on one machine share the kernel
 * but not the addresses: a node in another namespace is another host. */
static uint64_t read_netns(void)
{
    struct stat st;
    return stat("/proc/self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* "name" or "name/a.b.c.d" (the tcp address, when there is one), for
 * messages that must tell hosts apart. */
void comm_host_label(const struct comm_card *c, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN] = "";
    if (c->tcp.addr)
        inet_ntop(AF_INET, &c->tcp.addr, ip, sizeof ip);
    snprintf(buf, len, "%.63s%s%s", c->host, ip[0] ? "/" : "", ip);
}

/* ---- same build on every node ---- */

struct build_probe {
    const void *addr;     /* an address inside the object sought (NULL: main) */
    char *id;             /* out: hex build id, or "" */
    size_t idlen;
    char path[512];       /* out: the object's file */
};

static void hex_of(const unsigned char *b, size_t n, char *out, size_t outlen)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 3 <= outlen; i++, k += 2)
        snprintf(out + k, 3, "%02x", b[i]);
    out[k] = 0;
}

static int build_probe_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct build_probe *bp = arg;
    int mine = 0;
    if (!bp->addr) {
        mine = 1; /* the first object is the executable */
    } else {
        uintptr_t a = (uintptr_t)bp->addr;
        for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
            const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
            mine = ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz;
        }
    }
    if (!mine)
        return 0;
    snprintf(bp->path, sizeof bp->path, "%s", info->dlpi_name);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            const unsigned char *desc =
                (const unsigned char *)name + OMPDSM_ALIGN_UP(nh->n_namesz, 4u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                !memcmp(name, "GNU", 4)) {
                hex_of(desc, nh->n_descsz, bp->id, bp->idlen);
                return 1;
            }
            p = (const char *)desc + OMPDSM_ALIGN_UP(nh->n_descsz, 4u);
        }
    }
    return 1;
}

/* FNV-1a of a whole file, for objects linked without a build id. */
static void file_hash(const char *path, char *out, size_t outlen)
{
    FILE *f = fopen(path, "rb");
    uint64_t h = 0xcbf29ce484222325ull;
    unsigned char buf[65536];
    size_t n;
    out[0] = 0;
    if (!f)
        return;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
    fclose(f);
    snprintf(out, outlen, "h%016llx", (unsigned long long)h);
}

/* The build id of the object holding addr (NULL: the executable) and the
 * path of its file. */
static void build_id(const void *addr, char *id, size_t idlen, char *path,
                     size_t pathlen)
{
    struct build_probe bp = {.addr = addr, .id = id, .idlen = idlen};
    id[0] = 0;
    dl_iterate_phdr(build_probe_cb, &bp);
    if (!bp.path[0] || !addr) {
        ssize_t n = readlink("/proc/self/exe", bp.path, sizeof bp.path - 1);
        bp.path[n > 0 ? n : 0] = 0;
    }
    if (!id[0])
        file_hash(bp.path, id, idlen);
    snprintf(path, pathlen, "%s", bp.path);
}

/* Every node must run node 0's executable and libompdsm (addresses of code
 * and data must agree).  The lowest-ranked node that differs says so, in
 * one line naming both hosts and the file; every node fails. */
int comm_check_same_build(void)
{
    const struct comm_card *c0 = &comm_g.cards[0];
    int first = -1, what = 0;
    for (int r = 1; r < comm_g.size && first < 0; r++) {
        const struct comm_card *c = &comm_g.cards[r];
        if (strncmp(c->exe_id, c0->exe_id, sizeof c->exe_id) != 0)
            first = r, what = 0;
        else if (strncmp(c->lib_id, c0->lib_id, sizeof c->lib_id) != 0)
            first = r, what = 1;
    }
    if (first < 0)
        return 0;
    if (first == comm_g.rank) {
        const struct comm_card *me = &comm_g.cards[comm_g.rank];
        char a[96], b[96], id[48], path[512];
        comm_host_label(me, a, sizeof a);
        comm_host_label(c0, b, sizeof b);
        build_id(what ? (const void *)comm_init : NULL, id, sizeof id, path,
                 sizeof path);
        ompdsm_err("node %d on host %s runs a different %s (%s, build id "
                   "%.40s) than node 0 on host %s (build id %.40s): every node "
                   "must run the same build of the program and libompdsm",
                   comm_g.rank, a, what ? "libompdsm" : "executable", path,
                   what ? me->lib_id : me->exe_id, b,
                   what ? c0->lib_id : c0->exe_id);
    }
    return -EINVAL;
}

void comm_host_card(struct comm_card *c)
{
    char path[512];
    build_id(NULL, c->exe_id, sizeof c->exe_id, path, sizeof path);
    build_id((const void *)comm_init, c->lib_id, sizeof c->lib_id, path,
             sizeof path);
    gethostname(c->host, sizeof c->host - 1);
    read_boot_id(c->boot_id, sizeof c->boot_id);
    c->netns = read_netns();
}

/* ---- the card on the wire ---- */

void comm_card_encode(const struct comm_card *c, const uint32_t *qpn,
                      int nodes, void *buf)
{
    memcpy(buf, c, sizeof *c);
    memcpy((char *)buf + sizeof *c, qpn, (size_t)nodes * sizeof *qpn);
}

/* Fixed-size strings must end inside their field: a card from a build that
 * wrote them otherwise would make every later message read past them. */
static int str_ok(const char *s, size_t len)
{
    return memchr(s, 0, len) != NULL;
}

int comm_card_decode(const void *buf, size_t len, int rank, int nodes,
                     struct comm_card *c, uint32_t *qpn)
{
    char why[160] = "";
    if (len != comm_card_wire_len(nodes)) {
        snprintf(why, sizeof why, "%zu bytes, expected %zu", len,
                 comm_card_wire_len(nodes));
        goto bad;
    }
    memcpy(c, buf, sizeof *c);
    memcpy(qpn, (const char *)buf + sizeof *c, (size_t)nodes * sizeof *qpn);
    if (c->magic != COMM_CARD_MAGIC)
        snprintf(why, sizeof why, "magic 0x%08x, expected 0x%08x (another "
                 "version of libompdsm?)", c->magic, COMM_CARD_MAGIC);
    else if (c->rank != rank)
        snprintf(why, sizeof why, "it says it is node %d", c->rank);
    else if (c->transport >= COMM_TRANSPORT_KINDS)
        snprintf(why, sizeof why, "transport %u is unknown", c->transport);
    else if (!str_ok(c->exe_id, sizeof c->exe_id) ||
             !str_ok(c->lib_id, sizeof c->lib_id) ||
             !str_ok(c->host, sizeof c->host) ||
             !str_ok(c->boot_id, sizeof c->boot_id))
        snprintf(why, sizeof why, "a name is not terminated");
    else {
        for (int r = 0; r < COMM_REG_MAX && !why[0]; r++)
            if (!c->region[r].len && c->region[r].fd != -1)
                snprintf(why, sizeof why, "region %d has a memfd but no "
                         "length", r);
        if (!why[0] && comm_card_verbs_check(c, qpn, rank, nodes, why,
                                             sizeof why) == 0)
            return 0;
    }
bad:
    ompdsm_err("bootstrap: node %d sent a malformed contact card: %s", rank,
               why);
    return -EPROTO;
}
