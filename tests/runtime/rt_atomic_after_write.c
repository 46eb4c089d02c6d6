/* rt_atomic_after_write.c - documents a DSM bug: an atomic update of a
 * shared variable that the same thread has just written with a plain store
 * (no release in between) loses that store when the page's home is another
 * node.  dsm/atomic.c, dsm_atomic_update, does the compare-swap on the
 * home's copy, which does not have the store yet (the diff goes out at the
 * next release), and then writes the result into the local copy *and its
 * twin*, so the store is never sent either:
 *   x = 5; #pragma omp atomic  x += 1;   ->  x == 1 (home had 0), not 6.
 * The atomic should see the thread's own earlier writes (release the dirty
 * page, or at least that word, before the compare-swap). */
#include "rt_test.h"

enum { MAXT = 64, BIG = 65536 };

/* 512 KiB: block-distributed over the nodes' homes, so its last page has
 * home node nodes-1 and its first page home node 0. */
static long long (*g_big)[BIG];
static OMPDSM_global globals[] = {
    {(void **)&g_big, sizeof *g_big, __alignof__(*g_big), "big"},
};

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num();
    long long *x = &(*g_big)[BIG - 1];
    CHECK(*x == 6, "after the fork, x = %lld, expected 6", *x);
    /* Each thread: a plain store to its own word on the last page, then an
     * atomic on the same word. */
    long long *y = &(*g_big)[BIG - 2 - t];
    *y = 1000;
    long long add = t;
    OMPDSM_atomic(y, OMPDSM_TY_I64, OMPDSM_OP_ADD, &add, 0);
    CHECK(*y == 1000 + t, "thread %d: y = %lld right after the atomic, "
          "expected %d", t, *y, 1000 + t);
    OMPDSM_barrier();
    for (int u = 0; u < omp_get_num_threads(); u++)
        CHECK((*g_big)[BIG - 2 - u] == 1000 + u, "after the barrier, thread "
              "%d's y = %lld, expected %d", u, (*g_big)[BIG - 2 - u], 1000 + u);
}
static OMPDSM_region rd = {region, "rt_atomic_after_write.c:25 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_atomic_after_write.c",
                           globals, 1, 0, regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_atomic_after_write", 20);
    long long *x = &(*g_big)[BIG - 1];
    *x = 5;
    long long one = 1;
    OMPDSM_atomic(x, OMPDSM_TY_I64, OMPDSM_OP_ADD, &one, 0);
    CHECK(*x == 6, "serial part: x = 5; atomic x += 1; gives x = %lld", *x);
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    CHECK(*x == 6, "after the region x = %lld", *x);
    return rtt_end("store then atomic");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
