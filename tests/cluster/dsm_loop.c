/* tests/cluster/dsm_loop.c - an OpenMP program that keeps every node busy
 * with shared writes and barriers, 50 ms apart, for ITERATIONS rounds
 * (argv[1], default 600: about 30 s), so that a test can kill one of its
 * nodes, cut a host's link or attack the job's sockets while the DSM runs;
 * prints "running" once the first region completed and, at the end,
 * "sum S" with S = ITERATIONS * (ITERATIONS - 1) / 2 when every round's
 * write arrived.  -DDSM_LOOP_VARIANT=... builds another executable with
 * the same behaviour (the build-id tests). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef DSM_LOOP_VARIANT
#define DSM_LOOP_VARIANT "a"
#endif
__attribute__((used)) static const char variant[] = "dsm_loop " DSM_LOOP_VARIANT;

double a[8192];

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 600;
    for (int it = 0; it < iterations; it++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            a[t * 1024] += it;
#pragma omp barrier
            if (t == 0 && it == 0) {
                printf("running\n");
                fflush(stdout);
            }
        }
        usleep(50000);
    }
    printf("sum %.0f\n", a[0]);
    return 0;
}
