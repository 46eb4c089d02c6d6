/* Rounds of "each thread adds 1 atomically, then spins with flush until it
   sees every thread's add": a counter per round, all on one page.  Over
   tcp an atomic on a page homed at another node is posted (sent without a
   wait) and applied to the node's own copy too; while a sibling thread of
   the same node refetched the page, the refetch could overtake the posted
   update and leave the node's copy one add short for ever, with no notice
   left to repair it (tests/omp/parallel_num_threads_over.c hung in 3 of
   100 runs on 2 nodes x 2 threads over tcp).  Each round's counter is on
   a page of its own, so that no later write repairs a copy left short;
   many rounds in one run make the window likely; a spin gives up after
   5 s and says so. */
#include <stdio.h>
#include <omp.h>

#define ROUNDS 100
#define PAD (16384 / sizeof(int)) /* (a page of 16 KiB at most) */

static int count[ROUNDS][PAD];

int main(void)
{
    int gaveup = 0, nthreads = 0, r;
#pragma omp parallel reduction(+:gaveup)
    {
#pragma omp single
        nthreads = omp_get_num_threads();
        for (int k = 0; k < ROUNDS; k++) {
            int seen = 0;
            double t0 = omp_get_wtime();
#pragma omp atomic
            count[k][0]++;
            while (seen < nthreads && omp_get_wtime() - t0 < 5.0) {
#pragma omp flush
                seen = count[k][0];
            }
            if (seen < nthreads)
                gaveup++;
        }
    }
    int bad = 0;
    for (r = 0; r < ROUNDS; r++)
        if (count[r][0] != nthreads)
            bad++;
    /* (the team size is printed as a check of its own: it differs between
       the native and the cluster runs only if the team did) */
    printf("rounds %d, rounds short %d, spins that gave up %d\n", ROUNDS, bad,
           gaveup);
    printf("atomic_flush_rounds: %s\n", bad || gaveup ? "FAILED" : "ok");
    return bad || gaveup ? 1 : 0;
}
