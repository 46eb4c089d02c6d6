/* sections: more sections (10) than threads; each runs once and writes its
   own element; a section may call a function. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static long a[10];
static int hits[10];

static void fill(int k)
{
    a[k] = (long)k * k * k + 1;
    hits[k]++;
}

int main(void)
{
    int k;
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            fill(0);
#pragma omp section
            fill(1);
#pragma omp section
            fill(2);
#pragma omp section
            fill(3);
#pragma omp section
            fill(4);
#pragma omp section
            fill(5);
#pragma omp section
            fill(6);
#pragma omp section
            fill(7);
#pragma omp section
            fill(8);
#pragma omp section
            fill(9);
        }
    }
    long s = 0;
    for (k = 0; k < 10; k++) {
        CHECK(hits[k] == 1, "section not executed once");
        CHECK(a[k] == (long)k * k * k + 1, "section value");
        s += a[k];
    }
    printf("sum %ld\n", s);
    printf("sections_many: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
