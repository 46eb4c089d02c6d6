/* global scalars of every basic type, initialised and uninitialised (zero),
   file-static and external linkage, const: read by all threads in a
   region, updated in parallel, and read back in serial code. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

char g_c = 'x';
short g_s = -7;
int g_i = 1234;
long g_l = 1L << 40;
long long g_q = -(1LL << 50);
unsigned g_u = 3000000000u;
float g_f = 1.25f;
double g_d = -2.5e100;
static int s_i = 99;
const int k_i = 31;
const double k_d = 0.0625;

int z_i;
double z_d;
static long z_l;
char z_c;

int main(void)
{
    int bad = 0, team = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp master
        team = omp_get_num_threads();
        if (g_c != 'x' || g_s != -7 || g_i != 1234 || g_l != 1L << 40 ||
            g_q != -(1LL << 50) || g_u != 3000000000u || g_f != 1.25f ||
            g_d != -2.5e100 || s_i != 99 || k_i != 31 || k_d != 0.0625)
            bad++;
        if (z_i != 0 || z_d != 0.0 || z_l != 0 || z_c != 0)
            bad++;
#pragma omp barrier
#pragma omp atomic
        z_i += 2;
#pragma omp atomic
        z_d += 0.5;
#pragma omp atomic
        z_l += 1L << 33;
#pragma omp atomic
        g_i -= 1;
#pragma omp single
        {
            g_c = 'y';
            z_c = 'z';
            g_d = 1.0;
            s_i = k_i * 2;
        }
        if (g_c != 'y' || z_c != 'z' || g_d != 1.0 || s_i != 62)
            bad++;
    }
    CHECK(bad == 0, "global values seen in the region");
    CHECK(z_i == 2 * team && z_d == 0.5 * team && z_l == (long)team << 33,
          "uninitialised globals updated");
    CHECK(g_i == 1234 - team, "initialised global updated");
    printf("team %d z_i %d z_d %.1f g_i %d g_c %c z_c %c s_i %d\n", team, z_i,
           z_d, g_i, g_c, z_c, s_i);
    printf("global_scalars: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
