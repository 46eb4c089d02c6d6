/* runtime/lock.c - the OpenMP lock routines on distributed locks.  A lock
 * object holds a lock id; a nestable lock also its owner and depth, which
 * only the owner changes while it holds the lock. */
#include "rt.h"

static long long me(void)
{
    /* (a thread's number in its node is not enough: nested teams) */
    return rt_thread_owner();
}

/* A lock object may lie in the shared heap: each store into it is marked
 * for the DSM's write detection (dsm_wd_wrote), as the compiler pass marks
 * the program's own. */
#define SET(lv, v) ((lv) = (v), dsm_wd_wrote(&(lv), sizeof(lv)))

RT_API void omp_init_lock(omp_lock_t *l) { SET(l->_ompdsm_id, dsm_lock_alloc()); }
RT_API void omp_destroy_lock(omp_lock_t *l) { SET(l->_ompdsm_id, ~0ull); }

static uint32_t id_of(unsigned long long id, const char *what)
{
    if (id == ~0ull)
        ompdsm_fatal("%s of a destroyed or uninitialised lock", what);
    return (uint32_t)id;
}

/* pc: the user's call; file:line and text (the argument as written) when
 * ompcc knew them, else NULL. */
static void set_lock(omp_lock_t *l, const void *pc, const char *file,
                     int line, const char *text)
{
    uint32_t id = id_of(l->_ompdsm_id, "omp_set_lock");
    if (dsm_lock_fast(id)) {
        rt_diag_lock_held(id, 1);
        return;
    }
    rt_wait_begin(RT_WAIT_LOCK, pc, file, line, text, id);
    dsm_lock(id);
    rt_wait_end();
    rt_diag_lock_held(id, 1);
}
RT_API void omp_set_lock(omp_lock_t *l)
{
    set_lock(l, RT_CALLER, NULL, 0, NULL);
}
RT_API void OMPDSM_set_lock_at(omp_lock_t *l, const char *file, int line,
                               const char *text)
{
    set_lock(l, RT_CALLER, file, line, text);
}
RT_API void omp_unset_lock(omp_lock_t *l)
{
    uint32_t id = id_of(l->_ompdsm_id, "omp_unset_lock");
    rt_diag_lock_held(id, 0);
    dsm_unlock(id);
}
RT_API int omp_test_lock(omp_lock_t *l)
{
    uint32_t id = id_of(l->_ompdsm_id, "omp_test_lock");
    int got = dsm_trylock(id);
    if (got)
        rt_diag_lock_held(id, 1);
    return got;
}

RT_API void omp_init_nest_lock(omp_nest_lock_t *l)
{
    SET(l->_ompdsm_id, dsm_lock_alloc());
    SET(l->_ompdsm_owner, 0);
    SET(l->_ompdsm_count, 0);
}
RT_API void omp_destroy_nest_lock(omp_nest_lock_t *l) { SET(l->_ompdsm_id, ~0ull); }

static void set_nest_lock(omp_nest_lock_t *l, const void *pc,
                          const char *file, int line, const char *text)
{
    if (l->_ompdsm_owner == me()) {
        SET(l->_ompdsm_count, l->_ompdsm_count + 1);
        return;
    }
    uint32_t id = id_of(l->_ompdsm_id, "omp_set_nest_lock");
    if (!dsm_lock_fast(id)) {
        rt_wait_begin(RT_WAIT_NEST_LOCK, pc, file, line, text, id);
        dsm_lock(id);
        rt_wait_end();
    }
    rt_diag_lock_held(id, 1);
    SET(l->_ompdsm_owner, me());
    SET(l->_ompdsm_count, 1);
}
RT_API void omp_set_nest_lock(omp_nest_lock_t *l)
{
    set_nest_lock(l, RT_CALLER, NULL, 0, NULL);
}
RT_API void OMPDSM_set_nest_lock_at(omp_nest_lock_t *l, const char *file,
                                    int line, const char *text)
{
    set_nest_lock(l, RT_CALLER, file, line, text);
}

RT_API void omp_unset_nest_lock(omp_nest_lock_t *l)
{
    SET(l->_ompdsm_count, l->_ompdsm_count - 1);
    if (l->_ompdsm_count == 0) {
        SET(l->_ompdsm_owner, 0);
        uint32_t id = id_of(l->_ompdsm_id, "omp_unset_nest_lock");
        rt_diag_lock_held(id, 0);
        dsm_unlock(id);
    }
}

RT_API int omp_test_nest_lock(omp_nest_lock_t *l)
{
    if (l->_ompdsm_owner == me()) {
        SET(l->_ompdsm_count, l->_ompdsm_count + 1);
        return (int)l->_ompdsm_count;
    }
    uint32_t id = id_of(l->_ompdsm_id, "omp_test_nest_lock");
    if (!dsm_trylock(id))
        return 0;
    rt_diag_lock_held(id, 1);
    SET(l->_ompdsm_owner, me());
    SET(l->_ompdsm_count, 1);
    return 1;
}
