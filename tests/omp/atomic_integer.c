/* atomic on an integer type: every OpenMP 3.0 form "x binop= expr" with
   binop + * - / & ^ | << >>, executed concurrently by all threads; the
   expected values come from the same operations done serially (each
   operation commutes with itself, so the order does not matter).
   One template built once per type (TYPE), with the same flags for gcc and
   ompcc (tests/omp/conformance.py reads the instance lines: a test name,
   then the flags).
   instance: atomic_int -DTYPE=int
   instance: atomic_long -DTYPE=long
   instance: atomic_unsigned -DTYPE=unsigned
   instance: atomic_longlong "-DTYPE=long long" */
#include <stdio.h>
#include <omp.h>

#define N 200
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

#define STR_(x) #x
#define STR(x) STR_(x)

typedef TYPE T;
static T bump(int i) { return (T)(i % 7 + 1); }

int main(void)
{
    T add = 5, sub = 1000, mul = 1, dv = (T)1 << 30, band = (T)~(T)0;
    T bor = 0, bxor = 0, shl = 1, shr = (T)1 << 30;
    T e_add = 5, e_sub = 1000, e_mul = 1, e_dv = (T)1 << 30, e_band = (T)~(T)0;
    T e_bor = 0, e_bxor = 0, e_shl = 1, e_shr = (T)1 << 30;
    int i;

#pragma omp parallel for schedule(dynamic, 3)
    for (i = 0; i < N; i++) {
#pragma omp atomic
        add += bump(i) * 3;
#pragma omp atomic
        sub -= (T)i;
        if (i % 10 == 0) {
#pragma omp atomic
            mul *= 2;
        }
        if (i % 8 == 0) {
#pragma omp atomic
            dv /= 2;
        }
#pragma omp atomic
        band &= (T)~((T)1 << (i % 30));
#pragma omp atomic
        bor |= (T)1 << (i % 29);
#pragma omp atomic
        bxor ^= (T)(i * 37 + 11);
        if (i % 20 == 0) {
#pragma omp atomic
            shl <<= 1;
        }
        if (i % 16 == 0) {
#pragma omp atomic
            shr >>= 1;
        }
    }

    for (i = 0; i < N; i++) {
        e_add += bump(i) * 3;
        e_sub -= (T)i;
        if (i % 10 == 0) e_mul *= 2;
        if (i % 8 == 0) e_dv /= 2;
        e_band &= (T)~((T)1 << (i % 30));
        e_bor |= (T)1 << (i % 29);
        e_bxor ^= (T)(i * 37 + 11);
        if (i % 20 == 0) e_shl <<= 1;
        if (i % 16 == 0) e_shr >>= 1;
    }
    CHECK(add == e_add, "+=");
    CHECK(sub == e_sub, "-=");
    CHECK(mul == e_mul, "*=");
    CHECK(dv == e_dv, "/=");
    CHECK(band == e_band, "&=");
    CHECK(bor == e_bor, "|=");
    CHECK(bxor == e_bxor, "^=");
    CHECK(shl == e_shl, "<<=");
    CHECK(shr == e_shr, ">>=");
    printf("add %lld sub %lld mul %lld div %lld\n", (long long)add, (long long)sub,
           (long long)mul, (long long)dv);
    printf("and %lld or %lld xor %lld shl %lld shr %lld\n", (long long)band,
           (long long)bor, (long long)bxor, (long long)shl, (long long)shr);
    printf("atomic on %s: %s\n", STR(TYPE), nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
