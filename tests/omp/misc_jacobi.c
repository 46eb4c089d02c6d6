/* a 2-D Jacobi relaxation: several sweeps inside one parallel region with
   two global grids, implicit barriers between sweeps, and a max-residual
   reduction; every grid value is compared bit-for-bit with the serial
   computation (each element is computed by the same operations). */
#include <stdio.h>
#include <math.h>
#include <omp.h>

#define NX 66
#define NY 50
#define SWEEPS 12
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

double u[NX][NY], unew[NX][NY], ref[NX][NY], refnew[NX][NY];

static void init(double g[NX][NY])
{
    int i, j;
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            g[i][j] = (i == 0 || j == 0) ? 1.0 : (i == NX - 1 ? 0.5 : 0.0);
}

int main(void)
{
    int i, j, s, bad = 0;
    double resid = 0.0, eresid = 0.0;
    init(u); init(unew); init(ref); init(refnew);
    for (s = 0; s < SWEEPS; s++) {
        eresid = 0.0;
        for (i = 1; i < NX - 1; i++)
            for (j = 1; j < NY - 1; j++) {
                refnew[i][j] = 0.25 * (ref[i - 1][j] + ref[i + 1][j] +
                                       ref[i][j - 1] + ref[i][j + 1]);
                double d = fabs(refnew[i][j] - ref[i][j]);
                if (d > eresid) eresid = d;
            }
        for (i = 1; i < NX - 1; i++)
            for (j = 1; j < NY - 1; j++)
                ref[i][j] = refnew[i][j];
    }
#pragma omp parallel private(s, j)
    {
        for (s = 0; s < SWEEPS; s++) {
#pragma omp single
            resid = 0.0;
#pragma omp for reduction(max:resid)
            for (i = 1; i < NX - 1; i++)
                for (j = 1; j < NY - 1; j++) {
                    unew[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] +
                                         u[i][j - 1] + u[i][j + 1]);
                    double d = fabs(unew[i][j] - u[i][j]);
                    if (d > resid) resid = d;
                }
#pragma omp for
            for (i = 1; i < NX - 1; i++)
                for (j = 1; j < NY - 1; j++)
                    u[i][j] = unew[i][j];
        }
    }
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            bad += u[i][j] != ref[i][j];
    CHECK(bad == 0, "grid differs from the serial computation");
    CHECK(resid == eresid, "residual");
    double cs = 0;
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            cs += u[i][j] * (i + 1);
    printf("residual %.10f checksum %.6f\n", resid, cs);
    printf("misc_jacobi: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
