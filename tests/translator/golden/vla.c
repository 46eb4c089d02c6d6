/* Variable-length arrays and pointers to them in parallel regions: the
 * frame carries each variable bound (computed with sizeof at the call),
 * the outlined function declares the variable with those bounds; a VLA
 * shared by a region is allocated in the shared heap in its declarator.
 * And a threadprivate variable declared together with a shared one: the
 * declaration is split. */
int *index_table, hits[4];
#pragma omp threadprivate(hits)

double scale(int n, int m, double a[][m], void *p)
{
    double (*b)[m] = (double (*)[m])p;   /* a pointer to a VLA */
    double row[m];                       /* private below */
    double acc[n][m];                    /* shared by the region */
    double total = 0.0;
    int i, j;
#pragma omp parallel for private(row, j) reduction(+:total)
    for (i = 0; i < n; i++) {
        for (j = 0; j < m; j++) {
            row[j] = a[i][j] * b[i][j];
            acc[i][j] = row[j];
        }
        total += row[0] + sizeof row;
    }
    return total + acc[n - 1][m - 1];
}
