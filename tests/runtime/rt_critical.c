/* rt_critical.c - critical sections: the unnamed one and named ones (names
 * registered in the unit's criticals list, one of them also registered and
 * used by a second translation unit, rt_critical_tu2.c), each protecting a
 * non-atomic read-modify-write of a shared counter with a pause between the
 * read and the write; a named critical nested inside the unnamed one; the
 * totals must be exact. */
#include "rt_test.h"

enum { M = 60 };

static long long *g_c0, *g_c1, *g_c2, *g_nested;
static OMPDSM_global globals[] = {
    {(void **)&g_c0, 8, 8, "c0"},
    {(void **)&g_c1, 8, 8, "c1"},
    {(void **)&g_c2, 8, 8, "c2"},
    {(void **)&g_nested, 8, 8, "nested"},
};
static const char *const criticals[] = {"alpha", "beta"};

/* rt_critical_tu2.c */
void tu2_increment(void);
long long tu2_count(void);

static void pause_a_little(int t)
{
    /* Widen the window between read and write; more on some threads. */
    volatile unsigned x = 0;
    for (int i = 0; i < 2000 * (1 + t % 3); i++)
        x += (unsigned)i;
}

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    for (int i = 0; i < M; i++) {
        OMPDSM_critical_start(0);
        long long v = *g_c0;
        pause_a_little(t);
        *g_c0 = v + 1;
        if (i % 10 == 0) {
            OMPDSM_critical_start("beta"); /* nested, another name */
            *g_nested += 1;
            OMPDSM_critical_end("beta");
        }
        OMPDSM_critical_end(0);

        OMPDSM_critical_start("alpha");
        v = *g_c1;
        pause_a_little(t + 1);
        *g_c1 = v + 2;
        OMPDSM_critical_end("alpha");

        OMPDSM_critical_start("beta");
        v = *g_c2;
        *g_c2 = v + 3;
        OMPDSM_critical_end("beta");

        tu2_increment(); /* "alpha" again, from the other unit */
    }
}
static OMPDSM_region rd = {region, "rt_critical.c:35 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_critical.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1,
                           criticals, 2, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_critical", 45);
    int T = omp_get_max_threads();
    for (int rep = 1; rep <= 2; rep++) {
        rtt_phase(rep == 1 ? "round 1" : "round 2");
        OMPDSM_parallel(&rd, NULL, 0, 0, 1);
        long long n = (long long)rep * T * M;
        CHECK_EQ_LL(*g_c0, n, "unnamed critical counter");
        CHECK_EQ_LL(*g_c1, 2 * n, "critical(alpha) counter");
        CHECK_EQ_LL(*g_c2, 3 * n, "critical(beta) counter");
        CHECK_EQ_LL(*g_nested, (long long)rep * T * (M / 10),
                    "critical(beta) nested in the unnamed one");
        CHECK_EQ_LL(tu2_count(), 5 * n, "critical(alpha) in the second unit");
    }
    /* Serial part: criticals work outside regions too. */
    OMPDSM_critical_start("alpha");
    *g_c1 += 1;
    OMPDSM_critical_end("alpha");
    CHECK_EQ_LL(*g_c1, 4LL * T * M + 1, "critical in the serial part");
    char d[48];
    snprintf(d, sizeof d, "increments=%lld", 2LL * T * M * 4);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
