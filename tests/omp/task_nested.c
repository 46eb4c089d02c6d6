/* nested tasks and taskwait: a binary tree of tasks, each waiting for its
   two children before combining their results (a task created by a task
   that itself may run on another node); checked against the closed
   formula for the tree. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long visits;

/* sum of the labels of a complete binary tree of depth d rooted at label */
static long tree(int d, long label)
{
    long l = 0, r = 0, k, w = 0;
    if (d == 0)
        return label;
    for (k = 0; k < 2000; k++)   /* some work per node */
        w += k & 1;
#pragma omp task shared(l)
    l = tree(d - 1, 2 * label);
#pragma omp task shared(r)
    r = tree(d - 1, 2 * label + 1);
#pragma omp taskwait
#pragma omp atomic
    visits++;
    return label + l + r + (w - 1000);
}

int main(void)
{
    long res = 0;
    int depth = 9, d;
#pragma omp parallel
#pragma omp single
    res = tree(depth, 1);
    /* labels of a heap-numbered tree: 1 .. 2^(d+1)-1 */
    long n = (1L << (depth + 1)) - 1, expect = n * (n + 1) / 2;
    long inner = 0;
    for (d = 0; d < depth; d++)
        inner += 1L << d;
    CHECK(res == expect, "tree sum");
    CHECK(visits == inner, "inner nodes combined once");
    printf("tree %ld inner %ld\n", res, visits);
    printf("task_nested: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
