/* stores.c - every kind of store into the shared heap, for ompcc's
 * write-detection pass: wd.py compiles it with the pass at -O0, -O2 and
 * -O3 (with and without -mavx2 and -mavx512f, with the loop optimisation on
 * and off) and links it with wdrt.c's stand-in runtime; each case stores
 * into the fake heap, says which bytes it stores, and wdrt_end checks that
 * every changed byte is marked and nothing else is.  stores_other.c holds
 * the stores of another file. */
#include "wdrt.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#define NOINLINE __attribute__((noinline))

/* values the compiler cannot see through */
static volatile int vn = 1000, vlo = 3, vstop = 611;
static volatile double vd = 3.5;

void other_fill(int *a, int lo, int hi, int v); /* stores_other.c */
void other_put(double *p, double v);

/* ---- scalars ---- */

NOINLINE static void put_double(double *a, int i, double v) { a[i] = v; }
NOINLINE static void put_int(int *a, int i, int v) { a[i] = v; }
NOINLINE static void put_char(char *a, int i, char v) { a[i] = v; }
NOINLINE static void put_short(short *a, int i, short v) { a[i] = v; }
NOINLINE static void put_llong(long long *a, int i, long long v) { a[i] = v; }
NOINLINE static void put_ldouble(long double *a, int i, long double v) { a[i] = v; }

typedef double double4 __attribute__((aligned(4)));
NOINLINE static void put_double4(double4 *p, double v) { *p = v; }

struct rec {
    double x;
    int y;
    char z;
};
struct seven {
    char c[7];
};
NOINLINE static void copy_rec(struct rec *d, const struct rec *s) { *d = *s; }
NOINLINE static void copy_seven(struct seven *d, struct seven s) { *d = s; }

struct bits {
    unsigned a : 3, b : 9, c : 20;
};
struct cbits {
    unsigned char x : 2, y : 6;
};
NOINLINE static void set_bits(struct bits *p, unsigned v) { p->b = v; }
NOINLINE static void set_cbits(struct cbits *p, unsigned v) { p->y = v; }

struct __attribute__((packed)) packed {
    char c;
    double d;
    int i;
    short s;
};
NOINLINE static void set_packed(struct packed *p, double d, int i, short s)
{
    p->d = d;
    p->i = i;
    p->s = s;
}

/* ---- loops ---- */

NOINLINE static void axpy(double *a, const double *b, const double *c, double s,
                          int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        a[i] = b[i] * s + c[i];
}
NOINLINE static void scale_f(float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = b[i] * 2.0f + 1.0f;
}
NOINLINE static void add_i(int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = b[i] + i;
}
NOINLINE static void add_c(char *a, const char *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = (char)(b[i] + 1);
}
NOINLINE static void add_s(short *a, const short *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = (short)(b[i] * 3);
}
/* an OpenMP loop as ompcc writes it: the int variable from the counter */
NOINLINE static void omp_style(double *a, unsigned long long lo, unsigned long long hi)
{
    for (unsigned long long k = lo; k < hi; k++) {
        int i = (int)k;
        a[i] = i * 0.5;
    }
}
NOINLINE static void cond_d(double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i] > 0)
            a[i] = b[i] * 2;
}
NOINLINE static void cond_i(int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i] > 0)
            a[i] = b[i] + 7;
}
NOINLINE static void cond_c(char *a, const char *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i] > 0)
            a[i] = 9;
}
NOINLINE static int early_exit(double *a, const int *b, int n, int stop)
{
    int i;
    for (i = 0; i < n; i++) {
        if (b[i] == stop)
            break;
        a[i] = b[i] * 1.5;
    }
    return i;
}
NOINLINE static void backwards(double *a, int n)
{
    for (int i = n - 1; i >= 0; i--)
        a[i] = i + 0.25;
}
NOINLINE static void backwards_i(int *a, int n)
{
    for (int i = 0; i < n; i++)
        a[n - 1 - i] = i;
}
NOINLINE static void strided(double *a, int n)
{
    for (int i = 0; i < n; i++)
        a[2 * i] = i;
}
/* SP's shape: three of five components per point, m unrolled (a strided
 * mark of 24 bytes every 40) */
NOINLINE static void three_of_five(double *r, const double *l, int n)
{
    for (int i = 1; i < n; i++)
        for (int m = 0; m < 3; m++)
            r[5 * i + m] = r[5 * i + m] - l[i] * r[5 * (i - 1) + m];
}
/* backwards, every third int (a negative stride of 12 bytes) */
NOINLINE static void back_thirds(int *a, int n)
{
    for (int i = n - 1; i >= 0; i--)
        a[3 * i + 1] = -i;
}
struct xy {
    double x, y;
};
NOINLINE static void fields_both(struct xy *a, int n)
{
    for (int i = 0; i < n; i++) {
        a[i].x = i;
        a[i].y = -i;
    }
}
NOINLINE static void field_one(struct xy *a, int n)
{
    for (int i = 0; i < n; i++)
        a[i].x = i + 0.5;
}
NOINLINE static void overlapping(int *a, int n)
{
    for (int i = 0; i < n; i++) {
        a[i] = i;
        a[i + 1] = -i;
    }
}
/* BT's shape: five components per point, a constant trip count */
NOINLINE static void five(double *u, int n)
{
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 5; m++)
            u[i * 7 + m] = i + m * 0.5;
}
struct vec3 {
    float x, y, z;
};
NOINLINE static void copy_vec3(struct vec3 *d, const struct vec3 *s, int n)
{
    for (int i = 0; i < n; i++)
        d[2 * i] = s[i];
}
NOINLINE static void stencil(double *un, const double *u, int n, int m)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
            un[i * m + j] = 0.25 * (u[(i - 1) * m + j] + u[(i + 1) * m + j] +
                                    u[i * m + j - 1] + u[i * m + j + 1]);
}
NOINLINE static void scatter(double *a, const int *idx, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        a[idx[i]] = b[i];
}
NOINLINE static void sink(volatile void *p) { (void)p; }
NOINLINE static void loop_with_call(double *a, int n)
{
    for (int i = 0; i < n; i++) {
        a[i] = i;
        sink(a);
    }
}

/* ---- memory functions and atomics ---- */

NOINLINE static void mem_ops(char *a, const char *b, int n)
{
    memcpy(a + 3, b, (size_t)n);
    memset(a + 2000, 7, 100);
    memmove(a + 3001, a + 3000, (size_t)n / 2);
    memset(a + 4100, 1, 16);
    memset(a + 4200, 2, 8);
}
NOINLINE static void atomics(long *x, char *c, _Atomic int *ai)
{
    __atomic_fetch_add(&x[1], 5, __ATOMIC_SEQ_CST);
    __atomic_store_n(&x[2], 7, __ATOMIC_RELEASE);
    __atomic_exchange_n(&x[3], 8, __ATOMIC_ACQ_REL);
    long expect = x[4];
    __atomic_compare_exchange_n(&x[4], &expect, 9, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    __atomic_fetch_or(&c[1], 0x40, __ATOMIC_RELAXED);
    *ai += 3;
    atomic_store(ai + 1, 11);
}
NOINLINE static int cmpxchg_fails(long *x)
{
    long expect = 12345;
    return __atomic_compare_exchange_n(x, &expect, 9, 0, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

/* ---- not the heap ---- */

static double global_arr[64];
NOINLINE static void private_stores(int n)
{
    double local[64];
    for (int i = 0; i < n && i < 64; i++) {
        local[i] = i;
        global_arr[i] = local[i] * 2;
    }
    sink(local);
}

/* ---- x86 intrinsics ---- */

NOINLINE static void intrinsics(double *a)
{
#ifdef __AVX__
    __m256i m = _mm256_set_epi64x(0, -1, 0, -1); /* lanes 0 and 2 */
    _mm256_maskstore_pd(a, m, _mm256_set1_pd(vd));
#endif
#ifdef __AVX512F__
    _mm512_mask_storeu_pd(a + 9, 0x81, _mm512_set1_pd(vd));        /* lanes 0, 7 */
    _mm512_mask_compressstoreu_pd(a + 20, 0x0E, _mm512_set1_pd(vd)); /* 3 lanes */
#endif
    (void)a;
}
NOINLINE static void scatter_intrinsic(double *a)
{
#ifdef __AVX512F__
    __m256i idx = _mm256_set_epi32(70, 60, 50, 40, 30, 20, 10, 0);
    _mm512_i32scatter_pd(a, idx, _mm512_set1_pd(vd), 8);
#endif
    (void)a;
}

/* With OMPDSM_wd_size 0: stores, memory functions, atomics, a guarded call. */
NOINLINE static void off_case(double *da, double *db, double *dc, char *ca,
                              char *cb, int *ia, int n)
{
    axpy(da, db, dc, vd, 0, n);
    put_char(ca, 1, 'z');
    mem_ops(ca, cb, n);
    atomics((long *)db, ca, (_Atomic int *)(ia + 1024));
    other_fill(ia, 0, n, 9);
}

int main(void)
{
    int n = vn, lo = vlo, i;
    double *da = wdrt_alloc(8 * 2048, 64), *db = wdrt_alloc(8 * 2048, 64);
    double *dc = wdrt_alloc(8 * 2048, 64);
    float *fa = wdrt_alloc(4 * 2048, 64), *fb = wdrt_alloc(4 * 2048, 64);
    int *ia = wdrt_alloc(4 * 2048, 64), *ib = wdrt_alloc(4 * 2048, 64);
    char *ca = wdrt_alloc(8192, 64), *cb = wdrt_alloc(2048, 64);
    short *sa = wdrt_alloc(2 * 2048, 64), *sb = wdrt_alloc(2 * 2048, 64);
    long double *la = wdrt_alloc(16 * 8, 64);
    long long *lla = wdrt_alloc(8 * 8, 64);
    /* a page boundary 4 bytes after an aligned-4 double */
    char *pg = wdrt_alloc(3 << WDRT_PAGE_SHIFT, 1 << WDRT_PAGE_SHIFT);

    for (i = 0; i < 2048; i++) { /* inputs: mixed signs, no 0xA5 result */
        db[i] = (i % 3 == 0 ? -1 : 1) * (i + 1.0);
        dc[i] = i * 0.125;
        fb[i] = (float)i;
        ib[i] = (i % 5 == 0 ? -1 : 1) * (i + 1);
        cb[i] = (char)(i % 7 == 0 ? -3 : 1 + i % 50);
        sb[i] = (short)(i + 1);
    }

    wdrt_begin("scalars");
    put_double(da, 3, vd);
    put_int(ia, 5, 42);
    put_char(ca, 7, 'x');
    put_short(sa, 9, 1234);
    put_llong(lla, 2, 0x0102030405060708LL);
    wdrt_expect(&da[3], 8);
    wdrt_expect(&ia[5], 4);
    wdrt_expect(&ca[7], 1);
    wdrt_expect(&sa[9], 2);
    wdrt_expect(&lla[2], 8);
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("long double");
    put_ldouble(la, 3, 1.0L / 3);
    wdrt_expect(&la[3], 10); /* x87's 80 bits; the 6 after them are padding */
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("aligned-4 double across a page");
    put_double4((double4 *)(pg + (1 << WDRT_PAGE_SHIFT) - 4), vd);
    wdrt_expect(pg + (1 << WDRT_PAGE_SHIFT) - 4, 8);
    wdrt_end(WDRT_CHANGES);

    {
        struct rec r = {vd, 77, 'q'};
        struct seven s7 = {{1, 2, 3, 4, 5, 6, 7}};
        struct rec *rp = (struct rec *)wdrt_alloc(sizeof r * 2, 8);
        struct seven *sp = (struct seven *)wdrt_alloc(sizeof s7 * 2, 1);
        wdrt_begin("struct assignment");
        copy_rec(rp + 1, &r);
        copy_seven(sp + 1, s7);
        wdrt_expect(rp + 1, sizeof r);
        wdrt_expect(sp + 1, sizeof s7);
    }
    wdrt_end(WDRT_CHANGES);

    {
        struct bits *bp = wdrt_alloc(sizeof *bp * 2, 4);
        struct cbits *cp = wdrt_alloc(sizeof *cp * 2, 1);
        wdrt_begin("bit-fields");
        set_bits(bp + 1, 300);
        set_cbits(cp + 1, 33);
        wdrt_expect(bp + 1, sizeof *bp); /* the storage unit */
        wdrt_expect(cp + 1, sizeof *cp);
    }
    wdrt_end(WDRT_CHANGES);

    {
        /* an odd address, and a double across the page boundary */
        struct packed *p1 = (struct packed *)(pg + (2 << WDRT_PAGE_SHIFT) - 5);
        struct packed *p2 = (struct packed *)(pg + 101);
        wdrt_begin("packed (unaligned)");
        set_packed(p1, vd, 5, 6);
        set_packed(p2, vd, 7, 8);
        wdrt_expect(&p1->d, 8 + 4 + 2);
        wdrt_expect(&p2->d, 8 + 4 + 2);
        wdrt_end(WDRT_CHANGES);
    }

    wdrt_begin("vector loop double");
    axpy(da, db, dc, vd, lo, n + 3);
    wdrt_expect(&da[lo], 8 * (size_t)(n + 3 - lo));
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("vector loops float int char short");
    scale_f(fa, fb, n - 1);
    add_i(ia, ib, n + 1);
    add_c(ca, cb, n - 3);
    add_s(sa, sb, n + 5);
    wdrt_expect(fa, 4 * (size_t)(n - 1));
    wdrt_expect(ia, 4 * (size_t)(n + 1));
    wdrt_expect(ca, (size_t)(n - 3));
    wdrt_expect(sa, 2 * (size_t)(n + 5));
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("loop as ompcc writes it");
    omp_style(da, 17, (unsigned long long)n + 17);
    wdrt_expect(&da[17], 8 * (size_t)n);
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("conditional stores");
    cond_d(da, db, n);
    cond_i(ia, ib, n);
    cond_c(ca, cb, n);
    for (i = 0; i < n; i++) {
        if (db[i] > 0)
            wdrt_expect(&da[i], 8);
        if (ib[i] > 0)
            wdrt_expect(&ia[i], 4);
        if (cb[i] > 0)
            wdrt_expect(&ca[i], 1);
    }
    wdrt_end(WDRT_CHANGES);

    {
        int stop = vstop;
        ib[stop] = 7777777; /* no other element of ib has this value */
        wdrt_begin("early exit");
        i = early_exit(da, ib, n, 7777777);
        wdrt_expect(da, 8 * (size_t)stop);
        if (i != stop)
            printf("FAIL early exit: stopped at %d, not %d\n", i, stop);
        wdrt_end(WDRT_CHANGES);
    }

    wdrt_begin("negative strides");
    backwards(da + 5, n - 7);
    backwards_i(ia + 1, n + 2);
    wdrt_expect(da + 5, 8 * (size_t)(n - 7));
    wdrt_expect(ia + 1, 4 * (size_t)(n + 2));
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("five components of seven");
    five(da, n / 7);
    for (i = 0; i < n / 7; i++)
        wdrt_expect(&da[i * 7], 5 * 8);
    wdrt_end(WDRT_CHANGES);

    {
        struct vec3 *v = wdrt_alloc(sizeof *v * 64, 4), s3[16];
        for (i = 0; i < 16; i++)
            s3[i] = (struct vec3){i, -i, 2.0f * i};
        wdrt_begin("12-byte structs");
        copy_vec3(v + 1, s3, 16);
        for (i = 0; i < 16; i++)
            wdrt_expect(&v[1 + 2 * i], sizeof *v);
        wdrt_end(WDRT_CHANGES);
    }

    {
        double *l = wdrt_alloc(8 * 300, 8);
        for (i = 0; i < 300; i++)
            l[i] = 0.5;
        for (i = 0; i < 1010; i++)
            da[i] = i + 1.0;
        wdrt_begin("three of five components");
        three_of_five(da + 3, l, 200);
        for (i = 1; i < 200; i++)
            wdrt_expect(&da[3 + 5 * i], 3 * 8);
        wdrt_end(WDRT_CHANGES);
    }

    wdrt_begin("negative stride 3");
    back_thirds(ia + 2, n / 3);
    for (i = 0; i < n / 3; i++)
        wdrt_expect(&ia[2 + 3 * i + 1], 4);
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("stride 2");
    strided(da, n / 2);
    for (i = 0; i < n / 2; i++)
        wdrt_expect(&da[2 * i], 8);
    wdrt_end(WDRT_CHANGES);

    {
        struct xy *xa = wdrt_alloc(sizeof *xa * 1100, 16);
        wdrt_begin("struct fields");
        fields_both(xa, n);
        wdrt_expect(xa, sizeof *xa * (size_t)n);
        wdrt_end(WDRT_CHANGES);
        wdrt_begin("one field of a struct");
        field_one(xa + 1, n - 2);
        for (i = 0; i < n - 2; i++)
            wdrt_expect(&xa[1 + i].x, 8);
        wdrt_end(WDRT_CHANGES);
    }

    wdrt_begin("overlapping stores");
    overlapping(ia + 2, n - 1);
    wdrt_expect(ia + 2, 4 * (size_t)n);
    wdrt_end(WDRT_CHANGES);

    {
        int m = 37, rows = 40;
        double *u = wdrt_alloc(8 * (size_t)(m * rows), 64);
        double *un = wdrt_alloc(8 * (size_t)(m * rows), 64);
        for (i = 0; i < m * rows; i++)
            u[i] = i;
        wdrt_begin("stencil");
        stencil(un, u, rows, m);
        for (i = 1; i < rows - 1; i++)
            wdrt_expect(&un[i * m + 1], 8 * (size_t)(m - 2));
        wdrt_end(WDRT_CHANGES);
    }

    {
        int *idx = wdrt_alloc(4 * 512, 64);
        for (i = 0; i < 512; i++)
            idx[i] = (i * 37) % 1024 * 2; /* distinct, even */
        wdrt_begin("scatter");
        scatter(da, idx, db, 512);
        for (i = 0; i < 512; i++)
            wdrt_expect(&da[idx[i]], 8);
        wdrt_end(WDRT_CHANGES);
    }

    wdrt_begin("loop with a call");
    loop_with_call(da + 1, n);
    wdrt_expect(da + 1, 8 * (size_t)n);
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("memcpy memset memmove");
    mem_ops(ca, cb, n);
    wdrt_expect(ca + 3, (size_t)n);
    wdrt_expect(ca + 2000, 100);
    wdrt_expect(ca + 3001, (size_t)n / 2);
    wdrt_expect(ca + 4100, 16);
    wdrt_expect(ca + 4200, 8);
    wdrt_end(WDRT_CHANGES);

    {
        long *x = wdrt_alloc(8 * 8, 8);
        _Atomic int *ai = wdrt_alloc(4 * 4, 4);
        for (i = 0; i < 8; i++)
            x[i] = 0;
        ai[0] = 1;
        wdrt_begin("atomics");
        atomics(x, ca, ai);
        wdrt_expect(&x[1], 4 * 8);
        wdrt_expect(&ca[1], 1);
        wdrt_expect(ai, 8);
        wdrt_end(WDRT_CHANGES);
        wdrt_begin("failed compare-exchange");
        if (cmpxchg_fails(&x[6]))
            printf("FAIL failed compare-exchange: it succeeded\n");
        wdrt_end(0); /* nothing stored: nothing may be marked */
    }

    wdrt_begin("stores through pointers across functions and files");
    put_double(da + 100, 0, vd);
    other_put(da + 101, vd);
    other_fill(ia, 10, n, 5);
    wdrt_expect(da + 100, 16);
    wdrt_expect(ia + 10, 4 * (size_t)(n - 10));
    wdrt_end(WDRT_CHANGES);

    wdrt_begin("stack and non-heap globals");
    private_stores(n);
    wdrt_end(0);
    if (global_arr[5] != 10)
        printf("FAIL stack and non-heap globals: the stores did not happen\n");

    wdrt_begin("x86 mask and compress stores");
    intrinsics(da);
#ifdef __AVX__
    wdrt_expect(&da[0], 8);
    wdrt_expect(&da[2], 8);
#endif
#ifdef __AVX512F__
    wdrt_expect(&da[9], 8);
    wdrt_expect(&da[16], 8);
    wdrt_expect(&da[20], 3 * 8);
#endif
    wdrt_end(0);

    /* an intrinsic the pass cannot mark: a guard without a callee */
    wdrt_begin("x86 scatter intrinsic");
    scatter_intrinsic(da);
#ifdef __AVX512F__
    if (wdrt_nguards != 1 || wdrt_guards[0].callee != NULL || wdrt_guards[0].n != 1 ||
        wdrt_guards[0].args[0] != da || wdrt_guards[0].unguards != 1)
        printf("FAIL x86 scatter intrinsic: %d guards (callee %p, %u pointers, "
               "first %p, %d unguards)\n", wdrt_nguards,
               wdrt_nguards ? wdrt_guards[0].callee : NULL,
               wdrt_nguards ? wdrt_guards[0].n : 0,
               wdrt_nguards ? wdrt_guards[0].args[0] : NULL,
               wdrt_nguards ? wdrt_guards[0].unguards : 0);
#endif
    wdrt_end(WDRT_GUARDED);

    /* the globals are read at a function's entry: off_case's, not main's */
    wdrt_off(1);
    wdrt_begin("marking off");
    off_case(da, db, dc, ca, cb, ia, n);
    wdrt_end(WDRT_CHANGES | WDRT_OFF);
    wdrt_off(0);

    return wdrt_finish();
}
