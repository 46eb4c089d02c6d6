/* tests/cluster/dsm_loop.c - an OpenMP program that keeps every node busy
 * with shared writes and barriers for about 30 s, so that a test can kill
 * one of its nodes on another host while the DSM runs; prints "running"
 * once the first region completed. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

double a[8192];

int main(void)
{
    for (int it = 0; it < 600; it++) {
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
    printf("%g\n", a[0]);
    return 0;
}
