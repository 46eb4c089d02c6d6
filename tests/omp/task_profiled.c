/* The implicit barrier of a loop completes the tasks created in it, also
   when the loop is scheduled by the profiled scheduler (its end barrier
   carries the threads' times: a barrier of its own).  Under ompdsm the
   loops are schedule(profiled) through omp_set_schedule; natively they
   are static.  Right after each loop, before any other barrier, every
   thread checks that every task has run and its write is visible.
   Before the profiled loop's end barrier completed tasks, the first
   loop's check failed on 2 and 4 nodes (256 task results missing, summed
   over the threads). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define N 96
#define REPS 3
static int done[REPS][N];
static int missing[REPS];

static int work(int i)
{
    int k, v = i;
    for (k = 0; k < 2000; k++)
        v = v * 1103515245 + 12345;
    return (v & 0xff) | 0x100; /* never 0 */
}

int main(void)
{
#pragma omp parallel
    {
        int r, i, miss;
#ifdef OMPDSM_OMP_H
        omp_set_schedule(omp_sched_profiled, 0);
#endif
        for (r = 0; r < REPS; r++) {
#pragma omp for schedule(runtime)
            for (i = 0; i < N; i++) {
#pragma omp task firstprivate(i)
                done[r][i] = work(i);
            }
            miss = 0;
            for (i = 0; i < N; i++)
                miss += done[r][i] != work(i);
            if (miss) {
#pragma omp atomic
                missing[r] += miss;
            }
        }
    }
    int r;
    for (r = 0; r < REPS; r++)
        CHECK(missing[r] == 0, "every task of the loop ran before its end barrier");
    printf("missing after the loops: %d %d %d\n", missing[0], missing[1], missing[2]);
    printf("task_profiled: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
