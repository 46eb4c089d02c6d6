/* threadprivate variables and locks in tasks: a task sees the copy of the
   thread that runs it; tasks update shared counters under an omp lock and
   a critical section; results checked against closed formulas. */
#include <stdio.h>
#include <omp.h>

#define NT 300
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int tp;
#pragma omp threadprivate(tp)
static long counter, crit_sum;
static int tp_ok;
static omp_lock_t lk;

int main(void)
{
    omp_init_lock(&lk);
#pragma omp parallel
    {
        tp = 1000 + omp_get_thread_num();
#pragma omp barrier
#pragma omp single
        {
            int k;
            for (k = 0; k < NT; k++) {
#pragma omp task
                {
                    int ok = tp == 1000 + omp_get_thread_num();
                    long old;
                    omp_set_lock(&lk);
                    old = counter;
                    counter = old + k;
                    omp_unset_lock(&lk);
#pragma omp critical
                    {
                        crit_sum += 2 * k;
                        tp_ok += ok;
                    }
                }
            }
        }
    }
    omp_destroy_lock(&lk);
    CHECK(counter == (long)NT * (NT - 1) / 2, "lock-protected sum");
    CHECK(crit_sum == (long)NT * (NT - 1), "critical sum");
    CHECK(tp_ok == NT, "threadprivate copy of the running thread");
    printf("task_tp_lock: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
