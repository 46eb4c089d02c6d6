/* parallel if(): a false if clause gives a team of one thread (an inactive
   region), a true one gives the full team. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int n = 10, team_false = -1, team_true = -1, tid_false = -1;
    int inpar_false = -1, inpar_true = -1, count_false = 0, count_true = 0;
    omp_set_dynamic(0);
    int maxt = omp_get_max_threads();

#pragma omp parallel if (n > 100)
    {
        team_false = omp_get_num_threads();
        tid_false = omp_get_thread_num();
        inpar_false = omp_in_parallel();
#pragma omp atomic
        count_false++;
    }

#pragma omp parallel if (n < 100)
    {
#pragma omp master
        {
            team_true = omp_get_num_threads();
            inpar_true = omp_in_parallel();
        }
#pragma omp atomic
        count_true++;
    }

    CHECK(team_false == 1, "if(false) team size is not 1");
    CHECK(tid_false == 0, "if(false) thread number is not 0");
    CHECK(inpar_false == 0, "omp_in_parallel() true in an inactive region");
    CHECK(count_false == 1, "if(false) region not executed exactly once");
    CHECK(team_true == maxt, "if(true) team size is not max threads");
    CHECK(count_true == team_true, "if(true) region count wrong");
    CHECK((inpar_true != 0) == (team_true > 1),
          "omp_in_parallel() wrong in an if(true) region");
    printf("if(false): team %d; if(true): team %d\n", team_false, team_true);
    printf("parallel_if: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
