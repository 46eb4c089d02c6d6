/* bench/dsm/wpcost.c - what it costs to learn which pages a node wrote,
 * two ways, side by side in one run (issue 14: "fewer mprotect calls per
 * fault ... or a different protection mechanism such as userfaultfd
 * write-protect, measured").
 *
 *   mprotect   the DSM's way today: the region is PROT_READ; the first
 *              write to each DSM page (64 KiB) raises SIGSEGV, whose
 *              handler makes that page writable (one mprotect); after the
 *              round one mprotect makes the whole region read-only again.
 *   uffd-async userfaultfd write protection in asynchronous mode
 *              (UFFD_FEATURE_WP_ASYNC, Linux 6.7): a write to a protected
 *              4 KiB page is resolved by the kernel with no signal and no
 *              message; after the round one PAGEMAP_SCAN ioctl lists the
 *              written pages and protects them again (PM_SCAN_WP_MATCHING).
 *
 * Both on a shared memfd mapping, as the DSM heap is.  Each round writes
 * one byte of each of P DSM pages ("touch") or every 4 KiB page of them
 * ("fill": with uffd each 4 KiB page faults on its own), then collects the
 * written pages; the time per DSM page is printed for each, with the
 * count of pages each method found (which must be P: the run fails
 * otherwise).  Without userfaultfd (no permission: vm.unprivileged_
 * userfaultfd=0 and not root, or an older kernel) the uffd rows say why
 * and only mprotect is measured.  Not a test: a benchmark
 * (docs/performance.md).
 *
 * usage: bench_dsm_wpcost [pages [rounds]]   (defaults 512, 20) */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Debian 12's kernel headers (6.1) predate these (6.7); the kernel
 * decides at run time whether it has them. */
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
    uint64_t start, end, categories;
};
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages,
        category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WRITTEN (1 << 1)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

enum { DSM_PAGE = 64 * 1024 };

static char *region;
static size_t region_len;
static volatile long segv_count;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_dsm_wpcost: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    char *a = si->si_addr;
    if (a < region || a >= region + region_len) {
        signal(SIGSEGV, SIG_DFL);
        return; /* a real fault: dies on return */
    }
    char *pg = region + ((size_t)(a - region) / DSM_PAGE) * DSM_PAGE;
    if (mprotect(pg, DSM_PAGE, PROT_READ | PROT_WRITE) < 0)
        _exit(3);
    segv_count++;
}

/* One round of writes: one byte per DSM page, or one per 4 KiB page. */
static void write_round(size_t pages, int fill, int round)
{
    size_t step = fill ? 4096 : DSM_PAGE;
    for (size_t off = 0; off < pages * DSM_PAGE; off += step)
        region[off] = (char)round;
}

struct result {
    double us_write, us_collect;
    long found;
    int ok;
    char why[160];
};

static struct result run_mprotect(size_t pages, int rounds, int fill)
{
    struct result r = {0, 0, 0, 1, ""};
    for (int k = 0; k < rounds; k++) {
        if (mprotect(region, region_len, PROT_READ) < 0)
            die("mprotect");
        segv_count = 0;
        double t0 = now_us();
        write_round(pages, fill, k);
        double t1 = now_us();
        /* The release's side: the written pages are known (the handler
         * listed them); protect them again, one call for the region. */
        long found = segv_count;
        if (mprotect(region, region_len, PROT_READ) < 0)
            die("mprotect");
        double t2 = now_us();
        r.us_write += t1 - t0;
        r.us_collect += t2 - t1;
        r.found = found;
        if ((size_t)found != pages)
            r.ok = 0;
    }
    if (mprotect(region, region_len, PROT_READ | PROT_WRITE) < 0)
        die("mprotect");
    return r;
}

static int uffd = -1, pagemap = -1;

/* Sets up asynchronous userfaultfd write protection of the region; 0, or
 * -1 with the reason in why. */
static int uffd_setup(char *why, size_t n)
{
    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (uffd < 0) {
        snprintf(why, n, "userfaultfd: %s (root, or vm.unprivileged_userfaultfd=1)",
                 strerror(errno));
        return -1;
    }
    struct uffdio_api api = {.api = UFFD_API,
                             .features = UFFD_FEATURE_WP_ASYNC |
                                         UFFD_FEATURE_WP_HUGETLBFS_SHMEM};
    if (ioctl(uffd, UFFDIO_API, &api) < 0) {
        snprintf(why, n, "UFFDIO_API with WP_ASYNC on shmem: %s (Linux 6.7 or later)",
                 strerror(errno));
        return -1;
    }
    struct uffdio_register reg = {
        .range = {(uintptr_t)region, region_len}, .mode = UFFDIO_REGISTER_MODE_WP};
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
        snprintf(why, n, "UFFDIO_REGISTER (write-protect mode): %s", strerror(errno));
        return -1;
    }
    pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0) {
        snprintf(why, n, "/proc/self/pagemap: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int uffd_protect_all(void)
{
    struct uffdio_writeprotect wp = {{(uintptr_t)region, region_len},
                                     UFFDIO_WRITEPROTECT_MODE_WP};
    return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

/* Lists the written 4 KiB pages and protects them again, in one call;
 * returns the DSM pages that had any written, or -1. */
static long uffd_collect(struct page_region *vec, size_t nvec)
{
    struct pm_scan_arg a = {0};
    a.size = sizeof a;
    a.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;
    a.start = (uintptr_t)region;
    a.end = (uintptr_t)(region + region_len);
    a.vec = (uintptr_t)vec;
    a.vec_len = nvec;
    a.category_mask = PAGE_IS_WRITTEN;
    a.return_mask = PAGE_IS_WRITTEN;
    long nr = ioctl(pagemap, PAGEMAP_SCAN, &a);
    if (nr < 0)
        return -1;
    long found = 0;
    uint64_t last = UINT64_MAX;
    for (long i = 0; i < nr; i++)
        for (uint64_t p = vec[i].start; p < vec[i].end; p += 4096) {
            uint64_t d = (p - (uintptr_t)region) / DSM_PAGE;
            if (d != last) {
                found++;
                last = d;
            }
        }
    return found;
}

static struct result run_uffd(size_t pages, int rounds, int fill)
{
    struct result r = {0, 0, 0, 1, ""};
    size_t nvec = region_len / 4096 + 1;
    struct page_region *vec = calloc(nvec, sizeof *vec);
    if (!vec)
        die("calloc");
    if (uffd_protect_all() < 0) {
        snprintf(r.why, sizeof r.why, "UFFDIO_WRITEPROTECT: %s", strerror(errno));
        r.ok = -1;
        free(vec);
        return r;
    }
    for (int k = 0; k < rounds; k++) {
        double t0 = now_us();
        write_round(pages, fill, k);
        double t1 = now_us();
        long found = uffd_collect(vec, nvec);
        double t2 = now_us();
        if (found < 0) {
            snprintf(r.why, sizeof r.why, "PAGEMAP_SCAN: %s", strerror(errno));
            r.ok = -1;
            break;
        }
        r.us_write += t1 - t0;
        r.us_collect += t2 - t1;
        r.found = found;
        if ((size_t)found != pages)
            r.ok = 0;
    }
    free(vec);
    return r;
}

static void report(const char *method, const char *mode, struct result r,
                   size_t pages, int rounds)
{
    if (r.ok < 0) {
        printf("%-10s %-5s  not measured: %s\n", method, mode, r.why);
        return;
    }
    double per = (double)pages * rounds;
    printf("%-10s %-5s  write %8.2f us/page  collect+reprotect %8.3f us/page  "
           "total %8.2f us/page  found %ld of %zu%s\n",
           method, mode, r.us_write / per, r.us_collect / per,
           (r.us_write + r.us_collect) / per, r.found, pages,
           r.ok ? "" : "  WRONG COUNT");
}

int main(int argc, char **argv)
{
    size_t pages = argc > 1 ? strtoul(argv[1], NULL, 10) : 512;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    if (!pages || rounds < 1) {
        fprintf(stderr, "usage: bench_dsm_wpcost [pages [rounds]]\n");
        return 2;
    }
    region_len = pages * DSM_PAGE;
    int fd = memfd_create("wpcost", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)region_len) < 0)
        die("memfd");
    region = mmap(NULL, region_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (region == MAP_FAILED)
        die("mmap");
    memset(region, 1, region_len); /* every page present, as a DSM copy is */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);

    printf("bench_dsm_wpcost: %zu DSM pages of %d KiB, %d rounds, per DSM page "
           "(means), 3 repetitions one after the other\n", pages, DSM_PAGE / 1024,
           rounds);
    int bad = 0;
    for (int rep = 0; rep < 3; rep++) {
        /* mprotect first, on a region userfaultfd does not know */
        for (int fill = 0; fill < 2; fill++) {
            struct result m = run_mprotect(pages, rounds, fill);
            report("mprotect", fill ? "fill" : "touch", m, pages, rounds);
            bad |= !m.ok;
        }
        char why[160] = "";
        if (uffd_setup(why, sizeof why) < 0) {
            printf("%-10s %-5s  not measured: %s\n", "uffd-async", "both", why);
        } else {
            for (int fill = 0; fill < 2; fill++) {
                struct result u = run_uffd(pages, rounds, fill);
                report("uffd-async", fill ? "fill" : "touch", u, pages, rounds);
                bad |= u.ok == 0;
            }
            struct uffdio_range rg = {(uintptr_t)region, region_len};
            if (ioctl(uffd, UFFDIO_UNREGISTER, &rg) < 0)
                die("UFFDIO_UNREGISTER");
        }
        if (uffd >= 0)
            close(uffd);
        if (pagemap >= 0)
            close(pagemap);
        uffd = pagemap = -1;
    }
    return bad ? 1 : 0;
}
