/* bench/dsm/falseshare.c - N writers of one page: messages and bytes per
 * barrier.  Each node writes its own 8-byte word of the same page, then a
 * barrier; a multiple-writer protocol moves each writer's small diff, not
 * the whole page N times.  Prints per-barrier averages over all nodes. */
#include "comm/comm.h"
#include "dsm/dsm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (comm_init() < 0)
        return 2;
    dsm_init();
    if (comm_connect() < 0)
        return 2;
    volatile int64_t *w = dsm_global_alloc(4096, 4096, "shared page");
    dsm_start();
    int me = comm_rank(), n = comm_size();
    dsm_barrier(COMM_WORLD, NULL);
    struct comm_stats c0, c1;
    struct dsm_stats d0, d1;
    comm_stats_get(&c0);
    dsm_stats_get(&d0);
    double t0 = ompdsm_now();
    for (int r = 0; r < rounds; r++) {
        w[me * 8] = r;
        dsm_barrier(COMM_WORLD, NULL);
        /* Everyone reads everyone's word: the page is re-fetched after
         * each barrier by every node but its home. */
        int64_t s = 0;
        for (int k = 0; k < n; k++)
            s += w[k * 8];
        if (s != (int64_t)r * n) {
            fprintf(stderr, "falseshare: wrong sum %lld at round %d\n",
                    (long long)s, r);
            return 1;
        }
        /* Nobody writes the next round before everyone has read. */
        dsm_barrier(COMM_WORLD, NULL);
    }
    double dt = ompdsm_now() - t0;
    comm_stats_get(&c1);
    dsm_stats_get(&d1);
    struct {
        double v[8];
    } mine = {{(double)(c1.puts - c0.puts), (double)(c1.put_bytes - c0.put_bytes),
               (double)(c1.gets - c0.gets), (double)(c1.get_bytes - c0.get_bytes),
               (double)(d1.diff_bytes - d0.diff_bytes), (double)(d1.diffs - d0.diffs),
               (double)(c1.notifies - c0.notifies), dt}};
    comm_allreduce(COMM_WORLD, mine.v, 8, COMM_DOUBLE, COMM_SUM);
    if (me == 0) {
        double R = rounds;
        printf("%d writers of one page, %s, %d rounds (write, barrier, read all, "
               "barrier), %.1f us per round\n",
               n, comm_transport_name(), rounds, mine.v[7] / n / R * 1e6);
        printf("per round, all nodes together: puts %.1f (%.0f bytes), gets %.1f "
               "(%.0f bytes), diffs %.1f carrying %.0f bytes, notifies %.1f\n",
               mine.v[0] / R, mine.v[1] / R, mine.v[2] / R, mine.v[3] / R,
               mine.v[5] / R, mine.v[4] / R, mine.v[6] / R);
        printf("diff bytes per non-home writer per round: %.1f (a whole page "
               "would be %zu)\n", mine.v[4] / R / (n > 1 ? n - 1 : 1),
               dsm_page_size());
    }
    dsm_fini();
    comm_fini();
    return 0;
}
