/* many consecutive parallel regions: results of each region are visible in
   the serial code and in the next region. */
#include <stdio.h>
#include <omp.h>

#define NREG 40
#define N 64
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    long a[N];
    int r, i, teams_ok = 1, team0 = -1;
    omp_set_dynamic(0);
    for (i = 0; i < N; i++)
        a[i] = i;
    for (r = 0; r < NREG; r++) {
        int team = 0;
#pragma omp parallel
        {
#pragma omp for schedule(static)
            for (i = 0; i < N; i++)
                a[i] = a[i] + r;      /* uses values from the last region */
#pragma omp master
            team = omp_get_num_threads();
        }
        if (r == 0)
            team0 = team;
        else if (team != team0)
            teams_ok = 0;
        a[r % N] += 1;               /* serial update between regions */
    }
    long sum = 0, esum = 0;
    for (i = 0; i < N; i++) {
        sum += a[i];
        esum += i + (long)NREG * (NREG - 1) / 2;
    }
    esum += NREG;
    CHECK(teams_ok, "team size changed between regions");
    CHECK(sum == esum, "accumulated values");
    printf("regions %d sum %ld\n", NREG, sum);
    printf("parallel_many_regions: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
