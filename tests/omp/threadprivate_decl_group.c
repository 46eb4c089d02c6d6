/* threadprivate variables declared in one declaration with other
   variables: a shared pointer and a threadprivate array in one
   declaration (the NPB 3.3 IS `INT_TYPE **bucket_size, bucket_ptrs[..];`
   pattern), two threadprivate scalars in one declaration, and a
   threadprivate scalar with an initializer declared before a shared
   array with one. */
#include <stdio.h>
#include <omp.h>

#define NB 8
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int **table, counts[NB];
#pragma omp threadprivate(counts)

static int calls, last;
#pragma omp threadprivate(calls, last)

static int seed = 5, base[3] = {10, 20, 30};
#pragma omp threadprivate(seed)

static int rows[64][NB];
static int *rowp[64];

static void bump(int v)
{
    calls++;
    last = v;
    counts[v % NB]++;
}

int main(void)
{
    int bad = 0, n = 1, t, k;
    for (t = 0; t < 64; t++)
        rowp[t] = rows[t];
    table = rowp;                      /* shared, set before the region */
#pragma omp parallel private(k) reduction(+:bad)
    {
        int me = omp_get_thread_num();
#pragma omp master
        n = omp_get_num_threads();
        for (k = 0; k < NB; k++)
            counts[k] = 0;
        calls = 0;
        for (k = 0; k < 3 * NB; k++)
            bump(me + k);
        for (k = 0; k < NB; k++)
            table[me][k] = counts[k];  /* publish this thread's copy */
        if (calls != 3 * NB || last != me + 3 * NB - 1)
            bad++;
        if (seed != 5)                 /* every thread starts from 5 */
            bad++;
        seed += me;
#pragma omp barrier
        if (seed != 5 + me)
            bad++;
#pragma omp atomic
        base[me % 3] += 1;
    }
    for (t = 0; t < n; t++)
        for (k = 0; k < NB; k++)
            CHECK(rows[t][k] == 3, "per-thread counts through the shared table");
    CHECK(bad == 0, "threadprivate scalars declared together");
    CHECK(base[0] + base[1] + base[2] == 60 + n, "shared array declared with a threadprivate");
    printf("rows[0][0] %d\n", rows[0][0]);
    printf("threadprivate_decl_group: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
