/* comm/tcp_addr.c - the IPv4 address a node's tcp listener binds to and
 * advertises in its card, by precedence: OMPDSM_TCP_ADDR, OMPDSM_IFACE (an
 * interface or a subnet), the route toward the launcher (our end of the
 * bootstrap connection) or, under PMIx, toward node 0's host; loopback
 * when none applies (one host). */
#include "tcp_int.h"
#include "boot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

int tcp_addr_choose(uint32_t *out, const char **how)
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
