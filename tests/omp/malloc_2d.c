/* a 2-D matrix as an array of malloc'ed row pointers (plus one contiguous
   block addressed through a pointer-to-array type): matrix-vector product
   in parallel, compared with the serial product. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define R 120
#define C 90
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    double **m = malloc(R * sizeof *m);
    double (*blk)[C] = malloc(R * sizeof *blk);
    double *x = malloc(C * sizeof *x), *y = malloc(R * sizeof *y);
    double *y2 = malloc(R * sizeof *y2);
    int i, j, bad = 0;
    if (!m || !blk || !x || !y || !y2)
        return 1;
    for (i = 0; i < R; i++) {
        m[i] = malloc(C * sizeof **m);
        if (!m[i])
            return 1;
        for (j = 0; j < C; j++)
            m[i][j] = blk[i][j] = (i + 2 * j) % 7 - 3;
    }
    for (j = 0; j < C; j++)
        x[j] = j % 5;
#pragma omp parallel for private(j)
    for (i = 0; i < R; i++) {
        double s = 0, s2 = 0;
        for (j = 0; j < C; j++) {
            s += m[i][j] * x[j];
            s2 += blk[i][j] * x[j];
        }
        y[i] = s;
        y2[i] = s2;
    }
    double tot = 0;
    for (i = 0; i < R; i++) {
        double e = 0;
        for (j = 0; j < C; j++)
            e += m[i][j] * x[j];
        bad += y[i] != e || y2[i] != e;
        tot += y[i];
    }
    CHECK(bad == 0, "matrix-vector product");
    printf("sum of y %.1f\n", tot);
    for (i = 0; i < R; i++)
        free(m[i]);
    free(m); free(blk); free(x); free(y); free(y2);
    printf("malloc_2d: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
