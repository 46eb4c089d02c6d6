/* runtime/atomic.c - the atomic construct: every OpenMP 3.0 form on every
 * arithmetic type, as a compare-swap loop at the variable's home, or
 * posted to a home reached over tcp (dsm/atomic.c). */
#include "rt.h"

#include <string.h>


/* By value: a posted update carries it to the home. */
struct atomic_arg {
    int32_t type, op, reversed;
    unsigned char operand[16];
};

#define APPLY_INT(T, SIGNED)                                                         \
    do {                                                                       \
        T x, y;                                                                \
        memcpy(&x, v, sizeof x);                                               \
        memcpy(&y, a->operand, sizeof y);                                      \
        T l = a->reversed ? y : x, r = a->reversed ? x : y;                    \
        switch (a->op) {                                                       \
        case OMPDSM_OP_ADD: x = (T)(l + r); break;                             \
        case OMPDSM_OP_SUB: x = (T)(l - r); break;                             \
        case OMPDSM_OP_MUL: x = (T)(l * r); break;                             \
        /* A first guess may be a stale copy: never trap on it (a CAS with \
         * a wrong guess fails and is retried with the real value). */      \
        case OMPDSM_OP_DIV:                                                    \
            if (r == 0) break;                                                 \
            if (SIGNED && r == (T)-1) { x = (T)(0 - (uint64_t)l); break; }     \
            x = (T)(l / r); break;                                             \
        case OMPDSM_OP_AND: x = (T)(l & r); break;                             \
        case OMPDSM_OP_OR: x = (T)(l | r); break;                              \
        case OMPDSM_OP_XOR: x = (T)(l ^ r); break;                             \
        case OMPDSM_OP_SHL: x = (T)((uint64_t)l << ((uint64_t)r & 63)); break; \
        case OMPDSM_OP_SHR: x = (T)(l >> ((uint64_t)r & 63)); break;          \
        case OMPDSM_OP_LAND: x = (T)(l && r); break;                           \
        case OMPDSM_OP_LOR: x = (T)(l || r); break;                            \
        case OMPDSM_OP_MAX: x = l > r ? l : r; break;                          \
        case OMPDSM_OP_MIN: x = l < r ? l : r; break;                          \
        }                                                                      \
        memcpy(v, &x, sizeof x);                                               \
    } while (0)
#define APPLY_FLT(T)                                                           \
    do {                                                                       \
        T x, y;                                                                \
        memcpy(&x, v, sizeof x);                                               \
        memcpy(&y, a->operand, sizeof y);                                      \
        T l = a->reversed ? y : x, r = a->reversed ? x : y;                    \
        switch (a->op) {                                                       \
        case OMPDSM_OP_ADD: x = l + r; break;                                  \
        case OMPDSM_OP_SUB: x = l - r; break;                                  \
        case OMPDSM_OP_MUL: x = l * r; break;                                  \
        case OMPDSM_OP_DIV: x = l / r; break;                                  \
        case OMPDSM_OP_LAND: x = (T)(l != 0 && r != 0); break;                 \
        case OMPDSM_OP_LOR: x = (T)(l != 0 || r != 0); break;                  \
        case OMPDSM_OP_MAX: x = l > r ? l : r; break;                          \
        case OMPDSM_OP_MIN: x = l < r ? l : r; break;                          \
        default: ompdsm_fatal("atomic: bitwise operator on a floating type");  \
        }                                                                      \
        memcpy(v, &x, sizeof x);                                               \
    } while (0)

static void apply(void *v, const void *arg)
{
    const struct atomic_arg *a = arg;
    switch (a->type) {
    case OMPDSM_TY_I8: APPLY_INT(int8_t, 1); break;
    case OMPDSM_TY_U8: APPLY_INT(uint8_t, 0); break;
    case OMPDSM_TY_I16: APPLY_INT(int16_t, 1); break;
    case OMPDSM_TY_U16: APPLY_INT(uint16_t, 0); break;
    case OMPDSM_TY_I32: APPLY_INT(int32_t, 1); break;
    case OMPDSM_TY_U32: APPLY_INT(uint32_t, 0); break;
    case OMPDSM_TY_I64: APPLY_INT(int64_t, 1); break;
    case OMPDSM_TY_U64: APPLY_INT(uint64_t, 0); break;
    case OMPDSM_TY_BOOL: APPLY_INT(uint8_t, 0); *(_Bool *)v = *(uint8_t *)v != 0; break;
    case OMPDSM_TY_F32: APPLY_FLT(float); break;
    case OMPDSM_TY_F64: APPLY_FLT(double); break;
    case OMPDSM_TY_F80: APPLY_FLT(long double); break;
    default: ompdsm_fatal("atomic: unknown type code %d", a->type);
    }
}

void rt_atomic_start(void)
{
    dsm_atomic_set_post_fn(apply);
}

RT_API void OMPDSM_atomic(void *x, int type, int op, const void *operand,
                          int reversed)
{
    struct atomic_arg a = {type, op, reversed, {0}};
    size_t size = rt_type_size(type);
    memcpy(a.operand, operand, size);
    if (!dsm_atomic_post(x, size, &a, sizeof a))
        dsm_atomic_update(x, size, apply, &a, NULL, NULL);
}
