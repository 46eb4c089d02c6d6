/* atomic on a floating type: every OpenMP 3.0 form valid for it
   ("x += expr", "x -= expr", "x *= expr", "x /= expr"), executed
   concurrently; all values are integers or powers of two that are exactly
   representable, so the result does not depend on the order.
   One template built once per type (TYPE), with the same flags for gcc and
   ompcc (tests/omp/conformance.py reads the instance lines: a test name,
   then the flags).
   instance: atomic_float -DTYPE=float
   instance: atomic_double -DTYPE=double */
#include <stdio.h>
#include <omp.h>

#define N 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define STR_(x) #x
#define STR(x) STR_(x)

typedef TYPE T;

int main(void)
{
    T add = 0.5, sub = 10000, mul = 1, dv = 1073741824.0, mixed = 0;
    T e_add = 0.5, e_sub = 10000, e_mul = 1, e_dv = 1073741824.0, e_mixed = 0;
    int i;

#pragma omp parallel for schedule(dynamic, 3)
    for (i = 0; i < N; i++) {
#pragma omp atomic
        add += (T)(i % 7 + 1);
#pragma omp atomic
        sub -= (T)0.5 * i;
        if (i % 10 == 0) {
#pragma omp atomic
            mul *= (T)2;
        }
        if (i % 20 == 0) {
#pragma omp atomic
            dv /= (T)4;
        }
#pragma omp atomic
        mixed += 0.25 * (i % 4);      /* double expression, converted */
    }
    for (i = 0; i < N; i++) {
        e_add += (T)(i % 7 + 1);
        e_sub -= (T)0.5 * i;
        if (i % 10 == 0) e_mul *= (T)2;
        if (i % 20 == 0) e_dv /= (T)4;
        e_mixed += 0.25 * (i % 4);
    }
    CHECK(add == e_add, "+=");
    CHECK(sub == e_sub, "-=");
    CHECK(mul == e_mul, "*=");
    CHECK(dv == e_dv, "/=");
    CHECK(mixed == e_mixed, "+= double expression");
    printf("add %.2f sub %.2f mul %.1f div %.1f mixed %.2f\n",
           (double)add, (double)sub, (double)mul, (double)dv, (double)mixed);
    printf("atomic on %s: %s\n", STR(TYPE), nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
