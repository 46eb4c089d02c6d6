/* rt_api.c - the omp_* routines in the serial part and on every thread of
 * a region: thread number, team size, max threads, in_parallel, level,
 * active level, ancestor thread number and team size at every level (and
 * -1 outside), thread limit, number of processors, wtime/wtick, set/get of
 * the schedule, num_threads, dynamic, nested and max active levels. */
#include "rt_test.h"
#include <sched.h>

#include <time.h>

enum { MAXT = 64 };

static int (*g_tid_seen)[MAXT];
static OMPDSM_global globals[] = {
    {(void **)&g_tid_seen, sizeof *g_tid_seen, __alignof__(*g_tid_seen),
     "tid_seen"},
};

struct frame {
    int T;
};
static void region(void *fp)
{
    struct frame *f = fp;
    int T = f->T, t = omp_get_thread_num(), act = T > 1;
    CHECK(t >= 0 && t < T, "thread number %d of %d", t, T);
    if (t >= 0 && t < MAXT)
        (*g_tid_seen)[t] += 1;
    CHECK(omp_get_num_threads() == T, "omp_get_num_threads %d, expected %d",
          omp_get_num_threads(), T);
    CHECK(omp_in_parallel() == act, "omp_in_parallel %d", omp_in_parallel());
    CHECK(omp_get_level() == 1, "omp_get_level %d", omp_get_level());
    CHECK(omp_get_active_level() == act, "omp_get_active_level %d",
          omp_get_active_level());
    CHECK(omp_get_ancestor_thread_num(0) == 0 &&
              omp_get_ancestor_thread_num(1) == t &&
              omp_get_ancestor_thread_num(2) == -1 &&
              omp_get_ancestor_thread_num(-1) == -1,
          "ancestor thread numbers %d %d %d %d", omp_get_ancestor_thread_num(0),
          omp_get_ancestor_thread_num(1), omp_get_ancestor_thread_num(2),
          omp_get_ancestor_thread_num(-1));
    CHECK(omp_get_team_size(0) == 1 && omp_get_team_size(1) == T &&
              omp_get_team_size(2) == -1 && omp_get_team_size(-1) == -1,
          "team sizes %d %d %d %d", omp_get_team_size(0), omp_get_team_size(1),
          omp_get_team_size(2), omp_get_team_size(-1));
    /* nthreads-var, inherited from the encountering task (OpenMP 3.0;
     * libgomp reports it too), although a nested region gets one thread. */
    CHECK(omp_get_max_threads() == T, "omp_get_max_threads in a region: %d, "
          "expected nthreads-var %d", omp_get_max_threads(), T);
    CHECK(omp_get_thread_limit() >= T, "omp_get_thread_limit %d",
          omp_get_thread_limit());
    double a = omp_get_wtime(), b = omp_get_wtime();
    CHECK(b >= a && omp_get_wtick() > 0 && omp_get_wtick() < 0.01,
          "wtime %f then %f, wtick %g", a, b, omp_get_wtick());
}
static OMPDSM_region rd = {region, "rt_api.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_api.c", globals, 1, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_api", 30);
    const char *sz = getenv("OMPDSM_SIZE");
    int nodes = sz ? atoi(sz) : 1;
    int T = omp_get_max_threads();

    rtt_phase("serial part");
    CHECK(T == nodes, "omp_get_max_threads %d on %d nodes", T, nodes);
    {
        /* the node's processors (its affinity mask), whatever the nodes */
        cpu_set_t set;
        CHECK(sched_getaffinity(0, sizeof set, &set) == 0 &&
                  omp_get_num_procs() == CPU_COUNT(&set),
              "omp_get_num_procs %d, affinity mask of %d processors",
              omp_get_num_procs(), CPU_COUNT(&set));
    }
    /* unset OMP_THREAD_LIMIT: 256 threads on each node (a team above
     * nodes x T gets more threads per node) */
    CHECK(omp_get_thread_limit() == nodes * 256, "omp_get_thread_limit %d",
          omp_get_thread_limit());
    CHECK(omp_get_thread_num() == 0 && omp_get_num_threads() == 1 &&
              !omp_in_parallel() && omp_get_level() == 0 &&
              omp_get_active_level() == 0,
          "serial: thread %d team %d in_parallel %d level %d active %d",
          omp_get_thread_num(), omp_get_num_threads(), omp_in_parallel(),
          omp_get_level(), omp_get_active_level());
    CHECK(omp_get_ancestor_thread_num(0) == 0 &&
              omp_get_ancestor_thread_num(1) == -1 &&
              omp_get_team_size(0) == 1 && omp_get_team_size(1) == -1,
          "serial: ancestor %d %d team size %d %d",
          omp_get_ancestor_thread_num(0), omp_get_ancestor_thread_num(1),
          omp_get_team_size(0), omp_get_team_size(1));

    double t0 = omp_get_wtime();
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double t1 = omp_get_wtime();
    CHECK(t1 - t0 >= 0.029 && t1 - t0 < 5, "30 ms sleep measured as %f s",
          t1 - t0);
    CHECK(omp_get_wtick() > 0 && omp_get_wtick() <= 0.001, "omp_get_wtick %g",
          omp_get_wtick());

    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    CHECK(kind == omp_sched_static, "default run-sched-var kind %d", kind);
    struct { omp_sched_t k; int c; } sets[] = {
        {omp_sched_dynamic, 5}, {omp_sched_guided, 2}, {omp_sched_static, 3},
        {omp_sched_auto, 0}, {omp_sched_dynamic, 1},
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        omp_set_schedule(sets[i].k, sets[i].c);
        omp_get_schedule(&kind, &chunk);
        CHECK(kind == sets[i].k && (sets[i].k == omp_sched_auto ||
                                    chunk == sets[i].c),
              "omp_set_schedule(%d, %d) then get: %d, %d", sets[i].k,
              sets[i].c, kind, chunk);
    }
    omp_set_schedule(omp_sched_static, 0);

    if (nodes >= 2) {
        omp_set_num_threads(nodes - 1);
        CHECK(omp_get_max_threads() == nodes - 1, "after omp_set_num_threads"
              "(%d): %d", nodes - 1, omp_get_max_threads());
        omp_set_num_threads(nodes);
    }
    omp_set_num_threads(0); /* ignored */
    CHECK(omp_get_max_threads() == nodes, "omp_set_num_threads(0) changed "
          "max threads to %d", omp_get_max_threads());
    omp_set_dynamic(1);
    CHECK(omp_get_dynamic() == 1, "omp_set_dynamic(1)");
    omp_set_dynamic(0);
    CHECK(omp_get_dynamic() == 0, "omp_set_dynamic(0)");
    omp_set_nested(1);
    CHECK(omp_get_nested() == 1, "omp_set_nested(1)");
    omp_set_nested(0);
    CHECK(omp_get_nested() == 0, "omp_set_nested(0)");
    CHECK(omp_get_max_active_levels() >= 1, "max active levels %d",
          omp_get_max_active_levels());
    int mal = omp_get_max_active_levels();
    omp_set_max_active_levels(3);
    CHECK(omp_get_max_active_levels() == 3, "omp_set_max_active_levels(3)");
    omp_set_max_active_levels(mal);

    rtt_phase("region");
    for (int rep = 0; rep < 2; rep++) {
        struct frame f = {T};
        OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
    }
    for (int t = 0; t < MAXT; t++)
        CHECK((*g_tid_seen)[t] == (t < T ? 2 : 0), "thread number %d seen %d "
              "times in 2 regions", t, (*g_tid_seen)[t]);
    char d[32];
    snprintf(d, sizeof d, "team=%d", T);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
