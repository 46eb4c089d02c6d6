/* for with <= and >= loop conditions: inclusive bounds, strides landing
   exactly on the bound or not, single-iteration loops, bounds near INT_MAX
   and INT_MIN. */
#include <stdio.h>
#include <limits.h>
#include <omp.h>

#define R 1000
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
    int i;

    for (i = 0; i <= 100; i++) expv[i]++;
#pragma omp parallel for
    for (i = 0; i <= 100; i++) got[i]++;
    compare("i <= 100");

    for (i = 0; i <= 100; i += 10) expv[i]++;
#pragma omp parallel for schedule(static, 2)
    for (i = 0; i <= 100; i += 10) got[i]++;
    compare("i <= 100 step 10");

    for (i = 0; i <= 99; i += 10) expv[i]++;
#pragma omp parallel for schedule(dynamic)
    for (i = 0; i <= 99; i += 10) got[i]++;
    compare("i <= 99 step 10");

    for (i = 100; i >= 0; i--) expv[i]++;
#pragma omp parallel for
    for (i = 100; i >= 0; i--) got[i]++;
    compare("i >= 0");

    for (i = 100; i >= -5; i -= 7) expv[i + 5]++;
#pragma omp parallel for schedule(guided)
    for (i = 100; i >= -5; i -= 7) got[i + 5]++;
    compare("i >= -5 step -7");

    for (i = 5; i <= 5; i++) expv[i]++;
#pragma omp parallel for
    for (i = 5; i <= 5; i++) got[i]++;
    compare("single iteration <=");

    for (i = 7; i >= 7; i--) expv[i]++;
#pragma omp parallel for
    for (i = 7; i >= 7; i--) got[i]++;
    compare("single iteration >=");

    for (i = INT_MAX - 300; i <= INT_MAX - 1; i++) expv[i - (INT_MAX - 300)]++;
#pragma omp parallel for schedule(static)
    for (i = INT_MAX - 300; i <= INT_MAX - 1; i++) got[i - (INT_MAX - 300)]++;
    compare("up to INT_MAX - 1");

    for (i = INT_MIN + 400; i >= INT_MIN + 1; i -= 2) expv[i - INT_MIN]++;
#pragma omp parallel for schedule(static, 3)
    for (i = INT_MIN + 400; i >= INT_MIN + 1; i -= 2) got[i - INT_MIN]++;
    compare("down to INT_MIN + 1");

    printf("for_le_ge: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
