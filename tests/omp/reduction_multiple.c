/* reduction: several list items in one clause, several clauses on one
   construct, a reduction variable updated in nested loops (with a private
   inner index) and through compound expressions, and reductions on a
   global and on a function-static variable. */
#include <stdio.h>
#include <omp.h>

#define N 60
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

long gsum = 1000;

static long accumulate(int n)
{
    static long st = 0;
    int i;
#pragma omp parallel for reduction(+:st)
    for (i = 0; i < n; i++)
        st += i;
    return st;
}

int main(void)
{
    int a = 0, b = 0, c = 0, i, j;
    long cells = 0, diag = 0, e_cells = 0;
    double w = 1.0;

#pragma omp parallel for private(j) reduction(+:a, b, c) reduction(+:cells) \
        reduction(-:diag) reduction(*:w)
    for (i = 0; i < N; i++) {
        a += 1;
        b += 2 * i;
        c = c + i % 3;
        for (j = 0; j < N; j++)
            cells += (i + j) % 4;
        diag -= i;
        if (i % 15 == 0)
            w *= 2.0;
        else if (i % 29 == 0)
            w = w * 0.5;
    }
    int e_c = 0;
    double e_w = 1.0;
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++)
            e_cells += (i + j) % 4;
        e_c += i % 3;
        if (i % 15 == 0)
            e_w *= 2.0;
        else if (i % 29 == 0)
            e_w *= 0.5;
    }
    CHECK(a == N && b == N * (N - 1) && c == e_c, "a, b, c");
    CHECK(cells == e_cells, "nested loop sum");
    CHECK(diag == -(long)N * (N - 1) / 2, "- reduction");
    CHECK(w == e_w, "* reduction with 0.5 factors");

#pragma omp parallel reduction(+:gsum)
    gsum += 1;
    int team = 0;
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();
    CHECK(gsum == 1000 + team, "reduction on a global");

    long s1 = accumulate(10);
    long s2 = accumulate(20);
    CHECK(s1 == 45 && s2 == 45 + 190, "reduction on a function-static");
    printf("a %d b %d c %d cells %ld diag %ld w %.2f s2 %ld\n", a, b, c, cells,
           diag, w, s2);
    printf("reduction_multiple: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
