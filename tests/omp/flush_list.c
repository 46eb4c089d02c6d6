/* flush with a list naming both the data and the flag: the producer does
   x = ...; flush(x, ready); ready = 1; flush(ready), the consumer spins with
   flush(ready) and then flush(x, ready) before reading x.  Thread 0 is the
   producer; every other thread consumes.  Also a flush outside any region. */
#include <stdio.h>
#include <omp.h>

#define ROUNDS 3
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int x = 0, ready = 0, r, bad = 0, team = 0;
    double y = 0.0;
#pragma omp flush
#pragma omp flush(x)
    for (r = 1; r <= ROUNDS; r++) {
        ready = 0;
#pragma omp parallel reduction(+:bad)
        {
#pragma omp master
            team = omp_get_num_threads();
            if (omp_get_thread_num() == 0) {
                x = 1000 * r;
                y = 0.5 * r;
#pragma omp flush(x, y, ready)
                ready = 1;
#pragma omp flush(ready)
            } else {
                while (ready == 0) {
#pragma omp flush(ready)
                }
#pragma omp flush(x, y, ready)
                if (x != 1000 * r || y != 0.5 * r)
                    bad++;
            }
        }
    }
    CHECK(bad == 0, "consumer read stale data");
    CHECK(x == 1000 * ROUNDS, "final x");
    printf("team %d x %d y %.1f\n", team, x, y);
    printf("flush_list: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
