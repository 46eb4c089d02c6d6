/* rt_ends.c - ends of a job that the launcher must report truthfully (run
 * by ends_test.py, which judges the exit status and ompdsmrun's lines):
 *   return3   main returns 3 after a parallel region
 *   exit0     the last thread calls exit(0) inside a parallel region
 *   exit2     the same with exit(2)
 *   mismatch  every thread but 0 passes one more barrier than thread 0
 *             (a non-conforming program): node 0 waits at its end
 *   mismatch2 the same with two more barriers: node 0 ends, the others
 *             wait for a fork
 *   ok        a parallel region, then return 0
 *   doublefree          main frees a shared block twice
 *   doublefree_remote   the last thread (another node) frees one of node
 *                       0's blocks twice
 *   overrun_free        (OMPDSM_HEAP_CHECK=1) one byte written past a
 *                       block, then free
 *   overrun_barrier     (OMPDSM_HEAP_CHECK=1) the same, then a region
 * The blocks are allocated on lines marked ALLOC_SITE.
 *   segv      the last thread dereferences a null pointer in the region
 *   hang      every thread sleeps 60 s in the region (for --timeout) */
#include "ompdsm_abi.h"
#include "omp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode = "ok";

struct frame {
    char *block;
};

static void region(void *fp)
{
    struct frame *f = fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    if (!strcmp(mode, "doublefree_remote") && t == T - 1) {
        OMPDSM_free(f->block);
        OMPDSM_free(f->block);
    }
    if (!strcmp(mode, "segv") && t == T - 1)
        *(volatile int *)(uintptr_t)f->block[0] = 1; /* block[0] is 0 */
    if (!strcmp(mode, "hang"))
        sleep(60);
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
    struct frame f = {0};
    if (argc > 1)
        mode = argv[1];
    if (!strcmp(mode, "doublefree")) {
        char *p = OMPDSM_malloc(100); /* ALLOC_SITE */
        OMPDSM_free(p);
        OMPDSM_free(p);
    }
    if (!strcmp(mode, "doublefree_remote"))
        f.block = OMPDSM_malloc(200); /* ALLOC_SITE */
    if (!strcmp(mode, "segv"))
        f.block = OMPDSM_calloc(1, 8);
    if (!strncmp(mode, "overrun_", 8)) {
        char *p = OMPDSM_malloc(10); /* ALLOC_SITE */
        volatile size_t over = 11; /* (the overrun is the test: the
                                    * compiler must not see it) */
        memset(p, 1, over);
        if (!strcmp(mode, "overrun_free"))
            OMPDSM_free(p);
    }
    OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
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
