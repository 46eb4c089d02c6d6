/* flush_wavefront.c - a pipelined wavefront sweep synchronised the way the
 * NPB 3.0 LU code does it: each row waits in a spin loop of flush(flag) for
 * the row before it and reads that row's data right after the loop, with no
 * further flush; rows are split statically among the threads.  Checked
 * against a serial sweep. */
#include <math.h>
#include <stdio.h>

#define NI 14
#define NJ 30
#define NK 10
static double v[NI][NJ][NK];
static double ref[NI][NJ][NK];
static int flag[NI];

static void sweep(int k, int ist, int iend)
{
    int i, j;
#pragma omp for nowait schedule(static)
    for (i = ist; i <= iend; i++) {
        if (i != ist) {
            while (flag[i - 1] == 0) {
#pragma omp flush(flag)
                ;
            }
        }
        if (i != iend) {
            while (flag[i] == 1) {
#pragma omp flush(flag)
                ;
            }
        }
        for (j = 1; j < NJ; j++)
            v[i][j][k] = 0.5 * v[i][j][k] +
                         0.25 * (v[i - 1][j][k] + v[i][j - 1][k]) +
                         0.125 * v[i][j][k - 1];
        if (i != ist)
            flag[i - 1] = 0;
        if (i != iend)
            flag[i] = 1;
#pragma omp flush(flag)
    }
}

int main(void)
{
    int i, j, k, it, bad = 0;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            for (k = 0; k < NK; k++)
                ref[i][j][k] = v[i][j][k] = (double)((i * 7 + j * 3 + k) % 11);
    for (it = 0; it < 6; it++)
        for (k = 1; k < NK; k++)
            for (i = 1; i < NI; i++)
                for (j = 1; j < NJ; j++)
                    ref[i][j][k] = 0.5 * ref[i][j][k] +
                                   0.25 * (ref[i - 1][j][k] + ref[i][j - 1][k]) +
                                   0.125 * ref[i][j][k - 1];
#pragma omp parallel private(it, k)
    {
        for (it = 0; it < 6; it++) {
            for (k = 1; k < NK; k++)
                sweep(k, 1, NI - 1);
#pragma omp barrier
        }
    }
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            for (k = 0; k < NK; k++)
                if (v[i][j][k] != ref[i][j][k]) {
                    if (bad < 5)
                        printf("FAIL: v[%d][%d][%d] = %.17g, serial %.17g\n", i,
                               j, k, v[i][j][k], ref[i][j][k]);
                    bad++;
                }
    printf("flush_wavefront: %s\n", bad ? "FAILED" : "ok");
    return bad != 0;
}
