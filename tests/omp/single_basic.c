/* single: each encountered single construct is executed by exactly one
   thread, its implicit barrier makes the result visible to all threads,
   and this holds for singles inside a loop and back to back. */
#include <stdio.h>
#include <omp.h>

#define ROUNDS 20
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int count = 0, other = 0, bad = 0, r, value = 0;
#pragma omp parallel private(r) reduction(+:bad)
    {
        for (r = 0; r < ROUNDS; r++) {
#pragma omp single
            {
                count++;
                value = r * 3;
            }
            /* implicit barrier: everyone sees this round's values */
            if (count != r + 1 || value != r * 3)
                bad++;
#pragma omp single
            other += 2;
        }
    }
    CHECK(bad == 0, "single result not visible after its barrier");
    CHECK(count == ROUNDS, "single executed more or less than once");
    CHECK(other == 2 * ROUNDS, "second single");
    printf("count %d other %d\n", count, other);
    printf("single_basic: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
