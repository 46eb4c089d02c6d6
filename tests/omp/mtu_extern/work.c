/* orphaned worksharing on extern globals defined in another unit */
#include <string.h>
#include <omp.h>
#include "shared.h"

void fill_data(void)
{
    int i;
#pragma omp for
    for (i = 0; i < conf.n; i++)
        data[i] = i * conf.factor;
}

double sum_data(void)
{
    static double total;              /* shared: reduction on a static */
    int i;
#pragma omp single
    total = 0;
#pragma omp for reduction(+:total)
    for (i = 0; i < NDATA; i++)
        total += data[i];
    return total;
}

void count_labels(int *chars)
{
    int i;
#pragma omp for
    for (i = 0; i < nlabels; i++) {
        int len = (int)strlen(labels[i]);
#pragma omp atomic
        *chars += len;
    }
}
