/* num_threads(4) and omp_set_num_threads(3) give exactly that many threads
   whatever the nodes (more than nodes x threads per node put more threads
   on each node), and a program written for 4 threads in which each thread
   waits, inside a nowait loop, for all 4 to have arrived completes (with a
   team capped at the nodes it would wait for ever; here the wait gives up
   after 10 s and says so).  Failed on 1 and 2 nodes while teams were
   capped at nodes x threads per node (teams of 1 1 and 2 2). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int arrived;

int main(void)
{
    int team4 = 0, team3 = 0, ids = 0, gaveup = 0, sum = 0, i;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(4) reduction(+:ids, gaveup)
    {
#pragma omp master
        team4 = omp_get_num_threads();
        ids += 1 << omp_get_thread_num();
#pragma omp for schedule(static) nowait
        for (i = 0; i < 4; i++) {
            int seen = 0;
            double t0 = omp_get_wtime();
#pragma omp atomic
            arrived++;
            while (seen < 4 && omp_get_wtime() - t0 < 10.0) {
#pragma omp flush(arrived)
                seen = arrived;
            }
            if (seen < 4)
                gaveup++;
        }
    }
    omp_set_num_threads(3);
#pragma omp parallel reduction(+:sum)
    {
#pragma omp master
        team3 = omp_get_num_threads();
        sum += omp_get_thread_num() + 1;
    }
    CHECK(team4 == 4, "num_threads(4) team size");
    CHECK(ids == 15, "thread numbers 0-3 each once");
    CHECK(gaveup == 0, "every thread saw the 4 arrivals");
    CHECK(team3 == 3 && sum == 6, "omp_set_num_threads(3) team");
    printf("teams %d %d, arrivals %d\n", team4, team3, arrived);
    printf("parallel_num_threads_over: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
