/* if(0) and final: an if(false) task and every task created inside a
   final task are undeferred (included): each is complete when the
   construct ends, so the creator sees its effect at once without
   taskwait; a task created in a final task runs on the thread that runs
   the final task. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp single
        {
            int k;
            for (k = 0; k < 40; k++) {
                int x = 0, y = 0, z = 0, where = -1, runner = -2, zero = 0;
#pragma omp task if (zero) shared(x)
                x = k + 1;
                if (x != k + 1)
                    bad++;
#pragma omp task final(k >= 0) shared(y, z, where, runner)
                {
                    y = 2 * k;
                    runner = omp_get_thread_num();
#pragma omp task shared(z, where)
                    {
                        z = 3 * k;
                        where = omp_get_thread_num();
                    }
                    /* included: complete here */
                    if (z != 3 * k)
                        y = -1;
                }
                /* (the final task itself may be deferred) */
#pragma omp taskwait
                if (y != 2 * k || z != 3 * k || where != runner)
                    bad++;
            }
        }
    }
    CHECK(bad == 0, "if(0) and final tasks are undeferred");
    printf("task_if_final: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
