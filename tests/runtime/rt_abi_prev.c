/* rt_abi_prev.c - binaries built by an earlier ompcc keep running with
 * this libompdsm: rt_reduction.c (loops, reductions of every type and
 * operator, barriers, regions, atomics) compiled against the frozen header
 * of ABI version 2 (abi_v2/ompdsm_abi.h) instead of the current one, and
 * run with the current library.  It fails when an entry point or a
 * structure it uses changes incompatibly, or when OMPDSM_ABI_VERSION is
 * raised (registration refuses the unit); docs/abi.md has the rule. */
#include "ompdsm_abi.h"
#if !defined(OMPDSM_ABI_FROZEN_COPY) || OMPDSM_ABI_VERSION != 2
#error "rt_abi_prev.c must be built against tests/runtime/abi_v2/ompdsm_abi.h"
#endif
#include "rt_reduction.c"
