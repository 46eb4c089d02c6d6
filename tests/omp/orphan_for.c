/* orphaned for: a worksharing loop in a function called from a parallel
   region shares its iterations among the team (including a nowait loop
   followed by an orphaned barrier); called from serial code it runs all
   iterations on the one thread. */
#include <stdio.h>
#include <omp.h>

#define N 500
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int hits[N];
static double out[N];

static void mark(int start, int n)
{
    int i;
#pragma omp for schedule(dynamic, 8)
    for (i = start; i < start + n; i++)
        hits[i]++;
}

static void scale(const double *in, double f)
{
    int i;
#pragma omp for nowait
    for (i = 0; i < N; i++)
        out[i] = in[i] * f;
#pragma omp barrier
}

int main(void)
{
    static double in[N];
    int i, bad = 0;
    for (i = 0; i < N; i++)
        in[i] = i;
#pragma omp parallel
    {
        mark(0, N / 2);
        mark(N / 2, N / 2);
        mark(0, N);
        scale(in, 0.5);
    }
    for (i = 0; i < N; i++)
        bad += hits[i] != 2 || out[i] != i * 0.5;
    CHECK(bad == 0, "orphaned for inside a region");

    mark(0, N);                     /* serial call */
    scale(in, 2.0);
    bad = 0;
    for (i = 0; i < N; i++)
        bad += hits[i] != 3 || out[i] != i * 2.0;
    CHECK(bad == 0, "orphaned for called from serial code");
    printf("hits[0] %d out[N-1] %.1f\n", hits[0], out[N - 1]);
    printf("orphan_for: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
