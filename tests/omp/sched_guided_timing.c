/* schedule(guided, k) under timing: each thread, at the start of a chunk,
   waits (flushing and sleeping briefly) until another thread has taken the
   chunk after it, so that no two consecutive chunks go to one thread and
   every chunk boundary is seen.  Then OpenMP's rule for guided holds for
   every chunk, in the order of the iterations: its size is proportional to
   the unassigned iterations divided by the threads (at most
   ceil(unassigned / threads), never more than the chunk before it), and at
   least k except for the last one.  (libgomp hands out exactly
   ceil(unassigned / threads); libomp half of that.) */
#include <stdio.h>
#include <unistd.h>
#include <omp.h>

#define N 600
#define K 3
#define MAXC N

static int lo_of[MAXC], nchunks, finished;

/* a chunk starting after lo was taken, or every other thread left the loop */
static int later_taken(int lo, int others)
{
    int j, n, f, r = 0;
#pragma omp critical (guided_log)
    {
        n = nchunks;
        f = finished;
        for (j = 0; j < n; j++)
            if (lo_of[j] > lo)
                r = 1;
    }
    return r || f == others;
}

int main(void)
{
    int T = 1, bad = 0, i, j;
#pragma omp parallel
    {
        int prev = -2, t;
#pragma omp single
        T = omp_get_num_threads();
        t = omp_get_num_threads();
#pragma omp for schedule(guided, K) nowait
        for (i = 0; i < N; i++) {
            if (i != prev + 1) { /* a new chunk */
#pragma omp critical (guided_log)
                lo_of[nchunks++] = i;
                while (!later_taken(i, t - 1)) {
#pragma omp flush
                    usleep(200);
                }
            }
            prev = i;
        }
#pragma omp critical (guided_log)
        finished++;
    }
    /* sort the chunk starts */
    for (i = 1; i < nchunks; i++)
        for (j = i; j > 0 && lo_of[j - 1] > lo_of[j]; j--) {
            int x = lo_of[j];
            lo_of[j] = lo_of[j - 1];
            lo_of[j - 1] = x;
        }
    if (nchunks < 1 || lo_of[0] != 0)
        bad++;
    for (i = 0; i < nchunks; i++) {
        int lo = lo_of[i], hi = i + 1 < nchunks ? lo_of[i + 1] : N;
        int size = hi - lo, rem = N - lo, share = (rem + T - 1) / T;
        int prev = i ? lo - lo_of[i - 1] : N;
        if (size > (share > K ? share : K) || size > prev ||
            (size < K && hi != N)) {
            if (bad++ < 10)
                printf("chunk %d: [%d, %d) of %d iterations after one of %d "
                       "(%d unassigned, %d threads, chunk %d)\n", i, lo, hi,
                       size, prev, rem, T, K);
        }
    }
    printf("guided under timing: %s\n", bad ? "FAILED" : "ok");
    return bad != 0;
}
