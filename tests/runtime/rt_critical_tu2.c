/* rt_critical_tu2.c - a second translation unit for rt_critical: its own
 * unit with its own shared global, registering "alpha" (also registered by
 * rt_critical.c: the same lock) and "gamma" (used by nobody). */
#include "ompdsm_abi.h"

static long long *g_tu2;
static OMPDSM_global globals[] = {{(void **)&g_tu2, 8, 8, "tu2_counter"}};
static const char *const criticals[] = {"gamma", "alpha"};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_critical_tu2.c", globals, 1,
                           0, 0, 0, criticals, 2, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

void tu2_increment(void);
long long tu2_count(void);

void tu2_increment(void)
{
    OMPDSM_critical_start("alpha");
    long long v = *g_tu2;
    *g_tu2 = v + 5;
    OMPDSM_critical_end("alpha");
}

long long tu2_count(void)
{
    return *g_tu2;
}
