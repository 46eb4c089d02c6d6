/* single copyprivate: the values of private variables (scalar, array,
   struct, several at once) set in the single are broadcast to the private
   copies of every thread. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct cfg { int n; double scale; char tag[8]; };

int main(void)
{
    int bad = 0;
#pragma omp parallel reduction(+:bad)
    {
        int x = -1, r;
        double arr[5];
        struct cfg c;
        long big;
        for (r = 0; r < 3; r++) {
#pragma omp single copyprivate(x, arr, c, big)
            {
                int k;
                x = 40 + r;
                for (k = 0; k < 5; k++)
                    arr[k] = k * 0.5 + r;
                c.n = 7 * r;
                c.scale = 0.125;
                c.tag[0] = 'o'; c.tag[1] = 'k'; c.tag[2] = '0' + r; c.tag[3] = 0;
                big = 1L << (20 + r);
            }
            if (x != 40 + r) bad++;
            {
                int k;
                for (k = 0; k < 5; k++)
                    if (arr[k] != k * 0.5 + r) bad++;
            }
            if (c.n != 7 * r || c.scale != 0.125 || c.tag[0] != 'o' ||
                c.tag[1] != 'k' || c.tag[2] != '0' + r || c.tag[3] != 0) bad++;
            if (big != 1L << (20 + r)) bad++;
            /* a private change must not affect other threads' copies */
            x = omp_get_thread_num() * 1000;
#pragma omp barrier
            if (x != omp_get_thread_num() * 1000) bad++;
        }
    }
    CHECK(bad == 0, "copyprivate values");
    printf("copyprivate checked, bad %d\n", bad);
    printf("single_copyprivate: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
