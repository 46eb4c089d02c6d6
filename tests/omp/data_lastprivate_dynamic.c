/* lastprivate on a dynamic loop whose last thread is the fast one: every
 * thread but the last sleeps in its iterations, so the last thread (which
 * on ompdsm owns the final share of the chunks) runs out of work first and
 * would go on to take chunks from the others.  The value copied out must
 * still be the one of the sequentially last iteration, also when the loop
 * runs twice in a row in one region (nowait) and in a combined construct. */
#include <stdio.h>
#include <time.h>
#include <omp.h>

#define N 240
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static void nap(void)
{
    struct timespec ts = {0, 200000}; /* 0.2 ms */
    nanosleep(&ts, NULL);
}

int main(void)
{
    int i, last = -1, sq = -1, other = -1;
    double d = -1.0;
#pragma omp parallel for schedule(dynamic) lastprivate(last, d, i)
    for (i = 0; i < N; i++) {
        if (omp_get_thread_num() != omp_get_num_threads() - 1)
            nap();
        last = i;
        d = i * 0.25;
    }
    CHECK(last == N - 1, "combined construct: int");
    CHECK(d == (N - 1) * 0.25, "combined construct: double");
    CHECK(i == N, "loop variable after the loop");

#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 2) lastprivate(sq) nowait
        for (i = 0; i < N; i++) {
            if (omp_get_thread_num() != omp_get_num_threads() - 1)
                nap();
            sq = i * i;
        }
#pragma omp for schedule(dynamic, 3) lastprivate(other)
        for (i = 0; i < N; i++) {
            if (omp_get_thread_num() != omp_get_num_threads() - 1)
                nap();
            other = 3 * i;
        }
    }
    CHECK(sq == (N - 1) * (N - 1), "orphan-free for, chunk 2");
    CHECK(other == 3 * (N - 1), "second loop, chunk 3");
    printf("last %d d %g sq %d other %d\n", last, d, sq, other);
    printf("data_lastprivate_dynamic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
