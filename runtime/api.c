/* runtime/api.c - the omp_* query and control routines of OpenMP 3.0. */
#include "rt.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

RT_API void omp_set_num_threads(int n)
{
    if (n < 1)
        return;
    /* A team over the nodes has at most RT_MAX_TPN threads per node
     * (more than nodes x T makes more per node); inside a region the value
     * is for nested teams (nest.c), which have no such bound. */
    if (rt_self.level == 0 && n > comm_size() * RT_MAX_TPN)
        n = comm_size() * RT_MAX_TPN;
    rt_dv()->nthreads = n;
}
RT_API int omp_get_num_threads(void) { return rt_self.nthreads; }
RT_API int omp_get_max_threads(void)
{
    /* nthreads-var, as libgomp reports it, also inside regions. */
    return rt_dv()->nthreads;
}
RT_API int omp_get_thread_num(void) { return rt_self.tid; }
/* The processors this node may run on (its affinity mask, as libgomp
 * counts them), not the job's nodes: omp_get_max_threads() is that. */
RT_API int omp_get_num_procs(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
RT_API int omp_in_parallel(void) { return rt_self.active_level > 0; }
RT_API void omp_set_dynamic(int d) { rt_dv()->dynamic = d != 0; }
RT_API int omp_get_dynamic(void) { return rt_dv()->dynamic; }
/* nested-var is max-active-levels-var > 1, as in libgomp (OpenMP 5.0
 * deprecates it so): setting it allows every level, clearing it one. */
RT_API void omp_set_nested(int n)
{
    if (n)
        rt_icv.max_active_levels = RT_MAX_LEVELS;
    else if (rt_icv.max_active_levels > 1)
        rt_icv.max_active_levels = 1;
    rt_dv()->nested = rt_icv.max_active_levels > 1;
}
RT_API int omp_get_nested(void)
{
    return rt_icv.max_active_levels > 1 &&
           rt_icv.max_active_levels > rt_self.active_level;
}

RT_API void omp_set_schedule(omp_sched_t kind, int chunk)
{
    switch ((int)kind) {
    case omp_sched_static: rt_dv()->sched_kind = OMPDSM_SCHED_STATIC; break;
    case omp_sched_dynamic: rt_dv()->sched_kind = OMPDSM_SCHED_DYNAMIC; break;
    case omp_sched_guided: rt_dv()->sched_kind = OMPDSM_SCHED_GUIDED; break;
    case omp_sched_auto: rt_dv()->sched_kind = OMPDSM_SCHED_AUTO; break;
    case omp_sched_profiled: rt_dv()->sched_kind = OMPDSM_SCHED_PROFILED; break;
    default: return;
    }
    rt_dv()->sched_chunk = chunk > 0 ? chunk : 0;
}

RT_API void omp_get_schedule(omp_sched_t *kind, int *chunk)
{
    switch (rt_dv()->sched_kind) {
    case OMPDSM_SCHED_DYNAMIC: *kind = omp_sched_dynamic; break;
    case OMPDSM_SCHED_GUIDED: *kind = omp_sched_guided; break;
    case OMPDSM_SCHED_AUTO: *kind = omp_sched_auto; break;
    case OMPDSM_SCHED_PROFILED: *kind = omp_sched_profiled; break;
    default: *kind = omp_sched_static; break;
    }
    *chunk = (int)rt_dv()->sched_chunk;
    /* no chunk given: dynamic and guided hand out chunks of at least 1,
     * which is what libgomp and libomp report */
    if (*chunk < 1 && (*kind == omp_sched_dynamic || *kind == omp_sched_guided))
        *chunk = 1;
}

RT_API int omp_get_thread_limit(void) { return rt_icv.thread_limit; }
RT_API void omp_set_max_active_levels(int n)
{
    if (n >= 0)
        rt_icv.max_active_levels = n > RT_MAX_LEVELS ? RT_MAX_LEVELS : n;
}
RT_API int omp_get_max_active_levels(void) { return rt_icv.max_active_levels; }
RT_API int omp_get_level(void) { return rt_self.level; }
RT_API int omp_get_active_level(void) { return rt_self.active_level; }

RT_API int omp_get_ancestor_thread_num(int level)
{
    if (level < 0 || level > rt_self.level)
        return -1;
    if (level == 0)
        return 0;
    const struct rt_thread *t = &rt_self;
    while (t->level > level && t->up)
        t = t->up;
    if (t->level == level)
        return t->tid;
    /* (the level-1 team over the nodes keeps no chain) */
    return level == 1 ? rt_self.outer_tid : 0;
}

RT_API int omp_get_team_size(int level)
{
    if (level < 0 || level > rt_self.level)
        return -1;
    if (level == 0)
        return 1;
    const struct rt_thread *t = &rt_self;
    while (t->level > level && t->up)
        t = t->up;
    if (t->level == level)
        return t->nthreads;
    return level == 1 ? rt_self.outer_size : 1;
}

RT_API double omp_get_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

RT_API double omp_get_wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

RT_API void OMPDSM_flush(void)
{
    rt_diag_flush(RT_CALLER);
    dsm_atomic_drain();
    dsm_flush();
}
RT_API void OMPDSM_flush_range(const void *p, unsigned long size)
{
    rt_diag_flush(RT_CALLER);
    dsm_atomic_drain();
    dsm_flush_range(p, size);
}

RT_API void *OMPDSM_volatile_read(const volatile void *p, unsigned long size)
{
    dsm_volatile_read(p, size);
    return (void *)p;
}

RT_API void OMPDSM_volatile_write(const volatile void *p, unsigned long size)
{
    dsm_volatile_write(p, size);
}
