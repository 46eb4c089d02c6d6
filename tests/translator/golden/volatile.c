/* volatile objects: a read refetches from the home, a write is written
 * through (assignment, compound assignment, ++); the operand of an atomic
 * is neither (OMPDSM_atomic updates it at its home), in every form,
 * x = x op e and x = e op x included, and a volatile struct's member (both
 * of which gcc 12 rejects, so no conformance program has them); volatile
 * objects in an atomic's expression and index are read as anywhere else;
 * initialised volatile globals and shared locals. */
int printf(const char *, ...);

volatile long vcount = 1;
volatile int flag, idx = 1;
volatile struct { int m; long n; } vs;
long hist[4];

int main(void)
{
    volatile int local = 5;
    long plain = 0;
#pragma omp parallel
    {
        while (flag == 0) {
#pragma omp master
            flag = 1;
        }
        vcount += 2;
#pragma omp atomic
        vcount++;
#pragma omp atomic
        --vcount;
#pragma omp atomic
        (vcount) *= 2;
#pragma omp atomic
        vcount = vcount - 3;
#pragma omp atomic
        vcount = 2 | vcount;
#pragma omp atomic
        vs.m++;
#pragma omp atomic
        vs.n += local;
#pragma omp atomic
        local -= 1;
#pragma omp atomic
        plain += flag;
#pragma omp atomic
        plain = plain * vcount;
#pragma omp atomic
        hist[idx] += 1;
    }
    printf("%ld %d %ld %d %ld %ld\n", vcount, vs.m, vs.n, local, plain, hist[1]);
    return 0;
}
