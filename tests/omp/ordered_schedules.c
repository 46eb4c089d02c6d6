/* ordered with schedule(static,c), dynamic, dynamic,c, guided and runtime,
   on loops with negative and non-unit steps: ordered regions follow the
   sequential iteration order. */
#include <stdio.h>
#include <omp.h>

#define MAXN 500
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int seq[MAXN], pos;

static void check_seq(int n, int start, int step, const char *what)
{
    int k, bad = 0;
    for (k = 0; k < n; k++)
        bad += seq[k] != start + k * step;
    CHECK(pos == n && bad == 0, what);
    printf("%s: %d ordered iterations\n", what, pos);
    pos = 0;
}

int main(void)
{
    int i;
    omp_set_schedule(omp_sched_dynamic, 2);

#pragma omp parallel for ordered schedule(static, 3)
    for (i = 0; i < 100; i++) {
#pragma omp ordered
        seq[pos++] = i;
    }
    check_seq(100, 0, 1, "static,3");

#pragma omp parallel for ordered schedule(dynamic)
    for (i = 300; i > 0; i -= 3) {
#pragma omp ordered
        seq[pos++] = i;
    }
    check_seq(100, 300, -3, "dynamic, step -3");

#pragma omp parallel for ordered schedule(dynamic, 4)
    for (i = -50; i <= 50; i += 2) {
#pragma omp ordered
        seq[pos++] = i;
    }
    check_seq(51, -50, 2, "dynamic,4 step 2");

#pragma omp parallel for ordered schedule(guided)
    for (i = 0; i < 257; i++) {
#pragma omp ordered
        seq[pos++] = i;
    }
    check_seq(257, 0, 1, "guided");

#pragma omp parallel for ordered schedule(runtime)
    for (i = 99; i >= 0; i--) {
#pragma omp ordered
        seq[pos++] = i;
    }
    check_seq(100, 99, -1, "runtime dynamic,2 step -1");

    printf("ordered_schedules: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
