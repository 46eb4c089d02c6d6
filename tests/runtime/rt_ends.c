/* rt_ends.c - ends of a job that the launcher must report truthfully (run
 * by ends_test.py, which judges the exit status and ompdsmrun's lines):
 *   return3   main returns 3 after a parallel region
 *   exit0     the last thread calls exit(0) inside a parallel region
 *   exit2     the same with exit(2)
 *   mismatch  every thread but 0 passes one more barrier than thread 0
 *             (a non-conforming program): node 0 waits at its end
 *   mismatch2 the same with two more barriers: node 0 ends, the others
 *             wait for a fork
 *   ok        a parallel region, then return 0 */
#include "ompdsm_abi.h"
#include "omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode = "ok";

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    if (!strcmp(mode, "exit0") && t == T - 1)
        exit(0);
    if (!strcmp(mode, "exit2") && t == T - 1)
        exit(2);
    if (!strncmp(mode, "mismatch", 8) && t != 0)
        OMPDSM_barrier();
    if (!strcmp(mode, "mismatch2") && t != 0)
        OMPDSM_barrier();
    OMPDSM_barrier();
}
static OMPDSM_region rd = {region, "rt_ends.c:20 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_ends.c", 0, 0, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)envp;
    if (argc > 1)
        mode = argv[1];
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    printf("ends: after the region\n");
    fflush(stdout);
    return !strcmp(mode, "return3") ? 3 : 0;
}

int main(int argc, char **argv, char **envp)
{
    if (argc > 1)
        mode = argv[1];
    return OMPDSM_main(argc, argv, envp, user_main);
}
