/* comm/comm.c - the comm layer's life cycle, region registry, the card
 * exchange, transport selection, and the one-sided/two-sided entry points
 * (local operations, statistics, dispatch to the transport). */
#include "transport.h"
#include "boot.h"
#include "card.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct comm_state comm_g;

/* What only this file uses. */
static struct {
    int connected;
    enum comm_transport_kind want;     /* from OMPDSM_TRANSPORT */
    /* Each transport in use, indexed by kind (AUTO unused): started once
     * for the peers it serves, stopped at comm_fini. */
    struct comm_tp {
        const struct comm_transport_ops *ops;
        struct comm_transport *tr;
    } tp[COMM_TRANSPORT_KINDS];
    /* peer[r]: the table and instance serving node r, for the fast path. */
    struct comm_tp *peer;
    int all_local;           /* every node on this host */
    struct comm_card_tcp tcp; /* this node's tcp listener, if any */
    comm_handler_fn handler[COMM_TAG_MAX];
    void *handler_arg[COMM_TAG_MAX];
} cm;

/* Statistics: relaxed atomic counters, one set per node. */
static struct comm_stats stats;
#define STAT_ADD(f, v) __atomic_fetch_add(&stats.f, (v), __ATOMIC_RELAXED)

void comm_stats_get(struct comm_stats *out)
{
    uint64_t *src = (uint64_t *)&stats, *dst = (uint64_t *)out;
    for (size_t i = 0; i < sizeof stats / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* Asynchronous operations between nodes (put, vectored put, notify, send):
 * issued here, and carried out here for a peer.  A transport that writes
 * the peer's memory within the call (shm, verbs) counts it carried out at
 * once; tcp counts it where its service thread applies it.  Equal sums
 * over every node mean nothing is in flight. */
static uint64_t traffic_tx, traffic_rx;

void comm_traffic(uint64_t *tx, uint64_t *rx)
{
    *rx = __atomic_load_n(&traffic_rx, __ATOMIC_ACQUIRE);
    *tx = __atomic_load_n(&traffic_tx, __ATOMIC_ACQUIRE);
}

void comm_traffic_rx(void)
{
    __atomic_fetch_add(&traffic_rx, 1, __ATOMIC_RELEASE);
}

static void traffic_out(int peer)
{
    __atomic_fetch_add(&traffic_tx, 1, __ATOMIC_RELEASE);
    if (!cm.peer[peer].ops->peer_counts_rx)
        comm_traffic_rx();
}

void comm_stats_add_wait(uint64_t ns, int slept)
{
    STAT_ADD(wait_ns, ns);
    if (slept)
        STAT_ADD(sleeps, 1);
}

void comm_stats_add_coll(int bcast)
{
    if (bcast)
        STAT_ADD(bcasts, 1);
    else
        STAT_ADD(barriers, 1);
}

/* The job's first failure (comm_set_failed): what ompdsm_fatal tells the
 * launcher, rather than the call that then found the job failed. */
static struct {
    char msg[768];
    int link_by, link_peer; /* comm_set_link_failed's nodes, or -1 */
    char what[512];         /* and what happened, without the hosts */
} cause = {.link_by = -1, .link_peer = -1};

static int fatal_hook(int status, const char *msg)
{
    if (!comm_g.failed)
        return comm_boot_abort(status, -1, -1, NULL, msg);
    /* A lost peer is usually a node that died: give the launcher time to
     * notice that death, report it as the cause and end us, rather than
     * racing it with "connection closed" from every survivor. */
    usleep(COMM_FAILURE_LINGER_MS * 1000);
    return comm_boot_abort(status, cause.link_by, cause.link_peer, cause.what,
                           cause.msg[0] ? cause.msg : msg);
}

void comm_abort_job(int status, const char *msg)
{
    if (comm_boot_abort(status, -1, -1, NULL, msg) < 0)
        ompdsm_err("%s", msg);
}

int comm_rank(void) { return comm_g.rank; }
int comm_size(void) { return comm_g.size; }
int comm_all_local(void) { return cm.all_local; }

const char *comm_transport_name(void)
{
    static char name[32];
    if (comm_g.size == 1)
        return "self";
    if (!name[0]) {
        for (int k = 0; k < COMM_TRANSPORT_KINDS; k++)
            if (cm.tp[k].ops)
                snprintf(name + strlen(name), sizeof name - strlen(name),
                         "%s%s", name[0] ? "+" : "", cm.tp[k].ops->name);
    }
    return name[0] ? name : "none";
}

const char *comm_peer_transport(int peer)
{
    if (peer == comm_g.rank)
        return "self";
    if (peer < 0 || peer >= comm_g.size || !cm.peer || !cm.peer[peer].ops)
        return "none";
    return cm.peer[peer].ops->name;
}

int comm_same_host(int peer)
{
    if (peer < 0 || peer >= comm_g.size || !comm_g.cards)
        return 0;
    return comm_card_same_host(&comm_g.cards[peer], &comm_g.cards[comm_g.rank]);
}

/* The first failure's message is kept and printed: prefix (formatted)
 * then, for a network failure (what set), the hosts and what. */
static void set_failed(int by, int peer, const char *what, const char *fmt,
                       va_list ap)
{
    char msg[sizeof cause.msg];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (what && n >= 0 && (size_t)n < sizeof msg) {
        char a[96], b[96];
        comm_host_label(&comm_g.cards[by], a, sizeof a);
        comm_host_label(&comm_g.cards[peer], b, sizeof b);
        snprintf(msg + n, sizeof msg - (size_t)n, "the network between host "
                 "%s and host %s failed: %s", a, b, what);
    }
    if (!__sync_lock_test_and_set(&comm_g.failed, 1)) {
        memcpy(cause.msg, msg, sizeof msg);
        snprintf(cause.what, sizeof cause.what, "%s", what ? what : "");
        cause.link_by = what ? by : -1;
        cause.link_peer = what ? peer : -1;
        ompdsm_err("%s", msg);
    }
    if (comm_g.sync)
        comm_doorbell_ring();
}

void comm_set_link_failed(int by, int peer, const char *what,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_failed(by, peer, what, fmt, ap);
    va_end(ap);
}

void comm_set_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_failed(-1, -1, NULL, fmt, ap);
    va_end(ap);
}

int comm_init(void)
{
    static const char *const kinds[] = {"auto", "shm", "tcp", "verbs"};
    ompdsm_trace_init();
    cm.want = ompdsm_env_choice("OMPDSM_TRANSPORT", kinds, 4,
                                COMM_TRANSPORT_AUTO);
    comm_coll_init();
    int rc = comm_boot_init(&comm_g.rank, &comm_g.size);
    if (rc < 0)
        return rc;
    ompdsm_log_rank = comm_g.rank;
    ompdsm_fatal_hook = fatal_hook;

    /* Spinning only helps when every node has a core of its own; with more
     * nodes than cores a spinning waiter steals the core of the node it
     * waits for, so spin just long enough to catch a reply in flight
     * (OMP_WAIT_POLICY, OMPDSM_SPIN_US: ompdsm_spin_us). */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long local = 1;
    const char *ls = getenv("OMPDSM_LOCAL_SIZE");
    if (ls && *ls)
        local = atol(ls);
    else
        local = comm_g.size;
    comm_g.spin_ns = ompdsm_spin_us(local > ncpu) * 1000;

    /* The comm layer's own region (transport.h): doorbell, collective
     * slots, shm's mailboxes. */
    size_t len = OMPDSM_ALIGN_UP(COMM_SYNC_COLL_OFF + comm_coll_area_len() +
                                 comm_shm_area_len(comm_g.size), (size_t)4096);
    int fd = memfd_create("ompdsm-sync", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
        ompdsm_err("memfd for the sync area (%zu bytes): %s", len,
                   strerror(errno));
        return -errno;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        ompdsm_err("mmap of the sync area: %s", strerror(errno));
        return -errno;
    }
    comm_g.sync = p;
    rc = comm_register(COMM_REG_SYNC, p, len, fd);
    if (rc < 0)
        return rc;

    if (comm_g.size > 1 &&
        (cm.want == COMM_TRANSPORT_AUTO || cm.want == COMM_TRANSPORT_TCP)) {
        rc = comm_tcp_listen(&cm.tcp);
        if (rc < 0)
            return rc;
    }
    OMPDSM_TRACE(OMPDSM_TR_COMM, "comm_init: rank %d of %d", comm_g.rank,
                 comm_g.size);
    return 0;
}

int comm_register(int region, void *base, size_t len, int fd)
{
    if (region < 0 || region >= COMM_REG_MAX) {
        ompdsm_err("comm_register: bad region id %d", region);
        return -EINVAL;
    }
    if (cm.connected) {
        ompdsm_err("comm_register: region %d registered after comm_connect",
                   region);
        return -EBUSY;
    }
    comm_g.reg[region].base = base;
    comm_g.reg[region].len = len;
    comm_g.reg[region].fd = fd;
    return 0;
}

/* The transport for the pair (this node, peer).  Both ends compute it from
 * the same two cards, so they agree. */
static int choose_transport(int peer, enum comm_transport_kind *kind)
{
    const struct comm_card *me = &comm_g.cards[comm_g.rank];
    const struct comm_card *c = &comm_g.cards[peer];
    int same = comm_card_same_host(me, c);
    switch (cm.want) {
    case COMM_TRANSPORT_AUTO:
        /* Between hosts, RDMA when both ends opened a device. */
        *kind = same ? COMM_TRANSPORT_SHM
                : me->verbs.present && c->verbs.present ? COMM_TRANSPORT_VERBS
                : COMM_TRANSPORT_TCP;
        return 0;
    case COMM_TRANSPORT_SHM:
        if (!same) {
            char a[96], b[96];
            comm_host_label(me, a, sizeof a);
            comm_host_label(c, b, sizeof b);
            ompdsm_err("OMPDSM_TRANSPORT=shm needs every node on one host, but "
                       "node %d (%s) and node %d (%s) are on different hosts "
                       "(%s); use auto or tcp across hosts", comm_g.rank, a,
                       peer, b, strcmp(me->boot_id, c->boot_id) ? "another kernel"
                       : me->netns != c->netns ? "another network namespace"
                       : "another host name");
            return -EINVAL;
        }
        *kind = COMM_TRANSPORT_SHM;
        return 0;
    default:
        *kind = cm.want;
        return 0;
    }
}

static const struct comm_transport_ops *const kind_ops[COMM_TRANSPORT_KINDS] = {
    [COMM_TRANSPORT_SHM] = &comm_shm_ops,
    [COMM_TRANSPORT_TCP] = &comm_tcp_ops,
    [COMM_TRANSPORT_VERBS] = &comm_verbs_ops,
};

/* Chooses each peer's transport, then starts each transport in use for
 * its peers.  Every node starts them in the same order (shm, tcp, verbs),
 * so a transport whose start waits for its peers finds them starting it. */
static int start_transports(void)
{
    int n = comm_g.size;
    comm_g.peer_kind = calloc((size_t)n, 1);
    cm.peer = calloc((size_t)n, sizeof *cm.peer);
    if (!comm_g.peer_kind || !cm.peer)
        return -ENOMEM;
    int used[COMM_TRANSPORT_KINDS] = {0};
    for (int r = 0; r < n; r++) {
        if (r == comm_g.rank)
            continue;
        enum comm_transport_kind k;
        int rc = choose_transport(r, &k);
        if (rc < 0)
            return rc;
        comm_g.peer_kind[r] = (uint8_t)k;
        used[k]++;
    }
    for (int k = 1; k < COMM_TRANSPORT_KINDS; k++) {
        if (!used[k])
            continue;
        struct comm_tp *tp = &cm.tp[k];
        tp->ops = kind_ops[k];
        int rc = tp->ops->start(&tp->tr);
        if (rc < 0) {
            tp->ops = NULL;
            return rc;
        }
    }
    for (int r = 0; r < n; r++)
        if (r != comm_g.rank)
            cm.peer[r] = cm.tp[comm_g.peer_kind[r]];
    if (ompdsm_trace_mask & OMPDSM_TR_COMM) {
        char line[1024] = "";
        for (int r = 0; r < n && strlen(line) < sizeof line - 32; r++)
            if (r != comm_g.rank)
                snprintf(line + strlen(line), sizeof line - strlen(line),
                         "%s%d:%s", line[0] ? " " : "", r,
                         comm_peer_transport(r));
        OMPDSM_TRACE(OMPDSM_TR_COMM, "transports: shm %d, tcp %d, verbs %d "
                     "peers; by peer %s", used[COMM_TRANSPORT_SHM],
                     used[COMM_TRANSPORT_TCP], used[COMM_TRANSPORT_VERBS], line);
    }
    return 0;
}

/* Whether this node opens an RDMA device before the card exchange: when
 * asked to, or under auto unless the launcher says every node is on this
 * host (then shm serves every pair). */
static int verbs_wanted(void)
{
    if (comm_g.size == 1)
        return 0;
    if (cm.want == COMM_TRANSPORT_VERBS)
        return 1;
    if (cm.want != COMM_TRANSPORT_AUTO)
        return 0;
    const char *ls = getenv("OMPDSM_LOCAL_SIZE");
    int local = ls && *ls ? atoi(ls) : comm_boot_pmix_local_size();
    return local != comm_g.size;
}

/* Fills this node's card and exchanges it; decodes every card into
 * comm_g.cards and comm_g.card_qpn. */
static int exchange_cards(void)
{
    int n = comm_g.size;
    struct comm_card mine;
    memset(&mine, 0, sizeof mine);
    mine.magic = COMM_CARD_MAGIC;
    mine.rank = comm_g.rank;
    mine.pid = getpid();
    mine.transport = cm.want;
    comm_host_card(&mine);
    mine.tcp = cm.tcp;
    for (int r = 0; r < COMM_REG_MAX; r++) {
        mine.shm.fd[r] = comm_g.reg[r].base ? comm_g.reg[r].fd : -1;
        mine.region_len[r] = comm_g.reg[r].len;
    }
    size_t wl = comm_card_wire_len(n);
    comm_g.cards = calloc((size_t)n, sizeof *comm_g.cards);
    comm_g.card_qpn = calloc((size_t)n * (size_t)n, sizeof *comm_g.card_qpn);
    unsigned char *wire = calloc((size_t)n + 1, wl);
    if (!comm_g.cards || !comm_g.card_qpn || !wire) {
        free(wire);
        return -ENOMEM;
    }
    uint32_t *myqpn = comm_g.card_qpn + (size_t)comm_g.rank * (size_t)n;
    int rc = 0;
    if (verbs_wanted())
        rc = comm_verbs_prepare(&mine.verbs, myqpn,
                                cm.want == COMM_TRANSPORT_VERBS);
    if (!rc) {
        comm_card_encode(&mine, myqpn, n, wire + (size_t)n * wl);
        rc = comm_boot_allgather(wire + (size_t)n * wl, wl, wire);
    }
    for (int r = 0; !rc && r < n; r++)
        rc = comm_card_decode(wire + (size_t)r * wl, wl, r, n, &comm_g.cards[r],
                              comm_g.card_qpn + (size_t)r * (size_t)n);
    free(wire);
    return rc;
}

int comm_connect(void)
{
    int rc = exchange_cards();
    if (rc < 0)
        return rc;
    const struct comm_card *me = &comm_g.cards[comm_g.rank];
    if ((rc = comm_check_same_build()) < 0)
        return rc;
    cm.all_local = 1;
    for (int r = 0; r < comm_g.size; r++) {
        struct comm_card *c = &comm_g.cards[r];
        if (c->transport != me->transport) {
            ompdsm_err("nodes disagree on OMPDSM_TRANSPORT (node 0 and node "
                       "%d); export the same value to every node", r);
            return -EINVAL;
        }
        for (int g = 0; g < COMM_REG_MAX; g++)
            if (c->region_len[g] != me->region_len[g]) {
                ompdsm_err("node %d registered region %d with %llu bytes, this "
                           "node with %llu; every node must use the same "
                           "settings (OMPDSM_HEAP_SIZE ...)",
                           r, g, (unsigned long long)c->region_len[g],
                           (unsigned long long)me->region_len[g]);
                return -EINVAL;
            }
        if (!comm_card_same_host(c, me))
            cm.all_local = 0;
    }

    if (comm_g.size > 1) {
        rc = start_transports();
        if (rc < 0)
            return rc;
    }
    if (!cm.tp[COMM_TRANSPORT_VERBS].ops)
        comm_verbs_release();
    if (!cm.tp[COMM_TRANSPORT_TCP].ops)
        comm_tcp_release();
    /* A node bound to one CPU that spins takes that CPU from its own tcp
     * service thread, which must run to deliver the notify being waited
     * for: block at once instead (unless OMPDSM_SPIN_US says otherwise). */
    cpu_set_t cpus;
    if (cm.tp[COMM_TRANSPORT_TCP].ops && !getenv("OMPDSM_SPIN_US") &&
        sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1)
        comm_g.spin_ns = 0;
    cm.connected = 1;
    OMPDSM_TRACE(OMPDSM_TR_COMM, "comm_connect: transport %s, all local %d",
                 comm_transport_name(), cm.all_local);
    /* Nobody may use a peer's memory before every node has it mapped. */
    return comm_barrier(COMM_WORLD);
}

void comm_fini(void)
{
    if (cm.connected && comm_g.size > 1 && !comm_g.failed)
        comm_barrier(COMM_WORLD);
    for (int k = COMM_TRANSPORT_KINDS - 1; k > 0; k--) {
        struct comm_tp *tp = &cm.tp[k];
        if (tp->ops && tp->tr)
            tp->ops->stop(tp->tr);
        tp->tr = NULL;
    }
    free(cm.peer);
    free(comm_g.peer_kind);
    cm.peer = NULL;
    comm_g.peer_kind = NULL;
    cm.connected = 0;
    comm_boot_fini();
}

/* ---- local operations ---- */

int comm_local_check(int region, uint64_t off, size_t len, const char *what,
                     int src)
{
    if (region < 0 || region >= COMM_REG_MAX || !comm_g.reg[region].base ||
        off > comm_g.reg[region].len || len > comm_g.reg[region].len - off) {
        ompdsm_err("%s from node %d: region %d offset %llu length %zu is "
                   "outside the registered memory",
                   what, src, region, (unsigned long long)off, len);
        return -EFAULT;
    }
    return 0;
}

static inline char *local_addr(int region, uint64_t off)
{
    return (char *)comm_g.reg[region].base + off;
}

void comm_local_notify(int region, uint64_t off, uint64_t value)
{
    __atomic_store_n((uint64_t *)local_addr(region, off), value,
                     __ATOMIC_RELEASE);
    comm_doorbell_ring();
}

static int check_peer(int peer, const char *what)
{
    if (OMPDSM_UNLIKELY(peer < 0 || peer >= comm_g.size)) {
        ompdsm_err("%s: no node %d (job has %d)", what, peer, comm_g.size);
        return -EINVAL;
    }
    if (OMPDSM_UNLIKELY(comm_g.failed))
        return -ECONNABORTED;
    return 0;
}

int comm_put(int peer, int region, uint64_t off, const void *src, size_t len)
{
    int rc = check_peer(peer, "put");
    if (rc < 0)
        return rc;
    STAT_ADD(puts, 1);
    STAT_ADD(put_bytes, len);
    if (peer == comm_g.rank) {
        if ((rc = comm_local_check(region, off, len, "put", peer)) < 0)
            return rc;
        memcpy(local_addr(region, off), src, len);
        return 0;
    }
    traffic_out(peer);
    return cm.peer[peer].ops->put(cm.peer[peer].tr, peer, region, off, src, len);
}

int comm_putv(int peer, int region, uint64_t base, const void *src,
              const struct comm_run *runs, size_t nruns)
{
    int rc = check_peer(peer, "put");
    if (rc < 0 || !nruns)
        return rc;
    uint64_t bytes = 0;
    for (size_t k = 0; k < nruns; k++)
        bytes += runs[k].len;
    STAT_ADD(puts, 1);
    STAT_ADD(put_bytes, bytes);
    const struct comm_run *last = &runs[nruns - 1];
    if (peer == comm_g.rank) {
        if ((rc = comm_local_check(region, base, (size_t)last->off + last->len,
                                   "put", peer)) < 0)
            return rc;
        for (size_t k = 0; k < nruns; k++)
            memcpy(local_addr(region, base + runs[k].off),
                   (const char *)src + runs[k].off, runs[k].len);
        return 0;
    }
    const struct comm_tp *tp = &cm.peer[peer];
    if (tp->ops->putv) {
        traffic_out(peer);
        return tp->ops->putv(tp->tr, peer, region, base, src, runs, nruns);
    }
    for (size_t k = 0; k < nruns && !rc; k++, traffic_out(peer))
        rc = tp->ops->put(tp->tr, peer, region, base + runs[k].off,
                             (const char *)src + runs[k].off, runs[k].len);
    return rc;
}

int comm_get(int peer, int region, uint64_t off, void *dst, size_t len)
{
    int rc = check_peer(peer, "get");
    if (rc < 0)
        return rc;
    STAT_ADD(gets, 1);
    STAT_ADD(get_bytes, len);
    if (peer == comm_g.rank) {
        if ((rc = comm_local_check(region, off, len, "get", peer)) < 0)
            return rc;
        memcpy(dst, local_addr(region, off), len);
        return 0;
    }
    return cm.peer[peer].ops->get(cm.peer[peer].tr, peer, region, off, dst, len);
}

int comm_fetch_add(int peer, int region, uint64_t off, uint64_t add,
                   uint64_t *old)
{
    int rc = check_peer(peer, "fetch-add");
    if (rc < 0)
        return rc;
    if (OMPDSM_UNLIKELY(off & 7)) {
        ompdsm_err("fetch-add: offset %llu is not 8-byte aligned",
                   (unsigned long long)off);
        return -EINVAL;
    }
    STAT_ADD(atomics, 1);
    if (peer == comm_g.rank) {
        if ((rc = comm_local_check(region, off, 8, "fetch-add", peer)) < 0)
            return rc;
        *old = __atomic_fetch_add((uint64_t *)local_addr(region, off), add,
                                  __ATOMIC_SEQ_CST);
        return 0;
    }
    return cm.peer[peer].ops->fetch_add(cm.peer[peer].tr, peer, region, off, add, old);
}

int comm_cas(int peer, int region, uint64_t off, uint64_t expect,
             uint64_t desired, uint64_t *old)
{
    int rc = check_peer(peer, "compare-swap");
    if (rc < 0)
        return rc;
    if (OMPDSM_UNLIKELY(off & 7)) {
        ompdsm_err("compare-swap: offset %llu is not 8-byte aligned",
                   (unsigned long long)off);
        return -EINVAL;
    }
    STAT_ADD(atomics, 1);
    if (peer == comm_g.rank) {
        if ((rc = comm_local_check(region, off, 8, "compare-swap", peer)) < 0)
            return rc;
        uint64_t e = expect;
        __atomic_compare_exchange_n((uint64_t *)local_addr(region, off), &e,
                                    desired, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        *old = e;
        return 0;
    }
    return cm.peer[peer].ops->cas(cm.peer[peer].tr, peer, region, off, expect, desired, old);
}

int comm_notify(int peer, int region, uint64_t off, uint64_t value)
{
    int rc = check_peer(peer, "notify");
    if (rc < 0)
        return rc;
    if (OMPDSM_UNLIKELY(off & 7)) {
        ompdsm_err("notify: offset %llu is not 8-byte aligned",
                   (unsigned long long)off);
        return -EINVAL;
    }
    STAT_ADD(notifies, 1);
    if (peer == comm_g.rank) {
        if ((rc = comm_local_check(region, off, 8, "notify", peer)) < 0)
            return rc;
        comm_local_notify(region, off, value);
        return 0;
    }
    traffic_out(peer);
    return cm.peer[peer].ops->notify(cm.peer[peer].tr, peer, region, off, value);
}

int comm_fence(int peer)
{
    if (OMPDSM_UNLIKELY(comm_g.failed))
        return -ECONNABORTED;
    if (comm_g.size == 1 || peer == comm_g.rank)
        return 0;
    STAT_ADD(fences, 1);
    if (peer < 0) {
        for (int p = 0; p < comm_g.size; p++)
            if (p != comm_g.rank) {
                int rc = cm.peer[p].ops->fence(cm.peer[p].tr, p);
                if (rc < 0)
                    return rc;
            }
        return 0;
    }
    int rc = check_peer(peer, "fence");
    if (rc < 0)
        return rc;
    return cm.peer[peer].ops->fence(cm.peer[peer].tr, peer);
}

/* ---- control messages ---- */

int comm_set_handler(int tag, comm_handler_fn fn, void *arg)
{
    if (tag < 0 || tag >= COMM_TAG_MAX)
        return -EINVAL;
    cm.handler_arg[tag] = arg;
    __atomic_store_n(&cm.handler[tag], fn, __ATOMIC_RELEASE);
    return 0;
}

void comm_dispatch(int src, int tag, const void *buf, size_t len)
{
    comm_handler_fn fn = NULL;
    if (tag >= 0 && tag < COMM_TAG_MAX)
        fn = __atomic_load_n(&cm.handler[tag], __ATOMIC_ACQUIRE);
    if (!fn) {
        ompdsm_warn("message with tag %d from node %d has no handler; dropped",
                    tag, src);
        return;
    }
    fn(src, tag, buf, len, cm.handler_arg[tag]);
    if (src != comm_g.rank)
        comm_traffic_rx();
}

int comm_send(int peer, int tag, const void *buf, size_t len)
{
    int rc = check_peer(peer, "send");
    if (rc < 0)
        return rc;
    if (tag < 0 || tag >= COMM_TAG_MAX || len > COMM_MSG_MAX) {
        ompdsm_err("send: bad tag %d or length %zu (max %d)", tag, len,
                   COMM_MSG_MAX);
        return -EINVAL;
    }
    STAT_ADD(sends, 1);
    STAT_ADD(send_bytes, len);
    if (peer == comm_g.rank) {
        comm_dispatch(peer, tag, buf, len);
        return 0;
    }
    /* Received where the peer dispatches it (comm_dispatch). */
    __atomic_fetch_add(&traffic_tx, 1, __ATOMIC_RELEASE);
    return cm.peer[peer].ops->send(cm.peer[peer].tr, peer, tag, buf, len);
}

/* ---- payload buffers ---- */

int comm_buf_reserve(struct comm_buf *b, size_t cap)
{
    if (cap <= b->cap)
        return 0;
    size_t n = b->cap ? b->cap : 256;
    while (n < cap)
        n *= 2;
    void *p = realloc(b->data, n);
    if (!p) {
        ompdsm_err("out of memory for a %zu-byte collective payload", n);
        return -ENOMEM;
    }
    b->data = p;
    b->cap = n;
    return 0;
}

int comm_buf_append(struct comm_buf *b, const void *p, size_t len)
{
    int rc = comm_buf_reserve(b, b->len + len);
    if (rc < 0)
        return rc;
    if (len)
        memcpy((char *)b->data + b->len, p, len);
    b->len += len;
    return 0;
}

void comm_buf_free(struct comm_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
