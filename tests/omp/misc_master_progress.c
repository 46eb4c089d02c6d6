/* a phased computation that reports progress: only the master prints,
   between barriers, inside the parallel region, so stdout is deterministic
   (the values printed are the complete results of each phase). */
#include <stdio.h>
#include <omp.h>

#define N 1000
#define PHASES 5
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long v[N];

int main(void)
{
    long total = 0;
    int p, i;
    long e[N];
    for (i = 0; i < N; i++)
        v[i] = e[i] = i % 10;
#pragma omp parallel private(p)
    {
        for (p = 1; p <= PHASES; p++) {
            int k;
#pragma omp for reduction(+:total)
            for (k = 0; k < N; k++) {
                v[k] = v[k] * 2 + p;
                total += v[k];
            }
#pragma omp master
            {
                printf("phase %d: running total %ld\n", p, total);
                fflush(stdout);
            }
#pragma omp barrier
        }
    }
    long et = 0;
    for (p = 1; p <= PHASES; p++)
        for (i = 0; i < N; i++) {
            e[i] = e[i] * 2 + p;
            et += e[i];
        }
    CHECK(total == et, "total");
    printf("misc_master_progress: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
