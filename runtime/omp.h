/* omp.h - the OpenMP 3.0 C API as provided by libompdsm (ompdsm).
 * ompcc puts this header first on the include path, so `#include <omp.h>`
 * needs no other OpenMP installation. */
#ifndef OMPDSM_OMP_H
#define OMPDSM_OMP_H

#ifdef __cplusplus
extern "C" {
#endif

/* A lock object holds the id of a distributed lock; the lock object itself
 * lives wherever the program put it (usually shared memory). */
typedef struct omp_lock_t {
    unsigned long long _ompdsm_id;
} omp_lock_t;

/* A nestable lock: the distributed lock plus its owner and depth, which only
 * the owner changes while it holds the lock. */
typedef struct omp_nest_lock_t {
    unsigned long long _ompdsm_id;
    long long _ompdsm_owner; /* owning thread (unique in the job), 0 = none */
    long long _ompdsm_count;
} omp_nest_lock_t;

typedef enum omp_sched_t {
    omp_sched_static = 1,
    omp_sched_dynamic = 2,
    omp_sched_guided = 3,
    omp_sched_auto = 4,
    /* ompdsm extension: schedule(profiled) - re-partition by measured speed */
    omp_sched_profiled = 0x100
} omp_sched_t;

extern void omp_set_num_threads(int);
extern int omp_get_num_threads(void);
extern int omp_get_max_threads(void);
extern int omp_get_thread_num(void);
extern int omp_get_num_procs(void);
extern int omp_in_parallel(void);
extern void omp_set_dynamic(int);
extern int omp_get_dynamic(void);
extern void omp_set_nested(int);
extern int omp_get_nested(void);
extern void omp_set_schedule(omp_sched_t, int);
extern void omp_get_schedule(omp_sched_t *, int *);
extern int omp_get_thread_limit(void);
extern void omp_set_max_active_levels(int);
extern int omp_get_max_active_levels(void);
extern int omp_get_level(void);
extern int omp_get_ancestor_thread_num(int);
extern int omp_get_team_size(int);
extern int omp_get_active_level(void);

extern void omp_init_lock(omp_lock_t *);
extern void omp_destroy_lock(omp_lock_t *);
extern void omp_set_lock(omp_lock_t *);
extern void omp_unset_lock(omp_lock_t *);
extern int omp_test_lock(omp_lock_t *);
extern void omp_init_nest_lock(omp_nest_lock_t *);
extern void omp_destroy_nest_lock(omp_nest_lock_t *);
extern void omp_set_nest_lock(omp_nest_lock_t *);
extern void omp_unset_nest_lock(omp_nest_lock_t *);
extern int omp_test_nest_lock(omp_nest_lock_t *);

extern double omp_get_wtime(void);
extern double omp_get_wtick(void);

#ifdef __cplusplus
}
#endif
#endif
