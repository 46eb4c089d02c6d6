/* dsm/home.c - page homes: the per-page home map (one entry per page,
 * encoded by home_encode/home_decode in dsm_int.h), node 0's chunk table
 * through which a node learns the homes of memory another node allocated,
 * and the placement policy (OMPDSM_HOME_POLICY: which node is home of
 * which page of an allocation).  Every write to the map goes through this
 * file, so that a change of who the home is happens in one place (home
 * migration, migrate.c, calls dsm_home_move). */
#include "dsm_int.h"

#include <stdlib.h>

void dsm_home_init(void)
{
    static const char *const policies[] = {"block", "first"};
    if (dsm_g.size > DSM_HOME_MAX_NODES)
        ompdsm_fatal("%d nodes: the shared heap supports at most %d; run "
                     "fewer nodes", dsm_g.size, DSM_HOME_MAX_NODES);
    dsm_g.home_block = ompdsm_env_choice("OMPDSM_HOME_POLICY", policies, 2, 0) == 0;
    /* Anything larger than a page is spread: static schedules cut even
     * small vectors between nodes (CG's, docs/design.md, "Homes"). */
    dsm_g.home_block_min = ompdsm_env_u64("OMPDSM_HOME_BLOCK_MIN",
                                          dsm_g.page_size + 1, 0, 1ull << 44, 1);
    dsm_g.home = dsm_table((size_t)dsm_g.npages * sizeof(uint16_t), "home");
}

/* ---- the policy ---- */

int dsm_home_spreads(size_t size)
{
    return dsm_g.home_block && dsm_g.size > 1 && size >= dsm_g.home_block_min;
}

/* Home of page i of n block-distributed pages: equal consecutive shares,
 * node 0 first, so that a static schedule's partition of an array mostly
 * finds its pages at home. */
static inline int spread_home(uint64_t i, uint64_t n)
{
    return (int)(i * (uint64_t)dsm_g.size / n);
}

/* ---- the map ---- */

static inline void store_home(uint32_t pg, int node)
{
    __atomic_store_n(&dsm_g.home[pg], home_encode(node), __ATOMIC_RELAXED);
}

/* Sets the home of those pages of [pg, pg+n) whose home is not known. */
static void fill_unknown(uint32_t pg, uint32_t n, int home)
{
    for (uint32_t i = 0; i < n; i++)
        if (dsm_home_known(pg + i) < 0)
            store_home(pg + i, home);
}

void dsm_home_global(uint64_t off, size_t size)
{
    if (!dsm_home_spreads(size))
        return; /* node 0's, at dsm_home_globals_done */
    uint32_t p0 = (uint32_t)(off >> dsm_g.page_shift);
    uint32_t np = (uint32_t)(((off + size - 1) >> dsm_g.page_shift) - p0 + 1);
    for (uint32_t i = 0; i < np; i++)
        if (dsm_home_known(p0 + i) < 0)
            store_home(p0 + i, spread_home(i, np));
}

void dsm_home_globals_done(uint32_t gpages)
{
    fill_unknown(0, gpages, 0);
}

/* Places the pages of a run of chunks claimed by owner: a plain run is all
 * the owner's; a block-distributed one (dpages data pages, which start one
 * page into the run after the block header's page) spreads its data pages
 * and leaves the header page and the tail to the owner. */
static void place_run(uint32_t first, int owner, uint64_t dpages, uint32_t nchunks)
{
    uint32_t cpages = 1u << (dsm_g.chunk_shift - dsm_g.page_shift);
    uint32_t p0 = first * cpages;
    if (!dpages) {
        fill_unknown(p0, nchunks * cpages, owner);
        return;
    }
    /* Only pages still unknown: a page whose home migrated is known to
     * every node since the barrier that moved it, and the chunk table
     * still names its first home. */
    uint64_t run_pages = OMPDSM_ALIGN_UP(dpages + 1, (uint64_t)cpages);
    fill_unknown(p0, 1, owner);
    for (uint64_t i = 0; i < dpages; i++)
        fill_unknown(p0 + 1 + (uint32_t)i, 1, spread_home(i, dpages));
    fill_unknown(p0 + (uint32_t)dpages + 1,
                 (uint32_t)(run_pages - dpages - 1), owner);
}

void dsm_home_move(uint32_t pg, int node)
{
    store_home(pg, node);
}

void dsm_home_record_run(uint32_t first, uint32_t n, uint64_t dpages)
{
    uint64_t *e = malloc((size_t)n * DSM_CHUNK_ENT_SIZE);
    if (!e)
        ompdsm_fatal("out of memory recording chunks");
    for (uint32_t i = 0; i < n; i++)
        chunk_ent_encode(e + 2 * i, dsm_g.rank, first, dpages);
    COMM_CHECK(comm_put(0, DSM_REG_AREA,
                        dsm_off_chunks + (uint64_t)first * DSM_CHUNK_ENT_SIZE, e,
                        (size_t)n * DSM_CHUNK_ENT_SIZE));
    /* Complete before any pointer into the run can reach another node (a
     * task descriptor, a released write): a node that does not know the
     * run reads node 0's entries, and over tcp a put is visible only after
     * the fence (task_stack_ptr at 2 x 4 over tcp read chunk 2 as
     * unallocated in about 1 of 30 runs). */
    COMM_CHECK(comm_fence(0));
    free(e);
    /* Our own map knows right away. */
    place_run(first, dsm_g.rank, dpages, n);
}

int dsm_home(uint32_t pg)
{
    int h = dsm_home_known(pg);
    if (OMPDSM_LIKELY(h >= 0))
        return h;
    uint32_t chunk = pg >> (dsm_g.chunk_shift - dsm_g.page_shift);
    uint64_t w[2];
    COMM_CHECK(comm_get(0, DSM_REG_AREA,
                        dsm_off_chunks + (uint64_t)chunk * DSM_CHUNK_ENT_SIZE, w,
                        sizeof w));
    struct dsm_chunk_ent e = chunk_ent_decode(w);
    if (e.owner < 0)
        ompdsm_fatal("access to unallocated shared memory at %p (page %u, chunk "
                     "%u): a pointer outside every allocation",
                     (void *)page_app(pg), pg, chunk);
    if (e.run)
        place_run(e.first, e.owner, e.dpages, 0);
    else
        place_run(chunk, e.owner, 0, 1);
    h = dsm_home_known(pg);
    return h >= 0 ? h : e.owner;
}
