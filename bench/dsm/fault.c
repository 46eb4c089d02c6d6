/* bench/dsm/fault.c - remote read-fault service time against the
 * transport's raw 4 KiB get, measured in the same run (2+ nodes; node 0
 * measures).  Node 1 writes one byte of each page it is home of; after the
 * barrier node 0's copies are invalid and each first read is a fault that
 * fetches the page from node 1. */
#include "comm/comm.h"
#include "dsm/dsm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The floor: a fault whose handler only makes the page readable (what any
 * mprotect-based DSM pays), measured in the same process.  Installed before
 * the DSM's handler, which passes faults outside the heap on to it. */
static long bare_ps;
static void bare_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    char *p = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(bare_ps - 1));
    mprotect(p, (size_t)bare_ps, PROT_READ);
}

static void measure_bare(double *out, int n)
{
    bare_ps = sysconf(_SC_PAGESIZE);
    char *r = mmap(NULL, (size_t)n * bare_ps, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < n; i++)
        r[(size_t)i * bare_ps] = 1;
    mprotect(r, (size_t)n * bare_ps, PROT_NONE);
    for (int i = 0; i < n; i++) {
        double t0 = ompdsm_now();
        volatile char c = r[(size_t)i * bare_ps + 8];
        (void)c;
        out[i] = (ompdsm_now() - t0) * 1e6;
    }
    munmap(r, (size_t)n * bare_ps);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    printf("%-22s n=%-6d min %7.2f  median %7.2f  p99 %7.2f  max %8.2f us\n",
           what, n, v[0], v[n / 2], v[(n * 99) / 100], v[n - 1]);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    /* One fault, one page: no read-ahead (unless asked for). */
    setenv("OMPDSM_READAHEAD", "0", 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = bare_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (comm_init() < 0)
        return 2;
    dsm_init();
    if (comm_connect() < 0)
        return 2;
    size_t ps = dsm_page_size(), npg = (64u << 20) / ps; /* 64 MiB, block-distributed */
    char *a = dsm_global_alloc(npg * ps, ps, "bench array");
    dsm_start();
    int me = comm_rank(), n = comm_size();
    if (n < 2) {
        fprintf(stderr, "fault: needs at least 2 nodes\n");
        return 2;
    }
    /* Pages homed at node 1 under block distribution: [npg/n, 2*npg/n). */
    size_t lo = npg / (size_t)n + 1, hi = 2 * npg / (size_t)n - 1;
    double *ft = calloc((hi - lo) * (size_t)rounds, sizeof *ft);
    double *gt = calloc((hi - lo) * (size_t)rounds, sizeof *gt);
    char *buf = aligned_alloc(ps, ps);
    int nf = 0, ng = 0;
    for (int r = 0; r < rounds; r++) {
        if (me == 1)
            for (size_t p = lo; p < hi; p++)
                a[p * ps] = (char)(r + 1);
        dsm_barrier(COMM_WORLD, NULL);
        if (me == 0) {
            for (size_t p = lo; p < hi; p++) {
                double t0 = ompdsm_now();
                volatile char c = a[p * ps + 8];
                (void)c;
                ft[nf++] = (ompdsm_now() - t0) * 1e6;
            }
            for (size_t p = lo; p < hi; p++) {
                double t0 = ompdsm_now();
                comm_get(1, DSM_REG_HEAP, (uint64_t)(p * ps), buf, ps);
                gt[ng++] = (ompdsm_now() - t0) * 1e6;
            }
        }
        dsm_barrier(COMM_WORLD, NULL);
    }
    if (me == 0) {
        printf("transport %s, %d nodes, page %zu bytes\n", comm_transport_name(),
               n, ps);
        double *bt = calloc((size_t)nf, sizeof *bt);
        measure_bare(bt, nf);
        char what[64];
        snprintf(what, sizeof what, "read fault (%zu KiB)", ps / 1024);
        report(what, ft, nf);
        snprintf(what, sizeof what, "raw get (%zu KiB)", ps / 1024);
        report(what, gt, ng);
        report("bare fault+mprotect", bt, nf);
        printf("fault overhead beyond the get (medians): %.2f us; beyond get "
               "+ bare fault: %.2f us\n", ft[nf / 2] - gt[ng / 2],
               ft[nf / 2] - gt[ng / 2] - bt[nf / 2]);
    }
    dsm_fini();
    comm_fini();
    return 0;
}
