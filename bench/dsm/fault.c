/* bench/dsm/fault.c - remote read-fault service time against the
 * transport's raw 4 KiB get, measured in the same run (2+ nodes; node 0
 * measures).  Node 1 writes one byte of each page it is home of; after the
 * barrier node 0's copies are invalid and each first read is a fault that
 * fetches the page from node 1. */
#include "comm/comm.h"
#include "dsm/dsm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (comm_init() < 0)
        return 2;
    dsm_init();
    if (comm_connect() < 0)
        return 2;
    size_t ps = 4096, npg = 4096; /* 16 MiB, block-distributed */
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
                comm_get(1, COMM_REG_HEAP, (uint64_t)(p * ps), buf, ps);
                gt[ng++] = (ompdsm_now() - t0) * 1e6;
            }
        }
        dsm_barrier(COMM_WORLD, NULL);
    }
    if (me == 0) {
        printf("transport %s, %d nodes, page %zu bytes\n", comm_transport_name(),
               n, ps);
        report("read fault (4 KiB)", ft, nf);
        report("raw get (4 KiB)", gt, ng);
        printf("fault overhead beyond the get (medians): %.2f us\n",
               ft[nf / 2] - gt[ng / 2]);
    }
    dsm_fini();
    comm_fini();
    return 0;
}
