/* firstprivate capture at task creation: explicit and implicit
   firstprivate scalars, arrays and structs keep the value they had when
   the task was created, even when the creator changes them before the
   task runs (possibly on another node); private starts fresh. */
#include <stdio.h>
#include <omp.h>

#define NT 64
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct pt { int x; double y; char tag[6]; };
static int got_scalar[NT], got_arr[NT], got_struct[NT];
static double got_y[NT];

int main(void)
{
    int bad = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp single
        {
            int k, v = 0, a[4] = {0, 0, 0, 0};
            struct pt p = {0, 0.0, "abcde"};
            for (k = 0; k < NT; k++) {
                v = 7 * k;
                a[k % 4] = k;
                p.x = k;
                p.y = k * 0.5;
#pragma omp task firstprivate(a, p)
                {
                    int s = 0, i;
                    for (i = 0; i < 4; i++)
                        s += a[i];
                    got_scalar[k] = v;   /* v and k: firstprivate by default */
                    got_arr[k] = s;
                    got_struct[k] = p.x + (p.tag[4] == 'e');
                    got_y[k] = p.y;
                    p.x = -1;            /* the task's own copy */
                    a[0] = -1;
                }
                v = -1;
                p.x = -2;
            }
#pragma omp taskwait
            if (p.x != -2 || a[0] == -1)
                bad++;
        }
    }
    int k, i;
    for (k = 0; k < NT; k++) {
        int a[4] = {0, 0, 0, 0}, s = 0;
        for (i = 0; i <= k; i++)
            a[i % 4] = i;
        for (i = 0; i < 4; i++)
            s += a[i];
        CHECK(got_scalar[k] == 7 * k, "implicit firstprivate scalar");
        CHECK(got_arr[k] == s, "firstprivate array");
        CHECK(got_struct[k] == k + 1, "firstprivate struct");
        CHECK(got_y[k] == k * 0.5, "firstprivate struct double");
    }
    CHECK(bad == 0, "the creator's variables untouched by the tasks");
    printf("task_capture: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
