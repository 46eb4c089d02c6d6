/* for loops with fewer iterations than threads (1, 3, T-1, T+1 iterations):
   every iteration once under every schedule; with schedule(static,1)
   iteration k goes to thread k % T. */
#include <stdio.h>
#include <omp.h>

#define MAXN 300
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int hits[MAXN], owner[MAXN];

static int run(int n, int kind, int *team_out)
{
    int i, team = 0, bad = 0;
    for (i = 0; i < MAXN; i++)
        hits[i] = 0, owner[i] = -1;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
        switch (kind) {
        case 0:
#pragma omp for
            for (i = 0; i < n; i++) hits[i]++;
            break;
        case 1:
#pragma omp for schedule(static)
            for (i = 0; i < n; i++) hits[i]++;
            break;
        case 2:
#pragma omp for schedule(static, 1)
            for (i = 0; i < n; i++) { hits[i]++; owner[i] = omp_get_thread_num(); }
            break;
        case 3:
#pragma omp for schedule(dynamic)
            for (i = 0; i < n; i++) hits[i]++;
            break;
        case 4:
#pragma omp for schedule(guided)
            for (i = 0; i < n; i++) hits[i]++;
            break;
        default:
#pragma omp for schedule(dynamic, 2)
            for (i = 0; i < n; i++) hits[i]++;
            break;
        }
    }
    for (i = 0; i < MAXN; i++)
        if (hits[i] != (i < n ? 1 : 0))
            bad++;
    if (kind == 2)
        for (i = 0; i < n; i++)
            if (owner[i] != i % team)
                bad++;
    *team_out = team;
    return bad;
}

int main(void)
{
    int team = 1, kind, t;
    omp_set_dynamic(0);
    int T = omp_get_max_threads();
    int sizes[5];
    sizes[0] = 1; sizes[1] = 3; sizes[2] = T > 1 ? T - 1 : 1;
    sizes[3] = T + 1; sizes[4] = 2;
    for (t = 0; t < 5; t++)
        for (kind = 0; kind < 6; kind++) {
            int bad = run(sizes[t], kind, &team);
            if (bad)
                printf("FAIL: n=%d schedule kind %d\n", sizes[t], kind);
            CHECK(bad == 0, "few iterations");
        }
    printf("team %d, loops of 1, 3, T-1, T+1, 2 iterations checked\n", team);
    printf("for_few_iters: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
