/* orphaned sections (with lastprivate) and an orphaned ordered region in a
   function called from the body of a for ordered loop. */
#include <stdio.h>
#include <omp.h>

#define N 60
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int sec[3];
static int seq[N], pos;

static int do_sections(void)
{
    static int last = -1;   /* must be shared in the enclosing region */
#pragma omp sections lastprivate(last)
    {
#pragma omp section
        { sec[0]++; last = 1; }
#pragma omp section
        { sec[1]++; last = 2; }
#pragma omp section
        { sec[2]++; last = 3; }
    }
    return last;
}

static void record(int i)
{
#pragma omp ordered
    seq[pos++] = i;
}

int main(void)
{
    int i, bad = 0, lastval = 0;
#pragma omp parallel reduction(+:bad)
    {
        int l = do_sections();      /* read after the sections barrier */
        if (l != 3)
            bad++;
#pragma omp master
        lastval = l;
#pragma omp for ordered schedule(dynamic, 3)
        for (i = 0; i < N; i++)
            record(i * 2);
    }
    for (i = 0; i < N; i++)
        bad += seq[i] != i * 2;
    CHECK(sec[0] == 1 && sec[1] == 1 && sec[2] == 1, "orphaned sections");
    CHECK(lastval == 3, "lastprivate of orphaned sections");
    CHECK(pos == N && bad == 0, "orphaned ordered");
    printf("sections %d %d %d last %d ordered %d\n", sec[0], sec[1], sec[2],
           lastval, pos);
    printf("orphan_sections_ordered: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
