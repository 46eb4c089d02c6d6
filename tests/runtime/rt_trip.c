/* rt_trip.c - trip counts and loop variables: OMPDSM_trip_count_s/_u for
 * <, <=, >, >= with unit, non-unit and negative steps, on signed char,
 * short, int, unsigned, long long and unsigned long long ranges (up to the
 * types' limits), empty loops and loops with fewer iterations than threads.
 * The reference is the loop itself run serially in 128-bit arithmetic; the
 * normalised loop then runs in parallel under four schedules, recovers
 * i = lb + k * step in the variable's type, and the team's count, sum and
 * sum of squares (mod 2^64) must equal the serial ones. */
#include "rt_test.h"

enum { NCASE_MAX = 64 };

/* One `for (T v = lb; v OP ub; v += step)`; lb/ub are the values of the
 * variable's type, stored in 128 bits. */
struct tcase {
    const char *what;
    int type;        /* OMPDSM_TY_I8 .. U64 (the variable's type) */
    __int128 lb, ub;
    long long step;
    int cmp;         /* '<' 'l' '>' 'g' */
};

#define LL_MIN (-(__int128)9223372036854775807LL - 1)
#define LL_MAX ((__int128)9223372036854775807LL)
#define ULL_MAX ((__int128)18446744073709551615ULL)

static const struct tcase cases[] = {
    {"int 0<100 +1", OMPDSM_TY_I32, 0, 100, 1, '<'},
    {"int 0<100 +7", OMPDSM_TY_I32, 0, 100, 7, '<'},
    {"int 0<=98 +7", OMPDSM_TY_I32, 0, 98, 7, 'l'},
    {"int 5<5 empty", OMPDSM_TY_I32, 5, 5, 1, '<'},
    {"int 5<=5 one", OMPDSM_TY_I32, 5, 5, 1, 'l'},
    {"int 10<0 empty", OMPDSM_TY_I32, 10, 0, 1, '<'},
    {"int 0>10 empty", OMPDSM_TY_I32, 0, 10, -1, '>'},
    {"int 100>0 -1", OMPDSM_TY_I32, 100, 0, -1, '>'},
    {"int 100>=0 -3", OMPDSM_TY_I32, 100, 0, -3, 'g'},
    {"int -50<=50 +9", OMPDSM_TY_I32, -50, 50, 9, 'l'},
    {"int -7>=-100 -13", OMPDSM_TY_I32, -7, -100, -13, 'g'},
    {"int 0<3 few", OMPDSM_TY_I32, 0, 3, 1, '<'},
    {"int 0<2 +5 one", OMPDSM_TY_I32, 0, 2, 5, '<'},
    {"int MIN<MAX +2^28", OMPDSM_TY_I32, -2147483647 - 1, 2147483647, 1 << 28, '<'},
    {"int MAX>=MIN -2^28", OMPDSM_TY_I32, 2147483647, -2147483647 - 1, -(1 << 28), 'g'},
    {"schar -128<=127 +5", OMPDSM_TY_I8, -128, 127, 5, 'l'},
    {"schar 127>-128 -3", OMPDSM_TY_I8, 127, -128, -3, '>'},
    {"uchar 0<=255 +4", OMPDSM_TY_U8, 0, 255, 4, 'l'},
    {"short -30000<30000 +777", OMPDSM_TY_I16, -30000, 30000, 777, '<'},
    {"ushort 65535>=1 -1000", OMPDSM_TY_U16, 65535, 1, -1000, 'g'},
    {"unsigned 0<4e9 +1e9+7", OMPDSM_TY_U32, 0, 4000000000u, 1000000007, '<'},
    {"unsigned 4e9>=1 -999999999", OMPDSM_TY_U32, 4000000000u, 1, -999999999, 'g'},
    {"unsigned 10>0 -1", OMPDSM_TY_U32, 10, 0, -1, '>'},
    {"unsigned 0<=MAX +2^29", OMPDSM_TY_U32, 0, 4294967295u, 1 << 29, 'l'},
    {"unsigned 3>=3 one", OMPDSM_TY_U32, 3, 3, -1, 'g'},
    {"unsigned 0>0 empty", OMPDSM_TY_U32, 0, 0, -1, '>'},
    {"ll MIN<MAX +2^58", OMPDSM_TY_I64, LL_MIN, LL_MAX, 1LL << 58, '<'},
    {"ll MAX>=MIN -(2^60-3)", OMPDSM_TY_I64, LL_MAX, LL_MIN, -(1LL << 60) + 3, 'g'},
    {"ll -1e12<=1e12 +123456789011", OMPDSM_TY_I64, -1000000000000LL, 1000000000000LL, 123456789011LL, 'l'},
    {"ll MIN+1<=MIN+1 one", OMPDSM_TY_I64, LL_MIN + 1, LL_MIN + 1, 7, 'l'},
    {"ull 0<MAX +2^60", OMPDSM_TY_U64, 0, ULL_MAX, 1LL << 60, '<'},
    {"ull MAX>=0 -2^61", OMPDSM_TY_U64, ULL_MAX, 0, -(1LL << 61), 'g'},
    {"ull MAX-10<=MAX +3", OMPDSM_TY_U64, ULL_MAX - 10, ULL_MAX, 3, 'l'},
    {"ull 2^63>2^63-5 -1", OMPDSM_TY_U64, (__int128)1 << 63, ((__int128)1 << 63) - 5, -1, '>'},
    {"ull 1000<1000 empty", OMPDSM_TY_U64, 1000, 1000, 3, '<'},
};
enum { NCASE = sizeof cases / sizeof cases[0] };

static int is_signed(int type)
{
    return type == OMPDSM_TY_I8 || type == OMPDSM_TY_I16 ||
           type == OMPDSM_TY_I32 || type == OMPDSM_TY_I64;
}

/* The value of the loop variable (of the case's type) as 64 bits. */
static unsigned long long in_type(int type, unsigned long long v)
{
    switch (type) {
    case OMPDSM_TY_I8: return (unsigned long long)(long long)(signed char)v;
    case OMPDSM_TY_U8: return (unsigned char)v;
    case OMPDSM_TY_I16: return (unsigned long long)(long long)(short)v;
    case OMPDSM_TY_U16: return (unsigned short)v;
    case OMPDSM_TY_I32: return (unsigned long long)(long long)(int)v;
    case OMPDSM_TY_U32: return (unsigned)v;
    default: return v;
    }
}

/* What ompcc computes: the trip count in the variable's type. */
static unsigned long long trip(const struct tcase *c)
{
    if (is_signed(c->type))
        return OMPDSM_trip_count_s((long long)c->lb, (long long)c->ub, c->step,
                                   c->cmp);
    return OMPDSM_trip_count_u((unsigned long long)c->lb,
                               (unsigned long long)c->ub, c->step, c->cmp);
}

struct ref {
    unsigned long long n, sum, sq;
};

/* The loop as written, in exact arithmetic. */
static struct ref reference(const struct tcase *c)
{
    struct ref r = {0, 0, 0};
    for (__int128 v = c->lb;; v += c->step) {
        int go = c->cmp == '<' ? v < c->ub : c->cmp == 'l' ? v <= c->ub
               : c->cmp == '>' ? v > c->ub : v >= c->ub;
        if (!go)
            break;
        unsigned long long u = (unsigned long long)v;
        r.n++;
        r.sum += u;
        r.sq += u * u;
    }
    return r;
}

static unsigned long long (*g_res)[NCASE_MAX][4][3];
static OMPDSM_global globals[] = {
    {(void **)&g_res, sizeof *g_res, __alignof__(*g_res), "res"},
};
static OMPDSM_loop_site site = {"rt_trip.c", 120, "region", 0};

static const int scheds[4][2] = {
    {OMPDSM_SCHED_STATIC, 0}, {OMPDSM_SCHED_STATIC, 3},
    {OMPDSM_SCHED_DYNAMIC, 2}, {OMPDSM_SCHED_GUIDED, 1},
};

static void region(void *fp)
{
    (void)fp;
    for (int ci = 0; ci < NCASE; ci++) {
        const struct tcase *c = &cases[ci];
        unsigned long long n = trip(c);
        unsigned long long lb = (unsigned long long)c->lb;
        for (int s = 0; s < 4; s++) {
            unsigned long long p[3];
            for (int j = 0; j < 3; j++)
                OMPDSM_reduce_init(&p[j], OMPDSM_TY_U64, OMPDSM_OP_ADD);
            OMPDSM_loop L;
            unsigned long long lo, hi;
            OMPDSM_loop_init(&L, &site, n, scheds[s][0], scheds[s][1], 0, 0, 0);
            while (OMPDSM_loop_next(&L, &lo, &hi))
                for (unsigned long long k = lo; k < hi; k++) {
                    /* i = lb + k * step, in the variable's type */
                    unsigned long long i =
                        in_type(c->type, lb + k * (unsigned long long)c->step);
                    p[0]++;
                    p[1] += i;
                    p[2] += i * i;
                }
            OMPDSM_red r[3];
            for (int j = 0; j < 3; j++)
                r[j] = (OMPDSM_red){&(*g_res)[ci][s][j], &p[j], OMPDSM_TY_U64,
                                    OMPDSM_OP_ADD};
            OMPDSM_reduce(r, 3);
            OMPDSM_loop_end(&L, 0);
        }
    }
}
static OMPDSM_region rd = {region, "rt_trip.c:130 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_trip.c", globals, 1, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_trip", 40);
    _Static_assert((int)NCASE <= (int)NCASE_MAX, "too many cases");
    struct ref refs[NCASE];
    unsigned long long total = 0;
    rtt_phase("trip counts");
    for (int ci = 0; ci < NCASE; ci++) {
        refs[ci] = reference(&cases[ci]);
        unsigned long long n = trip(&cases[ci]);
        CHECK(n == refs[ci].n, "%s: trip count %llu, the loop runs %llu times",
              cases[ci].what, n, refs[ci].n);
        total += refs[ci].n;
    }
    rtt_phase("parallel loops");
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    for (int ci = 0; ci < NCASE; ci++)
        for (int s = 0; s < 4; s++) {
            unsigned long long *g = (*g_res)[ci][s];
            CHECK(g[0] == refs[ci].n && g[1] == refs[ci].sum &&
                      g[2] == refs[ci].sq,
                  "%s, schedule %d,%d: count %llu sum %llu sq %llu; expected "
                  "%llu %llu %llu",
                  cases[ci].what, scheds[s][0], scheds[s][1], g[0], g[1], g[2],
                  refs[ci].n, refs[ci].sum, refs[ci].sq);
        }
    char d[48];
    snprintf(d, sizeof d, "cases=%d iterations=%llu", NCASE, total);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
