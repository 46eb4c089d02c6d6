/* atomic on volatile objects (issue 36: the volatile rewrite nested inside
   the atomic one gave malformed C): every OpenMP 3.0 form (x++, ++x, x--,
   --x, x op= e for + - * / & | ^ << >>, a parenthesised x) on volatile
   globals (initialised and not), a volatile function-static and volatile
   locals shared by the region; then volatile objects in the expression
   (x += vg, x = x * vg, x = vg - x) and as an index (a[vi] += 1).  Counts
   are checked against closed forms and a serial replay; the volatile
   values are read after the region.  gcc 12 rejects x = x op e and
   x = e op x with a volatile x, and an atomic member of a volatile struct
   ("lvalue required"): those are in tests/translator/golden/sync.c. */
#include <stdio.h>
#include <omp.h>

#define N 240
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

volatile int g_post, g_pre, g_pdec, g_mdec, g_paren;
volatile long g_add, g_sub, g_mul = 1, g_div = 1L << 20, g_and = ~0L, g_or, g_xor;
volatile long g_shl = 1, g_shr = 1L << 20;
volatile double g_dbl;
volatile int vg = 3, vi = 2;
long plain_e, plain_mul = 1, plain_rev;
int hist[4];

static int counted(void)
{
    static volatile int calls;
    int i;
#pragma omp parallel for
    for (i = 0; i < N; i++) {
#pragma omp atomic
        calls += 2;
    }
    return calls;
}

int main(void)
{
    volatile int l_inc = 0, l_dec = 1000;
    volatile unsigned l_or = 0;
    long e_and = ~0L, e_or = 0, e_xor = 0;
    int i, calls;

#pragma omp parallel for schedule(dynamic, 5)
    for (i = 0; i < N; i++) {
#pragma omp atomic
        g_post++;
#pragma omp atomic
        ++g_pre;
#pragma omp atomic
        g_pdec--;
#pragma omp atomic
        --g_mdec;
#pragma omp atomic
        (g_paren)++;
#pragma omp atomic
        g_add += i;
#pragma omp atomic
        g_sub -= 2 * i;
        if (i % 40 == 0) {
#pragma omp atomic
            g_mul *= 3;
#pragma omp atomic
            g_div /= 2;
#pragma omp atomic
            g_shl <<= 1;
#pragma omp atomic
            g_shr >>= 1;
        }
#pragma omp atomic
        g_and &= ~(1L << (i % 13));
#pragma omp atomic
        g_or |= 1L << (i % 17);
#pragma omp atomic
        g_xor ^= (long)(i & 0x3f);
#pragma omp atomic
        g_dbl += 0.5;
#pragma omp atomic
        l_inc++;
#pragma omp atomic
        l_dec -= 2;
#pragma omp atomic
        l_or |= 1u << (i % 9);
        /* volatile objects in the expression and in the operand's index */
#pragma omp atomic
        plain_e += vg;
#pragma omp atomic
        hist[vi] += 1;
        if (i % 60 == 0) {
#pragma omp atomic
            plain_mul = plain_mul * vg;
#pragma omp atomic
            plain_rev = vg - plain_rev;
        }
    }
    calls = counted();

    for (i = 0; i < N; i++) {
        e_and &= ~(1L << (i % 13));
        e_or |= 1L << (i % 17);
        e_xor ^= (long)(i & 0x3f);
    }
    CHECK(g_post == N && g_pre == N && g_paren == N, "x++ / ++x / (x)++");
    CHECK(g_pdec == -N && g_mdec == -N, "x-- / --x");
    CHECK(g_add == (long)N * (N - 1) / 2, "x += i");
    CHECK(g_sub == -(long)N * (N - 1), "x -= 2 * i");
    CHECK(g_mul == 729, "x *= 3, 6 times");
    CHECK(g_div == 1L << 14 && g_shl == 64 && g_shr == 1L << 14, "/= <<= >>=, 6 times");
    CHECK(g_and == e_and && e_and != 0, "x &= mask");
    CHECK(g_or == e_or, "x |= bit");
    CHECK(g_xor == e_xor, "x ^= e");
    CHECK(g_dbl == 0.5 * N, "double x += 0.5");
    CHECK(l_inc == N && l_dec == 1000 - 2 * N && l_or == 0x1ff, "volatile locals");
    CHECK(plain_e == 3L * N, "x += volatile");
    CHECK(hist[2] == N && hist[0] == 0, "a[volatile index] += 1");
    CHECK(plain_mul == 81, "x = x * volatile");
    CHECK(plain_rev == 0, "x = volatile - x, an even number of times");
    CHECK(calls == 2 * N, "function-static volatile");
    printf("inc %d %d %d dec %d %d add %ld sub %ld\n", g_post, g_pre, g_paren,
           g_pdec, g_mdec, g_add, g_sub);
    printf("mul %ld div %ld shl %ld shr %ld\n", g_mul, g_div, g_shl, g_shr);
    printf("and %ld or %ld xor %ld dbl %.1f\n", g_and, g_or, g_xor, g_dbl);
    printf("locals %d %d %u\n", l_inc, l_dec, l_or);
    printf("expr %ld %d %ld %ld static %d\n", plain_e, hist[2], plain_mul,
           plain_rev, calls);
    printf("atomic_volatile: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
