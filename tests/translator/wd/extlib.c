/* extlib.c - functions compiled without the write-detection pass (a
 * library's code for guard.c): the pass guards calls to them. */
#include "extlib.h"

void ext_fill(double *p, int n, double v)
{
    for (int i = 0; i < n; i++)
        p[i] = v;
}

void ext_copy(double *dst, const double *src, int n, char *tag)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i];
    tag[0] = 'c';
}

double ext_sum(const double *p, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

void ext_cleanup(int *p)
{
    (void)p;
}
