/* copyin: the master's values of threadprivate scalars, arrays and structs
   are copied to every thread's copy at the start of the region, also in a
   combined parallel for. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct params { int n; double h; char name[8]; };

int tp_n;
double tp_arr[6];
struct params tp_p;
#pragma omp threadprivate(tp_n, tp_arr, tp_p)

int main(void)
{
    int bad = 0, r, k, i;
    long sum = 0;
    for (r = 1; r <= 3; r++) {
        tp_n = 100 * r;
        for (k = 0; k < 6; k++)
            tp_arr[k] = r + k * 0.25;
        tp_p.n = -r;
        tp_p.h = 0.5 * r;
        tp_p.name[0] = 'p'; tp_p.name[1] = '0' + r; tp_p.name[2] = 0;
#pragma omp parallel copyin(tp_n, tp_arr, tp_p) reduction(+:bad)
        {
            int j;
            if (tp_n != 100 * r) bad++;
            for (j = 0; j < 6; j++)
                if (tp_arr[j] != r + j * 0.25) bad++;
            if (tp_p.n != -r || tp_p.h != 0.5 * r || tp_p.name[0] != 'p' ||
                tp_p.name[1] != '0' + r || tp_p.name[2] != 0) bad++;
            tp_n += omp_get_thread_num();   /* private change */
        }
    }
    CHECK(bad == 0, "copyin values");
    CHECK(tp_n == 300, "master copy");

    tp_n = 7;
#pragma omp parallel for copyin(tp_n) reduction(+:sum)
    for (i = 0; i < 100; i++)
        sum += tp_n;
    CHECK(sum == 700, "copyin on parallel for");
    printf("sum %ld name %s\n", sum, tp_p.name);
    printf("threadprivate_copyin: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
