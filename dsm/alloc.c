/* dsm/alloc.c - allocation in the shared heap without messages.
 *
 * Globals: a bump pointer over the first chunks, identical on every node
 * (same calls in the same order), large objects block-distributed over the
 * nodes' homes.
 *
 * malloc & co.: each node allocates from chunk runs it claimed with one
 * fetch-add at node 0 (a message only every few megabytes).  Every block has
 * a 32-byte header just before it, in shared memory, naming its owner node,
 * size and the call that allocated it, so any node can free or realloc any
 * block; a freed block's header says so, which catches a second free (as
 * glibc's does).  With OMPDSM_HEAP_CHECK=1 a guard word follows the bytes
 * asked for, checked at free and, for every live block of the node, at
 * each barrier.  Free lists are
 * private to the owner; a block freed by another node is queued at the
 * owner and becomes reusable at the owner's next barrier, when every write
 * to it is known to have arrived.  Large blocks (OMPDSM_HOME_BLOCK_MIN and
 * up, policy block) get runs of their own whose pages are block-distributed
 * over the nodes, recorded in node 0's chunk table for the others to find.
 * Memory never used before is zero on every node, so calloc of fresh memory
 * writes nothing (and causes no diffs). */
#include "dsm_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR_MAGIC 0x4d534448u /* "HDSM" */
#define HDR_FREED 0x4d534446u /* "FDSM": on the free list or queued */
#define SMALL_MAX (32 * 1024)
#define GUARD_WORD 0xfdfdfdfdfdfdfdfdull
#define GUARD_BYTES 8

/* Size class of a block made of whole pages (freed into A.big). */
enum { CLS_PAGES = 0xffff };

struct hdr {
    uint32_t magic;
    uint16_t owner;
    uint16_t cls; /* size class, or CLS_PAGES */
    uint64_t size; /* usable bytes */
    uint64_t site; /* return address of the allocating call, or 0 */
    uint64_t asked; /* bytes asked for (the guard word follows them) */
};

__thread const void *dsm_alloc_caller;

/* Size classes: 16-byte steps to 128, then four steps per power of two. */
enum { NCLS = 64 };
static size_t cls_size[NCLS];
static int ncls;

struct vec {
    void **v;
    size_t n, cap;
};

struct extent {
    char *data; /* block data (page aligned) */
    size_t size;
};

static struct {
    pthread_mutex_t lock;
    char *cur, *end;          /* bump region of the current run */
    char *fresh;              /* memory from here on was never used */
    size_t grow;              /* size of the next run claimed */
    struct vec freel[NCLS];   /* free small blocks per class */
    struct extent *big;       /* free page-run blocks */
    size_t nbig, capbig;
    struct vec pending;       /* blocks other nodes freed, until a barrier */
    pthread_mutex_t pending_lock;
    int warned;
    int check;                /* OMPDSM_HEAP_CHECK */
    struct vec live;          /* check: this node's blocks in use */
} A = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .pending_lock = PTHREAD_MUTEX_INITIALIZER};

static void vec_push(struct vec *v, void *p)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        void **n = realloc(v->v, cap * sizeof *n);
        if (!n)
            ompdsm_fatal("out of memory in the shared allocator");
        v->v = n;
        v->cap = cap;
    }
    v->v[v->n++] = p;
}

static void free_msg(int src, int tag, const void *buf, size_t len, void *arg);

void dsm_alloc_init(void)
{
    size_t s = 16;
    ncls = 0;
    while (s <= SMALL_MAX && ncls < NCLS) {
        cls_size[ncls++] = s;
        if (s < 128)
            s += 16;
        else
            s += (size_t)1 << (63 - __builtin_clzll(s) - 2);
    }
    A.grow = dsm_g.chunk_size;
    A.check = ompdsm_env_bool("OMPDSM_HEAP_CHECK", 0);
    comm_set_handler(DSM_TAG_FREE, free_msg, NULL);
}

/* ---- naming blocks in error messages ---- */

/* "file:line" of a return address (addr2line, with debug information),
 * else "function+0xoff in object", else the address. */
static void describe_site(uint64_t site, char *buf, size_t len)
{
    Dl_info di;
    if (!site) {
        snprintf(buf, len, "an unknown place");
        return;
    }
    if (!dladdr((void *)(uintptr_t)site, &di) || !di.dli_fname) {
        snprintf(buf, len, "0x%llx", (unsigned long long)site);
        return;
    }
    /* the call is the instruction before the return address; addresses
     * of a position-independent object are relative to its base */
    uint64_t a = site - 1;
    const Elf64_Ehdr *eh = di.dli_fbase;
    if (eh && eh->e_type == ET_DYN)
        a -= (uint64_t)(uintptr_t)di.dli_fbase;
    const char *obj = di.dli_fname[0] ? di.dli_fname : "/proc/self/exe";
    char cmd[4200], line[1024] = "";
    snprintf(cmd, sizeof cmd, "addr2line -e '%s' 0x%llx 2>/dev/null", obj,
             (unsigned long long)a);
    FILE *f = strchr(obj, '\'') ? NULL : popen(cmd, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        pclose(f);
        line[strcspn(line, "\n")] = 0;
    }
    if (line[0] && line[0] != '?' && !strstr(line, ":?") && !strstr(line, ":0")) {
        char *disc = strstr(line, " (discriminator");
        if (disc)
            *disc = 0;
        snprintf(buf, len, "%s", line);
    } else if (di.dli_sname) {
        snprintf(buf, len, "%s+0x%llx in %s", di.dli_sname,
                 (unsigned long long)(site - (uint64_t)(uintptr_t)di.dli_saddr), obj);
    } else {
        snprintf(buf, len, "0x%llx in %s (build with -g for file:line)",
                 (unsigned long long)a, obj);
    }
}

static void check_guard(const void *p, const struct hdr *h, const char *when)
{
    uint64_t g;
    if (!A.check || h->asked + GUARD_BYTES > h->size)
        return;
    memcpy(&g, (const char *)p + h->asked, sizeof g);
    if (g != GUARD_WORD) {
        char where[1100];
        describe_site(h->site, where, sizeof where);
        ompdsm_fatal("shared block %p of %llu bytes (allocated at %s) was "
                     "written past its end: its guard word was overwritten "
                     "(found %s)", p, (unsigned long long)h->asked, where, when);
    }
}

static void live_remove(void *p)
{
    for (size_t i = A.live.n; i-- > 0;)
        if (A.live.v[i] == p) {
            A.live.v[i] = A.live.v[--A.live.n];
            return;
        }
}

static int size_class(size_t n)
{
    for (int c = 0; c < ncls; c++)
        if (cls_size[c] >= n)
            return c;
    return -1;
}

/* ---- chunks ---- */

/* Claims n consecutive chunks at node 0 (one fetch-add there);
 * -ENOMEM when the heap has no n chunks left. */
static int chunk_claim(uint32_t n, uint32_t *first)
{
    uint64_t f;
    if (dsm_g.rank == 0 || !dsm_g.started)
        f = __atomic_fetch_add(&((struct dsm_area_hdr *)dsm_g.area)->chunk_next, n,
                               __ATOMIC_SEQ_CST);
    else
        COMM_CHECK(comm_fetch_add(0, DSM_REG_AREA,
                                  offsetof(struct dsm_area_hdr, chunk_next), n, &f));
    if (f + n > dsm_g.nchunks)
        return -ENOMEM;
    *first = (uint32_t)f;
    return 0;
}

static void exhausted(size_t asked)
{
    struct dsm_area_hdr *h = (struct dsm_area_hdr *)dsm_g.area;
    uint64_t next = h->chunk_next;
    if (dsm_g.rank != 0 && dsm_g.started)
        comm_get(0, DSM_REG_AREA, offsetof(struct dsm_area_hdr, chunk_next), &next,
                 8);
    uint64_t left = next >= dsm_g.nchunks
                        ? 0
                        : (uint64_t)(dsm_g.nchunks - next) << dsm_g.chunk_shift;
    if (!A.warned++)
        ompdsm_err("shared heap exhausted: asked for %zu bytes, about %llu of "
                   "%zu bytes left unclaimed; raise OMPDSM_HEAP_SIZE",
                   asked, (unsigned long long)left, dsm_g.heap_size);
    errno = ENOMEM;
}

/* ---- blocks ---- */

static void *finish(char *data, size_t usable, int cls)
{
    struct hdr h = {HDR_MAGIC, (uint16_t)dsm_g.rank, (uint16_t)cls, usable,
                    0, usable};
    memcpy(data - sizeof h, &h, sizeof h);
    dsm_wd_wrote(data - sizeof h, sizeof h);
    DSM_STAT(allocs, 1);
    DSM_STAT(alloc_bytes, usable);
    return data;
}

/* A block handed out (new or reused): in use again, where from, guard. */
static void *hand_out(void *p, size_t asked)
{
    struct hdr *h;
    if (!p)
        return p;
    h = (struct hdr *)((char *)p - sizeof *h);
    h->magic = HDR_MAGIC;
    h->site = (uint64_t)(uintptr_t)dsm_alloc_caller;
    h->asked = asked;
    dsm_alloc_caller = NULL;
    dsm_wd_wrote(h, sizeof *h);
    if (A.check && asked + GUARD_BYTES <= h->size) {
        uint64_t g = GUARD_WORD;
        memcpy((char *)p + asked, &g, sizeof g);
        dsm_wd_wrote((char *)p + asked, sizeof g);
        vec_push(&A.live, p);
    }
    return p;
}

/* Bump allocation of `need` bytes whose data (after the header) is aligned
 * to align; claims a new run when the current one is full. */
static char *bump(size_t need, size_t align)
{
    for (;;) {
        if (A.cur) {
            char *data = (char *)OMPDSM_ALIGN_UP((uintptr_t)A.cur + sizeof(struct hdr),
                                                 (uintptr_t)align);
            if (data + need <= A.end) {
                A.cur = data + need;
                if (A.cur > A.fresh)
                    A.fresh = A.cur;
                return data;
            }
        }
        size_t want = OMPDSM_ALIGN_UP(need + align + sizeof(struct hdr), dsm_g.chunk_size);
        if (want < A.grow)
            want = A.grow;
        uint32_t n = (uint32_t)(want >> dsm_g.chunk_shift), first;
        if (chunk_claim(n, &first) < 0)
            return NULL;
        dsm_home_record_run(first, n, 0);
        A.cur = A.fresh = dsm_g.app + ((size_t)first << dsm_g.chunk_shift);
        A.end = A.cur + ((size_t)n << dsm_g.chunk_shift);
        if (A.grow < (64u << 20))
            A.grow *= 2;
    }
}

/* A block-distributed run of its own: header page, then the data pages. */
static char *own_run(size_t size)
{
    size_t ps = dsm_g.page_size;
    uint64_t dpages = (size + ps - 1) / ps;
    size_t bytes = OMPDSM_ALIGN_UP((dpages + 1) * ps, dsm_g.chunk_size);
    uint32_t n = (uint32_t)(bytes >> dsm_g.chunk_shift), first;
    if (chunk_claim(n, &first) < 0)
        return NULL;
    dsm_home_record_run(first, n, dpages);
    return dsm_g.app + ((size_t)first << dsm_g.chunk_shift) + ps;
}

static void *alloc_block(size_t size, size_t align, int *fresh)
{
    *fresh = 0;
    if (!size)
        size = 1;
    if (size > dsm_g.heap_size) {
        exhausted(size);
        return NULL;
    }
    int c = align <= 16 ? size_class(size) : -1;
    if (c >= 0) {
        if (A.freel[c].n)
            return A.freel[c].v[--A.freel[c].n];
        char *before = A.fresh;
        char *d = bump(cls_size[c], 16);
        if (!d) {
            exhausted(size);
            return NULL;
        }
        *fresh = d >= before;
        return finish(d, cls_size[c], c);
    }
    size_t ps = dsm_g.page_size;
    if (align < ps)
        align = ps;
    size_t usable = OMPDSM_ALIGN_UP(size, ps);
    /* Reuse a freed run block that fits without wasting half of it. */
    for (size_t i = 0; i < A.nbig; i++) {
        struct extent *e = &A.big[i];
        if (e->size >= usable && e->size <= 2 * usable &&
            !((uintptr_t)e->data & (align - 1))) {
            char *d = e->data;
            size_t sz = e->size;
            *e = A.big[--A.nbig];
            return finish(d, sz, CLS_PAGES);
        }
    }
    char *d;
    if (dsm_home_spreads(usable) && align <= ps) {
        d = own_run(usable);
        *fresh = 1;
    } else {
        char *before = A.fresh;
        d = bump(usable, align);
        *fresh = d && d >= before;
    }
    if (!d) {
        exhausted(size);
        return NULL;
    }
    return finish(d, usable, CLS_PAGES);
}

static void *alloc_locked(size_t asked, size_t align, int *fresh)
{
    return hand_out(alloc_block(asked + (A.check ? GUARD_BYTES : 0), align,
                                fresh), asked);
}

static struct hdr *header(const void *p, const char *what, int freeing)
{
    struct hdr *h = (struct hdr *)((char *)p - sizeof(struct hdr));
    if (!((uintptr_t)p & 15) && (char *)h >= dsm_g.app &&
        h->magic == HDR_FREED && h->owner < dsm_g.size) {
        char where[1100];
        describe_site(h->site, where, sizeof where);
        ompdsm_fatal("%s(): %s of shared block %p (allocated at %s)", what,
                     freeing ? "double free" : "use after free", p, where);
    }
    if (((uintptr_t)p & 15) || (char *)h < dsm_g.app || h->magic != HDR_MAGIC ||
        h->owner >= dsm_g.size)
        ompdsm_fatal("%s(%p): not a block of the shared heap (corrupted?)",
                     what, p);
    return h;
}

static void release_block(void *p, struct hdr *h)
{
    if (h->cls == CLS_PAGES) {
        if (A.nbig == A.capbig) {
            size_t cap = A.capbig ? A.capbig * 2 : 32;
            struct extent *n = realloc(A.big, cap * sizeof *n);
            if (!n)
                ompdsm_fatal("out of memory in the shared allocator");
            A.big = n;
            A.capbig = cap;
        }
        A.big[A.nbig++] = (struct extent){p, h->size};
    } else {
        vec_push(&A.freel[h->cls], p);
    }
}

static void free_msg(int src, int tag, const void *buf, size_t len, void *arg)
{
    (void)tag;
    (void)arg;
    if (len != sizeof(void *)) {
        ompdsm_warn("malformed free request from node %d", src);
        return;
    }
    void *p;
    memcpy(&p, buf, sizeof p);
    pthread_mutex_lock(&A.pending_lock);
    vec_push(&A.pending, p);
    pthread_mutex_unlock(&A.pending_lock);
}

void dsm_alloc_at_barrier(void)
{
    pthread_mutex_lock(&A.pending_lock);
    struct vec v = A.pending;
    memset(&A.pending, 0, sizeof A.pending);
    pthread_mutex_unlock(&A.pending_lock);
    pthread_mutex_lock(&A.lock);
    /* the freeing node marked these freed already */
    for (size_t i = 0; i < v.n; i++) {
        live_remove(v.v[i]);
        release_block(v.v[i], (struct hdr *)((char *)v.v[i] - sizeof(struct hdr)));
    }
    for (size_t i = 0; A.check && i < A.live.n; i++)
        check_guard(A.live.v[i], header(A.live.v[i], "barrier check", 0),
                    "at a barrier");
    pthread_mutex_unlock(&A.lock);
    free(v.v);
}

/* ---- the public entry points ---- */

void *dsm_global_alloc(size_t size, size_t align, const char *name)
{
    if (dsm_g.started)
        ompdsm_fatal("internal error: global '%s' allocated after start", name);
    if (align < 16)
        align = 16;
    int large = size >= dsm_g.page_size;
    int colourable = large && align <= 64; /* a colour is a multiple of 64 */
    if (large && align < dsm_g.page_size)
        align = dsm_g.page_size;
    size_t off = OMPDSM_ALIGN_UP(dsm_g.global_bump, align);
    /* Cache colouring: a large global starts on a page of its own (no
     * object shares its pages with it) but not at the page's first byte:
     * the k-th starts (k * 9 cache lines) mod 4 KiB into it.  Arrays that
     * all began at page boundaries would have equal addresses modulo the
     * L1 cache's way size, so a loop streaming through several of them at
     * the same index (Himeno's 14 streams) evicts its own lines and its
     * loads wait on unrelated stores (4K aliasing); the native build's
     * .bss packs them at unrelated offsets. */
    if (colourable) {
        static unsigned ncoloured;
        size_t colour = (size_t)(ncoloured++ * 9u % 64u) * 64u;
        off += colour;
    }
    if (off + size > dsm_g.heap_size)
        ompdsm_fatal("shared heap exhausted by globals: '%s' needs %zu bytes, "
                     "%zu of %zu left; raise OMPDSM_HEAP_SIZE",
                     name, size, dsm_g.heap_size - dsm_g.global_bump,
                     dsm_g.heap_size);
    /* ... and ends its pages too: a small global after it (a scalar the
     * program writes often) gets a page that the array's readers need not
     * invalidate. */
    dsm_g.global_bump = large ? OMPDSM_ALIGN_UP(off + size, dsm_g.page_size)
                              : off + (size ? size : 1);
    dsm_home_global(off, size);
    return dsm_g.app + off;
}

void dsm_set_granule(void *p, size_t size, unsigned granule)
{
    if (dsm_g.started || dsm_g.byte_diffs || !p || size < dsm_g.page_size ||
        granule <= 1 ||
        (granule & (granule - 1)) || granule > 8 ||
        ((uintptr_t)p & (granule - 1)))
        return;
    uint32_t p0 = page_of(p), p1 = page_of((char *)p + size - 1);
    for (uint32_t pg = p0; pg <= p1; pg++)
        dsm_g.granule[pg] = (uint8_t)granule;
}

void *dsm_memalign(size_t align, size_t size)
{
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    int fresh;
    pthread_mutex_lock(&A.lock);
    void *p = alloc_locked(size, align, &fresh);
    pthread_mutex_unlock(&A.lock);
    return p;
}

void *dsm_malloc(size_t size)
{
    return dsm_memalign(16, size);
}

void *dsm_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    int fresh;
    pthread_mutex_lock(&A.lock);
    void *p = alloc_locked(total, 16, &fresh);
    pthread_mutex_unlock(&A.lock);
    if (p && !fresh) {
        memset(p, 0, total);
        dsm_wd_wrote(p, total);
    }
    return p;
}

size_t dsm_usable_size(const void *p)
{
    if (!p)
        return 0;
    struct hdr *h = header(p, "malloc_usable_size", 0);
    return A.check ? h->asked : h->size;
}

void dsm_free(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&A.lock);
    struct hdr *h = header(p, "free", 1);
    check_guard(p, h, "at its free");
    h->magic = HDR_FREED;
    dsm_wd_wrote(&h->magic, sizeof h->magic);
    DSM_STAT(frees, 1);
    if (h->owner != dsm_g.rank) {
        pthread_mutex_unlock(&A.lock);
        COMM_CHECK(comm_send(h->owner, DSM_TAG_FREE, &p, sizeof p));
        return;
    }
    live_remove(p);
    release_block(p, h);
    pthread_mutex_unlock(&A.lock);
}

void *dsm_realloc(void *p, size_t size)
{
    if (!p)
        return dsm_malloc(size);
    if (!size) {
        dsm_free(p);
        return NULL;
    }
    struct hdr *h = header(p, "realloc", 0);
    if (size + (A.check ? GUARD_BYTES : 0) <= h->size && !A.check)
        return p;
    check_guard(p, h, "at its realloc");
    void *q = dsm_malloc(size);
    if (!q)
        return NULL;
    memcpy(q, p, h->asked < size ? h->asked : size);
    dsm_wd_wrote(q, h->asked < size ? h->asked : size);
    dsm_free(p);
    return q;
}

void *dsm_stack_alloc(size_t size, size_t align)
{
    return dsm_memalign(align < 16 ? 16 : align, size);
}

void dsm_stack_free(void *p)
{
    dsm_free(p);
}
