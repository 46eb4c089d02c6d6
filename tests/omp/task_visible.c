/* shared updates by tasks are visible to the creator after taskwait and
   to every thread after a barrier: tasks (run anywhere) write shared
   locals, a shared heap array and globals; the checks read them after
   the synchronisation only. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define NT 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int gl[NT];

int main(void)
{
    int bad = 0, *heap = calloc(NT, sizeof *heap);
    long sum_after_barrier = 0;
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), i;
        long local_a = 0, local_b = 0;
#pragma omp single
        {
            for (i = 0; i < NT; i++) {
#pragma omp task
                {
                    heap[i] = i * 2 + 1;
                    gl[i] = i + 5;
                }
            }
        }
        /* the single's barrier completed the tasks */
        for (i = 0; i < NT; i++)
            if (heap[i] != i * 2 + 1 || gl[i] != i + 5)
                bad++;
#pragma omp barrier
        if (me == 0) {
            for (i = 0; i < NT; i++) {
#pragma omp task shared(local_a, local_b)
                {
#pragma omp atomic
                    local_a += i;
#pragma omp atomic
                    local_b += 1;
                }
            }
#pragma omp taskwait
            if (local_a != (long)NT * (NT - 1) / 2 || local_b != NT)
                bad++;
            for (i = 0; i < NT; i++) {
#pragma omp task
                heap[i] = -i;
            }
        }
#pragma omp barrier
        for (i = 0; i < NT; i++)
            if (heap[i] != -i)
                bad++;
#pragma omp single
        for (i = 0; i < NT; i++)
            sum_after_barrier += heap[i];
    }
    CHECK(bad == 0, "task writes visible after taskwait and barrier");
    CHECK(sum_after_barrier == -(long)NT * (NT - 1) / 2, "sum");
    free(heap);
    printf("task_visible: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
