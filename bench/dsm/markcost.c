/* bench/dsm/markcost.c - what a software write-detection mark costs a
 * store, for designs of the shadow map measured side by side in one run
 * (docs/performance.md, "Write detection"): IS's scatter (a key's bucket
 * pointer, then a store at a random place of a 32 MiB array) and SP's
 * strided stores (three of five doubles a point, in rows of 36 points),
 * each with
 *   none     the store alone (ompdsm on one node: plain copies)
 *   both     a shadow byte a 4 bytes and the page's byte, before and
 *            after the store (what ompcc's pass emits today)
 *   after    the same after the store only
 *   bits     a shadow bit a 4 bytes (an or into a byte), after
 *   lines    a shadow byte a 64-byte line, after
 *   strided  (SP shape only) one strided mark of each row before and
 *            after it (OMPDSM_wd_mark_strided's loop, inlined here)
 * Prints ms a pass (best of REPS) and the ratio to `none`.
 * usage: bench_dsm_markcost [REPS]   (default 7) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { NKEYS = 1 << 23, NB = 1024, SHIFT = 16, ROW = 36, ROWS = 1 << 15 };

static char *base;
static uint64_t size;
static unsigned char *shadow, *bits, *lines, *pages;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define IN(p, d) uint64_t d = (uint64_t)((char *)(p)-base); if (d < size)
#define M_BYTE(p) do { IN(p, d) { shadow[d >> 2] = 0x0f; pages[d >> SHIFT] = 1; } } while (0)
#define M_BIT(p) do { IN(p, d) { bits[d >> 5] |= (unsigned char)(1u << ((d >> 2) & 7)); pages[d >> SHIFT] = 1; } } while (0)
#define M_LINE(p) do { IN(p, d) { lines[d >> 6] = 1; pages[d >> SHIFT] = 1; } } while (0)

/* IS's scatter: keys into buckets; MODE is a constant in each copy */
#define SCATTER(NAME, BEFORE, AFTER)                                           \
    static __attribute__((noinline)) void NAME(const int *key, int *out,      \
                                               int *ptr)                      \
    {                                                                         \
        for (int i = 0; i < NKEYS; i++) {                                     \
            int k = key[i];                                                   \
            int *p = &out[ptr[k >> 9]++];                                     \
            BEFORE;                                                           \
            *p = k;                                                           \
            AFTER;                                                            \
        }                                                                     \
    }
SCATTER(sc_none, (void)0, (void)0)
SCATTER(sc_both, M_BYTE(p), M_BYTE(p))
SCATTER(sc_after, (void)0, M_BYTE(p))
SCATTER(sc_bits, (void)0, M_BIT(p))
SCATTER(sc_lines, (void)0, M_LINE(p))

/* SP's rows: r[i][0..2] -= l[i] * r[i-1][0..2], 5 doubles a point */
#define ROWS_FN(NAME, BEFORE, AFTER, AROUND)                                   \
    static __attribute__((noinline)) void NAME(double *r, const double *l)    \
    {                                                                         \
        for (int j = 0; j < ROWS; j++) {                                      \
            double *row = r + (size_t)j * ROW * 5;                            \
            AROUND;                                                           \
            for (int i = 1; i < ROW; i++)                                     \
                for (int m = 0; m < 3; m++) {                                 \
                    double *p = &row[5 * i + m];                              \
                    BEFORE;                                                   \
                    *p = *p - l[i] * row[5 * (i - 1) + m];                    \
                    AFTER;                                                    \
                }                                                             \
            AROUND;                                                           \
        }                                                                     \
    }

static inline void strided(const void *p, size_t width, size_t stride, size_t count)
{
    uint64_t d = (uint64_t)((const char *)p - base);
    if (d >= size)
        return;
    const uint32_t f4 = 0x0f0f0f0fu;
    size_t n = width >> 2;
    unsigned char *q = shadow + (d >> 2);
    for (size_t i = 0; i < count; i++, q += stride >> 2) {
        memcpy(q, &f4, 4);
        memcpy(q + n - 4, &f4, 4);
    }
    uint64_t p0 = d >> SHIFT, p1 = (d + (count - 1) * stride + width - 1) >> SHIFT;
    if (p0 == p1)
        pages[p0] = 1;
    else
        memset(pages + p0, 1, p1 - p0 + 1);
}

ROWS_FN(sp_none, (void)0, (void)0, (void)0)
ROWS_FN(sp_both, M_BYTE(p), M_BYTE(p), (void)0)
ROWS_FN(sp_after, (void)0, M_BYTE(p), (void)0)
ROWS_FN(sp_bits, (void)0, M_BIT(p), (void)0)
ROWS_FN(sp_lines, (void)0, M_LINE(p), (void)0)
ROWS_FN(sp_strided, (void)0, (void)0, strided(row + 5, 24, 40, ROW - 1))

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1) {
        fprintf(stderr, "usage: %s [REPS >= 1]\n", argv[0]);
        return 2;
    }
    size = 256ull << 20;
    base = map(size);
    shadow = map(size / 4);
    bits = map(size / 32);
    lines = map(size / 64);
    pages = map(size >> SHIFT);
    int *key = (int *)base, *out = (int *)(base + (64 << 20)), ptr[NB];
    double *r = (double *)(base + (128 << 20)), l[ROW];
    unsigned s = 1;
    for (int i = 0; i < NKEYS; i++) {
        s = s * 1103515245u + 12345u;
        key[i] = (int)((s >> 8) & ((1u << 19) - 1));
    }
    for (int i = 0; i < ROW; i++)
        l[i] = 1e-3 * i;
    for (size_t i = 0; i < (size_t)ROWS * ROW * 5; i++)
        r[i] = 1.0;
    struct { const char *name; void (*sc)(const int *, int *, int *);
             void (*sp)(double *, const double *); } v[] = {
        {"none", sc_none, sp_none},   {"both", sc_both, sp_both},
        {"after", sc_after, sp_after}, {"bits", sc_bits, sp_bits},
        {"lines", sc_lines, sp_lines}, {"strided", NULL, sp_strided},
    };
    enum { NV = sizeof v / sizeof v[0] };
    double best[NV][2];
    for (int k = 0; k < NV; k++)
        best[k][0] = best[k][1] = 1e9;
    for (int rep = 0; rep < reps; rep++)
        for (int k = 0; k < NV; k++) { /* interleaved: the same noise for all */
            if (v[k].sc) {
                for (int b = 0; b < NB; b++)
                    ptr[b] = b * (NKEYS / NB);
                double t = now();
                v[k].sc(key, out, ptr);
                t = now() - t;
                if (t < best[k][0])
                    best[k][0] = t;
            }
            double t = now();
            v[k].sp(r, l);
            t = now() - t;
            if (t < best[k][1])
                best[k][1] = t;
        }
    printf("%-8s %12s %8s %12s %8s\n", "marks", "scatter ms", "/none", "rows ms", "/none");
    for (int k = 0; k < NV; k++) {
        if (v[k].sc)
            printf("%-8s %12.1f %8.2f", v[k].name, best[k][0] * 1e3, best[k][0] / best[0][0]);
        else
            printf("%-8s %12s %8s", v[k].name, "-", "-");
        printf(" %12.1f %8.2f\n", best[k][1] * 1e3, best[k][1] / best[0][1]);
    }
    return 0;
}
