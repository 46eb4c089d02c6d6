/* runtime/critical.c - critical sections: one distributed lock per name
 * and one for the unnamed section (ids allocated at start from the names
 * every unit registered); entry acquires and exit releases shared
 * memory. */
#include "rt.h"

RT_API void OMPDSM_critical_start(const char *name)
{
    RT_STAT(criticals, 1);
    uint32_t id = rt_critical_id(name);
    if (!dsm_lock_fast(id)) {
        rt_wait_begin(RT_WAIT_CRITICAL, RT_CALLER, NULL, 0, name, id);
        dsm_lock(id);
        rt_wait_end();
    }
    rt_diag_lock_held(id, 1);
}

RT_API void OMPDSM_critical_end(const char *name)
{
    uint32_t id = rt_critical_id(name);
    rt_diag_lock_held(id, 0);
    dsm_unlock(id);
}
