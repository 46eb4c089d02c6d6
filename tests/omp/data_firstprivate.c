/* firstprivate on scalars of every basic type and on a pointer: each copy
   starts with the original value, changes stay private, originals are
   unchanged; firstprivate on for and on a region. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    char c = 'q';
    short s = -300;
    int i = 123456;
    long l = -9876543210L;
    long long q = 1LL << 50;
    unsigned u = 4000000000u;
    float f = 0.375f;
    double d = -1.0e10;
    int target = 3;
    int *p = &target;
    int bad = 0, k;
#pragma omp parallel firstprivate(c, s, i, l, q, u, f, d, p) reduction(+:bad)
    {
        int me = omp_get_thread_num();
        if (c != 'q' || s != -300 || i != 123456 || l != -9876543210L ||
            q != 1LL << 50 || u != 4000000000u || f != 0.375f ||
            d != -1.0e10 || p != &target || *p != 3)
            bad++;
        c = 'a' + me % 26; s = me; i = me; l = me; q = me; u = me;
        f = me; d = me; p = 0;
#pragma omp barrier
        if (c != 'a' + me % 26 || s != me || i != me || l != me || q != me ||
            u != (unsigned)me || f != me || d != me || p != 0)
            bad++;
    }
    CHECK(bad == 0, "firstprivate values");
    CHECK(c == 'q' && s == -300 && i == 123456 && l == -9876543210L &&
          q == 1LL << 50 && u == 4000000000u && f == 0.375f && d == -1.0e10 &&
          p == &target, "originals modified");

    int base = 1000, sum = 0;
#pragma omp parallel
    {
#pragma omp for firstprivate(base) reduction(+:sum)
        for (k = 0; k < 50; k++) {
            sum += base;
            base = 0;     /* the other iterations of this thread see 0 */
        }
    }
    int team = 0;
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();
    /* each thread that ran at least one iteration added 1000 once */
    CHECK(sum % 1000 == 0 && sum >= 1000 && sum <= 1000 * team,
          "firstprivate on for");
    CHECK(base == 1000, "original base modified");
    printf("c %c s %d i %d l %ld q %lld u %u f %.3f d %.1f\n", c, s, i, l, q,
           u, f, d);
    printf("data_firstprivate: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
