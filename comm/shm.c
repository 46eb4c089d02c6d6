/* comm/shm.c - the shared-memory transport for nodes on one host.  Every
 * node maps the registered regions of each peer it serves, the nodes of its
 * own host (memfds opened through /proc/PID/fd), so put, get and atomics
 * are plain memory operations on the peer's memory with no CPU of the peer
 * involved.  Control messages go through one-producer rings (mailboxes)
 * at the end of the receiver's COMM_REG_SYNC, drained by a service thread
 * that sleeps on a futex of its own. */
#include "transport.h"
#include "card.h"
#include "util/futex.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct comm_transport {
    int size, rank;
    /* base[peer * COMM_REG_MAX + region]: the peer's region mapped here */
    char **base;
    size_t *len;
    pthread_mutex_t *send_lock; /* per receiver: one sender thread at a time */
    pthread_t service;
    volatile int stop;
};

/* A single-producer single-consumer ring of control messages from one
 * sender, in the receiver's memory.  Records are struct mbox_rec then the
 * payload, padded to 8 bytes; a record never wraps (a pad record with tag
 * -1 fills the end of the ring). */
enum { MBOX_DATA = 256 * 1024 };
struct mbox {
    volatile uint64_t head; /* consumed bytes, written by the receiver */
    char pad0[OMPDSM_CACHELINE - 8];
    volatile uint64_t tail; /* produced bytes, written by the sender */
    char pad1[OMPDSM_CACHELINE - 8];
    char data[MBOX_DATA];
};
struct mbox_rec {
    int32_t tag; /* -1: padding to the end of the ring */
    uint32_t len;
};

/* shm's part of a node's COMM_REG_SYNC: the last comm_shm_area_len bytes. */
struct shm_area {
    /* A futex of the service thread's own, so that it sleeping does not
     * make every notify (which rings the doorbell) pay for a wake-up. */
    volatile uint32_t bell;
    volatile uint32_t sleepers;
    char pad[OMPDSM_CACHELINE - 8];
    struct mbox mbox[]; /* one per sender */
};

size_t comm_shm_area_len(int nodes)
{
    return sizeof(struct shm_area) + (size_t)nodes * sizeof(struct mbox);
}

/* The shm area of a sync region of len bytes mapped at sync_base. */
static struct shm_area *area_of(void *sync_base, size_t len, int nodes)
{
    return (struct shm_area *)((char *)sync_base + len -
                               comm_shm_area_len(nodes));
}

static inline char *peer_addr(struct comm_transport *t, int peer, int region,
                              uint64_t off, size_t len, const char *what)
{
    size_t i = (size_t)peer * COMM_REG_MAX + (size_t)region;
    if (OMPDSM_UNLIKELY(region < 0 || region >= COMM_REG_MAX || !t->base[i] ||
                        off > t->len[i] || len > t->len[i] - off)) {
        ompdsm_err("shm %s to node %d: region %d offset %llu length %zu is "
                   "outside its registered memory",
                   what, peer, region, (unsigned long long)off, len);
        return NULL;
    }
    return t->base[i] + off;
}

static int shm_put(struct comm_transport *t, int peer, int region,
                   uint64_t off, const void *src, size_t len)
{
    char *p = peer_addr(t, peer, region, off, len, "put");
    if (!p)
        return -EFAULT;
    memcpy(p, src, len);
    return 0;
}

/* Runs are sorted by offset (diffs are), so the last one bounds them all. */
static int shm_putv(struct comm_transport *t, int peer, int region,
                    uint64_t base, const void *src, const struct comm_run *runs,
                    size_t nruns)
{
    const struct comm_run *last = &runs[nruns - 1];
    char *p = peer_addr(t, peer, region, base, (size_t)last->off + last->len,
                        "put");
    if (!p)
        return -EFAULT;
    for (size_t k = 0; k < nruns; k++)
        memcpy(p + runs[k].off, (const char *)src + runs[k].off, runs[k].len);
    return 0;
}

static int shm_get(struct comm_transport *t, int peer, int region,
                   uint64_t off, void *dst, size_t len)
{
    char *p = peer_addr(t, peer, region, off, len, "get");
    if (!p)
        return -EFAULT;
    /* Earlier puts (plain stores) are visible before these loads. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    memcpy(dst, p, len);
    return 0;
}

static int shm_fetch_add(struct comm_transport *t, int peer, int region,
                         uint64_t off, uint64_t add, uint64_t *old)
{
    char *p = peer_addr(t, peer, region, off, 8, "fetch-add");
    if (!p)
        return -EFAULT;
    *old = __atomic_fetch_add((uint64_t *)p, add, __ATOMIC_SEQ_CST);
    return 0;
}

static int shm_cas(struct comm_transport *t, int peer, int region,
                   uint64_t off, uint64_t expect, uint64_t desired,
                   uint64_t *old)
{
    char *p = peer_addr(t, peer, region, off, 8, "compare-swap");
    if (!p)
        return -EFAULT;
    __atomic_compare_exchange_n((uint64_t *)p, &expect, desired, 0,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = expect;
    return 0;
}

static struct comm_sync_area *peer_sync(struct comm_transport *t, int peer)
{
    return (struct comm_sync_area *)t->base[(size_t)peer * COMM_REG_MAX +
                                            COMM_REG_SYNC];
}

/* Every node's sync region has this node's length (the card exchange
 * checked it). */
static struct shm_area *peer_area(struct comm_transport *t, int peer)
{
    return area_of(peer_sync(t, peer), comm_g.reg[COMM_REG_SYNC].len, t->size);
}

static struct shm_area *my_area(void)
{
    return area_of(comm_g.sync, comm_g.reg[COMM_REG_SYNC].len, comm_g.size);
}

static int shm_notify(struct comm_transport *t, int peer, int region,
                      uint64_t off, uint64_t value)
{
    char *p = peer_addr(t, peer, region, off, 8, "notify");
    if (!p)
        return -EFAULT;
    __atomic_store_n((uint64_t *)p, value, __ATOMIC_RELEASE);
    comm_doorbell_ring_area(peer_sync(t, peer));
    return 0;
}

static int shm_fence(struct comm_transport *t, int peer)
{
    (void)t;
    (void)peer;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static int shm_send(struct comm_transport *t, int peer, int tag,
                    const void *buf, size_t len)
{
    struct shm_area *pa = peer_area(t, peer);
    struct mbox *mb = &pa->mbox[t->rank];
    size_t need = sizeof(struct mbox_rec) + OMPDSM_ALIGN_UP(len, (size_t)8);
    pthread_mutex_lock(&t->send_lock[peer]);
    uint64_t tail = mb->tail;
    for (int pass = 0;; pass++) {
        uint64_t head = __atomic_load_n(&mb->head, __ATOMIC_ACQUIRE);
        size_t pos = tail % MBOX_DATA;
        size_t to_end = MBOX_DATA - pos;
        /* A record never wraps: pad to the end when it does not fit. */
        size_t total = need <= to_end ? need : to_end + need;
        if (MBOX_DATA - (tail - head) >= total)
            break;
        if (comm_g.failed) {
            pthread_mutex_unlock(&t->send_lock[peer]);
            return -ECONNABORTED;
        }
        /* The receiver's service thread drains rings promptly; a full ring
         * means it is busy, so back off instead of spinning. */
        struct timespec ts = {0, pass < 10 ? 10000 : 1000000};
        nanosleep(&ts, NULL);
    }
    size_t pos = tail % MBOX_DATA;
    if (MBOX_DATA - pos < need) {
        struct mbox_rec pad = {-1, (uint32_t)(MBOX_DATA - pos)};
        memcpy(mb->data + pos, &pad, sizeof pad);
        tail += MBOX_DATA - pos;
        pos = 0;
    }
    struct mbox_rec rec = {tag, (uint32_t)len};
    memcpy(mb->data + pos, &rec, sizeof rec);
    memcpy(mb->data + pos + sizeof rec, buf, len);
    __atomic_store_n(&mb->tail, tail + need, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t->send_lock[peer]);
    __atomic_fetch_add(&pa->bell, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pa->sleepers, __ATOMIC_SEQ_CST))
        ompdsm_futex(&pa->bell, FUTEX_WAKE, 1, NULL);
    return 0;
}

/* Drains every ring once; returns the number of messages dispatched. */
static int drain(struct comm_transport *t)
{
    int n = 0;
    char *buf = NULL;
    struct shm_area *a = my_area();
    for (int s = 0; s < t->size; s++) {
        if (!comm_serves(s, COMM_TRANSPORT_SHM))
            continue;
        struct mbox *mb = &a->mbox[s];
        uint64_t head = mb->head;
        uint64_t tail = __atomic_load_n(&mb->tail, __ATOMIC_ACQUIRE);
        while (head != tail) {
            size_t pos = head % MBOX_DATA;
            struct mbox_rec rec;
            memcpy(&rec, mb->data + pos, sizeof rec);
            if (rec.tag < 0) {
                head += rec.len;
                continue;
            }
            /* Copy out so that the sender may reuse the space while the
             * handler runs. */
            if (!buf && !(buf = malloc(COMM_MSG_MAX)))
                ompdsm_fatal("out of memory in the shm service thread");
            memcpy(buf, mb->data + pos + sizeof rec, rec.len);
            head += sizeof rec + OMPDSM_ALIGN_UP((size_t)rec.len, (size_t)8);
            __atomic_store_n(&mb->head, head, __ATOMIC_RELEASE);
            comm_dispatch(s, rec.tag, buf, rec.len);
            n++;
        }
        __atomic_store_n(&mb->head, head, __ATOMIC_RELEASE);
    }
    free(buf);
    return n;
}

static void *service_main(void *arg)
{
    struct comm_transport *t = arg;
    struct shm_area *a = my_area();
    while (!t->stop) {
        __atomic_fetch_add(&a->sleepers, 1, __ATOMIC_SEQ_CST);
        uint32_t bell = __atomic_load_n(&a->bell, __ATOMIC_SEQ_CST);
        int n = drain(t);
        if (!n && !t->stop) {
            struct timespec ts = {0, 500L * 1000 * 1000};
            ompdsm_futex(&a->bell, FUTEX_WAIT, bell, &ts);
        }
        __atomic_fetch_sub(&a->sleepers, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void shm_stop(struct comm_transport *t)
{
    if (!t)
        return;
    if (t->service) {
        t->stop = 1;
        struct shm_area *a = my_area();
        __atomic_fetch_add(&a->bell, 1, __ATOMIC_SEQ_CST);
        ompdsm_futex(&a->bell, FUTEX_WAKE, INT32_MAX, NULL);
        pthread_join(t->service, NULL);
    }
    /* Also called when shm_start failed to allocate the tables. */
    for (int p = 0; t->base && t->len && p < t->size; p++)
        for (int r = 0; r < COMM_REG_MAX; r++) {
            size_t i = (size_t)p * COMM_REG_MAX + (size_t)r;
            if (p != t->rank && t->base[i])
                munmap(t->base[i], t->len[i]);
        }
    free(t->base);
    free(t->len);
    free(t->send_lock);
    free(t);
}

static int shm_start(struct comm_transport **out)
{
    struct comm_transport *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->size = comm_g.size;
    t->rank = comm_g.rank;
    t->base = calloc((size_t)t->size * COMM_REG_MAX, sizeof *t->base);
    t->len = calloc((size_t)t->size * COMM_REG_MAX, sizeof *t->len);
    t->send_lock = calloc((size_t)t->size, sizeof *t->send_lock);
    if (!t->base || !t->len || !t->send_lock) {
        shm_stop(t);
        return -ENOMEM;
    }
    for (int p = 0; p < t->size; p++)
        pthread_mutex_init(&t->send_lock[p], NULL);
    for (int p = 0; p < t->size; p++) {
        for (int r = 0; r < COMM_REG_MAX; r++) {
            size_t i = (size_t)p * COMM_REG_MAX + (size_t)r;
            if (p == t->rank) {
                t->base[i] = comm_g.reg[r].base;
                t->len[i] = comm_g.reg[r].len;
                continue;
            }
            const struct comm_card *c = &comm_g.cards[p];
            if (!c->region_len[r] || !comm_serves(p, COMM_TRANSPORT_SHM))
                continue;
            if (c->shm.fd[r] < 0) {
                ompdsm_err("shm: node %d's region %d has no memfd to share", p,
                           r);
                shm_stop(t);
                return -EINVAL;
            }
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/fd/%d", c->pid,
                     c->shm.fd[r]);
            int fd = open(path, O_RDWR | O_CLOEXEC);
            if (fd < 0) {
                int e = errno;
                ompdsm_err("shm: cannot open node %d's region %d (%s): %s; "
                           "nodes must run as one user on one host",
                           p, r, path, strerror(e));
                shm_stop(t);
                return -e;
            }
            void *m = mmap(NULL, c->region_len[r], PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_NORESERVE, fd, 0);
            int e = errno;
            close(fd);
            if (m == MAP_FAILED) {
                ompdsm_err("shm: cannot map node %d's region %d (%llu bytes): "
                           "%s", p, r, (unsigned long long)c->region_len[r],
                           strerror(e));
                shm_stop(t);
                return -e;
            }
            t->base[i] = m;
            t->len[i] = c->region_len[r];
        }
    }
    int rc = pthread_create(&t->service, NULL, service_main, t);
    if (rc) {
        t->service = 0;
        ompdsm_err("shm: cannot start the service thread: %s", strerror(rc));
        shm_stop(t);
        return -rc;
    }
    *out = t;
    return 0;
}

const struct comm_transport_ops comm_shm_ops = {
    .name = "shm",
    .start = shm_start,
    .stop = shm_stop,
    .put = shm_put,
    .putv = shm_putv,
    .get = shm_get,
    .fetch_add = shm_fetch_add,
    .cas = shm_cas,
    .notify = shm_notify,
    .fence = shm_fence,
    .send = shm_send,
};
