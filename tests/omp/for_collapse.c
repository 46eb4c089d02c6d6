/* for collapse(2) and collapse(3) (OpenMP 3.0): the collapsed iteration
   space is executed once, inner loop variables are private, and
   schedule(static,c) assigns logical iteration k (row-major) to thread
   (k / c) % T. */
#include <stdio.h>
#include <omp.h>

#define N1 13
#define N2 17
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static int hits[N1][N2], owner[N1 * N2];
    int i, j, k, team = 1, bad = 0;

#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
#pragma omp for collapse(2) schedule(static, 5)
        for (i = 0; i < N1; i++)
            for (j = 0; j < N2; j++) {
                hits[i][j]++;
                owner[i * N2 + j] = omp_get_thread_num();
            }
    }
    for (i = 0; i < N1; i++)
        for (j = 0; j < N2; j++) {
            if (hits[i][j] != 1)
                bad++;
            if (owner[i * N2 + j] != ((i * N2 + j) / 5) % team)
                bad++;
        }
    CHECK(bad == 0, "collapse(2) static,5");

    /* non-unit and negative steps in the collapsed loops */
    static int h2[20][10];
    int cnt = 0;
#pragma omp parallel for collapse(2) schedule(dynamic, 3) reduction(+:cnt)
    for (i = 19; i > 0; i -= 3)
        for (j = 0; j <= 8; j += 2) {
            h2[i][j]++;
            cnt++;
        }
    bad = 0;
    for (i = 0; i < 20; i++)
        for (j = 0; j < 10; j++) {
            int e = (i <= 19 && i > 0 && (19 - i) % 3 == 0 && j % 2 == 0 && j <= 8);
            if (h2[i][j] != e)
                bad++;
        }
    CHECK(bad == 0 && cnt == 7 * 5, "collapse(2) with strides");

    /* collapse(3) with a reduction, compared with a serial sum */
    long s = 0, es = 0;
    for (i = 0; i < 6; i++)
        for (j = -3; j < 4; j++)
            for (k = 10; k >= 2; k -= 4)
                es += (long)i * 100 + j * 10 + k;
#pragma omp parallel for collapse(3) reduction(+:s) schedule(guided)
    for (i = 0; i < 6; i++)
        for (j = -3; j < 4; j++)
            for (k = 10; k >= 2; k -= 4)
                s += (long)i * 100 + j * 10 + k;
    CHECK(s == es, "collapse(3) reduction");
    printf("team %d collapse(2) count %d collapse(3) sum %ld\n", team, cnt, s);
    printf("for_collapse: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
