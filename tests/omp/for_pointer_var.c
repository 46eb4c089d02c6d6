/* for with a pointer loop variable (allowed for C in OpenMP 3.0), with unit
   and non-unit strides and a static,chunk assignment check. */
#include <stdio.h>
#include <omp.h>

#define N 600
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int arr[N], owner[N];
    double darr[N];
    int *p, i, team = 1, bad = 0;
    double *q;

#pragma omp parallel for
    for (p = arr; p < arr + N; p++)
        *p = (int)(p - arr) * 2;
    for (i = 0; i < N; i++)
        CHECK(arr[i] == 2 * i, "p++");

#pragma omp parallel for schedule(dynamic, 4)
    for (p = arr; p < arr + N; p += 3)
        *p += 1;
    for (i = 0; i < N; i++)
        CHECK(arr[i] == 2 * i + (i % 3 == 0), "p += 3");

    for (i = 0; i < N; i++)
        darr[i] = 0.0;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for schedule(static, 6)
        for (q = darr + N - 1; q > darr; q--) {
            *q = 1.5;
            owner[N - 1 - (q - darr)] = omp_get_thread_num();
        }
    }
    for (i = 0; i < N - 1; i++)
        if (owner[i] != (i / 6) % team)
            bad++;
    CHECK(bad == 0, "q-- static,6 assignment");
    double s = 0.0;
    for (i = 0; i < N; i++)
        s += darr[i];
    CHECK(s == 1.5 * (N - 1), "q-- values");
    printf("sum %.1f\n", s);
    printf("for_pointer_var: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
