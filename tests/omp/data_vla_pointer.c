/* Pointers to variable-length arrays used in parallel regions: a VLA
   parameter (`double v[][m]`, adjusted to a pointer to a VLA) shared by a
   region inside its function, and a local pointer to a VLA made by a cast
   from void * (the NPB 3.3 LU l2norm and FT/MG pattern).  The region
   reads and writes the caller's array through the pointer; the sizes are
   only known at run time. */
#include <stdio.h>
#include <omp.h>

#define N1 6
#define N2 7
#define N3 5
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static double grid[N3][N2][N1];
static double sums[N3];

/* VLA parameter shared by a region: every thread fills its planes, then
   the row sums are formed from the whole array. */
static void fill(int n3, int n2, int n1, double v[][n2][n1], double out[])
{
    int i, j, k;
#pragma omp parallel private(i, j, k)
    {
#pragma omp for
        for (k = 0; k < n3; k++)
            for (j = 0; j < n2; j++)
                for (i = 0; i < n1; i++)
                    v[k][j][i] = k * 100 + j * 10 + i;
#pragma omp for
        for (k = 0; k < n3; k++) {
            double s = 0.0;
            for (j = 0; j < n2; j++)
                for (i = 0; i < n1; i++)
                    s += v[k][j][i];
            out[k] = s;
        }
    }
}

/* A pointer to a VLA made from a void * (sizes from the arguments). */
static double scale(int n3, int n2, int n1, void *p, double f)
{
    double (*v)[n2][n1] = (double (*)[n2][n1])p;
    double total = 0.0;
    int k;
#pragma omp parallel for reduction(+:total)
    for (k = 0; k < n3; k++) {
        int i, j;
        for (j = 0; j < n2; j++)
            for (i = 0; i < n1; i++) {
                v[k][j][i] *= f;
                total += v[k][j][i];
            }
    }
    return total;
}

int main(void)
{
    int i, j, k;
    double expect_total = 0.0, total;
    fill(N3, N2, N1, grid, sums);
    for (k = 0; k < N3; k++) {
        double s = 0.0;
        for (j = 0; j < N2; j++)
            for (i = 0; i < N1; i++)
                s += k * 100 + j * 10 + i;
        CHECK(sums[k] == s, "row sums through a VLA parameter");
        expect_total += 2.0 * s;
    }
    total = scale(N3, N2, N1, grid, 2.0);
    CHECK(total == expect_total, "reduction through a pointer to a VLA");
    CHECK(grid[N3 - 1][N2 - 1][N1 - 1] == 2.0 * (400 + 60 + 5),
          "writes through a pointer to a VLA");
    printf("sums %g %g total %g\n", sums[0], sums[N3 - 1], total);
    printf("data_vla_pointer: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
