/* tasks in orphaned functions (a parameter and a local of the function
   captured, a shared heap array written), tasks created inside a `for`
   loop and inside `sections`; the implicit barriers of the constructs and
   taskwait in the function complete them. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define N 120
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int from_for[N], from_sec[4];

/* called from inside a parallel region */
static void fill(int *out, int lo, int hi, int mult)
{
    int i, off = 3;
    for (i = lo; i < hi; i++) {
#pragma omp task
        out[i] = i * mult + off;
    }
#pragma omp taskwait
}

int main(void)
{
    int *a = malloc(N * sizeof *a), bad = 0, i;
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        int lo = N * me / nt, hi = N * (me + 1) / nt, j;
        fill(a, lo, hi, 5);
        /* taskwait in fill: this thread's part is complete */
        for (j = lo; j < hi; j++)
            if (a[j] != j * 5 + 3)
                bad++;
#pragma omp for
        for (j = 0; j < N; j++) {
#pragma omp task
            from_for[j] = j * j;
        }
#pragma omp sections
        {
#pragma omp section
            {
#pragma omp task
                from_sec[0] = 10;
            }
#pragma omp section
            {
#pragma omp task
                from_sec[1] = 11;
#pragma omp task
                from_sec[2] = 12;
            }
#pragma omp section
            from_sec[3] = 13;
        }
    }
    for (i = 0; i < N; i++) {
        CHECK(a[i] == i * 5 + 3, "orphaned tasks");
        CHECK(from_for[i] == i * i, "tasks in for");
    }
    for (i = 0; i < 4; i++)
        CHECK(from_sec[i] == 10 + i, "tasks in sections");
    CHECK(bad == 0, "orphaned tasks complete after taskwait");
    free(a);
    printf("task_orphan_ws: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
