/* Gaussian elimination without pivoting on a diagonally dominant matrix:
   the row updates of each step are a parallel for (rows are independent),
   followed by serial back substitution; the result must equal the serial
   elimination bit for bit, and the solution is checked against the known
   right-hand side. */
#include <stdio.h>
#include <math.h>
#include <omp.h>

#define N 60
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static double A[N][N + 1], B[N][N + 1];

static void setup(double M[N][N + 1])
{
    int i, j;
    for (i = 0; i < N; i++) {
        double rhs = 0;
        for (j = 0; j < N; j++) {
            M[i][j] = (i == j) ? 4.0 * N : ((i * 7 + j * 3) % 11) - 5;
            rhs += M[i][j] * (j + 1);       /* solution x[j] = j + 1 */
        }
        M[i][N] = rhs;
    }
}

static void solve(double M[N][N + 1], double *x)
{
    int i, j;
    for (i = N - 1; i >= 0; i--) {
        double s = M[i][N];
        for (j = i + 1; j < N; j++)
            s -= M[i][j] * x[j];
        x[i] = s / M[i][i];
    }
}

int main(void)
{
    int i, j, k, bad = 0;
    double x[N], xr[N];
    setup(A);
    setup(B);
    for (k = 0; k < N - 1; k++)
        for (i = k + 1; i < N; i++) {
            double f = B[i][k] / B[k][k];
            for (j = k; j <= N; j++)
                B[i][j] -= f * B[k][j];
        }
#pragma omp parallel private(k, j)
    {
        for (k = 0; k < N - 1; k++) {
#pragma omp for schedule(static, 2)
            for (i = k + 1; i < N; i++) {
                double f = A[i][k] / A[k][k];
                for (j = k; j <= N; j++)
                    A[i][j] -= f * A[k][j];
            }
        }
    }
    for (i = 0; i < N; i++)
        for (j = 0; j <= N; j++)
            bad += A[i][j] != B[i][j];
    CHECK(bad == 0, "eliminated matrix differs from the serial one");
    solve(A, x);
    solve(B, xr);
    double err = 0;
    for (i = 0; i < N; i++) {
        CHECK(x[i] == xr[i], "solution differs");
        if (fabs(x[i] - (i + 1)) > err)
            err = fabs(x[i] - (i + 1));
    }
    CHECK(err < 1e-9, "solution inaccurate");
    printf("x[0] %.6f x[N-1] %.6f\n", x[0], x[N - 1]);
    printf("misc_gauss: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
