/* rt_reduction.c - reductions: every reduction operator code (+ - * & | ^
 * && || max min) on every type code it applies to, all items in one
 * OMPDSM_reduce call, in four contexts:
 *   region  a parallel region, one contribution per thread, result after
 *           the join;
 *   loop    a static loop, result visible to every thread after the loop's
 *           own barrier;
 *   nowait  a dynamic loop with nowait, result after the next barrier;
 *   twice   two nowait loops reducing into separate variables before one
 *           barrier;
 *   join    a nowait loop at the end of the region: the join combines.
 * The expected value is x0 op v(0) op v(1) ... computed serially with the
 * C operators of the type (operands are chosen so that the order cannot
 * matter: integer arithmetic wraps, floating-point values stay exact).
 * Also checks OMPDSM_reduce_init's identity values. */
#include "rt_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

enum { NTY = 12, MAXC = 12 * 10, N = 1000, NCTX = 6 };

typedef union {
    long double ld;
    unsigned char b[16];
} slot;

static slot (*g_x)[NCTX][MAXC];
static OMPDSM_global globals[] = {
    {(void **)&g_x, sizeof *g_x, __alignof__(*g_x), "x"},
};

static const char *const tyname[NTY] = {"i8", "u8", "i16", "u16", "i32",
                                         "u32", "i64", "u64", "f32", "f64",
                                         "f80", "bool"};
static const int red_ops[10] = {OMPDSM_OP_ADD, OMPDSM_OP_SUB, OMPDSM_OP_MUL,
                                OMPDSM_OP_AND, OMPDSM_OP_OR, OMPDSM_OP_XOR,
                                OMPDSM_OP_LAND, OMPDSM_OP_LOR, OMPDSM_OP_MAX,
                                OMPDSM_OP_MIN};
static const char *const opname[13] = {"+", "-", "*", "/", "&", "|", "^",
                                       "<<", ">>", "&&", "||", "max", "min"};

static int is_float(int ty)
{
    return ty == OMPDSM_TY_F32 || ty == OMPDSM_TY_F64 || ty == OMPDSM_TY_F80;
}
static int is_signed(int ty)
{
    return ty == OMPDSM_TY_I8 || ty == OMPDSM_TY_I16 || ty == OMPDSM_TY_I32 ||
           ty == OMPDSM_TY_I64 || is_float(ty);
}
static int valid(int ty, int op)
{
    if (is_float(ty))
        return op != OMPDSM_OP_AND && op != OMPDSM_OP_OR && op != OMPDSM_OP_XOR;
    /* `b -= v` on a _Bool toggles: partial results would depend on the
     * schedule, so (-:b) has no single right answer. */
    return !(ty == OMPDSM_TY_BOOL && op == OMPDSM_OP_SUB);
}

/* x = x op v with the type's C operators (SUB: the body does x -= v). */
#define STEP_COMMON(T)                                                         \
    case OMPDSM_OP_ADD: x = (T)(x + v); break;                                 \
    case OMPDSM_OP_SUB: x = (T)(x - v); break;                                 \
    case OMPDSM_OP_MUL: x = (T)(x * v); break;                                 \
    case OMPDSM_OP_LAND: x = (T)(x && v); break;                               \
    case OMPDSM_OP_LOR: x = (T)(x || v); break;                                \
    case OMPDSM_OP_MAX: x = x > v ? x : v; break;                              \
    case OMPDSM_OP_MIN: x = x < v ? x : v; break;
#define STEP_INT(NAME, T)                                                      \
    static void step_##NAME(void *xp, int op, long long a)                     \
    {                                                                          \
        T x, v = (T)a;                                                         \
        memcpy(&x, xp, sizeof x);                                              \
        switch (op) {                                                          \
            STEP_COMMON(T)                                                     \
        case OMPDSM_OP_AND: x = (T)(x & v); break;                             \
        case OMPDSM_OP_OR: x = (T)(x | v); break;                              \
        case OMPDSM_OP_XOR: x = (T)(x ^ v); break;                             \
        }                                                                      \
        memcpy(xp, &x, sizeof x);                                              \
    }
#define STEP_FLT(NAME, T)                                                      \
    static void step_##NAME(void *xp, int op, long long a)                     \
    {                                                                          \
        T x, v = (T)a;                                                         \
        memcpy(&x, xp, sizeof x);                                              \
        switch (op) { STEP_COMMON(T) }                                         \
        memcpy(xp, &x, sizeof x);                                              \
    }
STEP_INT(i8, int8_t)
STEP_INT(u8, uint8_t)
STEP_INT(i16, int16_t)
STEP_INT(u16, uint16_t)
STEP_INT(i32, int32_t)
STEP_INT(u32, uint32_t)
STEP_INT(i64, int64_t)
STEP_INT(u64, uint64_t)
STEP_INT(bool, _Bool)
STEP_FLT(f32, float)
STEP_FLT(f64, double)
STEP_FLT(f80, long double)
static void (*const step[NTY])(void *, int, long long) = {
    step_i8, step_u8, step_i16, step_u16, step_i32, step_u32, step_i64,
    step_u64, step_f32, step_f64, step_f80, step_bool};

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
    if (ty == OMPDSM_TY_F80)
        return value_of(ty, a) == value_of(ty, b);
    static const size_t sz[NTY] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 16, 1};
    return !memcmp(a->b, b->b, sz[ty]);
}

static long long x0_of(int ty, int op)
{
    switch (op) {
    case OMPDSM_OP_ADD: case OMPDSM_OP_MUL: return 3;
    case OMPDSM_OP_SUB: return 1000;
    case OMPDSM_OP_AND: return -1;
    case OMPDSM_OP_OR: return 0x40;
    case OMPDSM_OP_XOR: return 0x11;
    case OMPDSM_OP_LAND: return 1;
    case OMPDSM_OP_LOR: return 0;
    case OMPDSM_OP_MAX: return is_signed(ty) ? -50 : 0;
    default: return 50;
    }
}
/* The operand of iteration k of n. */
static long long v_of(int ty, int op, long long k, long long n)
{
    switch (op) {
    case OMPDSM_OP_ADD: return k % 7 + 1;
    case OMPDSM_OP_SUB: return k % 5 + 1;
    case OMPDSM_OP_MUL: return k % 37 == 0 ? 2 : 1;
    case OMPDSM_OP_AND: return k % 13 == 0 ? ~(1LL << (k % 8)) : -1;
    case OMPDSM_OP_OR: return k % 11 == 0 ? 1LL << (k % 8) : 0;
    case OMPDSM_OP_XOR: return (k * 37) & 0x7f;
    case OMPDSM_OP_LAND: return k != n - 3 || ty % 2;
    case OMPDSM_OP_LOR: return k == n / 2 && !(ty % 2);
    default: return (k * 7919) % 201 - (is_signed(ty) ? 100 : 0);
    }
}

static int ncombo;
static int c_ty[MAXC], c_op[MAXC];
__attribute__((constructor)) static void build_combos(void)
{
    for (int ty = 0; ty < NTY; ty++)
        for (int o = 0; o < 10; o++)
            if (valid(ty, red_ops[o])) {
                c_ty[ncombo] = ty;
                c_op[ncombo] = red_ops[o];
                ncombo++;
            }
}

static slot expected(int c, long long n)
{
    slot x = of(c_ty[c], x0_of(c_ty[c], c_op[c]));
    for (long long k = 0; k < n; k++)
        step[c_ty[c]](&x, c_op[c], v_of(c_ty[c], c_op[c], k, n));
    return x;
}

enum { CTX_REGION, CTX_LOOP, CTX_NOWAIT, CTX_TWICE_A, CTX_TWICE_B,
       CTX_JOIN };
static const char *const ctxname[NCTX] = {"region", "loop", "loop nowait",
                                          "1st of two nowait loops",
                                          "2nd of two nowait loops",
                                          "nowait loop ending the region"};

static OMPDSM_loop_site site1 = {"rt_reduction.c", 230, "region", 0};
static OMPDSM_loop_site site2 = {"rt_reduction.c", 240, "region", 0};
static OMPDSM_loop_site site3 = {"rt_reduction.c", 250, "region", 0};
static OMPDSM_loop_site site4 = {"rt_reduction.c", 260, "region", 0};
static OMPDSM_loop_site site5 = {"rt_reduction.c", 270, "region", 0};

/* One loop: private copies, the body, OMPDSM_reduce. */
static void reduce_loop(OMPDSM_loop_site *site, int ctx, int sched, int nowait,
                        int odd_only)
{
    static __thread slot priv[MAXC]; /* per thread (hybrid nodes too) */
    OMPDSM_red items[MAXC];
    int n = 0;
    for (int c = 0; c < ncombo; c++) {
        if (odd_only >= 0 && c % 2 != odd_only)
            continue;
        OMPDSM_reduce_init(&priv[c], c_ty[c], c_op[c]);
        items[n++] = (OMPDSM_red){&(*g_x)[ctx][c], &priv[c], c_ty[c], c_op[c]};
    }
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, site, N, sched, sched == OMPDSM_SCHED_DYNAMIC ? 7 : 0,
                     0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            for (int c = 0; c < ncombo; c++)
                if (odd_only < 0 || c % 2 == odd_only)
                    step[c_ty[c]](&priv[c], c_op[c],
                                  v_of(c_ty[c], c_op[c], (long long)k, N));
    OMPDSM_reduce(items, n);
    OMPDSM_loop_end(&L, nowait);
}

static void check_ctx(int ctx, long long n, int odd_only)
{
    for (int c = 0; c < ncombo; c++) {
        if (odd_only >= 0 && c % 2 != odd_only)
            continue;
        slot want = expected(c, n);
        CHECK(same(c_ty[c], &(*g_x)[ctx][c], &want),
              "%s: reduction(%s) on %s: %Lg, expected %Lg (seen by thread %d)",
              ctxname[ctx], opname[c_op[c]], tyname[c_ty[c]],
              value_of(c_ty[c], &(*g_x)[ctx][c]), value_of(c_ty[c], &want),
              omp_get_thread_num());
    }
}

static void region_loops(void *fp)
{
    (void)fp;
    reduce_loop(&site1, CTX_LOOP, OMPDSM_SCHED_STATIC, 0, -1);
    check_ctx(CTX_LOOP, N, -1); /* after the loop's barrier, on every thread */
    reduce_loop(&site2, CTX_NOWAIT, OMPDSM_SCHED_DYNAMIC, 1, -1);
    OMPDSM_barrier();
    check_ctx(CTX_NOWAIT, N, -1);
    reduce_loop(&site3, CTX_TWICE_A, OMPDSM_SCHED_STATIC, 1, 0);
    reduce_loop(&site4, CTX_TWICE_B, OMPDSM_SCHED_GUIDED, 1, 1);
    OMPDSM_barrier();
    check_ctx(CTX_TWICE_A, N, 0);
    check_ctx(CTX_TWICE_B, N, 1);
    reduce_loop(&site5, CTX_JOIN, OMPDSM_SCHED_DYNAMIC, 1, -1);
}

/* Each thread contributes v(tid) once. */
static void region_plain(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    static __thread slot priv[MAXC];
    OMPDSM_red items[MAXC];
    for (int c = 0; c < ncombo; c++) {
        OMPDSM_reduce_init(&priv[c], c_ty[c], c_op[c]);
        step[c_ty[c]](&priv[c], c_op[c], v_of(c_ty[c], c_op[c], t, T));
        items[c] = (OMPDSM_red){&(*g_x)[CTX_REGION][c], &priv[c], c_ty[c],
                                c_op[c]};
    }
    OMPDSM_reduce(items, ncombo);
}

static OMPDSM_region rd_loops = {region_loops, "rt_reduction.c:280 (main)", 0};
static OMPDSM_region rd_plain = {region_plain, "rt_reduction.c:300 (main)", 0};
static OMPDSM_region *regions[] = {&rd_loops, &rd_plain};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_reduction.c", globals, 1, 0,
                           regions, 2, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static void check_identities(void)
{
    for (int c = 0; c < ncombo; c++) {
        int ty = c_ty[c], op = c_op[c];
        slot got;
        memset(&got, 0, sizeof got);
        OMPDSM_reduce_init(&got, ty, op);
        long double g = value_of(ty, &got);
        int ok;
        switch (op) {
        case OMPDSM_OP_MUL: case OMPDSM_OP_LAND: ok = g == 1; break;
        case OMPDSM_OP_AND: {
            slot ones = of(ty, -1);
            ok = same(ty, &got, &ones);
            break;
        }
        case OMPDSM_OP_MAX: case OMPDSM_OP_MIN: {
            /* x max identity == x for the type's extreme values */
            static const long double lo[NTY] = {INT8_MIN, 0, INT16_MIN, 0,
                INT32_MIN, 0, (long double)INT64_MIN, 0, -FLT_MAX, -DBL_MAX,
                -LDBL_MAX, 0};
            static const long double hi[NTY] = {INT8_MAX, UINT8_MAX,
                INT16_MAX, UINT16_MAX, INT32_MAX, UINT32_MAX,
                (long double)INT64_MAX, (long double)UINT64_MAX, FLT_MAX,
                DBL_MAX, LDBL_MAX, 1};
            if (op == OMPDSM_OP_MAX)
                ok = g <= lo[ty];
            else
                ok = g >= hi[ty];
            break;
        }
        default: ok = g == 0; break;
        }
        CHECK(ok, "OMPDSM_reduce_init(%s, %s) = %Lg is not the identity",
              tyname[ty], opname[op], g);
    }
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_reduction", 45);
    int T = omp_get_max_threads();
    rtt_phase("identities");
    check_identities();
    for (int rep = 0; rep < 2; rep++) {
        rtt_phase("region");
        for (int c = 0; c < ncombo; c++)
            (*g_x)[CTX_REGION][c] = of(c_ty[c], x0_of(c_ty[c], c_op[c]));
        OMPDSM_parallel(&rd_plain, NULL, 0, 0, 1);
        check_ctx(CTX_REGION, T, -1);
        rtt_phase("loops");
        for (int ctx = CTX_LOOP; ctx < NCTX; ctx++)
            for (int c = 0; c < ncombo; c++)
                (*g_x)[ctx][c] = of(c_ty[c], x0_of(c_ty[c], c_op[c]));
        OMPDSM_parallel(&rd_loops, NULL, 0, 0, 1);
        for (int ctx = CTX_LOOP; ctx < NCTX; ctx++)
            check_ctx(ctx, N, ctx == CTX_TWICE_A ? 0 : ctx == CTX_TWICE_B ? 1 : -1);
    }
    char d[48];
    snprintf(d, sizeof d, "combinations=%d contexts=%d", ncombo, NCTX);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
