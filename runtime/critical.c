/* runtime/critical.c - critical sections: one distributed lock per name
 * and one for the unnamed section (ids allocated at start from the names
 * every unit registered); entry acquires and exit releases shared
 * memory. */
#include "rt.h"

RT_API void OMPDSM_critical_start(const char *name)
{
    RT_STAT(criticals, 1);
    dsm_lock(rt_critical_id(name));
}

RT_API void OMPDSM_critical_end(const char *name)
{
    dsm_unlock(rt_critical_id(name));
}
