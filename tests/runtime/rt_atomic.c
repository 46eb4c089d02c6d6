/* rt_atomic.c - OMPDSM_atomic: every operator code on every type code it
 * applies to (bitwise and shift operators on integer and _Bool types only),
 * plain (`x op= v`) and reversed (`x = v op x`), with exact expected values
 * computed here with the C operators of the variable's type.
 *
 * Phase A (semantics): thread t updates its own element (all threads'
 * elements share pages, whose homes are spread over the nodes) with a
 * thread-dependent operand, once.
 * Phase B (atomicity): every thread updates one shared variable per
 * combination, several times, with operands chosen so that the result does
 * not depend on the order (commutative operators, or the same operand on
 * every thread); the expected value is the same updates applied serially.
 * Also atomics in the serial part and on private (non-heap) variables. */
#include "rt_test.h"

#include <stdint.h>

enum { MAXT = 64, NTY = 12, NOP = 13, MAXC = NTY * NOP * 2 };

/* One slot holds any of the types (long double needs 16 bytes). */
typedef union {
    long double ld;
    unsigned char b[16];
} slot;

static slot (*g_xa)[MAXC][MAXT];
static slot (*g_xb)[MAXC];
static OMPDSM_global globals[] = {
    {(void **)&g_xa, sizeof *g_xa, __alignof__(*g_xa), "xa"},
    {(void **)&g_xb, sizeof *g_xb, __alignof__(*g_xb), "xb"},
};

static const char *const tyname[NTY] = {"i8", "u8", "i16", "u16", "i32",
                                         "u32", "i64", "u64", "f32", "f64",
                                         "f80", "bool"};
static const char *const opname[NOP] = {"+", "-", "*", "/", "&", "|", "^",
                                        "<<", ">>", "&&", "||", "max", "min"};

static int is_float(int ty)
{
    return ty == OMPDSM_TY_F32 || ty == OMPDSM_TY_F64 || ty == OMPDSM_TY_F80;
}
static int is_signed_int(int ty)
{
    return ty == OMPDSM_TY_I8 || ty == OMPDSM_TY_I16 || ty == OMPDSM_TY_I32 ||
           ty == OMPDSM_TY_I64;
}
static int valid(int ty, int op)
{
    return !is_float(ty) || !(op == OMPDSM_OP_AND || op == OMPDSM_OP_OR ||
                              op == OMPDSM_OP_XOR || op == OMPDSM_OP_SHL ||
                              op == OMPDSM_OP_SHR);
}

/* ---- the expected semantics, with the C operators of each type ---- */
#define NATIVE_COMMON(T)                                                       \
    case OMPDSM_OP_ADD: r = (T)(l + rr); break;                                \
    case OMPDSM_OP_SUB: r = (T)(l - rr); break;                                \
    case OMPDSM_OP_MUL: r = (T)(l * rr); break;                                \
    case OMPDSM_OP_DIV: r = (T)(l / rr); break;                                \
    case OMPDSM_OP_LAND: r = (T)(l && rr); break;                              \
    case OMPDSM_OP_LOR: r = (T)(l || rr); break;                               \
    case OMPDSM_OP_MAX: r = l > rr ? l : rr; break;                            \
    case OMPDSM_OP_MIN: r = l < rr ? l : rr; break;
#define NATIVE_INT(NAME, T)                                                    \
    static void native_##NAME(void *xp, int op, const void *vp, int rev)       \
    {                                                                          \
        T x, v, r = 0;                                                         \
        memcpy(&x, xp, sizeof x);                                              \
        memcpy(&v, vp, sizeof v);                                              \
        T l = rev ? v : x, rr = rev ? x : v;                                   \
        switch (op) {                                                          \
            NATIVE_COMMON(T)                                                   \
        case OMPDSM_OP_AND: r = (T)(l & rr); break;                            \
        case OMPDSM_OP_OR: r = (T)(l | rr); break;                             \
        case OMPDSM_OP_XOR: r = (T)(l ^ rr); break;                            \
        case OMPDSM_OP_SHL: r = (T)(l << rr); break;                           \
        case OMPDSM_OP_SHR: r = (T)(l >> rr); break;                           \
        }                                                                      \
        memcpy(xp, &r, sizeof r);                                              \
    }
#define NATIVE_FLT(NAME, T)                                                    \
    static void native_##NAME(void *xp, int op, const void *vp, int rev)       \
    {                                                                          \
        T x, v, r = 0;                                                         \
        memcpy(&x, xp, sizeof x);                                              \
        memcpy(&v, vp, sizeof v);                                              \
        T l = rev ? v : x, rr = rev ? x : v;                                   \
        switch (op) { NATIVE_COMMON(T) }                                       \
        memcpy(xp, &r, sizeof r);                                              \
    }
NATIVE_INT(i8, int8_t)
NATIVE_INT(u8, uint8_t)
NATIVE_INT(i16, int16_t)
NATIVE_INT(u16, uint16_t)
NATIVE_INT(i32, int32_t)
NATIVE_INT(u32, uint32_t)
NATIVE_INT(i64, int64_t)
NATIVE_INT(u64, uint64_t)
NATIVE_INT(bool, _Bool)
NATIVE_FLT(f32, float)
NATIVE_FLT(f64, double)
NATIVE_FLT(f80, long double)

static void native(int ty, void *x, int op, const void *v, int rev)
{
    switch (ty) {
    case OMPDSM_TY_I8: native_i8(x, op, v, rev); break;
    case OMPDSM_TY_U8: native_u8(x, op, v, rev); break;
    case OMPDSM_TY_I16: native_i16(x, op, v, rev); break;
    case OMPDSM_TY_U16: native_u16(x, op, v, rev); break;
    case OMPDSM_TY_I32: native_i32(x, op, v, rev); break;
    case OMPDSM_TY_U32: native_u32(x, op, v, rev); break;
    case OMPDSM_TY_I64: native_i64(x, op, v, rev); break;
    case OMPDSM_TY_U64: native_u64(x, op, v, rev); break;
    case OMPDSM_TY_F32: native_f32(x, op, v, rev); break;
    case OMPDSM_TY_F64: native_f64(x, op, v, rev); break;
    case OMPDSM_TY_F80: native_f80(x, op, v, rev); break;
    case OMPDSM_TY_BOOL: native_bool(x, op, v, rev); break;
    }
}

/* The value a (converted to the type) in a slot. */
static slot of(int ty, long long a)
{
    slot s;
    memset(&s, 0, sizeof s);
#define PUT(T) do { T v_ = (T)a; memcpy(s.b, &v_, sizeof v_); } while (0)
    switch (ty) {
    case OMPDSM_TY_I8: PUT(int8_t); break;
    case OMPDSM_TY_U8: PUT(uint8_t); break;
    case OMPDSM_TY_I16: PUT(int16_t); break;
    case OMPDSM_TY_U16: PUT(uint16_t); break;
    case OMPDSM_TY_I32: PUT(int32_t); break;
    case OMPDSM_TY_U32: PUT(uint32_t); break;
    case OMPDSM_TY_I64: PUT(int64_t); break;
    case OMPDSM_TY_U64: PUT(uint64_t); break;
    case OMPDSM_TY_F32: PUT(float); break;
    case OMPDSM_TY_F64: PUT(double); break;
    case OMPDSM_TY_F80: PUT(long double); break;
    case OMPDSM_TY_BOOL: PUT(_Bool); break;
    }
#undef PUT
    return s;
}

static long double value_of(int ty, const slot *s)
{
#define GET(T) do { T v_; memcpy(&v_, s->b, sizeof v_); return (long double)v_; } while (0)
    switch (ty) {
    case OMPDSM_TY_I8: GET(int8_t);
    case OMPDSM_TY_U8: GET(uint8_t);
    case OMPDSM_TY_I16: GET(int16_t);
    case OMPDSM_TY_U16: GET(uint16_t);
    case OMPDSM_TY_I32: GET(int32_t);
    case OMPDSM_TY_U32: GET(uint32_t);
    case OMPDSM_TY_I64: GET(int64_t);
    case OMPDSM_TY_U64: GET(uint64_t);
    case OMPDSM_TY_F32: GET(float);
    case OMPDSM_TY_F64: GET(double);
    case OMPDSM_TY_F80: GET(long double);
    case OMPDSM_TY_BOOL: GET(_Bool);
    }
#undef GET
    return 0;
}

static int same(int ty, const slot *a, const slot *b)
{
    if (ty == OMPDSM_TY_F80) /* 10 significant bytes of 16 */
        return value_of(ty, a) == value_of(ty, b);
    static const size_t sz[NTY] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 16, 1};
    return !memcmp(a->b, b->b, sz[ty]);
}

/* ---- phase A: start values and thread-dependent operands ---- */
static long long a_x0(int ty, int op, int rev)
{
    switch (op) {
    case OMPDSM_OP_ADD: return 5;
    case OMPDSM_OP_SUB: return 50;
    case OMPDSM_OP_MUL: return 3;
    case OMPDSM_OP_DIV: return rev ? 7 : 100;
    case OMPDSM_OP_AND: return 0x5a;
    case OMPDSM_OP_OR: return 0x21;
    case OMPDSM_OP_XOR: return 0x33;
    case OMPDSM_OP_SHL: return rev ? 2 : 3;
    case OMPDSM_OP_SHR: return rev ? 2 : 120;
    case OMPDSM_OP_LAND: return 1;
    case OMPDSM_OP_LOR: return 0;
    default: (void)ty; return 10;
    }
}
static long long a_v(int ty, int op, int rev, int t)
{
    switch (op) {
    case OMPDSM_OP_ADD: case OMPDSM_OP_SUB: return t + 1;
    case OMPDSM_OP_MUL: return t + 2;
    case OMPDSM_OP_DIV: return rev ? 100 + t : t + 1;
    case OMPDSM_OP_AND: return 0x0f + 16 * (t % 7);
    case OMPDSM_OP_OR: return 1 << (t % 7);
    case OMPDSM_OP_XOR: return 5 * (t % 20) + 1;
    case OMPDSM_OP_SHL: return rev ? t % 5 + 1 : t % 4 + 1;
    case OMPDSM_OP_SHR: return rev ? 100 + t % 20 : t % 4 + 1;
    case OMPDSM_OP_LAND: case OMPDSM_OP_LOR: return t % 2;
    default: return 3 * (t % 20) - (is_signed_int(ty) || is_float(ty) ? 5 : 0);
    }
}

/* ---- phase B: order-independent contention ---- */
enum { RB = 6 };
static int b_applies(int op, int rev, int t)
{
    if (rev && (op == OMPDSM_OP_SHL || op == OMPDSM_OP_SHR))
        return 0;           /* covered by phase A only */
    if (op == OMPDSM_OP_SHL)
        return t < 6;       /* 1 << 6 still fits int8_t */
    return 1;
}
static int b_rounds(int op, int rev)
{
    switch (op) {
    case OMPDSM_OP_ADD: case OMPDSM_OP_MAX: case OMPDSM_OP_MIN: return RB;
    case OMPDSM_OP_SUB: return rev ? 1 : RB;
    case OMPDSM_OP_XOR: return 3;
    default: return 1;
    }
}
static long long b_x0(int ty, int op, int rev)
{
    switch (op) {
    case OMPDSM_OP_ADD: return 1;
    case OMPDSM_OP_SUB: return rev ? 10 : 100;
    case OMPDSM_OP_MUL: return 1;
    case OMPDSM_OP_DIV: return rev ? 4 : 100;
    case OMPDSM_OP_AND: return -1; /* all ones */
    case OMPDSM_OP_OR: case OMPDSM_OP_XOR: return 0;
    case OMPDSM_OP_SHL: return 1;
    case OMPDSM_OP_SHR: return 64;
    case OMPDSM_OP_LAND: return 1;
    case OMPDSM_OP_LOR: return 0;
    case OMPDSM_OP_MAX: return is_signed_int(ty) || is_float(ty) ? -100 : 0;
    default: return 100;
    }
}
static long long b_v(int ty, int op, int rev, int t, int r, int T)
{
    (void)ty;
    switch (op) {
    case OMPDSM_OP_ADD: return t + 1;
    case OMPDSM_OP_SUB: return rev ? 30 : 1 + t % 2;
    case OMPDSM_OP_MUL: return t % 2 ? 3 : 1;
    case OMPDSM_OP_DIV: return rev ? 12 : 2;
    case OMPDSM_OP_AND: return ~(1LL << (t % 8));
    case OMPDSM_OP_OR: case OMPDSM_OP_XOR: return 1LL << (t % 8);
    case OMPDSM_OP_SHL: case OMPDSM_OP_SHR: return 1;
    case OMPDSM_OP_LAND: return t != 1;
    case OMPDSM_OP_LOR: return t == T - 1;
    case OMPDSM_OP_MAX: return (t * 7 + r * 3) % 50;
    default: return 60 - (t * 7 + r * 3) % 50;
    }
}

static int ncombo;
static int c_ty[MAXC], c_op[MAXC], c_rev[MAXC];

/* Private data every node computes the same way before start. */
__attribute__((constructor)) static void build_combos(void)
{
    for (int ty = 0; ty < NTY; ty++)
        for (int op = 0; op < NOP; op++)
            for (int rev = 0; rev < 2; rev++)
                if (valid(ty, op)) {
                    c_ty[ncombo] = ty;
                    c_op[ncombo] = op;
                    c_rev[ncombo] = rev;
                    ncombo++;
                }
}

static void region_a(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    /* Read first, so that this node's copy is valid: an atomic on a stale
     * copy may divide by a stale 0 (rt_atomic_stale_guess). */
    volatile unsigned char sink = 0;
    for (int c = 0; c < ncombo; c++)
        sink ^= (*g_xa)[c][t].b[0];
    for (int c = 0; c < ncombo; c++) {
        slot v = of(c_ty[c], a_v(c_ty[c], c_op[c], c_rev[c], t));
        OMPDSM_atomic(&(*g_xa)[c][t], c_ty[c], c_op[c], &v, c_rev[c]);
    }
    /* Each thread sees its own updates at once. */
    for (int c = 0; c < ncombo; c++) {
        slot want = of(c_ty[c], a_x0(c_ty[c], c_op[c], c_rev[c]));
        slot v = of(c_ty[c], a_v(c_ty[c], c_op[c], c_rev[c], t));
        native(c_ty[c], &want, c_op[c], &v, c_rev[c]);
        CHECK(same(c_ty[c], &(*g_xa)[c][t], &want),
              "own read after atomic %s x %s v%s on thread %d: %Lg, expected "
              "%Lg", tyname[c_ty[c]], c_rev[c] ? "(reversed)" : "",
              opname[c_op[c]], t, value_of(c_ty[c], &(*g_xa)[c][t]),
              value_of(c_ty[c], &want));
    }
}

static void region_b(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    volatile unsigned char sink = 0; /* as in region_a */
    for (int c = 0; c < ncombo; c++)
        sink ^= (*g_xb)[c].b[0];
    for (int r = 0; r < RB; r++)
        for (int c = 0; c < ncombo; c++) {
            if (!b_applies(c_op[c], c_rev[c], t) ||
                r >= b_rounds(c_op[c], c_rev[c]))
                continue;
            slot v = of(c_ty[c], b_v(c_ty[c], c_op[c], c_rev[c], t, r, T));
            OMPDSM_atomic(&(*g_xb)[c], c_ty[c], c_op[c], &v, c_rev[c]);
        }
}

static OMPDSM_region rd_a = {region_a, "rt_atomic.c:250 (main)", 0};
static OMPDSM_region rd_b = {region_b, "rt_atomic.c:270 (main)", 0};
static OMPDSM_region *regions[] = {&rd_a, &rd_b};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_atomic.c", globals, 2, 0,
                           regions, 2, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_atomic", 45);
    int T = omp_get_max_threads();

    rtt_phase("serial part");
    {
        /* shared and private variables, outside any region */
        slot v = of(OMPDSM_TY_I32, 7);
        (*g_xb)[0] = of(OMPDSM_TY_I32, 5);
        OMPDSM_flush(); /* see rt_atomic_after_write */
        OMPDSM_atomic(&(*g_xb)[0], OMPDSM_TY_I32, OMPDSM_OP_MUL, &v, 0);
        CHECK(value_of(OMPDSM_TY_I32, &(*g_xb)[0]) == 35,
              "serial atomic on shared: %Lg", value_of(OMPDSM_TY_I32, &(*g_xb)[0]));
        double priv = 1.5, two = 2.0;
        OMPDSM_atomic(&priv, OMPDSM_TY_F64, OMPDSM_OP_DIV, &two, 1);
        CHECK(priv == 2.0 / 1.5, "serial atomic on private: %g", priv);
        long double lp = 3.0L, lq = 0.25L;
        OMPDSM_atomic(&lp, OMPDSM_TY_F80, OMPDSM_OP_SUB, &lq, 0);
        CHECK(lp == 2.75L, "serial atomic on private long double: %Lg", lp);
    }

    rtt_phase("A: semantics");
    for (int c = 0; c < ncombo; c++)
        for (int t = 0; t < MAXT; t++)
            (*g_xa)[c][t] = of(c_ty[c], a_x0(c_ty[c], c_op[c], c_rev[c]));
    OMPDSM_parallel(&rd_a, NULL, 0, 0, 1);
    int fails_a = 0;
    for (int c = 0; c < ncombo; c++)
        for (int t = 0; t < MAXT; t++) {
            slot want = of(c_ty[c], a_x0(c_ty[c], c_op[c], c_rev[c]));
            if (t < T) {
                slot v = of(c_ty[c], a_v(c_ty[c], c_op[c], c_rev[c], t));
                native(c_ty[c], &want, c_op[c], &v, c_rev[c]);
            }
            int ok = same(c_ty[c], &(*g_xa)[c][t], &want);
            fails_a += !ok;
            CHECK(ok, "A: %s x %s%s v (thread %d): %Lg, expected %Lg",
                  tyname[c_ty[c]], opname[c_op[c]],
                  c_rev[c] ? " reversed" : "", t,
                  value_of(c_ty[c], &(*g_xa)[c][t]), value_of(c_ty[c], &want));
        }

    rtt_phase("B: contention");
    for (int c = 0; c < ncombo; c++)
        (*g_xb)[c] = of(c_ty[c], b_x0(c_ty[c], c_op[c], c_rev[c]));
    OMPDSM_parallel(&rd_b, NULL, 0, 0, 1);
    for (int c = 0; c < ncombo; c++) {
        slot want = of(c_ty[c], b_x0(c_ty[c], c_op[c], c_rev[c]));
        for (int t = 0; t < T; t++)
            for (int r = 0; r < RB; r++) {
                if (!b_applies(c_op[c], c_rev[c], t) ||
                    r >= b_rounds(c_op[c], c_rev[c]))
                    continue;
                slot v = of(c_ty[c], b_v(c_ty[c], c_op[c], c_rev[c], t, r, T));
                native(c_ty[c], &want, c_op[c], &v, c_rev[c]);
            }
        CHECK(same(c_ty[c], &(*g_xb)[c], &want),
              "B: %s x %s%s v by %d threads: %Lg, expected %Lg",
              tyname[c_ty[c]], opname[c_op[c]], c_rev[c] ? " reversed" : "",
              T, value_of(c_ty[c], &(*g_xb)[c]), value_of(c_ty[c], &want));
    }
    char d[48];
    snprintf(d, sizeof d, "combinations=%d", ncombo);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
