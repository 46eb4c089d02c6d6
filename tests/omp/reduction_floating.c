/* reduction on a floating type with every operator OpenMP 3.0 allows for
   it (+ * - && ||), on a combined parallel for and on a for inside a
   region; the original values take part; expected values are recomputed
   serially; every value is a multiple of SCALE, a power of two, so sums
   are exact in any order.  The loops are long enough that threads
   overlap, so a missing reduction clause shows up as lost updates.
   One template built once per type, with the same flags for gcc and ompcc
   (tests/omp/conformance.py reads the instance lines: a test name, then
   the flags).
   instance: reduction_float -DTYPE=float -DSCALE=0.5f
   instance: reduction_double -DTYPE=double -DSCALE=0.25 */
#include <stdio.h>
#include <omp.h>

#define N 100000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define STR_(x) #x
#define STR(x) STR_(x)

typedef TYPE T;
static T v(int i) { return (T)((T)(i % 5 + 1) * SCALE); }

int main(void)
{
    T s = 7, p = 3, d = 100;
    T e_s = 7, e_p = 3, e_d = 100;
    T land = 1, land2 = 1, lor = 0, lor2 = 0;
    int i;

#pragma omp parallel for reduction(+:s) reduction(*:p) reduction(-:d)
    for (i = 0; i < N; i++) {
        s += v(i);
        p *= (i % (N / 5) == 0) ? (T)2 : (T)1;
        d -= v(i);
    }
    for (i = 0; i < N; i++) {
        e_s += v(i);
        e_p *= (i % (N / 5) == 0) ? (T)2 : (T)1;
        e_d -= v(i);
    }

#pragma omp parallel
    {
        int k;
#pragma omp for reduction(&&:land, land2) reduction(||:lor, lor2)
        for (k = 0; k < N; k++) {
            land = land && (k >= 0);
            land2 = land2 && (k != 50);
            lor = lor || (k == 77);
            lor2 = lor2 || (k < 0);
        }
    }

    CHECK(s == e_s, "+");
    CHECK(p == e_p, "*");
    CHECK(d == e_d, "-");
    CHECK(land == 1 && land2 == 0, "&&");
    CHECK(lor == 1 && lor2 == 0, "||");
    printf("+ %.2f * %.2f - %.2f\n", (double)s, (double)p, (double)d);
    printf("&& %d %d || %d %d\n", (int)land, (int)land2, (int)lor, (int)lor2);
    printf("reduction on %s: %s\n", STR(TYPE), nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
