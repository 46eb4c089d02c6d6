/* runtime/reduction.c - reductions for every C operator OpenMP allows on
 * every arithmetic type.  Each thread's partial value waits in its pending
 * list until the next barrier, which carries all of them up the tree (one
 * allreduce piggybacked on the barrier the construct ends with); the root
 * stores `*shared = *shared op total` before releasing the barrier.
 * Also the barrier payload records (reductions, copyprivate data). */
#include "rt.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FOR_INT_TYPES(X) \
    X(OMPDSM_TY_I8, int8_t) X(OMPDSM_TY_U8, uint8_t) \
    X(OMPDSM_TY_I16, int16_t) X(OMPDSM_TY_U16, uint16_t) \
    X(OMPDSM_TY_I32, int32_t) X(OMPDSM_TY_U32, uint32_t) \
    X(OMPDSM_TY_I64, int64_t) X(OMPDSM_TY_U64, uint64_t)
#define FOR_FLOAT_TYPES(X) \
    X(OMPDSM_TY_F32, float) X(OMPDSM_TY_F64, double) X(OMPDSM_TY_F80, long double)

size_t rt_type_size(int type)
{
    switch (type) {
#define X(code, T) case code: return sizeof(T);
        FOR_INT_TYPES(X) FOR_FLOAT_TYPES(X)
#undef X
    case OMPDSM_TY_BOOL: return sizeof(_Bool);
    }
    ompdsm_fatal("internal error: unknown type code %d", type);
}

/* acc = acc op in, for one type. */
#define COMBINE_INT(T, op, a, b)                                               \
    do {                                                                       \
        T *x = (T *)(a);                                                       \
        T y;                                                                   \
        memcpy(&y, (b), sizeof y);                                             \
        switch (op) {                                                          \
        case OMPDSM_OP_ADD: case OMPDSM_OP_SUB: *x = (T)(*x + y); break;       \
        case OMPDSM_OP_MUL: *x = (T)(*x * y); break;                           \
        case OMPDSM_OP_AND: *x = (T)(*x & y); break;                           \
        case OMPDSM_OP_OR: *x = (T)(*x | y); break;                            \
        case OMPDSM_OP_XOR: *x = (T)(*x ^ y); break;                           \
        case OMPDSM_OP_LAND: *x = (T)(*x && y); break;                         \
        case OMPDSM_OP_LOR: *x = (T)(*x || y); break;                          \
        case OMPDSM_OP_MAX: if (y > *x) *x = y; break;                         \
        case OMPDSM_OP_MIN: if (y < *x) *x = y; break;                         \
        default: ompdsm_fatal("reduction: operator %d on an integer", op);     \
        }                                                                      \
    } while (0)
#define COMBINE_FLT(T, op, a, b)                                               \
    do {                                                                       \
        T *x = (T *)(a);                                                       \
        T y;                                                                   \
        memcpy(&y, (b), sizeof y);                                             \
        switch (op) {                                                          \
        case OMPDSM_OP_ADD: case OMPDSM_OP_SUB: *x = *x + y; break;            \
        case OMPDSM_OP_MUL: *x = *x * y; break;                                \
        case OMPDSM_OP_LAND: *x = (T)(*x != 0 && y != 0); break;               \
        case OMPDSM_OP_LOR: *x = (T)(*x != 0 || y != 0); break;                \
        case OMPDSM_OP_MAX: if (y > *x) *x = y; break;                         \
        case OMPDSM_OP_MIN: if (y < *x) *x = y; break;                         \
        default: ompdsm_fatal("reduction: operator %d on a floating type", op);\
        }                                                                      \
    } while (0)

static void rt_red_combine(int type, int op, void *acc, const void *in)
{
    switch (type) {
#define X(code, T) case code: COMBINE_INT(T, op, acc, in); return;
        FOR_INT_TYPES(X)
#undef X
#define X(code, T) case code: COMBINE_FLT(T, op, acc, in); return;
        FOR_FLOAT_TYPES(X)
#undef X
    case OMPDSM_TY_BOOL: {
        _Bool *x = acc, y = *(const _Bool *)in;
        switch (op) {
        case OMPDSM_OP_MUL: case OMPDSM_OP_AND: case OMPDSM_OP_LAND:
        case OMPDSM_OP_MIN: *x = *x && y; break;
        case OMPDSM_OP_SUB: case OMPDSM_OP_ADD: case OMPDSM_OP_OR:
        case OMPDSM_OP_LOR: case OMPDSM_OP_MAX: *x = *x || y; break;
        case OMPDSM_OP_XOR: *x = *x != y; break;
        }
        return;
    }
    }
    ompdsm_fatal("internal error: unknown type code %d", type);
}

RT_API void OMPDSM_reduce_init(void *priv, int type, int op)
{
    switch (type) {
#define X(code, T, LO, HI)                                                     \
    case code: {                                                               \
        T v;                                                                   \
        switch (op) {                                                          \
        case OMPDSM_OP_MUL: case OMPDSM_OP_LAND: v = (T)1; break;              \
        case OMPDSM_OP_AND: v = (T)~(T)0; break;                               \
        case OMPDSM_OP_MAX: v = LO; break;                                     \
        case OMPDSM_OP_MIN: v = HI; break;                                     \
        default: v = (T)0; break;                                              \
        }                                                                      \
        memcpy(priv, &v, sizeof v);                                            \
        return;                                                                \
    }
        X(OMPDSM_TY_I8, int8_t, INT8_MIN, INT8_MAX)
        X(OMPDSM_TY_U8, uint8_t, 0, UINT8_MAX)
        X(OMPDSM_TY_I16, int16_t, INT16_MIN, INT16_MAX)
        X(OMPDSM_TY_U16, uint16_t, 0, UINT16_MAX)
        X(OMPDSM_TY_I32, int32_t, INT32_MIN, INT32_MAX)
        X(OMPDSM_TY_U32, uint32_t, 0, UINT32_MAX)
        X(OMPDSM_TY_I64, int64_t, INT64_MIN, INT64_MAX)
        X(OMPDSM_TY_U64, uint64_t, 0, UINT64_MAX)
#undef X
#define X(code, T, LO, HI)                                                     \
    case code: {                                                               \
        T v;                                                                   \
        switch (op) {                                                          \
        case OMPDSM_OP_MUL: case OMPDSM_OP_LAND: v = (T)1; break;              \
        case OMPDSM_OP_MAX: v = LO; break;                                     \
        case OMPDSM_OP_MIN: v = HI; break;                                     \
        default: v = (T)0; break;                                              \
        }                                                                      \
        memcpy(priv, &v, sizeof v);                                            \
        return;                                                                \
    }
        X(OMPDSM_TY_F32, float, -FLT_MAX, FLT_MAX)
        X(OMPDSM_TY_F64, double, -DBL_MAX, DBL_MAX)
        X(OMPDSM_TY_F80, long double, -LDBL_MAX, LDBL_MAX)
#undef X
    case OMPDSM_TY_BOOL: {
        _Bool v = op == OMPDSM_OP_MUL || op == OMPDSM_OP_LAND ||
                  op == OMPDSM_OP_AND || op == OMPDSM_OP_MIN;
        memcpy(priv, &v, 1);
        return;
    }
    }
    ompdsm_fatal("internal error: unknown type code %d", type);
}

RT_API void OMPDSM_reduce(const OMPDSM_red *items, int n)
{
    for (int i = 0; i < n; i++) {
        if (rt_self.nred == rt_self.capred) {
            int cap = rt_self.capred ? rt_self.capred * 2 : 8;
            struct rt_red_item *v = realloc(rt_self.red, (size_t)cap * sizeof *v);
            if (!v)
                ompdsm_fatal("out of memory for reductions");
            rt_self.red = v;
            rt_self.capred = cap;
        }
        struct rt_red_item *it = &rt_self.red[rt_self.nred++];
        memset(it, 0, sizeof *it);
        it->shared = items[i].shared;
        it->type = items[i].type;
        it->op = items[i].op;
        memcpy(it->value, items[i].priv, rt_type_size(items[i].type));
    }
}

void rt_red_deposit(struct rt_red_acc *acc, const struct rt_red_item *red,
                    int nred, int node)
{
    char whose[32];
    if (!nred)
        return;
    if (!acc->has) {
        if (acc->cap < nred) {
            struct rt_red_item *v = realloc(acc->red, (size_t)nred * sizeof *v);
            if (!v)
                ompdsm_fatal("out of memory for reductions");
            acc->red = v;
            acc->cap = nred;
        }
        memcpy(acc->red, red, (size_t)nred * sizeof *red);
        acc->nred = nred;
        acc->has = 1;
        return;
    }
    if (node >= 0)
        snprintf(whose, sizeof whose, "node %d", node);
    else
        snprintf(whose, sizeof whose, "a nested team");
    if (acc->nred != nred)
        ompdsm_fatal("reduction: threads of %s contributed %d and %d items: "
                     "do all threads reach the same reduction constructs?",
                     whose, acc->nred, nred);
    for (int i = 0; i < nred; i++) {
        if (acc->red[i].shared != red[i].shared ||
            acc->red[i].type != red[i].type || acc->red[i].op != red[i].op)
            ompdsm_fatal("reduction: threads of %s disagree on reduction "
                         "item %d", whose, i);
        rt_red_combine(red[i].type, red[i].op, acc->red[i].value,
                       red[i].value);
    }
}

void rt_red_apply(const struct rt_red_item *it)
{
    size_t sz = rt_type_size(it->type);
    unsigned char cur[16];
    memcpy(cur, it->shared, sz);
    rt_red_combine(it->type, it->op, cur, it->value);
    memcpy(it->shared, cur, sz);
    dsm_wrote(it->shared, sz);
}

/* ---- barrier payload records ---- */

int rt_ext_append(struct comm_buf *b, uint32_t kind, const void *p, size_t len)
{
    uint32_t h[2] = {kind, (uint32_t)len};
    int rc = comm_buf_append(b, h, sizeof h);
    return rc ? rc : comm_buf_append(b, p, len);
}

const void *rt_ext_find(const void *buf, size_t len, uint32_t kind,
                        size_t *outlen)
{
    if (!buf) /* no payload: NULL + 0 is undefined, so no end pointer */
        return NULL;
    const char *p = buf, *end = p + len;
    while (p + 8 <= end) {
        uint32_t h[2];
        memcpy(h, p, 8);
        if (p + 8 + h[1] > end)
            return NULL;
        if (h[0] == kind) {
            *outlen = h[1];
            return p + 8;
        }
        p += 8 + h[1];
    }
    return NULL;
}

static int combine_red(struct rt_red_item *a, size_t na,
                       const struct rt_red_item *b, size_t nb)
{
    if (na != nb) {
        ompdsm_err("reduction: threads contributed %zu and %zu items: do all "
                   "threads reach the same reduction constructs?", na, nb);
        return -EPROTO;
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i].shared != b[i].shared || a[i].type != b[i].type ||
            a[i].op != b[i].op) {
            ompdsm_err("reduction: threads disagree on reduction item %zu", i);
            return -EPROTO;
        }
        rt_red_combine(a[i].type, a[i].op, a[i].value, b[i].value);
    }
    return 0;
}

int rt_ext_combine(void *ctx, struct comm_buf *acc, const void *in,
                   size_t inlen)
{
    (void)ctx;
    struct comm_buf out = {0};
    int rc = 0;
    static const uint32_t kinds[] = {RT_REC_RED, RT_REC_COPYPRIV, RT_REC_TASK,
                                     RT_REC_PROF};
    for (size_t k = 0; k < OMPDSM_ARRAY_LEN(kinds) && !rc; k++) {
        size_t la = 0, lb = 0;
        const void *a = acc->len ? rt_ext_find(acc->data, acc->len, kinds[k], &la) : NULL;
        const void *b = rt_ext_find(in, inlen, kinds[k], &lb);
        if (!a && !b)
            continue;
        if (!a || !b) {
            rc = rt_ext_append(&out, kinds[k], a ? a : b, a ? la : lb);
            continue;
        }
        if (kinds[k] == RT_REC_COPYPRIV) {
            rc = rt_ext_append(&out, kinds[k], a, la);
            continue;
        }
        if (kinds[k] == RT_REC_PROF) {
            /* per-thread records: the concatenation */
            struct comm_buf cat = {0};
            rc = comm_buf_append(&cat, a, la);
            if (!rc)
                rc = comm_buf_append(&cat, b, lb);
            if (!rc)
                rc = rt_ext_append(&out, kinds[k], cat.data, cat.len);
            comm_buf_free(&cat);
            continue;
        }
        if (kinds[k] == RT_REC_TASK) {
            unsigned char sum[16];
            if (la != sizeof sum || lb != sizeof sum)
                return -EINVAL;
            memcpy(sum, a, sizeof sum);
            rt_task_combine(sum, b);
            rc = rt_ext_append(&out, kinds[k], sum, sizeof sum);
            continue;
        }
        struct rt_red_item *m = malloc(la ? la : 1);
        if (!m)
            return -ENOMEM;
        memcpy(m, a, la);
        rc = combine_red(m, la / sizeof *m, b, lb / sizeof *m);
        if (!rc)
            rc = rt_ext_append(&out, kinds[k], m, la);
        free(m);
    }
    if (!rc) {
        comm_buf_free(acc);
        *acc = out;
    } else {
        comm_buf_free(&out);
    }
    return rc;
}

int rt_ext_at_root(void *ctx, struct comm_buf *acc)
{
    (void)ctx;
    size_t len;
    const struct rt_red_item *it = rt_ext_find(acc->data, acc->len, RT_REC_RED,
                                               &len);
    if (it) {
        for (size_t i = 0; i < len / sizeof *it; i++) {
            struct rt_red_item x;
            memcpy(&x, &it[i], sizeof x);
            rt_red_apply(&x);
        }
    }
    /* Only copyprivate data, task counts and per-thread records travel
     * down. */
    struct comm_buf out = {0};
    static const uint32_t down[] = {RT_REC_COPYPRIV, RT_REC_TASK, RT_REC_PROF};
    for (size_t k = 0; k < OMPDSM_ARRAY_LEN(down); k++) {
        const void *p = rt_ext_find(acc->data, acc->len, down[k], &len);
        if (p && rt_ext_append(&out, down[k], p, len) < 0) {
            comm_buf_free(&out);
            return -ENOMEM;
        }
    }
    comm_buf_free(acc);
    *acc = out;
    return 0;
}

