/* rt_deadlock.c - programs for deadlock_test.py (docs/diagnostics.md): on
 * two nodes, CASE is
 *   locks     each node takes one lock, then waits for the other's
 *   held      node 0 keeps a lock and waits at a barrier; node 1 waits
 *             for the lock
 *   flush     node 1 spins with flush on a flag nobody sets; node 0 waits
 *             at a barrier
 *   compute   node 1 computes for SECONDS while node 0 waits at a barrier
 *   sleep     node 1 sleeps SECONDS while node 0 waits at a barrier
 *   barriers  both nodes meet barriers for SECONDS (the test stops a node
 *             meanwhile)
 *   fault     node 1 waits (in user code) until the file PATH exists,
 *             then reads eight pages node 0 wrote; the test stops node 0
 *             first, so over tcp node 1 waits in the fault for a page
 * The lines the test expects in the report are marked with @NAME comments,
 * which the test finds in this file.  Built with -g: the launcher reads the
 * line table to name them. */
#include "rt_test.h"

#include <time.h>
#include <unistd.h>

static omp_lock_t *g_a, *g_b;
static volatile long long *g_flag, *g_done;
enum { FAULT_PAGES = 8, FAULT_PAGE = 65536 };
static char (*g_pages)[FAULT_PAGES * FAULT_PAGE];
static OMPDSM_global globals[] = {
    {(void **)&g_pages, sizeof *g_pages, FAULT_PAGE, "pages"},
    {(void **)&g_a, sizeof(omp_lock_t), __alignof__(omp_lock_t), "a"},
    {(void **)&g_b, sizeof(omp_lock_t), __alignof__(omp_lock_t), "b"},
    {(void **)&g_flag, 8, 8, "flag"},
    {(void **)&g_done, 8, 8, "done"},
};

static const char *g_case, *g_path;
static double g_seconds;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    if (!strcmp(g_case, "locks")) {
        omp_set_lock(t == 0 ? g_a : g_b);
        OMPDSM_barrier();
        if (t == 0)
            omp_set_lock(g_b); /* @LOCKS0 */
        else
            omp_set_lock(g_a); /* @LOCKS1 */
    } else if (!strcmp(g_case, "held")) {
        if (t == 0)
            omp_set_lock(g_a);
        OMPDSM_barrier();
        if (t == 1)
            omp_set_lock(g_a); /* @HELD1 */
        OMPDSM_barrier(); /* @HELD0 */
    } else if (!strcmp(g_case, "flush")) {
        if (t == 1) {
            while (!*g_flag)
                OMPDSM_flush(); /* @FLUSH1 */
        }
        OMPDSM_barrier(); /* @FLUSH0 */
    } else if (!strcmp(g_case, "compute")) {
        if (t == 1) {
            double end = now_s() + g_seconds;
            volatile double x = 0;
            while (now_s() < end)
                for (int i = 0; i < 100000; i++)
                    x += i * 1e-9;
        }
        OMPDSM_barrier();
    } else if (!strcmp(g_case, "sleep")) {
        if (t == 1) {
            struct timespec ts = {(time_t)g_seconds,
                                  (long)((g_seconds - (time_t)g_seconds) * 1e9)};
            while (nanosleep(&ts, &ts) < 0)
                ;
        }
        OMPDSM_barrier();
    } else if (!strcmp(g_case, "fault")) {
        if (t == 1) {
            while (access(g_path, F_OK) != 0) {
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            volatile long sum = 0;
            for (int k = 0; k < FAULT_PAGES; k++)
                sum += (*g_pages)[k * FAULT_PAGE]; /* @FAULT1 */
        }
        OMPDSM_barrier();
    } else if (!strcmp(g_case, "barriers")) {
        double end = now_s() + g_seconds;
        for (;;) {
            if (t == 0 && now_s() > end)
                *g_done = 1;
            OMPDSM_barrier();
            int stop = *g_done != 0;
            OMPDSM_barrier();
            if (stop)
                break;
        }
    }
}

static OMPDSM_region rd = {region, "rt_deadlock.c:region", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_deadlock.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)envp;
    if (argc < 2) {
        fprintf(stderr, "usage: rt_deadlock CASE [SECONDS]\n");
        return 2;
    }
    omp_init_lock(g_a);
    omp_init_lock(g_b);
    memset(*g_pages, 1, sizeof *g_pages);
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    printf("rt_deadlock %s: finished\n", argv[1]);
    return 0;
}

int main(int argc, char **argv, char **envp)
{
    /* Every node needs the case (node 0 alone runs user_main). */
    g_case = argc > 1 ? argv[1] : "";
    g_seconds = argc > 2 ? atof(argv[2]) : 3.0;
    g_path = argc > 2 ? argv[2] : "";
    return OMPDSM_main(argc, argv, envp, user_main);
}
