/* wdrt.c - the write-detection tests' stand-in for libompdsm: the shared
 * heap, shadow map and page bytes of the contract with ompcc's pass, its
 * four functions recording their calls, and the per-case checks (see
 * wdrt.h).  Compiled without the pass. */
#include "wdrt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

unsigned long OMPDSM_wd_base;
unsigned long OMPDSM_wd_size;
unsigned char *OMPDSM_wd_shadow;
unsigned char *OMPDSM_wd_pages;
unsigned int OMPDSM_wd_page_shift;

unsigned long wdrt_marks;
struct wdrt_guard wdrt_guards[64];
int wdrt_nguards;
int wdrt_nregistered;
unsigned long wdrt_strided;

static unsigned char *heap, *snap;
static size_t used;
static const char *case_name;
static int ncases, nfailed;
static struct { size_t off, len; } expected[4096];
static int nexpected;
static const void *const *reg_fns[64];
static unsigned reg_n[64];

/* Before any instrumented function runs: they read the globals at entry. */
__attribute__((constructor(101))) static void wdrt_init(void)
{
    heap = mmap((void *)WDRT_HEAP_BASE, WDRT_HEAP_SIZE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (heap != (void *)WDRT_HEAP_BASE) {
        perror("wdrt: mmap of the heap at its fixed address");
        exit(2);
    }
    snap = malloc(WDRT_HEAP_SIZE);
    OMPDSM_wd_shadow = calloc(WDRT_HEAP_SIZE / 4, 1);
    OMPDSM_wd_pages = calloc(WDRT_HEAP_SIZE >> WDRT_PAGE_SHIFT, 1);
    if (!snap || !OMPDSM_wd_shadow || !OMPDSM_wd_pages) {
        perror("wdrt: malloc");
        exit(2);
    }
    OMPDSM_wd_base = WDRT_HEAP_BASE;
    OMPDSM_wd_page_shift = WDRT_PAGE_SHIFT;
    OMPDSM_wd_size = WDRT_HEAP_SIZE;
}

void wdrt_off(int off)
{
    OMPDSM_wd_size = off ? 0 : WDRT_HEAP_SIZE;
}

void *wdrt_alloc(size_t n, size_t align)
{
    size_t off = (used + align - 1) / align * align;
    if (off + n > WDRT_HEAP_SIZE) {
        fprintf(stderr, "wdrt: heap full\n");
        exit(2);
    }
    used = off + n;
    memset(heap + off, 0xA5, n);
    return heap + off;
}

/* Sets the bits of [p, p + len) within the heap. */
static void mark_bytes(const void *p, unsigned long len)
{
    unsigned long d = (unsigned long)p - OMPDSM_wd_base, i;
    for (i = 0; i < len; i++, d++) {
        if (d >= OMPDSM_wd_size)
            continue;
        __atomic_fetch_or(&OMPDSM_wd_shadow[d >> 2], 1u << (d & 3), __ATOMIC_RELAXED);
        OMPDSM_wd_pages[d >> OMPDSM_wd_page_shift] = 1;
    }
}

void OMPDSM_wd_mark(const void *p, unsigned long len);
void OMPDSM_wd_mark(const void *p, unsigned long len)
{
    wdrt_marks++;
    mark_bytes(p, len);
}

void OMPDSM_wd_mark_strided(const void *p, unsigned long width,
                            unsigned long stride, unsigned long count);
void OMPDSM_wd_mark_strided(const void *p, unsigned long width,
                            unsigned long stride, unsigned long count)
{
    unsigned long i;
    if (width >= stride) {
        fprintf(stderr, "wdrt: OMPDSM_wd_mark_strided(width %lu, stride %lu): "
                        "blocks that touch\n", width, stride);
        exit(2);
    }
    wdrt_strided++;
    for (i = 0; i < count; i++)
        mark_bytes((const char *)p + i * stride, width);
}

unsigned long OMPDSM_wd_guard(void *callee, unsigned n, ...);
unsigned long OMPDSM_wd_guard(void *callee, unsigned n, ...)
{
    struct wdrt_guard *g;
    va_list ap;
    unsigned i;
    if (wdrt_nguards == 64)
        return 0;
    g = &wdrt_guards[wdrt_nguards++];
    g->callee = callee;
    g->n = n;
    va_start(ap, n);
    for (i = 0; i < n; i++) {
        void *a = va_arg(ap, void *);
        if (i < 8)
            g->args[i] = a;
    }
    va_end(ap);
    g->tok = 1000 + (unsigned long)wdrt_nguards;
    g->unguards = 0;
    return g->tok;
}

void OMPDSM_wd_unguard(unsigned long tok);
void OMPDSM_wd_unguard(unsigned long tok)
{
    int i;
    for (i = 0; i < wdrt_nguards; i++)
        if (wdrt_guards[i].tok == tok)
            wdrt_guards[i].unguards++;
}

void OMPDSM_wd_register(unsigned abi, const void *const *fns, unsigned n);
void OMPDSM_wd_register(unsigned abi, const void *const *fns, unsigned n)
{
    if (abi != 2 || wdrt_nregistered == 64) {
        fprintf(stderr, "wdrt: OMPDSM_wd_register(abi %u): unexpected\n", abi);
        exit(2);
    }
    reg_fns[wdrt_nregistered] = fns;
    reg_n[wdrt_nregistered++] = n;
}

int wdrt_registered(const void *fn)
{
    int m;
    unsigned i;
    for (m = 0; m < wdrt_nregistered; m++)
        for (i = 0; i < reg_n[m]; i++)
            if (reg_fns[m][i] == fn)
                return 1;
    return 0;
}

void wdrt_begin(const char *name)
{
    case_name = name;
    memcpy(snap, heap, used);
    memset(OMPDSM_wd_shadow, 0, WDRT_HEAP_SIZE / 4);
    memset(OMPDSM_wd_pages, 0, WDRT_HEAP_SIZE >> WDRT_PAGE_SHIFT);
    nexpected = 0;
    wdrt_marks = 0;
    wdrt_nguards = 0;
}

void wdrt_expect(const void *p, size_t len)
{
    if (nexpected == 4096) {
        fprintf(stderr, "wdrt: too many ranges\n");
        exit(2);
    }
    expected[nexpected].off = (size_t)((const unsigned char *)p - heap);
    expected[nexpected++].len = len;
}

static int is_expected(size_t off)
{
    int i;
    for (i = 0; i < nexpected; i++)
        if (off - expected[i].off < expected[i].len)
            return 1;
    return 0;
}

static int marked(size_t off)
{
    return OMPDSM_wd_shadow[off >> 2] >> (off & 3) & 1;
}

int wdrt_end(int flags)
{
    size_t off, changed = 0, nmarked = 0;
    long unmarked = -1, stray = -1, nopage = -1;
    int errors = 0;
    /* beyond what was allocated, no mark at all */
    for (off = (used + 3) / 4; off < WDRT_HEAP_SIZE / 4; off++) {
        if (OMPDSM_wd_shadow[off] && stray < 0)
            stray = (long)off * 4;
    }
    for (off = 0; off < used; off++) {
        int m = marked(off);
        if (heap[off] != snap[off]) {
            changed++;
            if (!m && unmarked < 0 && !(flags & (WDRT_OFF | WDRT_GUARDED)))
                unmarked = (long)off;
        }
        if (!m)
            continue;
        nmarked++;
        if ((!is_expected(off) || (flags & WDRT_OFF)) && stray < 0)
            stray = (long)off;
        if (!OMPDSM_wd_pages[off >> WDRT_PAGE_SHIFT] && nopage < 0)
            nopage = (long)off;
    }
    if (unmarked >= 0) {
        printf("FAIL %s: byte %ld changed but not marked\n", case_name, unmarked);
        errors++;
    }
    if (stray >= 0) {
        printf("FAIL %s: byte %ld marked but not stored by the case\n", case_name, stray);
        errors++;
    }
    if (nopage >= 0) {
        printf("FAIL %s: byte %ld marked but its page byte is not set\n", case_name, nopage);
        errors++;
    }
    if ((flags & WDRT_CHANGES) && !changed) {
        printf("FAIL %s: the case changed no byte of the heap\n", case_name);
        errors++;
    }
    if ((flags & WDRT_OFF) && (wdrt_marks || wdrt_nguards)) {
        printf("FAIL %s: marking off, but %lu mark and %d guard calls\n", case_name,
               wdrt_marks, wdrt_nguards);
        errors++;
    }
    if (!errors)
        printf("ok %s: %zu bytes changed, %zu marked, %lu mark calls\n", case_name,
               changed, nmarked, wdrt_marks);
    ncases++;
    nfailed += errors != 0;
    return errors;
}

int wdrt_finish(void)
{
    printf("%d cases, %d failed\n", ncases, nfailed);
    return nfailed ? 1 : 0;
}
