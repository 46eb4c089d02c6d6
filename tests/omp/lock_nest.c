/* nestable locks: the owner may set it again (nesting count), test returns
   the new nesting count for the owner and 0 for other threads, and the lock
   is released after as many unsets as sets; a recursive function protected
   by a nest lock. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static omp_nest_lock_t nl;
static long total;

static void add_rec(int depth)
{
    omp_set_nest_lock(&nl);
    total = total + depth;
    if (depth > 0)
        add_rec(depth - 1);
    omp_unset_nest_lock(&nl);
}

int main(void)
{
    int c1, c2, c3, bad = 0, busy = 0, team = 0;
    omp_init_nest_lock(&nl);

    omp_set_nest_lock(&nl);
    omp_set_nest_lock(&nl);
    c1 = omp_test_nest_lock(&nl);          /* third level */
    CHECK(c1 == 3, "test_nest_lock nesting count");
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl);
    c2 = omp_test_nest_lock(&nl);          /* free again -> 1 */
    CHECK(c2 == 1, "nest lock not free after matching unsets");
    omp_unset_nest_lock(&nl);

#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num();
#pragma omp master
        team = omp_get_num_threads();
        if (me == 0) {
            omp_set_nest_lock(&nl);
            omp_set_nest_lock(&nl);
        }
#pragma omp barrier
        if (me != 0) {
            int r = omp_test_nest_lock(&nl);
            if (r != 0) {
                bad++;
                omp_unset_nest_lock(&nl);
            } else {
#pragma omp atomic
                busy++;
            }
        }
#pragma omp barrier
        if (me == 0) {
            omp_unset_nest_lock(&nl);
            omp_unset_nest_lock(&nl);
        }
#pragma omp barrier
        add_rec(5);
    }
    c3 = omp_test_nest_lock(&nl);
    CHECK(c3 == 1, "nest lock still held after the region");
    omp_unset_nest_lock(&nl);
    omp_destroy_nest_lock(&nl);
    CHECK(bad == 0, "another thread acquired a held nest lock");
    CHECK(busy == team - 1, "busy count");
    CHECK(total == 15L * team, "recursive total");
    printf("team %d total %ld counts %d %d %d\n", team, total, c1, c2, c3);
    printf("lock_nest: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
