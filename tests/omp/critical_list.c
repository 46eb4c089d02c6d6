/* critical protecting a shared data structure: every thread pushes items
   onto a shared array-based stack under critical, then the content is
   checked as a multiset. */
#include <stdio.h>
#include <omp.h>

#define PER 50
#define MAXT 64
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int stack[PER * MAXT];
static int top;

int main(void)
{
    int team = 0, k;
    static int seen[PER * MAXT];
    omp_set_dynamic(0);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num(), i;
#pragma omp master
        team = omp_get_num_threads();
        for (i = 0; i < PER; i++) {
#pragma omp critical(stack_lock)
            {
                stack[top] = me * PER + i;
                top = top + 1;
            }
        }
    }
    CHECK(top == team * PER, "stack size");
    for (k = 0; k < top; k++) {
        int v = stack[k];
        if (v >= 0 && v < team * PER)
            seen[v]++;
    }
    int bad = 0;
    for (k = 0; k < team * PER; k++)
        bad += seen[k] != 1;
    CHECK(bad == 0, "stack content");
    printf("pushed %d\n", top);
    printf("critical_list: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
