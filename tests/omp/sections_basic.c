/* sections: each section runs exactly once (the first section may omit its
   section directive), and the implicit barrier at the end makes all of them
   complete before any thread continues. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int cnt[4] = {0, 0, 0, 0}, bad = 0, r;
    for (r = 0; r < 5; r++) {
#pragma omp parallel reduction(+:bad)
        {
#pragma omp sections
            {
                cnt[0]++;               /* first section, no directive */
#pragma omp section
                cnt[1]++;
#pragma omp section
                {
                    cnt[2] += 1;
                }
#pragma omp section
                {
                    int k;
                    for (k = 0; k < 3; k++)
                        cnt[3]++;
                }
            }
            /* implicit barrier: all sections are done */
            if (cnt[0] != r + 1 || cnt[1] != r + 1 || cnt[2] != r + 1 ||
                cnt[3] != 3 * (r + 1))
                bad++;
        }
    }
    CHECK(bad == 0, "sections not complete after the implicit barrier");
    CHECK(cnt[0] == 5 && cnt[1] == 5 && cnt[2] == 5 && cnt[3] == 15,
          "section executions");
    printf("counts %d %d %d %d\n", cnt[0], cnt[1], cnt[2], cnt[3]);
    printf("sections_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
