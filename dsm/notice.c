/* dsm/notice.c - write notices: sorted, coalesced page ranges naming who
 * wrote them.  Merging keeps the writer when one node wrote a page and
 * marks it NOTICE_MULTI when several did, which is what a node needs to
 * decide whether its own copy is still current; NOTICE_FORCE (a write no
 * push carried) wins over both.  A one-page notice may carry its writer's
 * snapshot of the bytes (snap.c) as long as nothing is merged into it. */
#include "dsm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int push(struct notice_list *l, uint32_t page, uint32_t npages,
                int32_t writer, uint64_t snap)
{
    if (!npages)
        return 0;
    if (l->n) {
        struct notice *t = &l->v[l->n - 1];
        if (t->writer == writer && t->page + t->npages == page && !t->snap &&
            !snap) {
            t->npages += npages;
            return 0;
        }
        if (t->writer == writer && t->page == page && t->npages == 1 &&
            npages == 1) {
            t->snap = 0; /* (two releases of one page) */
            return 0;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct notice *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            ompdsm_fatal("out of memory for %zu write notices", cap);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct notice){page, npages, writer, 0, snap};
    return 0;
}

int notice_push(struct notice_list *l, uint32_t page, uint32_t npages,
                int32_t writer)
{
    return push(l, page, npages, writer, 0);
}

int notice_push_snap(struct notice_list *l, uint32_t page, int32_t writer,
                     uint64_t snap)
{
    return push(l, page, 1, writer, snap);
}

static int cmp_notice(const void *x, const void *y)
{
    const struct notice *a = x, *b = y;
    return a->page < b->page ? -1 : a->page > b->page;
}

/* Merge sort through notice_merge, for lists whose entries overlap with
 * different writers (rare: the fast path below handles one writer). */
static void normalize_by_merging(struct notice_list *l)
{
    struct notice_list acc = {0};
    for (size_t i = 0; i < l->n; i++) {
        struct notice_list out = {0};
        notice_merge(acc.v, acc.n, &l->v[i], 1, &out);
        notice_free(&acc);
        acc = out;
    }
    free(l->v);
    *l = acc;
}

void notice_normalize(struct notice_list *l)
{
    if (l->n < 2)
        return;
    qsort(l->v, l->n, sizeof *l->v, cmp_notice);
    size_t w = 0;
    for (size_t i = 1; i < l->n; i++) {
        struct notice *t = &l->v[w], *c = &l->v[i];
        uint64_t tend = (uint64_t)t->page + t->npages;
        if (c->page < tend && c->writer != t->writer) {
            normalize_by_merging(l);
            return;
        }
        if (c->writer == t->writer &&
            (c->page < tend || (c->page == tend && !t->snap && !c->snap))) {
            uint64_t cend = (uint64_t)c->page + c->npages;
            if (cend > tend)
                t->npages = (uint32_t)(cend - t->page);
            t->snap = 0;
        } else {
            l->v[++w] = *c;
        }
    }
    l->n = w + 1;
}

static void emit(struct notice_list *out, uint64_t s, uint64_t e, int32_t w)
{
    if (e > s)
        notice_push(out, (uint32_t)s, (uint32_t)(e - s), w);
}

/* A piece [s, e) of notice n alone: a notice with a snapshot is of one
 * page, so the piece is all of it and keeps the snapshot. */
static void emit_of(struct notice_list *out, const struct notice *n, uint64_t s,
                    uint64_t e)
{
    if (n->snap)
        push(out, n->page, 1, n->writer, n->snap);
    else
        emit(out, s, e, n->writer);
}

int notice_merge(const struct notice *a, size_t na, const struct notice *b,
                 size_t nb, struct notice_list *out)
{
    size_t i = 0, j = 0;
    uint64_t as = na ? a[0].page : 0, bs = nb ? b[0].page : 0;
    while (i < na || j < nb) {
        uint64_t ae = i < na ? (uint64_t)a[i].page + a[i].npages : 0;
        uint64_t be = j < nb ? (uint64_t)b[j].page + b[j].npages : 0;
        if (j >= nb || (i < na && ae <= bs)) {
            emit_of(out, &a[i], as, ae);
            if (++i < na)
                as = a[i].page;
        } else if (i >= na || be <= as) {
            emit_of(out, &b[j], bs, be);
            if (++j < nb)
                bs = b[j].page;
        } else if (as < bs) {
            emit_of(out, &a[i], as, bs);
            as = bs;
        } else if (bs < as) {
            emit_of(out, &b[j], bs, as);
            bs = as;
        } else {
            uint64_t e = ae < be ? ae : be;
            int32_t w = a[i].writer == b[j].writer ? a[i].writer
                        : a[i].writer == NOTICE_FORCE || b[j].writer == NOTICE_FORCE
                            ? NOTICE_FORCE
                            : NOTICE_MULTI;
            emit(out, as, e, w);
            as = bs = e;
            if (e == ae && ++i < na)
                as = a[i].page;
            if (e == be && ++j < nb)
                bs = b[j].page;
            if (i < na && as < e)
                as = e;
            if (j < nb && bs < e)
                bs = e;
        }
    }
    return 0;
}

void notice_free(struct notice_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
