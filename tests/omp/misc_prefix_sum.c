/* a two-pass parallel prefix sum: each thread scans its block, a single
   computes the block offsets, then each thread adds its offset.  It relies
   on schedule(static, C) with C = ceil(N/T) giving thread t exactly the
   block [t*C, (t+1)*C) in both loops (chunks go round-robin in thread
   order, OpenMP 3.0 2.5.1). */
#include <stdio.h>
#include <omp.h>

#define N 10000
#define MAXT 256
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long a[N], pre[N];
static long block_sum[MAXT + 1];

int main(void)
{
    int i, bad = 0;
    for (i = 0; i < N; i++)
        a[i] = (i * 31) % 17 - 8;
    omp_set_dynamic(0);
    int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads(), k;
        int C = (N + n - 1) / n;
        long s = 0;
#pragma omp for schedule(static, C)
        for (k = 0; k < N; k++) {
            s += a[k];
            pre[k] = s;                 /* prefix within the block */
        }
        block_sum[me + 1] = s;
#pragma omp barrier
#pragma omp single
        {
            int t;
            block_sum[0] = 0;
            for (t = 1; t <= n; t++)
                block_sum[t] += block_sum[t - 1];
        }
        /* block_sum[me] is now the sum of all blocks before this one */
#pragma omp for schedule(static, C)
        for (k = 0; k < N; k++)
            pre[k] += block_sum[me];
    }
    long s = 0;
    for (i = 0; i < N; i++) {
        s += a[i];
        bad += pre[i] != s;
    }
    CHECK(bad == 0, "prefix sums");
    printf("total %ld pre[N/2] %ld\n", s, pre[N / 2]);
    printf("misc_prefix_sum: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
