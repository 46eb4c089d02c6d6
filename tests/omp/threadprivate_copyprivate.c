/* copyprivate of a threadprivate variable: the value read in a single is
   broadcast to every thread's threadprivate copy. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static double tp_val;
static int tp_vec[3];
#pragma omp threadprivate(tp_val, tp_vec)

int main(void)
{
    int bad = 0, r;
    for (r = 0; r < 4; r++) {
#pragma omp parallel reduction(+:bad)
        {
            tp_val = -1.0;
            tp_vec[0] = tp_vec[1] = tp_vec[2] = -1;
#pragma omp single copyprivate(tp_val, tp_vec)
            {
                tp_val = 2.5 * r;
                tp_vec[0] = r; tp_vec[1] = r * r; tp_vec[2] = r * r * r;
            }
            if (tp_val != 2.5 * r || tp_vec[0] != r || tp_vec[1] != r * r ||
                tp_vec[2] != r * r * r)
                bad++;
        }
    }
    CHECK(bad == 0, "copyprivate into threadprivate copies");
    CHECK(tp_val == 7.5 && tp_vec[2] == 27, "master copy");
    printf("val %.1f vec %d %d %d\n", tp_val, tp_vec[0], tp_vec[1], tp_vec[2]);
    printf("threadprivate_copyprivate: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
