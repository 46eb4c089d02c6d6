/* Large globals whose neighbouring elements are written by different
 * threads in the same interval (schedule(static,1)), each thread changing
 * only some bytes of its element: arrays of double (top bytes unchanged),
 * float, short, char, a struct mixing a double and a char, a packed struct
 * with misaligned doubles, and a struct with a bit-field.  Every write must
 * survive however the DSM cuts its diffs (ompdsm diffs pages of such
 * globals in blocks as large as their smallest scalar allows). */
#include <stdio.h>
#include <omp.h>

#define N 40000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static double dv[N];
static float fv[N];
static short sv[N];
static char cv[N];
static struct mix { double x; char c; } mv[N];
static struct __attribute__((packed)) pk { char c; double x; } pv[N];
static struct bits { unsigned a : 3, b : 5; int i; } bv[N];

int main(void)
{
    int i, r;
    for (i = 0; i < N; i++) {
        dv[i] = 1.0 + i;
        fv[i] = 2.0f + (float)i;
        sv[i] = (short)(i & 0x7fff);
        cv[i] = (char)(i & 0x7f);
        mv[i].x = i;
        mv[i].c = 1;
        pv[i].c = 2;
        pv[i].x = -i;
        bv[i].a = 1;
        bv[i].b = 2;
        bv[i].i = i;
    }
    for (r = 1; r <= 3; r++) {
#pragma omp parallel for schedule(static, 1)
        for (i = 0; i < N; i++) {
            dv[i] += 1e-9 * r;        /* low mantissa bytes only */
            fv[i] += 1.0f;
            sv[i] ^= 1;               /* low byte only */
            cv[i] = (char)(cv[i] + 1);
            mv[i].c = (char)(mv[i].c + 1);
            pv[i].x += 0.5;
            bv[i].a = (bv[i].a + 1) & 7;
        }
    }
    int bad_d = 0, bad_f = 0, bad_s = 0, bad_c = 0, bad_m = 0, bad_p = 0, bad_b = 0;
    for (i = 0; i < N; i++) {
        double d = 1.0 + i;
        for (r = 1; r <= 3; r++)
            d += 1e-9 * r;
        bad_d += dv[i] != d;
        bad_f += fv[i] != 2.0f + (float)i + 3.0f;
        bad_s += sv[i] != (short)((i & 0x7fff) ^ 1);
        bad_c += cv[i] != (char)((i & 0x7f) + 3);
        bad_m += mv[i].c != 4 || mv[i].x != i;
        bad_p += pv[i].c != 2 || pv[i].x != -i + 1.5;
        bad_b += bv[i].a != 4 || bv[i].b != 2 || bv[i].i != i;
    }
    CHECK(!bad_d, "double array");
    CHECK(!bad_f, "float array");
    CHECK(!bad_s, "short array");
    CHECK(!bad_c, "char array");
    CHECK(!bad_m, "struct of a double and a char");
    CHECK(!bad_p, "packed struct");
    CHECK(!bad_b, "bit-fields");
    printf("bad %d %d %d %d %d %d %d\n", bad_d, bad_f, bad_s, bad_c, bad_m,
           bad_p, bad_b);
    printf("global_granule: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
