/* rt_wait.c - barriers that wait: in each of 10 rounds the last thread
 * sleeps 20 ms before the barrier, so every other thread waits about that
 * long in it.  wait_test.py reads from the statistics how often node 0's
 * waits slept, which OMP_WAIT_POLICY decides (docs/env.md). */
#include "rt_test.h"

#include <time.h>

enum { ROUNDS = 10 };

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int r = 0; r < ROUNDS; r++) {
        if (t == T - 1) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        OMPDSM_barrier();
    }
}

static OMPDSM_region rd = {region, "rt_wait.c:11 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_wait.c", NULL, 0, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    rtt_begin("rt_wait", 30);
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    return rtt_end("waits");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
