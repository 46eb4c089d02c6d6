/* thousands of tasks of random sizes, some creating children, checked
   against a serial model: task i computes a hash chain of length len[i]
   from seed i into out[i]; a task whose number is divisible by 7 also
   creates two children (numbers in a second range) and waits for them. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#define NT 3000
#define NCH (2 * NT)
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static unsigned len_of[NT + NCH];
static unsigned long out[NT + NCH];

static unsigned long chain(unsigned long x, unsigned n)
{
    unsigned i;
    for (i = 0; i < n; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

static void work(int i)
{
    out[i] = chain((unsigned long)i, len_of[i]);
    if (i < NT && i % 7 == 0) {
        int c = NT + 2 * i;
#pragma omp task
        work(c);
#pragma omp task
        work(c + 1);
#pragma omp taskwait
        out[i] ^= out[c] + out[c + 1];
    }
}

int main(void)
{
    unsigned long r = 12345;
    int i;
    for (i = 0; i < NT + NCH; i++) {
        r = r * 1103515245UL + 12345UL;
        len_of[i] = (unsigned)((r >> 16) % 3 == 0 ? (r >> 8) % 20000 : (r >> 8) % 200);
    }
#pragma omp parallel
    {
#pragma omp single
        {
            int j;  /* private: firstprivate in each task */
            for (j = 0; j < NT; j++) {
#pragma omp task
                work(j);
            }
        }
    }
    for (i = 0; i < NT; i++) {
        unsigned long e = chain((unsigned long)i, len_of[i]);
        if (i % 7 == 0)
            e ^= chain((unsigned long)(NT + 2 * i), len_of[NT + 2 * i]) +
                 chain((unsigned long)(NT + 2 * i + 1), len_of[NT + 2 * i + 1]);
        CHECK(out[i] == e, "task result equals the model");
    }
    printf("task_stress: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
