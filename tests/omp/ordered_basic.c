/* ordered with the default static schedule: ordered regions run in
   iteration order (recorded in a shared sequence), while the unordered part
   of each iteration runs in parallel. */
#include <stdio.h>
#include <omp.h>

#define N 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int seq[N], sq[N];
    int pos = 0, i, bad = 0;
    long running = 0, prefix[N];
#pragma omp parallel
    {
#pragma omp for ordered
        for (i = 0; i < N; i++) {
            sq[i] = i * i;                  /* unordered part */
#pragma omp ordered
            {
                seq[pos++] = i;
                running += sq[i];
                prefix[i] = running;
            }
        }
    }
    long e = 0;
    for (i = 0; i < N; i++) {
        e += (long)i * i;
        bad += seq[i] != i || prefix[i] != e;
    }
    CHECK(pos == N, "ordered region count");
    CHECK(bad == 0, "ordered regions out of order");
    printf("prefix %ld\n", prefix[N - 1]);
    printf("ordered_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
