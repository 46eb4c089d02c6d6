/* dsm/heap.c - the shared heap: one memfd mapped twice (the application
 * view at the same address on every node, whose protections drive the
 * protocol, and an always-writable system view for installing pages and
 * applying diffs), the per-page state and twin arrays, and the dsm region
 * (locks, chunk table, notice logs, fetch marks); and the page helpers the
 * protocol's files share (protection changes, per-page tables, page lists,
 * the pool of twin pages, fetch marks).  Homes are in home.c. */
#include "dsm_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct dsm_state dsm_g = {.fd = -1, .area_fd = -1};
char *dsm_heap_lo_, *dsm_heap_hi_;
size_t dsm_off_chunks, dsm_off_log, dsm_off_locks, dsm_off_qnodes;
size_t dsm_off_vpos, dsm_off_mbox, dsm_off_fetched, dsm_off_lazy_ask, dsm_off_lazy_ack;
size_t dsm_off_snap, dsm_off_snap_head;

#define DEFAULT_HEAP_BASE 0x200000000000ull /* 32 TiB: far from PIE and mmap */
#define DEFAULT_HEAP_SIZE (16ull << 30)
#define CHUNK_SIZE (2ull << 20)

void *dsm_heap_base(void) { return dsm_g.app; }
size_t dsm_heap_size(void) { return dsm_g.heap_size; }
size_t dsm_page_size(void) { return dsm_g.page_size; }
const char *dsm_protocol_name(void)
{
    return dsm_g.update_protocol ? "update" : "invalidate";
}

void *dsm_table(size_t bytes, const char *what)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        ompdsm_fatal("cannot reserve %zu bytes for the %s table: %s", bytes,
                     what, strerror(errno));
    return p;
}

static void fmt_size(char *buf, size_t len, uint64_t b)
{
    if (b >= (1ull << 30) && !(b & ((1ull << 30) - 1)))
        snprintf(buf, len, "%llu GiB", (unsigned long long)(b >> 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.1f MiB", b / 1048576.0);
    else
        snprintf(buf, len, "%llu bytes", (unsigned long long)b);
}

static void *map_app_view(uintptr_t base, size_t size, int fd)
{
    void *want = (void *)base;
    void *p = mmap(want, size, PROT_READ | PROT_WRITE,
                   (fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED) |
                       MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                   fd, 0);
    if (p == MAP_FAILED || p != want) {
        int e = errno;
        char sz[64];
        fmt_size(sz, sizeof sz, size);
        if (p != MAP_FAILED)
            munmap(p, size);
        ompdsm_fatal("cannot place the shared heap at %p-%p (%s): %s; set "
                     "OMPDSM_HEAP_BASE to a free address range or lower "
                     "OMPDSM_HEAP_SIZE",
                     want, (char *)want + size, sz,
                     p == MAP_FAILED ? (e == EEXIST ? "the range is already in use"
                                                    : strerror(e))
                                     : "the kernel placed it elsewhere");
    }
    return p;
}

int dsm_init(void)
{
    static const char *const protocols[] = {"invalidate", "update"};
    dsm_g.rank = comm_rank();
    dsm_g.size = comm_size();
    dsm_g.solo = dsm_g.size == 1;

    /* 64 KiB by default: a fault, an mprotect and a twin cost about the
     * same for 64 KiB as for 4 KiB, and each costs microseconds here, so
     * fewer, larger pages win on every kernel we measured (docs/
     * performance.md); byte-exact diffs keep the extra false sharing
     * correct. */
    long os_page = sysconf(_SC_PAGESIZE);
    uint64_t def_page = 64 * 1024 > (uint64_t)os_page ? 64 * 1024 : (uint64_t)os_page;
    dsm_g.page_size = ompdsm_env_u64("OMPDSM_PAGE_SIZE", def_page,
                                     (uint64_t)os_page, 1u << 22, 1);
    if (dsm_g.page_size & (dsm_g.page_size - 1))
        ompdsm_fatal("OMPDSM_PAGE_SIZE=%zu is not a power of two",
                     dsm_g.page_size);
    dsm_g.page_shift = (unsigned)__builtin_ctzll(dsm_g.page_size);
    dsm_g.chunk_size = CHUNK_SIZE > dsm_g.page_size ? CHUNK_SIZE : dsm_g.page_size;
    dsm_g.chunk_shift = (unsigned)__builtin_ctzll(dsm_g.chunk_size);

    uint64_t size = ompdsm_env_u64("OMPDSM_HEAP_SIZE", DEFAULT_HEAP_SIZE,
                                   dsm_g.chunk_size, 1ull << 44, 1);
    size = OMPDSM_ALIGN_UP(size, (uint64_t)dsm_g.chunk_size);
    if ((size >> dsm_g.page_shift) > 0xffffffffull)
        ompdsm_fatal("OMPDSM_HEAP_SIZE is too large for %zu-byte pages",
                     dsm_g.page_size);
    uint64_t base = ompdsm_env_u64("OMPDSM_HEAP_BASE", DEFAULT_HEAP_BASE,
                                   1ull << 32, 1ull << 47, 0);
    if (base & (dsm_g.chunk_size - 1))
        ompdsm_fatal("OMPDSM_HEAP_BASE=0x%llx is not aligned to %zu bytes",
                     (unsigned long long)base, dsm_g.chunk_size);
    dsm_g.heap_size = size;
    dsm_g.npages = (uint32_t)(size >> dsm_g.page_shift);
    dsm_g.nchunks = (uint32_t)(size >> dsm_g.chunk_shift);
    dsm_g.update_protocol =
        ompdsm_env_choice("OMPDSM_PROTOCOL", protocols, 2, 0) == 1;
    dsm_g.readahead =
        (uint32_t)ompdsm_env_u64("OMPDSM_READAHEAD", 3, 0, 255, 0);
    static const char *const granules[] = {"type", "byte"};
    dsm_g.byte_diffs = ompdsm_env_choice("OMPDSM_DIFF_GRANULE", granules, 2, 0) == 1;
    dsm_home_init();
    dsm_mig_init();
    static const char *const onoff[] = {"on", "off"};
    /* Under the update protocol every copy a node ever held is refetched at
     * each notice, so no page stays unfetched: no marks, no exclusivity. */
    dsm_g.excl_on = ompdsm_env_choice("OMPDSM_HOME_EXCLUSIVE", onoff, 2, 0) == 0 &&
                    !dsm_g.update_protocol;
    dsm_g.keep_on = ompdsm_env_choice("OMPDSM_KEEP_WRITABLE", onoff, 2, 0) == 0;
    dsm_g.lock_keep = ompdsm_env_choice("OMPDSM_LOCK_KEEP", onoff, 2, 0) == 0;
    /* 0: the gap is measured (keep.c, keep_gap); 15 is its largest. */
    dsm_g.keep_gap = (unsigned)ompdsm_env_u64("OMPDSM_KEEP_GAP", 0, 0, 15, 0);
    dsm_wd_init();

    if (dsm_g.solo) {
        /* One node shares its heap with nobody: private anonymous memory
         * and no second view (nothing is fetched). */
        dsm_g.app = map_app_view((uintptr_t)base, size, -1);
        dsm_g.sys = dsm_g.app;
    } else {
        dsm_g.fd = memfd_create("ompdsm-heap", MFD_CLOEXEC);
        if (dsm_g.fd < 0 || ftruncate(dsm_g.fd, (off_t)size) < 0)
            ompdsm_fatal("cannot create the %llu-byte shared heap: %s",
                         (unsigned long long)size, strerror(errno));
        dsm_g.sys = mmap(NULL, size, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_NORESERVE, dsm_g.fd, 0);
        if (dsm_g.sys == MAP_FAILED)
            ompdsm_fatal("cannot map the shared heap's system view (%llu "
                         "bytes): %s", (unsigned long long)size, strerror(errno));
        dsm_g.app = map_app_view((uintptr_t)base, size, dsm_g.fd);
    }
    /* Transparent huge pages where the kernel gives them: private memory
     * (one node) wherever THP is not "never", shared memory only where
     * the administrator set /sys/kernel/mm/transparent_hugepage/
     * shmem_enabled to advise or more. */
    madvise(dsm_g.app, size, MADV_HUGEPAGE);
    dsm_heap_lo_ = dsm_g.app;
    dsm_heap_hi_ = dsm_g.app + size;

    dsm_g.state = dsm_table(dsm_g.npages, "page state");
    dsm_g.twin = dsm_table((size_t)dsm_g.npages * sizeof(void *), "twin");
    dsm_g.granule = dsm_table(dsm_g.npages, "diff granule");
    dsm_g.keep = dsm_table((size_t)dsm_g.npages * sizeof *dsm_g.keep, "write history");
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(dsm_g.plock); i++)
        pthread_mutex_init(&dsm_g.plock[i], NULL);
    pthread_mutex_init(&dsm_g.dirty_lock, NULL);
    pthread_mutex_init(&dsm_g.interval_lock, NULL);
    pthread_mutex_init(&dsm_g.acquire_lock, NULL);
    dsm_g.log_pos = calloc((size_t)dsm_g.size, sizeof *dsm_g.log_pos);
    if (!dsm_g.log_pos)
        ompdsm_fatal("out of memory for the log positions");
    pthread_mutex_init(&dsm_g.release_lock, NULL);

    /* The dsm region: header, chunk table, notice log and log positions,
     * lock tails, queue nodes, fetch marks, snapshots. */
    size_t off = OMPDSM_ALIGN_UP(sizeof(struct dsm_area_hdr), (size_t)64);
    dsm_off_chunks = off;
    off += (size_t)dsm_g.nchunks * DSM_CHUNK_ENT_SIZE;
    dsm_off_log = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += (size_t)DSM_LOG_CAP * sizeof(struct dsm_log_entry);
    dsm_off_vpos = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += DSM_VPOS_WORDS(dsm_g.size) * 8;
    dsm_off_mbox = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += (size_t)dsm_g.size * DSM_VPOS_WORDS(dsm_g.size) * 8;
    dsm_off_locks = off;
    off += (size_t)DSM_LOCK_SLOTS * 8;
    dsm_off_qnodes = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += (size_t)DSM_QNODES * sizeof(struct dsm_qnode);
    dsm_off_lazy_ask = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += (size_t)dsm_g.size * 8;
    dsm_off_lazy_ack = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += (size_t)dsm_g.size * 8;
    dsm_off_fetched = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += dsm_g.npages;
    dsm_off_snap_head = off = OMPDSM_ALIGN_UP(off, (size_t)64);
    off += 64;
    dsm_off_snap = off;
    off += DSM_SNAP_BYTES;
    dsm_g.area_len = OMPDSM_ALIGN_UP(off, (size_t)4096);
    dsm_g.area_fd = memfd_create("ompdsm-dsm", MFD_CLOEXEC);
    if (dsm_g.area_fd < 0 || ftruncate(dsm_g.area_fd, (off_t)dsm_g.area_len) < 0)
        ompdsm_fatal("cannot create the dsm region: %s", strerror(errno));
    dsm_g.area = mmap(NULL, dsm_g.area_len, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_NORESERVE, dsm_g.area_fd, 0);
    if (dsm_g.area == MAP_FAILED)
        ompdsm_fatal("cannot map the dsm region: %s", strerror(errno));

    COMM_CHECK(comm_register(DSM_REG_HEAP, dsm_g.sys, size, dsm_g.fd));
    COMM_CHECK(comm_register(DSM_REG_AREA, dsm_g.area, dsm_g.area_len,
                             dsm_g.area_fd));
    dsm_alloc_init();
    dsm_lock_msg_init();
    OMPDSM_TRACE(OMPDSM_TR_DSM, "heap %p + %llu, %u pages of %zu, protocol %s",
                 (void *)dsm_g.app, (unsigned long long)size, dsm_g.npages,
                 dsm_g.page_size, dsm_g.update_protocol ? "update" : "invalidate");
    return 0;
}

int dsm_start(void)
{
    /* Globals occupy the first chunks; their homes were set as they were
     * allocated, the rest of those chunks belong to node 0. */
    dsm_g.global_chunks =
        (uint32_t)((dsm_g.global_bump + dsm_g.chunk_size - 1) >> dsm_g.chunk_shift);
    if (!dsm_g.global_chunks)
        dsm_g.global_chunks = 1;
    dsm_home_globals_done(dsm_g.global_chunks
                          << (dsm_g.chunk_shift - dsm_g.page_shift));
    if (dsm_g.rank == 0) {
        struct dsm_area_hdr *h = (struct dsm_area_hdr *)dsm_g.area;
        h->chunk_next = dsm_g.global_chunks;
    }
    dsm_g.wide_lock = dsm_lock_alloc();
    if (!dsm_g.solo) {
        dsm_wd_start();
        /* Every node holds the same initial image: all pages are valid
         * read-only copies, so the first access of each costs nothing
         * (under write detection, dsm_wd_start set the protections). */
        if (dsm_g.wd != WD_ON && mprotect(dsm_g.app, dsm_g.heap_size, PROT_READ) < 0)
            ompdsm_fatal("mprotect of the shared heap: %s", strerror(errno));
        dsm_fault_install();
        dsm_probe();
    }
    dsm_g.started = 1;
    if (!dsm_g.solo && dsm_lazy_on()) /* (only lazy nodes are asked) */
        dsm_lazy_start();
    return comm_barrier(COMM_WORLD);
}

void dsm_fini(void)
{
    dsm_lazy_stop();
    dsm_g.started = 0;
}

void dsm_protect(uint32_t pg, uint32_t n, int prot)
{
    DSM_STAT(protects, 1);
    if (OMPDSM_UNLIKELY(mprotect(page_app(pg), (size_t)n << dsm_g.page_shift,
                                 prot) < 0)) {
        int e = errno;
        if (e == ENOMEM)
            ompdsm_fatal("mprotect of %u pages at %p: out of memory maps; raise "
                         "vm.max_map_count (sysctl -w vm.max_map_count=1048576) "
                         "or use larger pages (OMPDSM_PAGE_SIZE)",
                         n, (void *)page_app(pg));
        ompdsm_fatal("mprotect of %u pages at %p: %s", n, (void *)page_app(pg),
                     strerror(e));
    }
}

void dsm_protect_marked(uint32_t pg, uint32_t n, const uint8_t *mark)
{
    for (uint32_t k = 0; k < n;) {
        uint32_t m = 0;
        while (k + m < n && mark[k + m])
            m++;
        if (m)
            dsm_protect(pg + k, m, PROT_READ);
        k += m ? m : 1;
    }
}

void dsm_page_list_push(uint32_t **v, size_t *n, size_t *cap, uint32_t pg)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        uint32_t *d = realloc(*v, c * sizeof *d);
        if (!d)
            ompdsm_fatal("out of memory for a page list of %zu", c);
        *v = d;
        *cap = c;
    }
    (*v)[(*n)++] = pg;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void dsm_page_list_sort(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u32);
}

void dsm_page_list_sort_unique(uint32_t *v, size_t *n)
{
    if (*n < 2)
        return;
    dsm_page_list_sort(v, *n);
    size_t w = 1;
    for (size_t i = 1; i < *n; i++)
        if (v[i] != v[w - 1])
            v[w++] = v[i];
    *n = w;
}

int dsm_heap_pages(const void *p, size_t len, uint32_t *first, uint32_t *last)
{
    const char *lo = p, *hi = lo + len;
    if (!len || hi <= dsm_heap_lo_ || lo >= dsm_heap_hi_)
        return 0;
    if (lo < dsm_heap_lo_)
        lo = dsm_heap_lo_;
    if (hi > dsm_heap_hi_)
        hi = dsm_heap_hi_;
    *first = page_of(lo);
    *last = page_of(hi - 1);
    return 1;
}

void dsm_mark_fetch(uint32_t pg, uint32_t n, int home)
{
    static const uint8_t zeros[DSM_PLOCK_STRIPES];
    if (!dsm_g.excl_on)
        return;
    if (n > sizeof zeros)
        ompdsm_fatal("internal: fetch mark of %u pages", n);
    COMM_CHECK(comm_put(home, DSM_REG_AREA, dsm_off_fetched + pg, zeros, n));
}

/* Twins come from a private pool of page buffers. */
static pthread_mutex_t twin_lock = PTHREAD_MUTEX_INITIALIZER;
static void *twin_free;

static void *twin_alloc(void)
{
    pthread_mutex_lock(&twin_lock);
    void *t = twin_free;
    if (t) {
        twin_free = *(void **)t;
    } else {
        enum { BATCH = 64 };
        char *b = aligned_alloc(dsm_g.page_size, dsm_g.page_size * BATCH);
        if (!b)
            ompdsm_fatal("out of memory for twin pages");
        for (int i = 1; i < BATCH; i++) {
            *(void **)(b + (size_t)i * dsm_g.page_size) = twin_free;
            twin_free = b + (size_t)i * dsm_g.page_size;
        }
        t = b;
    }
    pthread_mutex_unlock(&twin_lock);
    return t;
}

void dsm_twin_free(void *t)
{
    pthread_mutex_lock(&twin_lock);
    *(void **)t = twin_free;
    twin_free = t;
    pthread_mutex_unlock(&twin_lock);
}

void *dsm_twin_copy(uint32_t pg)
{
    void *t = twin_alloc();
    memcpy(t, page_sys(pg), dsm_g.page_size);
    return t;
}
