/* OpenMP 3.0 2.10: a work-sharing construct or barrier closely nested in a
 * work-sharing, critical or master region (gcc rejects each). */
int main(void)
{
    int i, j, a[10], x = 0;
#pragma omp parallel
    {
#pragma omp for
        for (i = 0; i < 10; i++) {
#pragma omp for
            for (j = 0; j < 10; j++)
                a[j] = j;
#pragma omp barrier
        }
#pragma omp critical
        {
#pragma omp barrier
        }
#pragma omp master
        {
#pragma omp single
            x++;
        }
#pragma omp single
        {
#pragma omp sections
            {
                x++;
            }
        }
    }
    return a[0] + x;
}
/* gcc: rejects */
/* expect: nest_worksharing.c:10:13: error: '#pragma omp for' cannot be closely nested inside the '#pragma omp for' of line 8: a work-sharing construct or a barrier cannot be inside a work-sharing, critical, ordered, master or task region (a barrier there would not be met by every thread) */
/* expect: nest_worksharing.c:13:13: error: '#pragma omp barrier' cannot be closely nested inside the '#pragma omp for' of line 8: a work-sharing construct or a barrier cannot be inside a work-sharing, critical, ordered, master or task region (a barrier there would not be met by every thread) */
/* expect: nest_worksharing.c:17:13: error: '#pragma omp barrier' cannot be closely nested inside the '#pragma omp critical' of line 15: a work-sharing construct or a barrier cannot be inside a work-sharing, critical, ordered, master or task region (a barrier there would not be met by every thread) */
/* expect: nest_worksharing.c:21:13: error: '#pragma omp single' cannot be closely nested inside the '#pragma omp master' of line 19: a work-sharing construct or a barrier cannot be inside a work-sharing, critical, ordered, master or task region (a barrier there would not be met by every thread) */
/* expect: nest_worksharing.c:26:13: error: '#pragma omp sections' cannot be closely nested inside the '#pragma omp single' of line 24: a work-sharing construct or a barrier cannot be inside a work-sharing, critical, ordered, master or task region (a barrier there would not be met by every thread) */
