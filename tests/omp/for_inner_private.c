/* for: only the associated loop variable is made private; an inner loop
   variable declared outside must be listed private, or declared in the body
   or in the for statement (C99).  Includes a triangular inner loop. */
#include <stdio.h>
#include <omp.h>

#define N 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static long tri[N], sq[N], c99[N];
    int i, j;

#pragma omp parallel for private(j)
    for (i = 0; i < N; i++) {
        tri[i] = 0;
        for (j = 0; j <= i; j++)
            tri[i] += j;
    }

#pragma omp parallel for
    for (i = 0; i < N; i++) {
        int jj;
        sq[i] = 0;
        for (jj = 0; jj < i; jj++)
            sq[i] += 2 * jj + 1;
    }

#pragma omp parallel for schedule(dynamic, 7)
    for (int ii = 0; ii < N; ii++) {
        c99[ii] = 0;
        for (int kk = ii; kk > 0; kk -= 2)
            c99[ii] += 1;
    }

    for (i = 0; i < N; i++) {
        CHECK(tri[i] == (long)i * (i + 1) / 2, "triangular with private(j)");
        CHECK(sq[i] == (long)i * i, "inner variable declared in body");
        CHECK(c99[i] == (i + 1) / 2, "C99 for-declarations");
    }
    printf("tri[N-1] %ld sq[N-1] %ld\n", tri[N - 1], sq[N - 1]);
    printf("for_inner_private: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
