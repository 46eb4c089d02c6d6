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

/* ---- a job of one node ----
 * Nothing is shared with another node, so a lock is a futex word in the
 * lock object itself, taken as the DSM's word mutex (dsm.h's dsm_word_*):
 * the upper half of _ompdsm_id (the id is 32 bits; jobs of several nodes
 * leave that half 0).  It holds the holder's token shifted left by one,
 * and bit 0 when threads sleep on it.  A pair of
 * omp_set_lock and omp_unset_lock is then a compare-swap and an exchange
 * in the cache line the program touched anyway, as libgomp's: NPB UA W
 * takes 116 million pairs, and a pair through the DSM's lock table and
 * the held lists (the id's slot, a division, two lists, five calls) cost
 * 14 ns against libgomp's 3.5 (the whole run 3.2 s against gcc
 * -fopenmp's 2.1 s with the gcc backend).  The holder's token lets
 * unset name a lock the thread does not hold, as the DSM's list did; the
 * deadlock report finds a one-node lock's holder without a list (diag.c's
 * sample: a lock a thread of the only node waits for is held there). */
int rt_solo_locks;

static uint32_t solo_token(void)
{
    static uint32_t next;
    static __thread uint32_t tok;
    if (OMPDSM_UNLIKELY(!tok))
        tok = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED) & 0x3fffffff;
    return tok;
}

static uint32_t *solo_word(void *lock_id)
{
    return (uint32_t *)lock_id + 1; /* (x86-64: little-endian) */
}

static int solo_try(void *lock_id)
{
    return dsm_word_try(solo_word(lock_id), solo_token() << 1);
}

/* A brief spin, then sleep, in the wait record. */
static void solo_wait(unsigned long long *lock_id, int kind, const void *pc,
                      const char *file, int line, const char *text,
                      const char *what)
{
    uint32_t id = id_of(*lock_id, what);
    uint32_t *w = solo_word(lock_id), mine = solo_token() << 1;
    uint64_t t0 = ompdsm_now_ns();
    if (!dsm_word_spin(w, mine)) {
        rt_wait_begin(kind, pc, file, line, text, id);
        dsm_word_sleep(w, mine);
        rt_wait_end();
    }
    dsm_stat_add(offsetof(struct dsm_stats, lock_ns), ompdsm_now_ns() - t0);
}

static void solo_unset(unsigned long long *lock_id, const char *what)
{
    uint32_t old = dsm_word_unlock(solo_word(lock_id));
    if (OMPDSM_LIKELY(old == solo_token() << 1))
        return;
    if (old == 0xfffffffeu) /* (a destroyed lock: all ones) */
        id_of(~0ull, what);
    ompdsm_fatal("%s of lock %u, which this thread does not hold", what,
                 (uint32_t)*lock_id);
}

#define SOLO_ACQUIRED() \
    dsm_stat_add(offsetof(struct dsm_stats, lock_acquires), 1)

/* pc: the user's call; file:line and text (the argument as written) when
 * ompcc knew them, else NULL. */
static __attribute__((noinline)) void set_lock(omp_lock_t *l, const void *pc,
                                                const char *file, int line,
                                                const char *text)
{
    if (rt_solo_locks) {
        solo_wait(&l->_ompdsm_id, RT_WAIT_LOCK, pc, file, line, text,
                  "omp_set_lock");
        SOLO_ACQUIRED();
        return;
    }
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
/* The uncontended one-node case first, in the entry points themselves
 * (a call with six registers saved around it was 40% of the pair). */
#define SOLO_FAST(l)                                                        \
    do {                                                                    \
        if (OMPDSM_LIKELY(rt_solo_locks) && solo_try(&(l)->_ompdsm_id)) {   \
            SOLO_ACQUIRED();                                                \
            return;                                                         \
        }                                                                   \
    } while (0)

RT_API void omp_set_lock(omp_lock_t *l)
{
    SOLO_FAST(l);
    set_lock(l, RT_CALLER, NULL, 0, NULL);
}
RT_API void OMPDSM_set_lock_at(omp_lock_t *l, const char *file, int line,
                               const char *text)
{
    SOLO_FAST(l);
    set_lock(l, RT_CALLER, file, line, text);
}
RT_API void omp_unset_lock(omp_lock_t *l)
{
    if (rt_solo_locks) {
        solo_unset(&l->_ompdsm_id, "omp_unset_lock");
        return;
    }
    uint32_t id = id_of(l->_ompdsm_id, "omp_unset_lock");
    rt_diag_lock_held(id, 0);
    dsm_unlock(id);
}
RT_API int omp_test_lock(omp_lock_t *l)
{
    if (rt_solo_locks) {
        if (!solo_try(&l->_ompdsm_id)) {
            id_of(l->_ompdsm_id, "omp_test_lock");
            return 0;
        }
        SOLO_ACQUIRED();
        return 1;
    }
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
    if (rt_solo_locks) {
        if (!solo_try(&l->_ompdsm_id))
            solo_wait(&l->_ompdsm_id, RT_WAIT_NEST_LOCK, pc, file, line, text,
                      "omp_set_nest_lock");
        SOLO_ACQUIRED();
    } else {
        uint32_t id = id_of(l->_ompdsm_id, "omp_set_nest_lock");
        if (!dsm_lock_fast(id)) {
            rt_wait_begin(RT_WAIT_NEST_LOCK, pc, file, line, text, id);
            dsm_lock(id);
            rt_wait_end();
        }
        rt_diag_lock_held(id, 1);
    }
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
        if (rt_solo_locks) {
            solo_unset(&l->_ompdsm_id, "omp_unset_nest_lock");
            return;
        }
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
    if (rt_solo_locks) {
        if (!solo_try(&l->_ompdsm_id)) {
            id_of(l->_ompdsm_id, "omp_test_nest_lock");
            return 0;
        }
        SOLO_ACQUIRED();
    } else {
        uint32_t id = id_of(l->_ompdsm_id, "omp_test_nest_lock");
        if (!dsm_trylock(id))
            return 0;
        rt_diag_lock_held(id, 1);
    }
    SET(l->_ompdsm_owner, me());
    SET(l->_ompdsm_count, 1);
    return 1;
}
