/* per-thread private histograms (a local array in the region) filled by a
   worksharing loop and merged into the shared histogram under critical;
   also a variant merged with atomics after a nowait loop. */
#include <stdio.h>
#include <omp.h>

#define NB 32
#define N 20000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int key(int i) { return (int)(((unsigned)i * 40503u) >> 7) % NB; }

int main(void)
{
    long hist[NB] = {0}, hist2[NB] = {0}, ehist[NB] = {0};
    int i, b, bad = 0;
#pragma omp parallel
    {
        long mine[NB];
        int k;
        for (k = 0; k < NB; k++)
            mine[k] = 0;
#pragma omp for nowait
        for (k = 0; k < N; k++)
            mine[key(k)]++;
#pragma omp critical
        for (k = 0; k < NB; k++)
            hist[k] += mine[k];
#pragma omp for schedule(dynamic, 100)
        for (k = 0; k < N; k++) {
#pragma omp atomic
            hist2[key(N - 1 - k)]++;
        }
    }
    for (i = 0; i < N; i++)
        ehist[key(i)]++;
    for (b = 0; b < NB; b++)
        bad += hist[b] != ehist[b] || hist2[b] != ehist[b];
    CHECK(bad == 0, "histograms");
    printf("hist[0] %ld hist[%d] %ld\n", hist[0], NB - 1, hist[NB - 1]);
    printf("misc_histogram_private: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
