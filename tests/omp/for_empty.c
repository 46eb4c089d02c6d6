/* for loops with no iteration at all (every schedule, several loop shapes):
   the body never runs, reductions keep the original value, and the implicit
   barrier still works. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int i, zero = 0, ten = 10, runs = 0, sum = 42, after = 0;
    unsigned u;
    long long ll;

#pragma omp parallel
    {
#pragma omp for
        for (i = 0; i < 0; i++) {
#pragma omp atomic
            runs++;
        }
#pragma omp for schedule(static, 3)
        for (i = 10; i < 5; i++) {
#pragma omp atomic
            runs++;
        }
#pragma omp for schedule(dynamic)
        for (i = 0; i > 0; i--) {
#pragma omp atomic
            runs++;
        }
#pragma omp for schedule(guided, 4)
        for (i = ten; i <= 9; i++) {
#pragma omp atomic
            runs++;
        }
#pragma omp for schedule(static)
        for (i = zero; i >= 1; i -= 2) {
#pragma omp atomic
            runs++;
        }
#pragma omp for schedule(runtime)
        for (u = 5; u < 5; u++) {
#pragma omp atomic
            runs++;
        }
#pragma omp for
        for (ll = 1LL << 40; ll < 1LL << 40; ll++) {
#pragma omp atomic
            runs++;
        }
#pragma omp for reduction(+:sum)
        for (i = 0; i < zero; i++)
            sum += 1000;
#pragma omp for ordered schedule(dynamic)
        for (i = 0; i < zero; i++) {
#pragma omp ordered
            {
#pragma omp atomic
                runs++;
            }
        }
#pragma omp for nowait
        for (i = 3; i < 3; i++) {
#pragma omp atomic
            runs++;
        }
#pragma omp barrier
#pragma omp atomic
        after++;
    }
#pragma omp parallel for
    for (i = 100; i < zero; i += 3)
        runs++;

    int team = 0;
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();

    CHECK(runs == 0, "the body of an empty loop ran");
    CHECK(sum == 42, "reduction over an empty loop changed the value");
    CHECK(after == team, "threads after the empty loops");
    printf("runs %d sum %d\n", runs, sum);
    printf("for_empty: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
