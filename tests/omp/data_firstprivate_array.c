/* firstprivate on arrays: one-dimensional, two-dimensional, a char string
   and a 2000-element array are copied element-wise into every thread. */
#include <stdio.h>
#include <string.h>
#include <omp.h>

#define BIG 2000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int a[10], m[4][5], big[BIG], k, j, bad = 0;
    char name[16] = "firstprivate";
    for (k = 0; k < 10; k++)
        a[k] = k * k;
    for (k = 0; k < 4; k++)
        for (j = 0; j < 5; j++)
            m[k][j] = k * 10 + j;
    for (k = 0; k < BIG; k++)
        big[k] = BIG - k;
#pragma omp parallel firstprivate(a, m, big, name) private(k, j) \
        reduction(+:bad)
    {
        int me = omp_get_thread_num();
        for (k = 0; k < 10; k++)
            if (a[k] != k * k) bad++;
        for (k = 0; k < 4; k++)
            for (j = 0; j < 5; j++)
                if (m[k][j] != k * 10 + j) bad++;
        for (k = 0; k < BIG; k++)
            if (big[k] != BIG - k) bad++;
        if (strcmp(name, "firstprivate") != 0) bad++;
        /* modify the private copies */
        for (k = 0; k < 10; k++)
            a[k] = me;
        m[3][4] = me;
        big[BIG - 1] = me;
        name[0] = 'F';
#pragma omp barrier
        for (k = 0; k < 10; k++)
            if (a[k] != me) bad++;
        if (m[3][4] != me || big[BIG - 1] != me || name[0] != 'F') bad++;
    }
    CHECK(bad == 0, "firstprivate array copies");
    CHECK(a[9] == 81 && m[3][4] == 34 && big[BIG - 1] == 1 && name[0] == 'f',
          "originals modified");
    printf("a[9] %d m[3][4] %d big[0] %d name %s\n", a[9], m[3][4], big[0], name);
    printf("data_firstprivate_array: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
