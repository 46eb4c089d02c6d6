/* sections private/firstprivate: every section sees the firstprivate value
   of the original, and changes to private copies never reach the original.
   A thread's private copy is shared by all the sections that thread runs
   (in an unspecified order), so each section restores what it changed. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int init = 17, tmp = 5, bad = 0;
    int out[4] = {0, 0, 0, 0};
    struct { int a; double b; } st = {3, 0.25};
#pragma omp parallel
    {
#pragma omp sections firstprivate(init, st) private(tmp) reduction(+:bad)
        {
#pragma omp section
            {
                if (init != 17 || st.a != 3 || st.b != 0.25) bad++;
                init += 100; st.a += 100;
                tmp = init * 2;
                out[0] = tmp;
                init -= 100; st.a -= 100;
            }
#pragma omp section
            {
                if (init != 17 || st.a != 3 || st.b != 0.25) bad++;
                st.b = -1.0;
                tmp = init * 3;
                out[1] = tmp;
                st.b = 0.25;
            }
#pragma omp section
            {
                if (init != 17 || st.a != 3) bad++;
                tmp = init + st.a;
                out[2] = tmp;
            }
#pragma omp section
            {
                if (init != 17) bad++;
                init = -4;
                out[3] = init;
                init = 17;
            }
        }
    }
    CHECK(bad == 0, "firstprivate value seen in a section");
    CHECK(init == 17 && st.a == 3 && st.b == 0.25, "original changed");
    CHECK(tmp == 5, "private changed the original");
    CHECK(out[0] == 234 && out[1] == 51 && out[2] == 20 && out[3] == -4,
          "section results");
    printf("out %d %d %d %d\n", out[0], out[1], out[2], out[3]);
    printf("sections_private: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
