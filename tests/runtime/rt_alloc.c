/* rt_alloc.c - the translated program's malloc & co. in the shared heap:
 * arrays, a large (block-distributed) array and a linked list built in the
 * serial part and read and written in parallel; calloc zeroing, also of
 * reused memory; realloc growing, shrinking and moving with the contents
 * kept; the aligned allocators and strdup; free of a C-library pointer;
 * and blocks freed by a node other than the one that allocated them (in
 * regions and in the serial part), reused afterwards without overlapping
 * live blocks. */
#include "rt_test.h"

#include <stdint.h>

enum { MAXT = 64, NA = 50000, NBIG = 300000, NLIST = 200, NB = 12, ROUNDS = 4 };

struct node {
    int v;
    struct node *next;
};

static int **g_a;             /* int a[NA], malloc'd */
static int **g_big;           /* int big[NBIG] (1.2 MB) */
static struct node **g_list;
static char **g_re;           /* realloc'd */
static void *(*g_ptr)[MAXT][NB];
static unsigned long (*g_size)[MAXT][NB];
static long long *g_checked;
static OMPDSM_global globals[] = {
    {(void **)&g_a, sizeof(int *), __alignof__(int *), "a"},
    {(void **)&g_big, sizeof(int *), __alignof__(int *), "big"},
    {(void **)&g_list, sizeof(void *), __alignof__(void *), "list"},
    {(void **)&g_re, sizeof(void *), __alignof__(void *), "re"},
    {(void **)&g_ptr, sizeof *g_ptr, __alignof__(*g_ptr), "ptr"},
    {(void **)&g_size, sizeof *g_size, __alignof__(*g_size), "size"},
    {(void **)&g_checked, 8, 8, "checked"},
};

static unsigned char pat(int t, int j, int round, unsigned long i)
{
    return (unsigned char)(t * 31 + j * 7 + round * 13 + i % 251);
}
static unsigned long size_of(int t, int j, int round)
{
    if (j == NB - 1)
        return 300000 + 4096 * (unsigned long)round; /* a large block */
    return 16 + (unsigned long)((t * 977 + j * 131 + round * 29) % 5000);
}

static void fill_mine(int t, int round)
{
    for (int j = 0; j < NB; j++) {
        unsigned long n = size_of(t, j, round);
        unsigned char *p = j % 3 == 0 ? OMPDSM_calloc(n, 1) : OMPDSM_malloc(n);
        CHECK(p != NULL, "allocation of %lu bytes failed", n);
        if (!p)
            continue;
        if (j % 3 == 0) {
            unsigned long nz = 0;
            for (unsigned long i = 0; i < n; i++)
                nz += p[i] != 0;
            CHECK(!nz, "calloc(%lu) in a region: %lu bytes not zero", n, nz);
        }
        for (unsigned long i = 0; i < n; i++)
            p[i] = pat(t, j, round, i);
        (*g_ptr)[t][j] = p;
        (*g_size)[t][j] = n;
    }
}

static void check_and_free(int owner, int round, int do_free)
{
    for (int j = 0; j < NB; j++) {
        unsigned char *p = (*g_ptr)[owner][j];
        unsigned long n = (*g_size)[owner][j], bad = 0;
        if (!p)
            continue;
        for (unsigned long i = 0; i < n; i++)
            bad += p[i] != pat(owner, j, round, i);
        CHECK(!bad, "round %d: block %d of thread %d (%lu bytes): %lu bytes "
              "wrong", round, j, owner, n, bad);
        long long one = 1;
        OMPDSM_atomic(g_checked, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
        if (do_free) {
            OMPDSM_free(p);
            (*g_ptr)[owner][j] = NULL;
        }
    }
}

static OMPDSM_loop_site site = {"rt_alloc.c", 90, "region_use", 0};

static void region_use(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    long long bad = 0;
    int *a = *g_a;
    for (int i = 0; i < NA; i++)
        bad += a[i] != i * 3;
    long long sum = 0;
    int len = 0;
    for (struct node *n = *g_list; n; n = n->next, len++)
        sum += n->v;
    CHECK(len == NLIST && sum == (long long)NLIST * (NLIST - 1) / 2,
          "list: %d nodes, sum %lld", len, sum);
    for (int i = 0; i < 5000; i++)
        bad += (*g_re)[i] != (char)(i % 101);
    CHECK(!bad, "thread %d: %lld wrong values in serial-built data", t, bad);
    /* each thread rewrites its static block of big */
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &site, NBIG, OMPDSM_SCHED_STATIC, 0, 0, 0, 0);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++)
            (*g_big)[k] = (int)k * 5 + t;
    OMPDSM_loop_end(&L, 0);
    bad = 0;
    int T = omp_get_num_threads();
    for (int k = 0; k < NBIG; k += 7) {
        unsigned long q = NBIG / T, r = NBIG % T;
        int owner = (unsigned long)k < r * (q + 1) ? (int)(k / (q + 1))
                                                   : (int)(r + (k - r * (q + 1)) / q);
        bad += (*g_big)[k] != k * 5 + owner;
    }
    CHECK(!bad, "thread %d: %lld wrong values in big after the loop", t, bad);
}

/* Allocate, let the next thread check and free, repeat. */
static void region_swap(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int round = 0; round < ROUNDS; round++) {
        fill_mine(t, round);
        OMPDSM_barrier();
        check_and_free((t + T - 1) % T, round, round < ROUNDS - 1);
        OMPDSM_barrier();
    }
}

static OMPDSM_region rd_use = {region_use, "rt_alloc.c:85 (main)", 0};
static OMPDSM_region rd_swap = {region_swap, "rt_alloc.c:130 (main)", 0};
static OMPDSM_region *regions[] = {&rd_use, &rd_swap};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_alloc.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 2, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

struct span {
    uintptr_t lo, hi;
};
static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_alloc", 45);
    int T = omp_get_max_threads();

    rtt_phase("serial allocations");
    *g_a = OMPDSM_malloc(NA * sizeof(int));
    *g_big = OMPDSM_malloc(NBIG * sizeof(int));
    CHECK(*g_a && *g_big, "malloc failed");
    for (int i = 0; i < NA; i++)
        (*g_a)[i] = i * 3;
    struct node *head = NULL;
    for (int i = NLIST - 1; i >= 0; i--) {
        struct node *n = OMPDSM_malloc(sizeof *n);
        n->v = i;
        n->next = head;
        head = n;
    }
    *g_list = head;

    /* calloc, also of memory that was used and freed */
    double *z = OMPDSM_calloc(1000, sizeof(double));
    int nz = 0;
    for (int i = 0; i < 1000; i++)
        nz += z[i] != 0;
    CHECK(!nz, "calloc: %d non-zero doubles", nz);
    for (int i = 0; i < 1000; i++)
        z[i] = 1.5;
    OMPDSM_free(z);
    z = OMPDSM_calloc(1000, sizeof(double));
    nz = 0;
    for (int i = 0; i < 1000; i++)
        nz += z[i] != 0;
    CHECK(!nz, "calloc of reused memory: %d non-zero doubles", nz);
    OMPDSM_free(z);

    /* realloc */
    char *r = OMPDSM_realloc(NULL, 100);
    for (int i = 0; i < 100; i++)
        r[i] = (char)(i % 101);
    r = OMPDSM_realloc(r, 5000);
    for (int i = 100; i < 5000; i++)
        r[i] = (char)(i % 101);
    r = OMPDSM_realloc(r, 60);
    int rb = 0;
    for (int i = 0; i < 60; i++)
        rb += r[i] != (char)(i % 101);
    r = OMPDSM_realloc(r, 400000); /* to a large block */
    for (int i = 0; i < 60; i++)
        rb += r[i] != (char)(i % 101);
    for (int i = 60; i < 5000; i++)
        r[i] = (char)(i % 101);
    CHECK(!rb, "realloc lost %d bytes", rb);
    *g_re = r;

    /* aligned allocators, strdup */
    void *pa = NULL;
    CHECK(OMPDSM_posix_memalign(&pa, 64, 1000) == 0 && pa &&
              (uintptr_t)pa % 64 == 0, "posix_memalign(64): %p", pa);
    CHECK(OMPDSM_posix_memalign(&pa, 3, 10) != 0, "posix_memalign(3) accepted");
    void *pb = OMPDSM_aligned_alloc(4096, 8192);
    void *pc = OMPDSM_memalign(256, 100);
    void *pd = OMPDSM_valloc(10);
    CHECK(pb && (uintptr_t)pb % 4096 == 0 && pc && (uintptr_t)pc % 256 == 0 &&
              pd && (uintptr_t)pd % 4096 == 0,
          "aligned_alloc %p memalign %p valloc %p", pb, pc, pd);
    char *s1 = OMPDSM_strdup("shared string"), *s2 = OMPDSM_strndup("abcdef", 3);
    CHECK(s1 && !strcmp(s1, "shared string") && s2 && !strcmp(s2, "abc"),
          "strdup '%s' strndup '%s'", s1 ? s1 : "", s2 ? s2 : "");
    OMPDSM_free(pb);
    OMPDSM_free(pc);
    OMPDSM_free(pd);
    OMPDSM_free(s1);
    OMPDSM_free(s2);
    void *libc = malloc(32); /* a pointer from the C library */
    OMPDSM_free(libc);
    OMPDSM_free(NULL);

    rtt_phase("use in parallel");
    OMPDSM_parallel(&rd_use, NULL, 0, 0, 1);

    rtt_phase("free by other nodes");
    *g_checked = 0;
    OMPDSM_parallel(&rd_swap, NULL, 0, 0, 1);
    CHECK_EQ_LL(*g_checked, (long long)ROUNDS * T * NB, "blocks checked");
    /* Node 0 frees, in the serial part, the last round's blocks, which
     * other nodes allocated; then allocates and checks nothing overlaps
     * what is still live. */
    rtt_phase("serial free of other nodes' blocks");
    check_and_free(T - 1, ROUNDS - 1, 0);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < NB; j++)
            if (t != 0 && j % 2 == 0) {
                OMPDSM_free((*g_ptr)[t][j]);
                (*g_ptr)[t][j] = NULL;
            }
    OMPDSM_parallel(&rd_use, NULL, 0, 0, 1); /* a barrier for the frees */
    static struct span live[MAXT * NB + 64];
    int nl = 0;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < NB; j++)
            if ((*g_ptr)[t][j])
                live[nl++] = (struct span){(uintptr_t)(*g_ptr)[t][j],
                                           (uintptr_t)(*g_ptr)[t][j] +
                                               (*g_size)[t][j]};
    for (int i = 0; i < 40; i++) {
        unsigned long n = 16 + (unsigned long)i * 97;
        char *p = OMPDSM_malloc(n);
        memset(p, 0x5a, n);
        live[nl++] = (struct span){(uintptr_t)p, (uintptr_t)p + n};
    }
    qsort(live, (size_t)nl, sizeof *live, cmp_span);
    int overlaps = 0;
    for (int i = 1; i < nl; i++)
        overlaps += live[i].lo < live[i - 1].hi;
    CHECK(!overlaps, "%d live blocks overlap after reuse", overlaps);
    /* The blocks still live keep their contents. */
    for (int t = 0; t < T; t++)
        for (int j = 1; j < NB; j += 2) {
            unsigned char *p = (*g_ptr)[t][j];
            unsigned long bad = 0;
            if (t == 0 || !p)
                continue;
            for (unsigned long i = 0; i < (*g_size)[t][j]; i++)
                bad += p[i] != pat(t, j, ROUNDS - 1, i);
            CHECK(!bad, "live block %d of thread %d: %lu bytes changed", j, t,
                  bad);
        }
    char d[48];
    snprintf(d, sizeof d, "blocks=%lld", *g_checked);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
