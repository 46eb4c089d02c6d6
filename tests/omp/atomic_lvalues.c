/* atomic on various lvalues: array elements (a histogram), struct members,
   a global through a pointer, long long, short and char objects, and an
   expression with a function call evaluated outside the atomic update. */
#include <stdio.h>
#include <omp.h>

#define N 400
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct stats { int count; double total; long long big; };
static struct stats gs;
static long target;
static long *ptr = &target;
static short sh;
static char ch;

static int weight(int i) { return (i * 7) % 5 + 1; }

int main(void)
{
    int hist[10] = {0}, ehist[10] = {0}, i;
    long long ll = 0;
    int ewsum = 0;
#pragma omp parallel for schedule(guided)
    for (i = 0; i < N; i++) {
#pragma omp atomic
        hist[(i * i) % 10]++;
#pragma omp atomic
        gs.count += weight(i);
#pragma omp atomic
        gs.total += 0.5;
#pragma omp atomic
        gs.big += 1LL << 33;
#pragma omp atomic
        *ptr += 3;
#pragma omp atomic
        ll -= 1LL << 35;
        if (i % 4 == 0) {
#pragma omp atomic
            sh += 2;
#pragma omp atomic
            ch++;
        }
    }
    for (i = 0; i < N; i++) {
        ehist[(i * i) % 10]++;
        ewsum += weight(i);
    }
    int bad = 0;
    for (i = 0; i < 10; i++)
        bad += hist[i] != ehist[i];
    CHECK(bad == 0, "histogram");
    CHECK(gs.count == ewsum, "struct member +=");
    CHECK(gs.total == 0.5 * N, "struct double member");
    CHECK(gs.big == (long long)N << 33, "struct long long member");
    CHECK(target == 3L * N, "through a pointer");
    CHECK(ll == -((long long)N << 35), "long long -=");
    CHECK(sh == 2 * (N / 4), "short");
    CHECK(ch == N / 4, "char");
    printf("hist");
    for (i = 0; i < 10; i++)
        printf(" %d", hist[i]);
    printf("\ncount %d total %.1f target %ld sh %d ch %d\n", gs.count,
           gs.total, target, sh, ch);
    printf("atomic_lvalues: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
