/* malloc'ed data built in the serial part (arrays of double, of structs,
   and a struct holding pointers to them) is read and written in parallel
   and the results are visible in serial code afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define N 5000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct item { int key; double w; };
struct bundle { double *x; struct item *items; int n; };

int main(void)
{
    struct bundle *b = malloc(sizeof *b);
    int i;
    if (!b)
        return 1;
    b->n = N;
    b->x = malloc(N * sizeof *b->x);
    b->items = malloc(N * sizeof *b->items);
    if (!b->x || !b->items)
        return 1;
    for (i = 0; i < N; i++) {
        b->x[i] = i * 0.5;
        b->items[i].key = N - i;
        b->items[i].w = 0;
    }
    double s = 0;
#pragma omp parallel for reduction(+:s)
    for (i = 0; i < b->n; i++) {
        b->items[i].w = b->x[N - 1 - i] * 2;     /* reads another part */
        s += b->items[i].key;
    }
    int bad = 0;
    for (i = 0; i < N; i++)
        bad += b->items[i].w != (N - 1 - i);
    CHECK(bad == 0, "writes into malloc'ed structs");
    CHECK(s == (double)N * (N + 1) / 2, "reads of malloc'ed data");
    printf("s %.1f w[0] %.1f\n", s, b->items[0].w);
    free(b->items);
    free(b->x);
    free(b);
    printf("malloc_serial_build: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
