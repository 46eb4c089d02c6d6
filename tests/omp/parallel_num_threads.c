/* parallel num_threads(): num_threads(1), num_threads(max) and
   num_threads(max-1) give exactly that team size (dynamic off); a request
   larger than max gives between 1 and the requested number. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int team_of(int req, int *sum)
{
    int team = -1, s = 0;
#pragma omp parallel num_threads(req) reduction(+:s)
    {
        s += omp_get_thread_num() + 1;
#pragma omp master
        team = omp_get_num_threads();
    }
    *sum = s;
    return team;
}

int main(void)
{
    int sum, t;
    omp_set_dynamic(0);
    int maxt = omp_get_max_threads();
    int less = maxt > 1 ? maxt - 1 : 1;

    t = team_of(1, &sum);
    CHECK(t == 1 && sum == 1, "num_threads(1)");
    printf("num_threads(1): team %d\n", t);

    t = team_of(maxt, &sum);
    CHECK(t == maxt && sum == maxt * (maxt + 1) / 2, "num_threads(max)");
    printf("num_threads(max): team %d, sum %d\n", t, sum);

    t = team_of(less, &sum);
    CHECK(t == less && sum == less * (less + 1) / 2, "num_threads(max-1)");
    printf("num_threads(max-1): team %d, sum %d\n", t, sum);

    /* more than the default: implementation-defined upper part, only check
       the range and the consistency of the sum */
    t = team_of(maxt + 1, &sum);
    CHECK(t >= 1 && t <= maxt + 1 && sum == t * (t + 1) / 2,
          "num_threads(max+1) out of range");

    /* num_threads does not change the default for later regions */
    t = team_of(maxt, &sum);
    CHECK(omp_get_max_threads() == maxt, "max threads changed");
    printf("parallel_num_threads: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
