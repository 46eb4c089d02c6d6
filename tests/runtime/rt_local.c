/* rt_local.c - shared locals (OMPDSM_local_alloc with the cleanup
 * attribute, as ompcc emits them for locals a region shares): initial
 * values copied in, a scalar, a struct and an 800 KB array shared by a
 * region through the frame, locals of a recursive function each shared by
 * its own region, locals of a function called inside a region (on every
 * node) shared by a nested region, a zero-size local, and storage reused
 * when calls repeat (freed in reverse order, nothing leaks). */
#include "rt_test.h"

#include <stdint.h>

enum { MAXT = 64, NARR = 100000, CALLS = 300 };

struct pt {
    int x, y;
    double w;
};

/* ---- region: a parallel for over the shared local array ---- */
struct frame_arr {
    double *arr;    /* shared local double arr[NARR] */
    long long *sum; /* shared local */
    struct pt *p;   /* shared local struct */
};
static OMPDSM_loop_site site = {"rt_local.c", 30, "region_arr", 0};
static void region_arr(void *fp)
{
    struct frame_arr *f = fp;
    CHECK(f->p->x == 3 && f->p->y == 4 && f->p->w == 0.5,
          "shared local struct: %d %d %g", f->p->x, f->p->y, f->p->w);
    long long s;
    OMPDSM_reduce_init(&s, OMPDSM_TY_I64, OMPDSM_OP_ADD);
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, NARR, OMPDSM_SCHED_STATIC, 0, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            f->arr[k] = f->arr[k] * 2 + 1;
            s += (long long)f->arr[k];
        }
    OMPDSM_red r[1] = {{f->sum, &s, OMPDSM_TY_I64, OMPDSM_OP_ADD}};
    OMPDSM_reduce(r, 1);
    OMPDSM_loop_end(&L, 0);
    if (OMPDSM_master())
        f->p->x += 100;
}

/* ---- a recursive function whose local each level's region shares ---- */
struct frame_rec {
    int *counter;
    int depth;
};
static void region_rec(void *fp)
{
    struct frame_rec *f = fp;
    long long add = f->depth;
    OMPDSM_atomic(f->counter, OMPDSM_TY_I32, OMPDSM_OP_ADD, &add, 0);
}
static OMPDSM_region rd_rec = {region_rec, "rt_local.c:60 (recurse)", 0};
static int recurse(int depth, uintptr_t *addr_out)
{
    int __ompdsm_i_counter = 1000 * depth;
    int *__ompdsm_l_counter __attribute__((cleanup(OMPDSM_local_free))) =
        OMPDSM_local_alloc(sizeof(int), __alignof__(int), &__ompdsm_i_counter);
    if (addr_out)
        *addr_out = (uintptr_t)__ompdsm_l_counter;
    int below = depth > 1 ? recurse(depth - 1, NULL) : 0;
    struct frame_rec f = {__ompdsm_l_counter, depth};
    OMPDSM_parallel(&rd_rec, &f, sizeof f, 0, 1);
    return below + *__ompdsm_l_counter;
}

/* ---- a function called inside a region, with a nested region ---- */
struct frame_in {
    int *cell;
};
static void region_nested(void *fp)
{
    struct frame_in *f = fp;
    *f->cell += 7;
}
static OMPDSM_region rd_nested = {region_nested, "rt_local.c:90 (inner)", 0};
static int inner(int tid)
{
    int __ompdsm_i_cell = tid;
    int *__ompdsm_l_cell __attribute__((cleanup(OMPDSM_local_free))) =
        OMPDSM_local_alloc(sizeof(int), __alignof__(int), &__ompdsm_i_cell);
    char *__ompdsm_l_empty __attribute__((cleanup(OMPDSM_local_free))) =
        OMPDSM_local_alloc(0, 1, 0); /* a zero-size local */
    CHECK(__ompdsm_l_empty != NULL, "zero-size local: NULL");
    struct frame_in f = {__ompdsm_l_cell};
    OMPDSM_parallel(&rd_nested, &f, sizeof f, 0, 1);
    return *__ompdsm_l_cell;
}
static int (*g_inner_res)[MAXT];
static void region_calls(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    (*g_inner_res)[t] = inner(t);
}
static OMPDSM_global globals[] = {
    {(void **)&g_inner_res, sizeof *g_inner_res, __alignof__(*g_inner_res),
     "inner_res"},
};

static OMPDSM_region rd_arr = {region_arr, "rt_local.c:25 (main)", 0};
static OMPDSM_region rd_calls = {region_calls, "rt_local.c:105 (main)", 0};
static OMPDSM_region *regions[] = {&rd_arr, &rd_rec, &rd_nested, &rd_calls};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_local.c", globals, 1, 0,
                           regions, 4, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_local", 45);
    int T = omp_get_max_threads();

    rtt_phase("locals of main");
    {
        long long __ompdsm_i_sum = 5;
        long long *__ompdsm_l_sum __attribute__((cleanup(OMPDSM_local_free))) =
            OMPDSM_local_alloc(sizeof(long long), __alignof__(long long),
                               &__ompdsm_i_sum);
        struct pt __ompdsm_i_p = {3, 4, 0.5};
        struct pt *__ompdsm_l_p __attribute__((cleanup(OMPDSM_local_free))) =
            OMPDSM_local_alloc(sizeof(struct pt), __alignof__(struct pt),
                               &__ompdsm_i_p);
        double *__ompdsm_l_arr __attribute__((cleanup(OMPDSM_local_free))) =
            OMPDSM_local_alloc(NARR * sizeof(double), __alignof__(double), 0);
        CHECK(*__ompdsm_l_sum == 5, "initial value of a shared local: %lld",
              *__ompdsm_l_sum);
        for (int i = 0; i < NARR; i++)
            __ompdsm_l_arr[i] = i;
        struct frame_arr f = {__ompdsm_l_arr, __ompdsm_l_sum, __ompdsm_l_p};
        OMPDSM_parallel(&rd_arr, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*__ompdsm_l_sum, 5 + (long long)NARR * NARR,
                    "sum over the shared local array");
        CHECK(__ompdsm_l_p->x == 103, "struct after the region: x=%d",
              __ompdsm_l_p->x);
        int bad = 0;
        for (int i = 0; i < NARR; i++)
            bad += __ompdsm_l_arr[i] != 2.0 * i + 1;
        CHECK(!bad, "%d elements of the shared local array wrong", bad);
    }

    rtt_phase("recursion");
    /* recurse(3): levels 3, 2, 1 each add depth per thread to 1000*depth */
    int want = 0;
    for (int d = 1; d <= 3; d++)
        want += 1000 * d + T * d;
    uintptr_t first = 0, addr = 0;
    int distinct = 0;
    for (int c = 0; c < CALLS; c++) {
        int got = recurse(3, &addr);
        if (got != want) {
            rtt_fail("call %d: recurse(3) = %d, expected %d", c, got, want);
            break;
        }
        if (!c)
            first = addr;
        distinct += addr != first;
    }
    CHECK(distinct == 0, "shared locals not reused: %d of %d calls got another "
          "address", distinct, CALLS);

    rtt_phase("locals inside a region");
    OMPDSM_parallel(&rd_calls, NULL, 0, 0, 1);
    for (int t = 0; t < T; t++)
        CHECK((*g_inner_res)[t] == t + 7, "thread %d: inner() = %d", t,
              (*g_inner_res)[t]);
    char d[32];
    snprintf(d, sizeof d, "calls=%d", CALLS);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
