/* for with negative steps (i--, i -= s, i = i - s): every iteration once,
   and the static,chunk assignment follows the logical iteration order. */
#include <stdio.h>
#include <omp.h>

#define R 2000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int expv[R], got[R];

static void compare(const char *what)
{
    int k, n = 0, bad = 0;
    for (k = 0; k < R; k++) {
        if (expv[k] != got[k])
            bad++;
        n += got[k];
        expv[k] = got[k] = 0;
    }
    CHECK(bad == 0, what);
    printf("%s: %d iterations\n", what, n);
}

int main(void)
{
    int i, step = 3;
    static int owner[R];

    for (i = 499; i >= 0; i--) expv[i]++;
#pragma omp parallel for
    for (i = 499; i >= 0; i--) got[i]++;
    compare("i-- >= 0");

    for (i = 200; i > -300; i -= step) expv[i + 300]++;
#pragma omp parallel for
    for (i = 200; i > -300; i -= step) got[i + 300]++;
    compare("i -= 3");

    for (i = -1; i > -1000; i = i - 97) expv[i + 1000]++;
#pragma omp parallel for schedule(dynamic, 2)
    for (i = -1; i > -1000; i = i - 97) got[i + 1000]++;
    compare("i = i - 97");

    for (i = 1000; i > 0; --i) expv[i]++;
#pragma omp parallel for schedule(guided)
    for (i = 1000; i > 0; --i) got[i]++;
    compare("--i");

    /* static,4 with a negative stride: logical k = (300 - i) / 2 */
    int team = 1, bad = 0;
    for (i = 300; i > 0; i -= 2) expv[i]++;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for schedule(static, 4)
        for (i = 300; i > 0; i -= 2) {
            got[i]++;
            owner[(300 - i) / 2] = omp_get_thread_num();
        }
    }
    for (i = 0; i < 150; i++)
        if (owner[i] != (i / 4) % team)
            bad++;
    CHECK(bad == 0, "static,4 assignment with negative step");
    compare("static,4 i -= 2");

    printf("for_neg_step: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
