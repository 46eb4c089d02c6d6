/* function-static variables (initialised, uninitialised, arrays, a static
   pointer initialised to another static) are shared by all threads: updates
   under critical/atomic from every thread accumulate, and values persist
   between calls and regions. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int ticket(void)
{
    static int next = 100;
    int mine;
#pragma omp critical(ticket)
    {
        mine = next;
        next = next + 1;
    }
    return mine;
}

static long *counters(void)
{
    static long cnt[3];
    return cnt;
}

static double *scale_ptr(void)
{
    static double scale = 0.5;
    static double *p = &scale;
    return p;
}

int main(void)
{
    static int seen[1024];
    int team = 0, i, bad = 0;
#pragma omp parallel
    {
        int k;
#pragma omp master
        team = omp_get_num_threads();
        for (k = 0; k < 10; k++) {
            int t = ticket();
            if (t >= 100 && t < 100 + 1024)
                seen[t - 100]++;
#pragma omp atomic
            counters()[k % 3] += 1;
        }
#pragma omp barrier
#pragma omp single
        *scale_ptr() = 4.0;
    }
    for (i = 0; i < 10 * team && i < 1024; i++)
        bad += seen[i] != 1;
    CHECK(bad == 0, "tickets from a function-static counter");
    CHECK(ticket() == 100 + 10 * team, "static persists after the region");
    long *c = counters();
    CHECK(c[0] == 4L * team && c[1] == 3L * team && c[2] == 3L * team,
          "static array");
    CHECK(*scale_ptr() == 4.0, "static pointer to static");
    printf("team %d counters %ld %ld %ld scale %.1f\n", team, c[0], c[1],
           c[2], *scale_ptr());
    printf("global_func_static: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
