/* comm/host.c - the contact card's common part and its wire form: what a
 * node tells the others about its host and build, and what it concludes
 * from theirs: host identity (kernel boot id, network namespace, host
 * name), the build ids of the executable and libompdsm, which must match
 * node 0's, and the checks every card received passes. */
#include "transport.h"
#include "card.h"

#include <arpa/inet.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int comm_card_same_host(const struct comm_card *a, const struct comm_card *b)
{
    return !strcmp(a->boot_id, b->boot_id) && a->netns == b->netns &&
           !strcmp(a->host, b->host);
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

/* How long the nodes that run node 0's build wait for the one that does
 * not to end the job with its line, before they end it themselves. */
enum { BUILD_WAIT_S = 5 };

/* Every node must run node 0's executable and libompdsm (addresses of code
 * and data must agree).  Under ompdsmrun the launcher compared the builds
 * before any card came (their HELLOs); this is for PMIx and other
 * starters.  The lowest-ranked node that differs ends the job with one
 * line naming both hosts and the file; the others give it the time to. */
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
    const struct comm_card *c = &comm_g.cards[first];
    if (first == comm_g.rank) {
        char a[96], b[96], id[48], path[512];
        comm_host_label(c, a, sizeof a);
        comm_host_label(c0, b, sizeof b);
        build_id(what ? (const void *)comm_init : NULL, id, sizeof id, path,
                 sizeof path);
        ompdsm_fatal("node %d on host %s runs a different %s (%s, build id "
                     "%.40s) than node 0 on host %s (build id %.40s): every "
                     "node must run the same build of the program and "
                     "libompdsm", comm_g.rank, a, what ? "libompdsm" :
                     "executable", path, what ? c->lib_id : c->exe_id, b,
                     what ? c0->lib_id : c0->exe_id);
    }
    sleep(BUILD_WAIT_S);
    ompdsm_fatal("node %d runs a different %s (build id %.40s) than node 0 "
                 "(build id %.40s): every node must run the same build of the "
                 "program and libompdsm", first, what ? "libompdsm" :
                 "executable", what ? c->lib_id : c->exe_id,
                 what ? c0->lib_id : c0->exe_id);
}

void comm_build_ids(char exe_id[48], char lib_id[48], char *exe_path,
                    size_t exe_len, char *lib_path, size_t lib_len)
{
    build_id(NULL, exe_id, 48, exe_path, exe_len);
    build_id((const void *)comm_init, lib_id, 48, lib_path, lib_len);
}

void comm_host_card(struct comm_card *c)
{
    char path[512];
    comm_build_ids(c->exe_id, c->lib_id, path, sizeof path, path, sizeof path);
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
            if (!c->region_len[r] && c->shm.fd[r] != -1)
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
