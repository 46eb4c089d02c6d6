/* data-sharing of tasks: a variable private to the generating context is
   firstprivate in the task by default (the value at task creation is
   captured even if the variable changes later); shared variables stay
   shared; explicit firstprivate/private/shared clauses and default(shared). */
#include <stdio.h>
#include <omp.h>

#define NT 50
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int gshared;

int main(void)
{
    int captured[NT], bad = 0, sh = 0, task_bad = 0;
    int arr[3] = {1, 2, 3};
#pragma omp parallel shared(captured, sh) reduction(+:bad)
    {
#pragma omp single
        {
            int k, x = 0, y = 5;
            for (k = 0; k < NT; k++) {
                x = k * 3;
#pragma omp task
                {
                    /* x and k are firstprivate by default */
                    captured[k] = x;
                }
            }
            x = -1;
#pragma omp task firstprivate(arr) private(y)
            {
                y = arr[0] + arr[1] + arr[2];
                arr[0] = 100;
                if (y != 6) {
#pragma omp atomic
                    task_bad++;     /* shared: declared outside the region */
                }
            }
#pragma omp task shared(sh)
            {
#pragma omp atomic
                sh += 10;
            }
#pragma omp task default(shared)
            {
#pragma omp atomic
                gshared += 1;
            }
#pragma omp taskwait
            if (sh != 10 || gshared != 1 || arr[0] != 1 || y != 5)
                bad++;
        }
    }
    int k;
    for (k = 0; k < NT; k++)
        CHECK(captured[k] == k * 3, "firstprivate value captured at creation");
    CHECK(bad == 0 && task_bad == 0, "task data-sharing");
    printf("captured[%d] %d sh %d\n", NT - 1, captured[NT - 1], sh);
    printf("task_data: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
