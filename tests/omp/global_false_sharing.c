/* neighbouring elements of global char, short, int and double arrays are
   written by different threads in the same phase (schedule(static,1)),
   then every element is checked: concurrent writes to different bytes of
   the same page or cache line must not be lost. */
#include <stdio.h>
#include <omp.h>

#define N 4096
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

unsigned char gc[N];
short gs[N];
int gi[N];
double gd[N];

int main(void)
{
    int i, r, bad = 0;
    for (r = 1; r <= 3; r++) {
#pragma omp parallel
        {
#pragma omp for schedule(static, 1)
            for (i = 0; i < N; i++) {
                gc[i] = (unsigned char)(i * r);
                gs[i] = (short)(i - r);
            }
#pragma omp for schedule(static, 3)
            for (i = 0; i < N; i++) {
                gi[i] = i * r;
                gd[i] = i * 0.5 + r;
            }
        }
        for (i = 0; i < N; i++)
            bad += gc[i] != (unsigned char)(i * r) || gs[i] != (short)(i - r) ||
                   gi[i] != i * r || gd[i] != i * 0.5 + r;
    }
    CHECK(bad == 0, "lost writes to neighbouring elements");
    long s = 0;
    for (i = 0; i < N; i++)
        s += gc[i] + gs[i];
    printf("checksum %ld\n", s);
    printf("global_false_sharing: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
