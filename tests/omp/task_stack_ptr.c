/* A task reaches a variable declared inside the parallel region (private
   to the thread that creates the task) through a firstprivate pointer.
   OpenMP allows it: the variable lives until the taskwait that follows,
   and the task shares it through the pointer.  Tasks may run on another
   thread (another node under ompdsm), so the variable must be reachable
   there: every thread's results must arrive in its own variables, the
   array, the scalar and the structure member each reached through a
   pointer taken in a different way.  (ompdsm kept such variables on the
   creating node's stack: a task run elsewhere wrote another node's stack,
   and the program failed on 2 and 4 nodes.) */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define NT 12
struct acc {
    long n, sum;
};

static long value(long seed)
{
    long k, v = seed;
    for (k = 0; k < 3000; k++)
        v = v * 6364136223846793005L + 1442695040888963407L;
    return (v >> 3) & 0xffff;
}

/* value(), slowly enough that idle threads take some of the tasks */
static long work(long seed)
{
    double t0 = omp_get_wtime();
    while (omp_get_wtime() - t0 < 0.001)
        ;
    return value(seed);
}

static long bad_total;

int main(void)
{
#pragma omp parallel
    {
        long res[NT];
        long total = 0;
        long *pt = &total, *pr = res;
        struct acc a = {0, 0};
        struct acc *pa = &a;
        long me = omp_get_thread_num(), expect = 0, bad = 0;
        int k;
        for (k = 0; k < NT; k++)
            res[k] = -1;
        /* odd threads create no task: they go on to the end of the region,
           where they take the even threads' tasks */
        for (k = 0; k < NT; k++) {
            if (me % 2) {
                pr[k] = value(me * 100 + k);
                continue;
            }
#pragma omp task firstprivate(k)
            pr[k] = work(me * 100 + k);
        }
#pragma omp taskwait
#pragma omp task if(me % 2 == 0)
        {
            int j;
            for (j = 0; j < NT; j++)
                *pt += pr[j];
            pa->n = NT;
            pa->sum = *pt;
        }
#pragma omp taskwait
        for (k = 0; k < NT; k++) {
            long w = value(me * 100 + k);
            bad += res[k] != w;
            expect += w;
        }
        bad += total != expect;
        bad += a.n != NT || a.sum != expect;
#pragma omp atomic
        bad_total += bad;
    }
    CHECK(bad_total == 0, "every task's result arrived in its thread's variables");
    printf("wrong results: %ld\n", bad_total);
    printf("task_stack_ptr: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
