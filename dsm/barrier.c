/* dsm/barrier.c - consistency at barriers and forks.  One comm barrier per
 * consistency point: each node releases (diffs to homes), the gather merges
 * every node's write notices (and the layer above's payload), the root
 * acquires and runs the layer above's hook (reductions write shared memory
 * there), and the release broadcast carries the merged notices, which every
 * node applies before leaving.
 *
 * Payload going up:   u64 n, n notices, ext bytes
 * Payload going down: u64 n, n notices, u64 log tail, ext bytes */
#include "dsm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct bctx {
    struct dsm_sync_ext *ext;
    int root_applied;
};

/* Splits a payload into notices and the rest. */
static int parse(const void *buf, size_t len, const struct notice **v,
                 size_t *n, const char **rest, size_t *restlen, int down)
{
    uint64_t cnt;
    if (len < 8)
        return -EPROTO;
    memcpy(&cnt, buf, 8);
    size_t need = 8 + cnt * sizeof(struct notice) + (down ? 8 : 0);
    if (need > len)
        return -EPROTO;
    *v = (const struct notice *)((const char *)buf + 8);
    *n = (size_t)cnt;
    *rest = (const char *)buf + need;
    *restlen = len - need;
    return 0;
}

static int build(struct comm_buf *out, const struct notice *v, size_t n,
                 const uint64_t *tail, const void *ext, size_t extlen)
{
    uint64_t cnt = n;
    out->len = 0;
    int rc = comm_buf_append(out, &cnt, 8);
    if (!rc)
        rc = comm_buf_append(out, v, n * sizeof *v);
    if (!rc && tail)
        rc = comm_buf_append(out, tail, 8);
    if (!rc)
        rc = comm_buf_append(out, ext, extlen);
    return rc;
}

static int combine(void *vctx, struct comm_buf *acc, const void *in,
                   size_t inlen)
{
    struct bctx *x = vctx;
    const struct notice *av, *bv;
    size_t an, bn, aextlen, bextlen;
    const char *aext, *bext;
    if (parse(acc->data, acc->len, &av, &an, &aext, &aextlen, 0) < 0 ||
        parse(in, inlen, &bv, &bn, &bext, &bextlen, 0) < 0) {
        ompdsm_err("barrier: malformed payload from a child");
        return -EPROTO;
    }
    struct notice_list m = {0};
    notice_merge(av, an, bv, bn, &m);
    struct comm_buf e = {0};
    int rc = comm_buf_append(&e, aext, aextlen);
    if (!rc && x->ext && x->ext->combine)
        rc = x->ext->combine(x->ext->ctx, &e, bext, bextlen);
    else if (!rc && bextlen && !aextlen)
        rc = comm_buf_append(&e, bext, bextlen);
    struct comm_buf out = {0};
    if (!rc)
        rc = build(&out, m.v, m.n, NULL, e.data, e.len);
    if (!rc) {
        comm_buf_free(acc);
        *acc = out;
    } else {
        comm_buf_free(&out);
    }
    notice_free(&m);
    comm_buf_free(&e);
    return rc;
}

static int at_root(void *vctx, struct comm_buf *acc)
{
    struct bctx *x = vctx;
    const struct notice *v;
    size_t n, extlen;
    const char *ext;
    if (parse(acc->data, acc->len, &v, &n, &ext, &extlen, 0) < 0)
        return -EPROTO;
    struct notice_list all = {0};
    notice_merge(v, n, NULL, 0, &all);
    struct comm_buf e = {0};
    int rc = comm_buf_append(&e, ext, extlen);
    if (rc < 0)
        return rc;
    uint64_t tail = 0;
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
    if (!dsm_g.solo)
        tail = __atomic_load_n(&((struct dsm_area_hdr *)dsm_g.area)->log_tail,
                               __ATOMIC_ACQUIRE);
    rc = build(acc, all.v, all.n, &tail, e.data, e.len);
out:
    notice_free(&all);
    comm_buf_free(&e);
    return rc;
}

int dsm_barrier(struct comm_group g, struct dsm_sync_ext *ext)
{
    uint64_t t0 = ompdsm_now_ns();
    DSM_STAT(barriers, 1);
    struct bctx x = {ext, 0};
    struct notice_list rel = {0};
    if (!dsm_g.solo) {
        dsm_release_interval(NULL);
        pthread_mutex_lock(&dsm_g.interval_lock);
        rel = dsm_g.interval;
        memset(&dsm_g.interval, 0, sizeof dsm_g.interval);
        pthread_mutex_unlock(&dsm_g.interval_lock);
    }
    struct comm_buf up = {0}, down = {0};
    int rc = build(&up, rel.v, rel.n, NULL, ext ? ext->up : NULL,
                   ext ? ext->uplen : 0);
    notice_free(&rel);
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
    const struct notice *v;
    size_t n, extlen;
    const char *extp;
    if (parse(down.data, down.len, &v, &n, &extp, &extlen, 1) < 0) {
        rc = -EPROTO;
        goto out;
    }
    if (!dsm_g.solo) {
        if (!x.root_applied)
            dsm_apply_notices(v, n);
        uint64_t tail;
        memcpy(&tail, extp - 8, 8);
        pthread_mutex_lock(&dsm_g.acquire_lock);
        if (tail > dsm_g.log_pos)
            dsm_g.log_pos = tail;
        pthread_mutex_unlock(&dsm_g.acquire_lock);
    }
    if (ext && ext->down) {
        ext->down->len = 0;
        rc = comm_buf_append(ext->down, extp, extlen);
    }
    dsm_alloc_at_barrier();
out:
    comm_buf_free(&up);
    comm_buf_free(&down);
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
        pthread_mutex_lock(&dsm_g.interval_lock);
        notice_merge(dsm_g.interval.v, dsm_g.interval.n, NULL, 0, &rel);
        pthread_mutex_unlock(&dsm_g.interval_lock);
    }
    struct comm_buf b = {0};
    uint64_t tail = 0;
    int rc = build(&b, rel.v, rel.n, &tail, data, len);
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
    const struct notice *v;
    size_t n, restlen;
    const char *rest;
    if (parse(b.data, b.len, &v, &n, &rest, &restlen, 1) < 0)
        ompdsm_fatal("malformed fork message from node 0");
    dsm_release();
    dsm_apply_notices(v, n);
    data->len = 0;
    rc = comm_buf_append(data, rest, restlen);
    comm_buf_free(&b);
    return rc;
}
