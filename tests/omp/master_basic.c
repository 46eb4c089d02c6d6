/* master: only thread 0 executes the block, once per encounter; the master
   may print inside the region; master has no implied barrier, so results
   are read after an explicit barrier. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int count = 0, wrong = 0, bad = 0, r;
#pragma omp parallel private(r) reduction(+:bad)
    {
        for (r = 0; r < 10; r++) {
#pragma omp master
            {
                count++;
                if (omp_get_thread_num() != 0)
                    wrong++;
                if (r == 0)
                    printf("master prints: team of %d\n", omp_get_num_threads());
            }
#pragma omp barrier
            if (count != r + 1)
                bad++;
#pragma omp barrier
        }
    }
    CHECK(count == 10, "master executed wrong number of times");
    CHECK(wrong == 0, "master executed by a thread other than 0");
    CHECK(bad == 0, "master result not visible after the barrier");
    printf("count %d\n", count);
    printf("master_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
