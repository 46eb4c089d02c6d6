/* an array of omp_lock_t, one per histogram bucket, initialised in the
   serial part and used by all threads; the histogram equals the serial
   one. */
#include <stdio.h>
#include <omp.h>

#define NB 16
#define N 2000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static omp_lock_t locks[NB];
static long hist[NB];
static double wsum[NB];

int main(void)
{
    long e_hist[NB] = {0};
    double e_wsum[NB] = {0};
    int i, b, bad = 0;
    for (b = 0; b < NB; b++)
        omp_init_lock(&locks[b]);
#pragma omp parallel for schedule(dynamic, 16)
    for (i = 0; i < N; i++) {
        int bucket = (int)((i * 2654435761u) >> 28);
        omp_set_lock(&locks[bucket]);
        hist[bucket] = hist[bucket] + 1;
        wsum[bucket] = wsum[bucket] + (i % 8) * 0.25;
        omp_unset_lock(&locks[bucket]);
    }
    for (b = 0; b < NB; b++)
        omp_destroy_lock(&locks[b]);
    for (i = 0; i < N; i++) {
        int bucket = (int)((i * 2654435761u) >> 28);
        e_hist[bucket]++;
        e_wsum[bucket] += (i % 8) * 0.25;
    }
    for (b = 0; b < NB; b++)
        bad += hist[b] != e_hist[b] || wsum[b] != e_wsum[b];
    CHECK(bad == 0, "histogram under per-bucket locks");
    printf("hist");
    for (b = 0; b < NB; b++)
        printf(" %ld", hist[b]);
    printf("\nlock_array: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
