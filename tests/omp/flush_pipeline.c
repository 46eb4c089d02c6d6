/* flush: an NPB LU style software pipeline.  Thread t may process item j
   only after thread t-1 has processed it; the handoff uses one flag per
   thread and spin loops of the form
       while (flag[t-1] == 0) { #pragma omp flush(flag) }
   exactly as LU's sync_left/sync_right do.  val[t][j] = j + t + 1. */
#include <stdio.h>
#include <omp.h>

#define MAXT 64
#define ITEMS 3
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int flag[MAXT];
static long val[MAXT][ITEMS];

int main(void)
{
    int team = 0, t, j, bad = 0;
    omp_set_dynamic(0);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt) private(j)
    {
        int me = omp_get_thread_num(), nth = omp_get_num_threads();
#pragma omp master
        team = nth;
        for (j = 0; j < ITEMS; j++) {
            if (me > 0) {
                /* sync_left: wait for the left neighbour, consume its flag */
                while (flag[me - 1] == 0) {
#pragma omp flush(flag)
                }
                flag[me - 1] = 0;
#pragma omp flush(flag)
            }
#pragma omp flush
            val[me][j] = (me > 0 ? val[me - 1][j] : j) + 1;
#pragma omp flush
            if (me < nth - 1) {
                /* sync_right: wait until the previous signal was consumed */
                while (flag[me] == 1) {
#pragma omp flush(flag)
                }
                flag[me] = 1;
#pragma omp flush(flag)
            }
        }
    }
    for (t = 0; t < team; t++)
        for (j = 0; j < ITEMS; j++)
            bad += val[t][j] != j + t + 1;
    CHECK(bad == 0, "pipeline values");
    printf("team %d last %ld\n", team, val[team - 1][ITEMS - 1]);
    printf("flush_pipeline: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
