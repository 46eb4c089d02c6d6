/* for with unsigned and unsigned long loop variables, including bounds near
   UINT_MAX and above INT_MAX, and decreasing unsigned loops. */
#include <stdio.h>
#include <limits.h>
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
    unsigned u;
    unsigned long ul;

    for (u = 0; u < 1000u; u++) expv[u]++;
#pragma omp parallel for
    for (u = 0; u < 1000u; u++) got[u]++;
    compare("unsigned 0..999");

    for (u = UINT_MAX - 500; u < UINT_MAX; u++) expv[u - (UINT_MAX - 500)]++;
#pragma omp parallel for schedule(static, 7)
    for (u = UINT_MAX - 500; u < UINT_MAX; u++) got[u - (UINT_MAX - 500)]++;
    compare("unsigned below UINT_MAX");

    for (u = 4000000000u; u > 3999999000u; u -= 7) expv[(4000000000u - u) / 7]++;
    /* decreasing unsigned int loops use static schedules only: gcc 12
       executes no iteration of them with dynamic/guided/runtime schedules */
#pragma omp parallel for schedule(static, 3)
    for (u = 4000000000u; u > 3999999000u; u -= 7) got[(4000000000u - u) / 7]++;
    compare("unsigned decreasing above INT_MAX");

    /* bound + step stays below UINT_MAX: gcc 12 computes the trip count in
       the type of the loop variable */
    for (u = 0; u < 3000000000u; u += 400000001u) expv[u / 400000001u]++;
#pragma omp parallel for
    for (u = 0; u < 3000000000u; u += 400000001u) got[u / 400000001u]++;
    compare("unsigned huge stride");

    for (u = 100; u >= 1; u--) expv[u]++;
#pragma omp parallel for schedule(static)
    for (u = 100; u >= 1; u--) got[u]++;
    compare("unsigned down to 1");

    for (ul = 10; ul <= 1500; ul += 3) expv[ul]++;
#pragma omp parallel for
    for (ul = 10; ul <= 1500; ul += 3) got[ul]++;
    compare("unsigned long <=");

    for (ul = 3000; ul > 10; ul -= 7) expv[ul / 7]++;
#pragma omp parallel for schedule(dynamic, 2)
    for (ul = 3000; ul > 10; ul -= 7) got[ul / 7]++;
    compare("unsigned long decreasing, dynamic");

    unsigned long sum = 0, esum = 0;
    for (u = 3000000000u; u < 3000001000u; u++) esum += u;
#pragma omp parallel for reduction(+:sum)
    for (u = 3000000000u; u < 3000001000u; u++) sum += u;
    CHECK(sum == esum, "unsigned sum above INT_MAX");
    printf("sum %lu\n", sum);

    printf("for_unsigned: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
