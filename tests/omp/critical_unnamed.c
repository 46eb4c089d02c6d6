/* critical (unnamed): mutual exclusion for a non-atomic read-modify-write
   sequence and an "inside" counter that detects overlap. */
#include <stdio.h>
#include <omp.h>

#define ITERS 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    long counter = 0;
    double dsum = 0.0;
    int inside = 0, overlap = 0, team = 0;
#pragma omp parallel
    {
        int k;
#pragma omp master
        team = omp_get_num_threads();
        for (k = 0; k < ITERS; k++) {
#pragma omp critical
            {
                if (inside != 0)
                    overlap++;
                inside++;
                long t = counter;
                int spin;
                for (spin = 0; spin < 20; spin++)
                    t += spin & 1;            /* t grows by 10 */
                counter = t - 9;              /* net +1 */
                dsum += 0.5;
                inside--;
            }
        }
    }
    CHECK(overlap == 0, "two threads inside the critical section");
    CHECK(counter == (long)team * ITERS, "counter");
    CHECK(dsum == 0.5 * team * ITERS, "double sum");
    printf("team %d counter %ld dsum %.1f\n", team, counter, dsum);
    printf("critical_unnamed: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
