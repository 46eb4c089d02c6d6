/* a linked list of malloc'ed nodes built in the serial part: every thread
   walks the whole list read-only, then the nodes are updated in parallel
   through an array of node pointers, then the list is freed serially. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define N 1000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct node { int val; long sq; struct node *next; };

int main(void)
{
    struct node *head = NULL, **tab, *p;
    int i, bad = 0;
    for (i = N - 1; i >= 0; i--) {
        p = malloc(sizeof *p);
        if (!p)
            return 1;
        p->val = i;
        p->sq = 0;
        p->next = head;
        head = p;
    }
    tab = malloc(N * sizeof *tab);
    if (!tab)
        return 1;
    for (i = 0, p = head; p; p = p->next, i++)
        tab[i] = p;
#pragma omp parallel reduction(+:bad)
    {
        long s = 0;
        int cnt = 0;
        struct node *q;
        for (q = head; q; q = q->next) {
            s += q->val;
            cnt++;
        }
        if (cnt != N || s != (long)N * (N - 1) / 2)
            bad++;
#pragma omp barrier
#pragma omp for schedule(dynamic, 10)
        for (i = 0; i < N; i++)
            tab[i]->sq = (long)tab[i]->val * tab[i]->val;
    }
    long ss = 0;
    for (p = head; p; p = p->next) {
        bad += p->sq != (long)p->val * p->val;
        ss += p->sq;
    }
    CHECK(bad == 0, "list walk / update");
    printf("sum of squares %ld\n", ss);
    while (head) {
        p = head->next;
        free(head);
        head = p;
    }
    free(tab);
    printf("malloc_list: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
