/* comm/coll.c - collectives on top of any transport, built from one-sided
 * puts and notifies only: a barrier is a tree gather of arrivals followed
 * by a tree broadcast of the release, as in the SR2201's soft barrier.
 * Both directions carry a payload, so that the layers above piggyback write
 * notices, reduction values and scheduling data on the one barrier a
 * consistency point costs.
 *
 * Tree over the group's ranks 0..n-1 with fan-out F: parent(r) = (r-1)/F,
 * children r*F+1 .. r*F+F.  Each node owns, per channel, one arrival word
 * and one payload slot per child and two release words/slots (by sequence
 * parity), all in its COMM_REG_SYNC.  A payload too big for a slot stays in
 * the writer's spill buffer and the reader fetches it with a get. */
#include "transport.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum {
    FANOUT_MAX = 16,
    SLOT_SIZE = 16 * 1024,        /* inline payload per slot */
    SPILL_SIZE = 16 * 1024 * 1024 /* per spill buffer, lazily touched */
};

/* Header of a payload slot; the payload follows inline or lives in the
 * writer's spill buffer (read with comm_get). */
struct slot_hdr {
    uint64_t len;       /* payload bytes */
    uint64_t spill_off; /* offset in the writer's COMM_REG_SYNC, 0 = inline */
};

/* Per channel, on every node. */
struct chan_area {
    /* arrive[i] = sequence number of the last gather child i finished */
    struct {
        volatile uint64_t seq;
        char pad[OMPDSM_CACHELINE - 8];
    } arrive[FANOUT_MAX];
    /* release[p] = sequence number of the last release (parity p) */
    struct {
        volatile uint64_t seq;
        char pad[OMPDSM_CACHELINE - 8];
    } release[2];
    /* slots written by children (up) and by the parent (down, by parity) */
    char up[FANOUT_MAX][SLOT_SIZE];
    char down[2][SLOT_SIZE];
};

/* The collectives' part of every node's COMM_REG_SYNC, at
 * COMM_SYNC_COLL_OFF (transport.h). */
struct coll_area {
    struct chan_area chan[COMM_CHANNELS];
    /* Spill buffers: per channel, one for up payloads and two (by parity)
     * for down payloads; aligned to pages. */
    char spill[COMM_CHANNELS][3][SPILL_SIZE] __attribute__((aligned(4096)));
};

size_t comm_coll_area_len(void)
{
    return sizeof(struct coll_area);
}

enum { SPILL_UP = 0, SPILL_DOWN0 = 1 };

/* Offsets in COMM_REG_SYNC, the same on every node. */
#define CHAN_OFF(c, field) \
    (COMM_SYNC_COLL_OFF + offsetof(struct coll_area, chan) + \
     (size_t)(c) * sizeof(struct chan_area) + \
     offsetof(struct chan_area, field))
#define SPILL_OFF(c, which) \
    (COMM_SYNC_COLL_OFF + offsetof(struct coll_area, spill) + \
     ((size_t)(c) * 3 + (size_t)(which)) * SPILL_SIZE)

static int fanout;                        /* OMPDSM_TREE_FANOUT */
static uint64_t coll_seq[COMM_CHANNELS];  /* last collective, per channel */

void comm_coll_init(void)
{
    fanout = (int)ompdsm_env_u64("OMPDSM_TREE_FANOUT", 4, 2, FANOUT_MAX, 0);
}

/* Scratch for building a slot image (header + inline payload); one
 * collective at a time per channel, so one buffer per channel. */
static char scratch[COMM_CHANNELS][SLOT_SIZE];

static int check_group(struct comm_group g)
{
    if (g.chan < 0 || g.chan >= COMM_CHANNELS || g.nodes < 1 ||
        g.nodes > comm_g.size || comm_g.rank >= g.nodes) {
        ompdsm_err("collective on channel %d over %d nodes: not a member or "
                   "bad group", g.chan, g.nodes);
        return -EINVAL;
    }
    return 0;
}

/* Writes a payload into peer's slot at slot_off: inline when it fits, else
 * from our spill buffer `which` of the channel. */
static int write_payload(int c, int peer, size_t slot_off, int which,
                         const void *data, size_t len)
{
    struct slot_hdr *h = (struct slot_hdr *)scratch[c];
    h->len = len;
    if (len <= SLOT_SIZE - sizeof *h) {
        h->spill_off = 0;
        if (len)
            memcpy(h + 1, data, len);
        return comm_put(peer, COMM_REG_SYNC, slot_off, h, sizeof *h + len);
    }
    if (len > SPILL_SIZE) {
        ompdsm_err("collective payload of %zu bytes exceeds the %d-byte limit",
                   len, SPILL_SIZE);
        return -E2BIG;
    }
    size_t so = SPILL_OFF(c, which);
    /* The spill buffer is ours: fill it once, every reader gets from it. */
    char *mine = (char *)comm_g.sync + so;
    if (mine != data)
        memcpy(mine, data, len);
    h->spill_off = so;
    return comm_put(peer, COMM_REG_SYNC, slot_off, h, sizeof *h);
}

/* Reads the payload written into our slot at slot_off by node src. */
static int read_payload(int src, size_t slot_off, struct comm_buf *out)
{
    const struct slot_hdr *h =
        (const struct slot_hdr *)((char *)comm_g.sync + slot_off);
    size_t len = h->len;
    out->len = 0;
    int rc = comm_buf_reserve(out, len ? len : 1);
    if (rc < 0)
        return rc;
    if (!h->spill_off)
        memcpy(out->data, h + 1, len);
    else if ((rc = comm_get(src, COMM_REG_SYNC, h->spill_off, out->data, len)) < 0)
        return rc;
    out->len = len;
    return 0;
}

/* Waits for our release word of this parity to reach seq, then copies the
 * parent's payload into down and forwards it to our children. */
static int down_phase(struct comm_group g, uint64_t seq, struct comm_buf *down,
                      int have_payload)
{
    int c = g.chan, r = comm_g.rank, F = fanout;
    int par = (int)(seq & 1);
    int rc;
    if (r != 0) {
        const volatile uint64_t *w =
            (const volatile uint64_t *)((char *)comm_g.sync +
                                        CHAN_OFF(c, release[par].seq));
        if ((rc = comm_wait_ge(w, seq)) < 0)
            return rc;
        if ((rc = read_payload((r - 1) / F, CHAN_OFF(c, down[par]), down)) < 0)
            return rc;
    } else if (!have_payload) {
        down->len = 0;
    }
    for (int k = 0; k < F; k++) {
        int ch = r * F + 1 + k;
        if (ch >= g.nodes)
            break;
        if ((rc = write_payload(c, ch, CHAN_OFF(c, down[par]), SPILL_DOWN0 + par,
                                down->data, down->len)) < 0)
            return rc;
        if ((rc = comm_notify(ch, COMM_REG_SYNC, CHAN_OFF(c, release[par].seq),
                              seq)) < 0)
            return rc;
    }
    return 0;
}

int comm_barrier_x(struct comm_group g, const void *up, size_t uplen,
                   comm_combine_fn combine, comm_root_fn root_fn, void *ctx,
                   struct comm_buf *down)
{
    int rc = check_group(g);
    if (rc < 0)
        return rc;
    int c = g.chan, r = comm_g.rank, F = fanout;
    uint64_t seq = ++coll_seq[c];
    comm_stats_add_coll(0);
    OMPDSM_TRACE(OMPDSM_TR_COLL, "barrier chan %d seq %llu over %d", c,
                 (unsigned long long)seq, g.nodes);

    struct comm_buf acc = {0}, in = {0}, local_down = {0};
    if (!down)
        down = &local_down;
    if ((rc = comm_buf_append(&acc, up, uplen)) < 0)
        goto out;
    for (int k = 0; k < F; k++) {
        int ch = r * F + 1 + k;
        if (ch >= g.nodes)
            break;
        const volatile uint64_t *w =
            (const volatile uint64_t *)((char *)comm_g.sync +
                                        CHAN_OFF(c, arrive[k].seq));
        if ((rc = comm_wait_ge(w, seq)) < 0)
            goto out;
        if ((rc = read_payload(ch, CHAN_OFF(c, up[k]), &in)) < 0)
            goto out;
        if (combine)
            rc = combine(ctx, &acc, in.data, in.len);
        else if (in.len) {
            ompdsm_err("barrier: node %d sent a payload but no combine given",
                       ch);
            rc = -EPROTO;
        }
        if (rc < 0)
            goto out;
    }
    if (r != 0) {
        int parent = (r - 1) / F, idx = (r - 1) % F;
        if ((rc = write_payload(c, parent, CHAN_OFF(c, up[idx]), SPILL_UP,
                                acc.data, acc.len)) < 0)
            goto out;
        if ((rc = comm_notify(parent, COMM_REG_SYNC, CHAN_OFF(c, arrive[idx].seq),
                              seq)) < 0)
            goto out;
        rc = down_phase(g, seq, down, 0);
    } else {
        if (root_fn && (rc = root_fn(ctx, &acc)) < 0)
            goto out;
        down->len = 0;
        if ((rc = comm_buf_append(down, acc.data, acc.len)) < 0)
            goto out;
        rc = down_phase(g, seq, down, 1);
    }
out:
    comm_buf_free(&acc);
    comm_buf_free(&in);
    comm_buf_free(&local_down);
    return rc;
}

uint64_t comm_coll_seq(int chan)
{
    return coll_seq[chan];
}

void comm_coll_set_seq(int chan, uint64_t seq)
{
    if (seq > coll_seq[chan])
        coll_seq[chan] = seq;
}

int comm_barrier(struct comm_group g)
{
    return comm_barrier_x(g, NULL, 0, NULL, NULL, NULL, NULL);
}

int comm_bcast0(struct comm_group g, struct comm_buf *buf)
{
    int rc = check_group(g);
    if (rc < 0)
        return rc;
    uint64_t seq = ++coll_seq[g.chan];
    comm_stats_add_coll(1);
    OMPDSM_TRACE(OMPDSM_TR_COLL, "bcast0 chan %d seq %llu over %d", g.chan,
                 (unsigned long long)seq, g.nodes);
    return down_phase(g, seq, buf, 1);
}

/* ---- derived collectives ---- */

struct take_ctx {
    int dummy;
};

/* Keeps whichever of acc/in is non-empty (exactly one member contributes). */
static int take_nonempty(void *ctx, struct comm_buf *acc, const void *in,
                         size_t inlen)
{
    (void)ctx;
    if (!inlen)
        return 0;
    acc->len = 0;
    return comm_buf_append(acc, in, inlen);
}

int comm_bcast(struct comm_group g, int root, void *buf, size_t len)
{
    if (root < 0 || root >= g.nodes)
        return -EINVAL;
    struct comm_buf down = {0};
    int rc = comm_barrier_x(g, buf, comm_g.rank == root ? len : 0,
                            take_nonempty, NULL, NULL, &down);
    if (!rc && down.len != len) {
        ompdsm_err("broadcast: got %zu bytes, expected %zu", down.len, len);
        rc = -EPROTO;
    }
    if (!rc && comm_g.rank != root)
        memcpy(buf, down.data, len);
    comm_buf_free(&down);
    return rc;
}

struct red_ctx {
    enum comm_dtype type;
    enum comm_op op;
    comm_reduce_fn fn;
    void *arg;
};

static int reduce_combine(void *vctx, struct comm_buf *acc, const void *in,
                          size_t inlen)
{
    struct red_ctx *x = vctx;
    if (inlen != acc->len) {
        ompdsm_err("allreduce: members contributed different lengths (%zu vs "
                   "%zu)", inlen, acc->len);
        return -EPROTO;
    }
    if (x->fn) {
        x->fn(acc->data, in, inlen, x->arg);
        return 0;
    }
    size_t n = inlen / 8;
    if (x->type == COMM_INT64) {
        int64_t *a = acc->data;
        const int64_t *b = in;
        for (size_t i = 0; i < n; i++) {
            switch (x->op) {
            case COMM_SUM: a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]); break;
            case COMM_MIN: if (b[i] < a[i]) a[i] = b[i]; break;
            case COMM_MAX: if (b[i] > a[i]) a[i] = b[i]; break;
            case COMM_AND: a[i] &= b[i]; break;
            case COMM_OR: a[i] |= b[i]; break;
            case COMM_XOR: a[i] ^= b[i]; break;
            }
        }
    } else {
        double *a = acc->data;
        const double *b = in;
        for (size_t i = 0; i < n; i++) {
            switch (x->op) {
            case COMM_SUM: a[i] += b[i]; break;
            case COMM_MIN: if (b[i] < a[i]) a[i] = b[i]; break;
            case COMM_MAX: if (b[i] > a[i]) a[i] = b[i]; break;
            default: return -EINVAL;
            }
        }
    }
    return 0;
}

static int allreduce_common(struct comm_group g, void *buf, size_t len,
                            struct red_ctx *x)
{
    struct comm_buf down = {0};
    int rc = comm_barrier_x(g, buf, len, reduce_combine, NULL, x, &down);
    if (!rc && down.len != len)
        rc = -EPROTO;
    if (!rc)
        memcpy(buf, down.data, len);
    comm_buf_free(&down);
    return rc;
}

int comm_allreduce(struct comm_group g, void *buf, size_t count,
                   enum comm_dtype type, enum comm_op op)
{
    if (type == COMM_DOUBLE && op != COMM_SUM && op != COMM_MIN &&
        op != COMM_MAX) {
        ompdsm_err("allreduce: bitwise operation on doubles");
        return -EINVAL;
    }
    struct red_ctx x = {type, op, NULL, NULL};
    return allreduce_common(g, buf, count * 8, &x);
}

int comm_allreduce_user(struct comm_group g, void *buf, size_t len,
                        comm_reduce_fn fn, void *arg)
{
    struct red_ctx x = {0, 0, fn, arg};
    return allreduce_common(g, buf, len, &x);
}

static int append_combine(void *ctx, struct comm_buf *acc, const void *in,
                          size_t inlen)
{
    (void)ctx;
    return comm_buf_append(acc, in, inlen);
}

int comm_allgather(struct comm_group g, const void *mine, size_t len,
                   void *all)
{
    struct comm_buf up = {0}, down = {0};
    int32_t r = comm_g.rank;
    int rc = comm_buf_append(&up, &r, sizeof r);
    if (!rc)
        rc = comm_buf_append(&up, mine, len);
    if (!rc)
        rc = comm_barrier_x(g, up.data, up.len, append_combine, NULL, NULL,
                            &down);
    size_t rec = sizeof(int32_t) + len;
    if (!rc && (down.len != rec * (size_t)g.nodes || !down.data)) {
        ompdsm_err("allgather: %zu bytes gathered, expected %zu", down.len,
                   rec * (size_t)g.nodes);
        rc = -EPROTO;
    }
    for (int i = 0; !rc && i < g.nodes; i++) {
        const char *e = (const char *)down.data + (size_t)i * rec;
        int32_t who;
        memcpy(&who, e, sizeof who);
        if (who < 0 || who >= g.nodes) {
            rc = -EPROTO;
            break;
        }
        memcpy((char *)all + (size_t)who * len, e + sizeof who, len);
    }
    comm_buf_free(&up);
    comm_buf_free(&down);
    return rc;
}
