/* schedule(runtime) loops of every shape the runtime sees, run three times
   each: under ompdsm the test sets OMP_SCHEDULE=profiled and eval_size /
   eval_skip through OMPDSM_PROFILED (tests/omp/meson.build) and switches
   chunk sizes with omp_set_schedule(omp_sched_profiled, c); natively they
   are static.  Every iteration must run exactly once (a reduced count
   equals the trip count and every iteration is marked), lastprivate gets
   the last iteration's value, ordered regions run in order, reductions
   and collapse(2) are exact. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define M 3000
static char mark[M];
static int seq[M], nseq;

static void clear(void)
{
    int i;
    for (i = 0; i < M; i++)
        mark[i] = 0;
    nseq = 0;
}

static int unmarked(int n)
{
    int i, bad = 0;
    for (i = 0; i < n; i++)
        bad += mark[i] != 1;
    return bad;
}

static void shapes(int n)
{
    long cnt;
    int i, last = -1;
    unsigned u;
    long long x, xlast = 0;
    double sum;

    /* int, step 1, n from the caller (0, fewer than the team, many). */
    clear();
    cnt = 0;
#pragma omp parallel for schedule(runtime) reduction(+:cnt) lastprivate(last)
    for (i = 0; i < n; i++) {
        mark[i] = 1;
        cnt++;
        last = i;
    }
    CHECK(cnt == n && unmarked(n) == 0, "int 0..n-1");
    if (n)
        CHECK(last == n - 1, "lastprivate int");

    /* unsigned above INT_MAX, step 7 (gcc 12 miscounts decreasing
       unsigned loops with runtime schedules: see for_unsigned.c) */
    clear();
    cnt = 0;
#pragma omp parallel for schedule(runtime) reduction(+:cnt)
    for (u = 4000000000u; u < 4000002000u; u += 7u) {
        mark[(u - 4000000000u) / 7u] = 1;
        cnt++;
    }
    CHECK(cnt == 286 && unmarked(286) == 0, "unsigned step 7");

    /* 64-bit, beyond 32 bits, stride 3, lastprivate */
    clear();
    cnt = 0;
#pragma omp parallel for schedule(runtime) reduction(+:cnt) lastprivate(xlast)
    for (x = -5000000000LL; x < -5000000000LL + 2500; x += 3) {
        mark[(x + 5000000000LL) / 3] = 1;
        cnt++;
        xlast = x;
    }
    CHECK(cnt == 834 && unmarked(834) == 0, "long long stride 3");
    CHECK(xlast == -5000000000LL + 2499, "lastprivate long long");

    /* signed, >= with negative step 2 */
    clear();
    cnt = 0;
#pragma omp parallel for schedule(runtime) reduction(+:cnt)
    for (i = 100; i >= -100; i -= 2) {
        mark[(100 - i) / 2] = 1;
        cnt++;
    }
    CHECK(cnt == 101 && unmarked(101) == 0, "signed step -2");

    /* zero-trip */
    cnt = 0;
#pragma omp parallel for schedule(runtime) reduction(+:cnt)
    for (i = 5; i < 5; i++)
        cnt++;
    CHECK(cnt == 0, "zero-trip");

    /* two nowait loops, then a barrier; a reduction of doubles */
    clear();
    cnt = 0;
    sum = 0;
#pragma omp parallel reduction(+:cnt, sum)
    {
        int k;
#pragma omp for schedule(runtime) nowait
        for (k = 0; k < 700; k++) {
            mark[k] = 1;
            cnt++;
            sum += k * 0.5;
        }
#pragma omp for schedule(runtime) nowait
        for (k = 700; k < 1500; k++) {
            mark[k] = 1;
            cnt++;
            sum += k * 0.5;
        }
#pragma omp barrier
    }
    CHECK(cnt == 1500 && unmarked(1500) == 0, "nowait loops");
    CHECK(sum == 0.5 * 1499.0 * 1500.0 / 2.0, "double reduction");

    /* ordered */
    clear();
#pragma omp parallel for schedule(runtime) ordered
    for (i = 0; i < 120; i++) {
        mark[i] = 1;
#pragma omp ordered
        seq[nseq++] = i;
    }
    {
        int bad = nseq != 120;
        for (i = 0; i < nseq && i < 120; i++)
            bad += seq[i] != i;
        CHECK(bad == 0 && unmarked(120) == 0, "ordered");
    }

    /* collapse(2) */
    clear();
    cnt = 0;
    {
        int a, b;
#pragma omp parallel for schedule(runtime) collapse(2) reduction(+:cnt)
        for (a = 0; a < 37; a++)
            for (b = 0; b < 41; b++) {
                mark[a * 41 + b] = 1;
                cnt++;
            }
    }
    CHECK(cnt == 37 * 41 && unmarked(37 * 41) == 0, "collapse(2)");
}

int main(void)
{
    int rep, c, chunks[] = {0, 1, 3, 7};
    int sizes[] = {0, 2, 5, 2999};
    for (c = 0; c < 4; c++) {
#ifdef OMPDSM_OMP_H
        {
            omp_sched_t k;
            int m;
            omp_set_schedule(omp_sched_profiled, chunks[c]);
            omp_get_schedule(&k, &m);
            CHECK(k == omp_sched_profiled && m == chunks[c],
                  "get_schedule profiled");
        }
#endif
        for (rep = 0; rep < 3; rep++)
            shapes(sizes[(c + rep) % 4]);
    }
    printf("sched_profiled: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
