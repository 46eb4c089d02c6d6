/* omp_init_lock / omp_set_lock / omp_unset_lock / omp_destroy_lock: a lock
   gives mutual exclusion for a non-atomic update sequence; a lock can be
   re-initialised after destruction. */
#include <stdio.h>
#include <omp.h>

#define ITERS 100
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static omp_lock_t lck;
static long counter;
static int inside, overlap;

int main(void)
{
    int team = 0, round;
    for (round = 0; round < 2; round++) {
        omp_init_lock(&lck);
        counter = 0;
#pragma omp parallel
        {
            int k;
#pragma omp master
            team = omp_get_num_threads();
            for (k = 0; k < ITERS; k++) {
                omp_set_lock(&lck);
                if (inside++)
                    overlap++;
                long t = counter;
                t = t * 2 + 2;
                counter = t / 2;
                inside--;
                omp_unset_lock(&lck);
            }
        }
        omp_destroy_lock(&lck);
        CHECK(counter == (long)team * ITERS, "counter protected by a lock");
    }
    CHECK(overlap == 0, "two threads held the lock");
    printf("team %d counter %ld\n", team, counter);
    printf("lock_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
