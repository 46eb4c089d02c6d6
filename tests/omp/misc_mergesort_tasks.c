/* merge sort with tasks (recursive split, taskwait, merge) on a malloc'ed
   array, compared with the serial insertion-sorted copy; the result is
   sorted and a permutation of the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#define N 3000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static void merge(int *a, int *tmp, int lo, int mid, int hi)
{
    int i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < hi)
        tmp[k++] = a[j++];
    memcpy(a + lo, tmp + lo, (hi - lo) * sizeof *a);
}

static void msort(int *a, int *tmp, int lo, int hi)
{
    if (hi - lo < 2)
        return;
    int mid = lo + (hi - lo) / 2;
    if (hi - lo > 64) {
#pragma omp task
        msort(a, tmp, lo, mid);
#pragma omp task
        msort(a, tmp, mid, hi);
#pragma omp taskwait
    } else {
        msort(a, tmp, lo, mid);
        msort(a, tmp, mid, hi);
    }
    merge(a, tmp, lo, mid, hi);
}

int main(void)
{
    int *a = malloc(N * sizeof *a), *tmp = malloc(N * sizeof *tmp);
    int *ref = malloc(N * sizeof *ref);
    int i, j, bad = 0;
    if (!a || !tmp || !ref)
        return 1;
    for (i = 0; i < N; i++)
        a[i] = ref[i] = (int)((i * 2654435761u) % 10007u) - 5000;
    for (i = 1; i < N; i++) {           /* serial insertion sort */
        int v = ref[i];
        for (j = i - 1; j >= 0 && ref[j] > v; j--)
            ref[j + 1] = ref[j];
        ref[j + 1] = v;
    }
#pragma omp parallel
    {
#pragma omp single
        msort(a, tmp, 0, N);
    }
    for (i = 0; i < N; i++)
        bad += a[i] != ref[i];
    CHECK(bad == 0, "sorted array differs");
    printf("min %d median %d max %d\n", a[0], a[N / 2], a[N - 1]);
    free(a); free(tmp); free(ref);
    printf("misc_mergesort_tasks: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
