/* omp_test_lock: succeeds (nonzero) on an unlocked lock, fails (zero) while
   another thread holds it; a test-lock retry loop also gives mutual
   exclusion. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    omp_lock_t l;
    int got_free, got_busy = 0, bad = 0, team = 0;
    long counter = 0;
    omp_init_lock(&l);

    got_free = omp_test_lock(&l);          /* serial: unlocked -> acquired */
    CHECK(got_free != 0, "test_lock on an unlocked lock failed");
    omp_unset_lock(&l);

#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), k;
#pragma omp master
        team = omp_get_num_threads();
        if (me == 0)
            omp_set_lock(&l);
#pragma omp barrier
        if (me != 0) {
            /* thread 0 holds the lock until the next barrier */
            if (omp_test_lock(&l)) {
                bad++;
                omp_unset_lock(&l);
            } else {
#pragma omp atomic
                got_busy++;
            }
        }
#pragma omp barrier
        if (me == 0)
            omp_unset_lock(&l);
#pragma omp barrier
        for (k = 0; k < 50; k++) {
            while (!omp_test_lock(&l)) {
                /* retry */
            }
            counter = counter + 1;
            omp_unset_lock(&l);
        }
    }
    omp_destroy_lock(&l);
    CHECK(bad == 0, "test_lock succeeded on a lock held by another thread");
    CHECK(got_busy == team - 1, "test_lock failures");
    CHECK(counter == 50L * team, "counter under test_lock");
    printf("team %d busy %d counter %ld\n", team, got_busy, counter);
    printf("lock_test: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
