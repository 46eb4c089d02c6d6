/* global pointers initialised with addresses of other globals (a scalar,
   an array element, a struct member, a string literal, a pointer to a
   pointer) and a struct whose member points to another global; threads
   read and write through them. */
#include <stdio.h>
#include <string.h>
#include <omp.h>

#define N 32
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int gv = 10;
int garr[N];
struct node { int val; struct node *next; int *data; };
struct node n2 = {2, 0, &garr[N - 1]};
struct node n1 = {1, &n2, &gv};
struct node *head = &n1;
int *pv = &gv;
int *pmid = &garr[N / 2];
int **ppv = &pv;
double gd[4] = {0.5, 1.5, 2.5, 3.5};
double *pd = gd + 2;
const char *msg = "distributed";
int *pmember = &n2.val;

int main(void)
{
    int i, bad = 0;
#pragma omp parallel for
    for (i = 0; i < N; i++)
        garr[i] = i * i;
#pragma omp parallel reduction(+:bad)
    {
        if (*pv != 10 || **ppv != 10 || *pd != 2.5 || pd[1] != 3.5 ||
            strcmp(msg, "distributed") != 0)
            bad++;
        if (*pmid != (N / 2) * (N / 2) || head->val != 1 ||
            head->next->val != 2 || *head->data != 10 ||
            *head->next->data != (N - 1) * (N - 1) || *pmember != 2)
            bad++;
    }
#pragma omp parallel reduction(+:bad)
    {
#pragma omp atomic
        *pv += 1;
#pragma omp atomic
        *head->next->data += 1;
#pragma omp single
        pmid = &garr[1];        /* change the pointer itself */
        if (*pmid != 1)         /* after the barrier of the single */
            bad++;
    }
    int team = 0;
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();
    CHECK(bad == 0, "values read through global pointers");
    CHECK(gv == 10 + team, "write through pointer to global");
    CHECK(garr[N - 1] == (N - 1) * (N - 1) + team, "write through struct member");
    CHECK(pmid == &garr[1], "pointer updated in single");
    printf("gv %d last %d msg %s\n", gv, garr[N - 1], msg);
    printf("global_pointers: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
