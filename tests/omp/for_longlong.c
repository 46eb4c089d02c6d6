/* for with long long and unsigned long long loop variables whose values and
   strides exceed 32 bits. */
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
    long long ll;
    unsigned long long ull;
    const long long base = 1LL << 40;

    for (ll = base; ll < base + 1000; ll++) expv[ll - base]++;
#pragma omp parallel for
    for (ll = base; ll < base + 1000; ll++) got[ll - base]++;
    compare("long long above 2^40");

    for (ll = 5LL << 33; ll > -(5LL << 33); ll -= 1LL << 33)
        expv[((5LL << 33) - ll) >> 33]++;
#pragma omp parallel for schedule(static, 1)
    for (ll = 5LL << 33; ll > -(5LL << 33); ll -= 1LL << 33)
        got[((5LL << 33) - ll) >> 33]++;
    compare("long long stride 2^33");

    for (ull = 0; ull < 0xFFFFFFFFFFULL; ull += 0x1000000000ULL)
        expv[ull / 0x1000000000ULL]++;
#pragma omp parallel for schedule(dynamic)
    for (ull = 0; ull < 0xFFFFFFFFFFULL; ull += 0x1000000000ULL)
        got[ull / 0x1000000000ULL]++;
    compare("unsigned long long stride 2^36");

    /* static,3 assignment of a long long loop */
    static int owner[100];
    int team = 1, bad = 0, k;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for schedule(static, 3)
        for (ll = -(1LL << 35); ll < -(1LL << 35) + 100; ll++)
            owner[ll + (1LL << 35)] = omp_get_thread_num();
    }
    for (k = 0; k < 100; k++)
        if (owner[k] != (k / 3) % team)
            bad++;
    CHECK(bad == 0, "static,3 assignment");

    long long sum = 0, esum = 0;
    for (ll = 3000000000LL; ll <= 3000000000LL * 4; ll += 7777777LL) esum += ll;
#pragma omp parallel for reduction(+:sum)
    for (ll = 3000000000LL; ll <= 3000000000LL * 4; ll += 7777777LL) sum += ll;
    CHECK(sum == esum, "long long sum");
    printf("sum %lld\n", sum);

    printf("for_longlong: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
