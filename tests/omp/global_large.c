/* large global arrays (4 MB of double, 4 MB of int uninitialised, and a
   1 MB initialised table): initialised in parallel, read in a different
   distribution, and reduced; sums are exact. */
#include <stdio.h>
#include <omp.h>

#define BIGD (512 * 1024)
#define BIGI (1024 * 1024)
#define TAB (256 * 1024)
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

double bigd[BIGD];
int bigi[BIGI];
int table[TAB] = {5, 6, 7};

int main(void)
{
    long i;
    double dsum = 0;
    long isum = 0, tsum = 0;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (i = 0; i < BIGD; i++)
            bigd[i] = (double)(i % 1024);
#pragma omp for schedule(static, 4096)
        for (i = 0; i < BIGI; i++)
            bigi[i] = (int)(i & 7);
        /* read in reverse order: mostly data written by other threads */
#pragma omp for reduction(+:dsum, isum) schedule(dynamic, 8192)
        for (i = 0; i < BIGI; i++) {
            isum += bigi[BIGI - 1 - i];
            if (i < BIGD)
                dsum += bigd[BIGD - 1 - i];
        }
#pragma omp for reduction(+:tsum)
        for (i = 0; i < TAB; i++)
            tsum += table[i];
    }
    double edsum = (double)(BIGD / 1024) * (1023.0 * 1024.0 / 2.0);
    long eisum = (long)(BIGI / 8) * 28;
    CHECK(dsum == edsum, "double array");
    CHECK(isum == eisum, "int array");
    CHECK(tsum == 18, "initialised table");
    printf("dsum %.1f isum %ld tsum %ld\n", dsum, isum, tsum);
    printf("global_large: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
