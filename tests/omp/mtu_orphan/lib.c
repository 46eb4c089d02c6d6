/* orphaned directives in a unit that has no parallel region */
#include <omp.h>

long lib_total;                       /* reduced into by an orphaned for */
int lib_single_runs;
int lib_crit;

void lib_work(const int *v, int n)
{
    int i;
#pragma omp for reduction(+:lib_total) schedule(dynamic, 4)
    for (i = 0; i < n; i++)
        lib_total += v[i];
#pragma omp single
    lib_single_runs++;
#pragma omp critical(lib)
    lib_crit++;
#pragma omp barrier
}

int lib_team(void)
{
    int t = 0;
#pragma omp master
    t = omp_get_num_threads();
    return t;
}
