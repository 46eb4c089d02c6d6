/* dsm/barrier.c - consistency at barriers and forks.  One comm barrier per
 * consistency point: each node releases (diffs to homes), the gather merges
 * every node's write notices (and the layer above's payload), the root
 * acquires and runs the layer above's hook (reductions write shared memory
 * there), and the release broadcast carries the merged notices, which every
 * node applies before leaving (a second, empty comm barrier follows where
 * a node joins a page it must refetch: pushed updates, push.c).
 *
 * Payload going up:   u64 n, n notices, u64 m, m mig_rec, u64 k, k
 *                     push_rec, nodes x u64 log tails, ext bytes
 * Payload going down: u64 n, n notices, u64 m, m mig_move, u64 k, k
 *                     push_rec, nodes x u64 log tails, ext bytes
 * (a node's tail: its notice log's entries whose notices this barrier
 * carries, noticelog.c; the others' slots 0 going up, combined by maximum).
 * (the mig sections carry home migration, migrate.c; m is 0 when it is
 * off; the push sections the subscriptions' joins and leaves, push.c,
 * passed down as they came up).  A fork's message has the downward
 * shape. */
#include "dsm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct bctx {
    struct dsm_sync_ext *ext;
    int root_applied;
};

/* A payload, split into its parts. */
struct pl {
    const struct notice *v;
    size_t n;
    const char *mig; /* u64 count, then the records or moves */
    size_t nmig;
    const struct push_rec *push;
    size_t npush;
    const char *tails; /* dsm_g.size u64 */
    const char *ext;
    size_t extlen;
};

static size_t mig_size(int down)
{
    return down ? sizeof(struct mig_move) : sizeof(struct mig_rec);
}

static int parse(const void *buf, size_t len, struct pl *p, int down)
{
    const char *b = buf, *end = b + len;
    uint64_t cnt;
    if (len < 8)
        return -EPROTO;
    memcpy(&cnt, b, 8);
    b += 8;
    if (cnt > (size_t)(end - b) / sizeof(struct notice))
        return -EPROTO;
    p->v = (const struct notice *)b;
    p->n = (size_t)cnt;
    b += cnt * sizeof(struct notice);
    if (end - b < 8)
        return -EPROTO;
    p->mig = b;
    memcpy(&cnt, b, 8);
    b += 8;
    if (cnt > (size_t)(end - b) / mig_size(down))
        return -EPROTO;
    p->nmig = (size_t)cnt;
    b += cnt * mig_size(down);
    if (end - b < 8)
        return -EPROTO;
    memcpy(&cnt, b, 8);
    b += 8;
    if (cnt > (size_t)(end - b) / sizeof(struct push_rec))
        return -EPROTO;
    p->push = (const struct push_rec *)b;
    p->npush = (size_t)cnt;
    b += cnt * sizeof(struct push_rec);
    size_t tl = (size_t)dsm_g.size * 8;
    if ((size_t)(end - b) < tl)
        return -EPROTO;
    p->tails = b;
    b += tl;
    p->ext = b;
    p->extlen = (size_t)(end - b);
    return 0;
}

/* mig, push: a mig or push section (u64 count first), or NULL for an
 * empty one; tails: dsm_g.size words, or NULL for zeros. */
static int build(struct comm_buf *out, const struct notice *v, size_t n,
                 const struct comm_buf *mig, const struct comm_buf *push,
                 const void *tails, const void *ext, size_t extlen)
{
    uint64_t cnt = n, none = 0;
    out->len = 0;
    int rc = comm_buf_append(out, &cnt, 8);
    if (!rc)
        rc = comm_buf_append(out, v, n * sizeof *v);
    if (!rc)
        rc = mig ? comm_buf_append(out, mig->data, mig->len)
                 : comm_buf_append(out, &none, 8);
    if (!rc)
        rc = push ? comm_buf_append(out, push->data, push->len)
                  : comm_buf_append(out, &none, 8);
    for (int j = 0; !rc && j < dsm_g.size; j++)
        rc = comm_buf_append(out, tails ? (const char *)tails + (size_t)j * 8
                                        : (const char *)&none, 8);
    if (!rc)
        rc = comm_buf_append(out, ext, extlen);
    return rc;
}

static int combine(void *vctx, struct comm_buf *acc, const void *in,
                   size_t inlen)
{
    struct bctx *x = vctx;
    struct pl a, b;
    if (parse(acc->data, acc->len, &a, 0) < 0 || parse(in, inlen, &b, 0) < 0) {
        ompdsm_err("barrier: malformed payload from a child");
        return -EPROTO;
    }
    struct notice_list m = {0};
    notice_merge(a.v, a.n, b.v, b.n, &m);
    /* Migration records: both lists, one after the other. */
    uint64_t nmig = a.nmig + b.nmig;
    struct comm_buf mig = {0}, e = {0}, out = {0};
    int rc = comm_buf_append(&mig, &nmig, 8);
    if (!rc)
        rc = comm_buf_append(&mig, a.mig + 8, a.nmig * mig_size(0));
    if (!rc)
        rc = comm_buf_append(&mig, b.mig + 8, b.nmig * mig_size(0));
    /* Subscription changes: likewise. */
    uint64_t npush = a.npush + b.npush;
    struct comm_buf push = {0};
    if (!rc)
        rc = comm_buf_append(&push, &npush, 8);
    if (!rc)
        rc = comm_buf_append(&push, a.push, a.npush * sizeof *a.push);
    if (!rc)
        rc = comm_buf_append(&push, b.push, b.npush * sizeof *b.push);
    if (!rc)
        rc = comm_buf_append(&e, a.ext, a.extlen);
    if (!rc && x->ext && x->ext->combine)
        rc = x->ext->combine(x->ext->ctx, &e, b.ext, b.extlen);
    else if (!rc && b.extlen && !a.extlen)
        rc = comm_buf_append(&e, b.ext, b.extlen);
    uint64_t *t = malloc((size_t)dsm_g.size * 8);
    if (!t)
        rc = -ENOMEM;
    for (int j = 0; !rc && j < dsm_g.size; j++) {
        uint64_t ta, tb;
        memcpy(&ta, a.tails + (size_t)j * 8, 8);
        memcpy(&tb, b.tails + (size_t)j * 8, 8);
        t[j] = ta > tb ? ta : tb;
    }
    if (!rc)
        rc = build(&out, m.v, m.n, &mig, &push, t, e.data, e.len);
    free(t);
    comm_buf_free(&push);
    if (!rc) {
        comm_buf_free(acc);
        *acc = out;
    } else {
        comm_buf_free(&out);
    }
    notice_free(&m);
    comm_buf_free(&mig);
    comm_buf_free(&e);
    return rc;
}

static int at_root(void *vctx, struct comm_buf *acc)
{
    struct bctx *x = vctx;
    struct pl p;
    if (parse(acc->data, acc->len, &p, 0) < 0)
        return -EPROTO;
    struct notice_list all = {0};
    notice_merge(p.v, p.n, NULL, 0, &all);
    struct comm_buf e = {0}, moves = {0};
    int rc = comm_buf_append(&e, p.ext, p.extlen);
    if (rc < 0)
        return rc;
    if (!dsm_g.solo) {
        /* Every node's writes are at their homes now: see them here. */
        dsm_apply_notices(all.v, all.n);
        x->root_applied = 1;
    }
    if (x->ext && x->ext->at_root) {
        rc = x->ext->at_root(x->ext->ctx, &e);
        if (rc < 0)
            goto out;
        if (!dsm_g.solo) {
            /* The hook's writes (reduction results) become part of this
             * consistency point. */
            struct notice_list mine = {0}, m = {0};
            dsm_release_pages(&mine);
            notice_merge(all.v, all.n, mine.v, mine.n, &m);
            notice_free(&all);
            notice_free(&mine);
            all = m;
        }
    }
    /* Every write of the interval, the hook's too, is at its home: pages
     * may change homes now. */
    rc = dsm_mig_decide((const struct mig_rec *)(p.mig + 8), p.nmig, &moves);
    if (rc < 0)
        goto out;
    /* acc is rebuilt from parts that point into it: build into a copy. */
    struct comm_buf nb = {0}, push = {0};
    uint64_t npush = p.npush;
    rc = comm_buf_append(&push, &npush, 8);
    if (!rc)
        rc = comm_buf_append(&push, p.push, p.npush * sizeof *p.push);
    if (!rc)
        rc = build(&nb, all.v, all.n, &moves, &push, p.tails, e.data, e.len);
    comm_buf_free(&push);
    if (!rc) {
        comm_buf_free(acc);
        *acc = nb;
    } else {
        comm_buf_free(&nb);
    }
out:
    notice_free(&all);
    comm_buf_free(&e);
    comm_buf_free(&moves);
    return rc;
}

int dsm_barrier(struct comm_group g, struct dsm_sync_ext *ext)
{
    uint64_t t0 = ompdsm_now_ns();
    DSM_STAT(barriers, 1);
    struct bctx x = {ext, 0};
    struct notice_list rel = {0};
    uint64_t *tails = calloc((size_t)dsm_g.size, 8);
    if (!tails)
        ompdsm_fatal("out of memory for a barrier");
    if (!dsm_g.solo) {
        dsm_release_interval(NULL);
        /* Read before the interval is taken: every entry below the tail
         * had its notices recorded in the interval (release.c records
         * them before the tail moves), so this barrier carries them. */
        tails[dsm_g.rank] = dsm_log_tail();
        pthread_mutex_lock(&dsm_g.interval_lock);
        rel = dsm_g.interval;
        memset(&dsm_g.interval, 0, sizeof dsm_g.interval);
        pthread_mutex_unlock(&dsm_g.interval_lock);
    }
    struct comm_buf up = {0}, down = {0}, mig = {0}, push = {0};
    /* Homes move, and subscriptions change, only where every node takes
     * part and so learns of it. */
    int rc = dsm_mig_report(&mig, g.nodes == dsm_g.size);
    if (!rc)
        rc = dsm_push_report(&push, g.nodes == dsm_g.size);
    if (!rc)
        rc = build(&up, rel.v, rel.n, &mig, &push, tails, ext ? ext->up : NULL,
                   ext ? ext->uplen : 0);
    notice_free(&rel);
    comm_buf_free(&mig);
    comm_buf_free(&push);
    if (rc < 0)
        goto out;
    if (dsm_g.solo) {
        rc = at_root(&x, &up);
        down = up;
        memset(&up, 0, sizeof up);
    } else {
        rc = comm_barrier_x(g, up.data, up.len, combine, at_root, &x, &down);
    }
    if (rc < 0)
        goto out;
    struct pl p;
    if (parse(down.data, down.len, &p, 1) < 0) {
        rc = -EPROTO;
        goto out;
    }
    if (!dsm_g.solo) {
        /* The new homes first: a faster node may already have sent a diff
         * to a page's new home, which the notices must then not refetch
         * (update protocol) from the old one over the diff. */
        dsm_mig_apply((const struct mig_move *)(p.mig + 8), p.nmig);
        if (!x.root_applied)
            dsm_apply_notices(p.v, p.n);
        /* After the notices: a copy is left alone only where its node
         * subscribed for the whole interval. */
        dsm_push_apply(p.push, p.npush);
        /* A joiner refetches a page this barrier's notices name (in
         * dsm_apply_notices, just above), while the faster nodes that
         * leave the barrier already push into its copy: over tcp the get
         * takes a round trip, and the merge (dsm_push_refetch) cannot tell
         * a push that wrote a word's old value again from no push at all
         * (a count the master reset to 0 between loops, 1 at the home
         * when the get read it, 0 in the stale copy: the swap took the 1;
         * omp sched_dynamic_chunk).  So no node leaves before every
         * joiner has its copy: pushes start only after. */
        if (dsm_push_join_stale(p.push, p.npush, p.v, p.n) && comm_barrier(g) < 0) {
            rc = -ECONNABORTED;
            goto out;
        }
        memcpy(tails, p.tails, (size_t)dsm_g.size * 8);
        dsm_log_advance(tails);
    }
    if (ext && ext->down) {
        ext->down->len = 0;
        rc = comm_buf_append(ext->down, p.ext, p.extlen);
    }
    dsm_alloc_at_barrier();
out:
    comm_buf_free(&up);
    comm_buf_free(&down);
    free(tails);
    DSM_STAT(barrier_ns, ompdsm_now_ns() - t0);
    if (rc < 0)
        ompdsm_fatal("barrier over %d nodes failed (%d)", g.nodes, rc);
    return rc;
}

int dsm_fork_send(struct comm_group g, const void *data, size_t len)
{
    DSM_STAT(forks, 1);
    struct notice_list rel = {0};
    if (!dsm_g.solo) {
        dsm_release_interval(NULL);
        dsm_mig_forget();
        pthread_mutex_lock(&dsm_g.interval_lock);
        notice_merge(dsm_g.interval.v, dsm_g.interval.n, NULL, 0, &rel);
        pthread_mutex_unlock(&dsm_g.interval_lock);
    }
    struct comm_buf b = {0};
    int rc = build(&b, rel.v, rel.n, NULL, NULL, NULL, data, len);
    notice_free(&rel);
    if (!rc && !dsm_g.solo)
        rc = comm_bcast0(g, &b);
    comm_buf_free(&b);
    if (rc < 0)
        ompdsm_fatal("fork over %d nodes failed (%d)", g.nodes, rc);
    return rc;
}

int dsm_fork_recv(struct comm_group g, struct comm_buf *data)
{
    struct comm_buf b = {0};
    int rc = comm_bcast0(g, &b);
    if (rc < 0)
        ompdsm_fatal("waiting for work from node 0 failed (%d)", rc);
    DSM_STAT(forks, 1);
    struct pl p;
    if (parse(b.data, b.len, &p, 1) < 0)
        ompdsm_fatal("malformed fork message from node 0");
    dsm_release_quiet();
    dsm_apply_notices(p.v, p.n);
    data->len = 0;
    rc = comm_buf_append(data, p.ext, p.extlen);
    comm_buf_free(&b);
    return rc;
}
