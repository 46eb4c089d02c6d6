/* taskwait: waits for the child tasks generated so far by the current task;
   the generating thread then uses their results (a two-level fan-out in
   which each child also waits for its own children). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    long part[8], total = -1;
    int bad = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            int k;
            for (k = 0; k < 8; k++) {
#pragma omp task shared(part)
                {
                    long sub[4];
                    int j;
                    for (j = 0; j < 4; j++) {
#pragma omp task shared(sub)
                        sub[j] = (long)(k * 4 + j) * (k * 4 + j);
                    }
#pragma omp taskwait
                    part[k] = sub[0] + sub[1] + sub[2] + sub[3];
                }
            }
#pragma omp taskwait
            total = 0;
            for (k = 0; k < 8; k++)
                total += part[k];
            if (total != 31L * 32 * 63 / 6)
                bad++;
        }
    }
    CHECK(bad == 0 && total == 31L * 32 * 63 / 6, "taskwait results");
    printf("total %ld\n", total);
    printf("task_taskwait: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
