/* global multi-dimensional arrays (2-D and 3-D, initialised partially or
   not at all): written in parallel by rows, read across rows by other
   threads after the barrier, and summed. */
#include <stdio.h>
#include <omp.h>

#define R 50
#define C 40
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int grid[R][C];
double cube[6][7][8];
int init2[4][3] = {{1, 2, 3}, {4}, {0, 5}};   /* rest is zero */
static short tab3[2][3][4] = {{{1, 2, 3, 4}, {5, 6, 7, 8}}, {{9}}};

int main(void)
{
    int i, j, k, bad = 0;
#pragma omp parallel private(j, k) reduction(+:bad)
    {
#pragma omp for
        for (i = 0; i < R; i++)
            for (j = 0; j < C; j++)
                grid[i][j] = i * 100 + j;
#pragma omp for schedule(static, 1)
        for (i = 0; i < 6; i++)
            for (j = 0; j < 7; j++)
                for (k = 0; k < 8; k++)
                    cube[i][j][k] = i + j * 0.5 + k * 0.25;
        /* read transposed: elements written by other threads */
#pragma omp for schedule(dynamic)
        for (j = 0; j < C; j++) {
            int r;                      /* the inner index must be private */
            for (r = 0; r < R; r++)
                if (grid[R - 1 - r][j] != (R - 1 - r) * 100 + j)
                    bad++;
        }
#pragma omp for
        for (i = 0; i < 4; i++)
            for (j = 0; j < 3; j++) {
                int e = (i == 0) ? j + 1 : (i == 1 && j == 0) ? 4 :
                        (i == 2 && j == 1) ? 5 : 0;
                if (init2[i][j] != e)
                    bad++;
            }
    }
    double csum = 0, ecsum = 0;
    long gsum = 0, egsum = 0;
    int tsum = 0;
    for (i = 0; i < 6; i++)
        for (j = 0; j < 7; j++)
            for (k = 0; k < 8; k++) {
                csum += cube[i][j][k];
                ecsum += i + j * 0.5 + k * 0.25;
            }
    for (i = 0; i < R; i++)
        for (j = 0; j < C; j++) {
            gsum += grid[i][j];
            egsum += i * 100 + j;
        }
#pragma omp parallel for collapse(3) reduction(+:tsum)
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++)
                tsum += tab3[i][j][k];
    CHECK(bad == 0, "values read by other threads");
    CHECK(csum == ecsum, "cube");
    CHECK(gsum == egsum, "grid");
    CHECK(tsum == 45, "initialised 3-D array");
    printf("grid %ld cube %.2f tab3 %d\n", gsum, csum, tsum);
    printf("global_arrays_md: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
