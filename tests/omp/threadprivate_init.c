/* threadprivate with initialisers (scalar, array, struct, pointer to a
   global): every new copy starts with the initial value, not with the
   master's current value (unless copyin is used). */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int shared_target = 77;
int tp_i = 42;
short tp_a[4] = {1, 2, 3, 4};
struct { int x; const char *s; } tp_s = {9, "nine"};
int *tp_p = &shared_target;
#pragma omp threadprivate(tp_i, tp_a, tp_s, tp_p)

int main(void)
{
    int bad = 0;
    tp_i = -1;                  /* only the master's copy changes */
    tp_a[0] = -1;
#pragma omp parallel reduction(+:bad)
    {
        if (omp_get_thread_num() != 0) {
            if (tp_i != 42 || tp_a[0] != 1 || tp_a[3] != 4 || tp_s.x != 9 ||
                tp_s.s[0] != 'n' || *tp_p != 77)
                bad++;
        } else if (tp_i != -1 || tp_a[0] != -1 || *tp_p != 77) {
            bad++;
        }
    }
    CHECK(bad == 0, "initial values of threadprivate copies");
    printf("%s %d\n", tp_s.s, *tp_p);
    printf("threadprivate_init: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
