/* reduction on an integer type with every operator OpenMP 3.0 allows for
   it (+ * - & | ^ && ||), on a combined parallel for and on a for inside a
   region; the original values take part; expected values are recomputed
   serially.  The loops are long enough that threads overlap, so a missing
   reduction clause shows up as lost updates.
   One template built once per type, with the same flags for gcc and ompcc
   (tests/omp/conformance.py reads the instance lines: a test name, then
   the flags).  TYPE is the type; SCALE multiplies the summed values (sums
   beyond 32 bits for the wide types), SMALL keeps them within a char.
   instance: reduction_char -DTYPE=char -DSMALL
   instance: reduction_short -DTYPE=short -DSMALL
   instance: reduction_int -DTYPE=int -DSCALE=1
   instance: reduction_long -DTYPE=long "-DSCALE=(1L << 33)"
   instance: reduction_longlong "-DTYPE=long long" "-DSCALE=(1LL << 35)"
   instance: reduction_unsigned -DTYPE=unsigned -DSCALE=3000000000u
   instance: reduction_ulonglong "-DTYPE=unsigned long long" "-DSCALE=(3ULL << 40)" */
#include <stdio.h>
#include <omp.h>

#define N 100000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define STR_(x) #x
#define STR(x) STR_(x)

typedef TYPE T;
#ifdef SMALL
static T v(int i) { return (T)(i % 1000 == 0); }
#else
static T v(int i) { return (T)((T)(i % 5 + 1) * SCALE); }
#endif

int main(void)
{
    T s = 7, p = 3, d = 100;
    T e_s = 7, e_p = 3, e_d = 100;
    T a = (T)~(T)0, o = 0, x = 5;
    T e_a = (T)~(T)0, e_o = 0, e_x = 5;
    T land = 1, land2 = 1, lor = 0, lor2 = 0;
    int i;

#pragma omp parallel for reduction(+:s) reduction(*:p) reduction(-:d) \
        reduction(&:a) reduction(|:o) reduction(^:x)
    for (i = 0; i < N; i++) {
        s += v(i);
        p *= (i % (N / 5) == 0) ? (T)2 : (T)1;
        d -= v(i);
        a &= (T)~((T)1 << (i % 7));
        o |= (T)1 << (i % 6);
        x ^= (T)(i & 0x7f);
    }
    for (i = 0; i < N; i++) {
        e_s += v(i);
        e_p *= (i % (N / 5) == 0) ? (T)2 : (T)1;
        e_d -= v(i);
        e_a &= (T)~((T)1 << (i % 7));
        e_o |= (T)1 << (i % 6);
        e_x ^= (T)(i & 0x7f);
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
    CHECK(a == e_a, "&");
    CHECK(o == e_o, "|");
    CHECK(x == e_x, "^");
    CHECK(land == 1 && land2 == 0, "&&");
    CHECK(lor == 1 && lor2 == 0, "||");
    printf("+ %lld * %lld - %lld\n", (long long)s, (long long)p, (long long)d);
    printf("& %lld | %lld ^ %lld\n", (long long)a, (long long)o, (long long)x);
    printf("&& %d %d || %d %d\n", (int)land, (int)land2, (int)lor, (int)lor2);
    printf("reduction on %s: %s\n", STR(TYPE), nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
