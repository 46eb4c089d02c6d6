/* orphaned critical and atomic: unnamed and named critical sections in
   functions (one called from two depths) exclude each other across call
   sites; also called serially. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long acc;
static int inside, overlap;
static int named_count;
static double atom;

static void add(long v)
{
#pragma omp critical
    {
        if (inside++)
            overlap++;
        acc = acc + v;
        inside--;
    }
}

static void add_twice(long v)
{
    add(v);
#pragma omp critical(other)
    named_count = named_count + 1;
    add(v);
#pragma omp atomic
    atom += 0.25;
}

int main(void)
{
    int team = 0;
#pragma omp parallel
    {
        int k;
#pragma omp master
        team = omp_get_num_threads();
        for (k = 1; k <= 20; k++) {
            add(k);
            add_twice(k);
        }
    }
    add_twice(1);
    long e = 3L * team * 210 + 2;
    CHECK(overlap == 0, "orphaned critical overlap");
    CHECK(acc == e, "orphaned critical sum");
    CHECK(named_count == 20 * team + 1, "named orphaned critical");
    CHECK(atom == 0.25 * (20 * team + 1), "orphaned atomic");
    printf("team %d acc %ld named %d atom %.2f\n", team, acc, named_count, atom);
    printf("orphan_critical: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
