/* task if(0): the encountering task waits for the undeferred task, so its
   effect is visible right after the construct; untied tasks (OpenMP 3.0)
   run to completion like tied ones. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int bad = 0, untied_sum = 0;
#pragma omp parallel reduction(+:bad)
    {
        int v = 0;
#pragma omp task if (0) shared(v)
        v = omp_get_thread_num() + 1;
        /* undeferred: completed before we continue */
        if (v != omp_get_thread_num() + 1)
            bad++;
        int w = 0, n = 3;
#pragma omp task if (n > 10) shared(w)
        w = 7;
        if (w != 7)
            bad++;
#pragma omp single
        {
            int k;              /* private here, so firstprivate in the task */
            for (k = 0; k < 30; k++) {
#pragma omp task untied
                {
#pragma omp atomic
                    untied_sum += k;
                }
            }
        }
    }
    CHECK(bad == 0, "if(false) task not complete after the construct");
    CHECK(untied_sum == 435, "untied tasks");
    printf("untied sum %d\n", untied_sum);
    printf("task_if_untied: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
