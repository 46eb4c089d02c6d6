/* the classic OpenMP 3.0 pattern: one thread walks a malloc'ed linked list
   and creates a task per node (the node pointer firstprivate); all nodes
   are processed exactly once by the end of the region. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define N 300
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct node { int v; long out; int visits; struct node *next; };

static long process(int v)
{
    long s = 0;
    int k;
    for (k = 0; k <= v % 50; k++)
        s += k * v;
    return s;
}

int main(void)
{
    struct node *head = NULL, *p;
    int i, bad = 0;
    for (i = 0; i < N; i++) {
        p = malloc(sizeof *p);
        if (!p)
            return 1;
        p->v = i;
        p->out = -1;
        p->visits = 0;
        p->next = head;
        head = p;
    }
#pragma omp parallel
    {
#pragma omp single
        {
            struct node *q;
            for (q = head; q; q = q->next) {
#pragma omp task firstprivate(q)
                {
                    q->out = process(q->v);
                    q->visits++;
                }
            }
        }
    }
    long tot = 0;
    for (p = head; p; p = p->next) {
        bad += p->visits != 1 || p->out != process(p->v);
        tot += p->out;
    }
    CHECK(bad == 0, "list node processed by a task");
    printf("total %ld\n", tot);
    while (head) {
        p = head->next;
        free(head);
        head = p;
    }
    printf("task_list: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
