/* schedule(runtime) driven by omp_set_schedule() inside the program (no
   environment): omp_get_schedule() returns what was set, and the loop obeys
   the selected kind (static,c assignment formula; dynamic,c whole chunks;
   guided,c chunk sizes; auto: every iteration once). */
#include <stdio.h>
#include <omp.h>

#define N 600
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int owner[N], hits[N];

static int run(int *team)
{
    int i, bad = 0;
    for (i = 0; i < N; i++)
        owner[i] = -1, hits[i] = 0;
#pragma omp parallel
    {
#pragma omp master
        *team = omp_get_num_threads();
#pragma omp for schedule(runtime)
        for (i = 0; i < N; i++) {
            hits[i]++;
            owner[i] = omp_get_thread_num();
        }
    }
    for (i = 0; i < N; i++)
        bad += hits[i] != 1;
    return bad;
}

static const char *kind_name(omp_sched_t k)
{
    switch (k) {
    case omp_sched_static: return "static";
    case omp_sched_dynamic: return "dynamic";
    case omp_sched_guided: return "guided";
    case omp_sched_auto: return "auto";
    default: return "unknown";
    }
}

static int short_runs(int c)
{
    int k = 0, shorts = 0;
    while (k < N) {
        int s = k;
        while (k < N && owner[k] == owner[s])
            k++;
        if (k - s < c)
            shorts++;
    }
    return shorts;
}

int main(void)
{
    omp_sched_t kind;
    int mod, team = 1, i, bad;

    omp_set_schedule(omp_sched_static, 3);
    omp_get_schedule(&kind, &mod);
    CHECK(kind == omp_sched_static && mod == 3, "get_schedule static,3");
    CHECK(run(&team) == 0, "runtime static iterations");
    bad = 0;
    for (i = 0; i < N; i++)
        bad += owner[i] != (i / 3) % team;
    CHECK(bad == 0, "runtime static,3 assignment");
    printf("%s,%d done\n", kind_name(kind), mod);

    omp_set_schedule(omp_sched_dynamic, 4);
    omp_get_schedule(&kind, &mod);
    CHECK(kind == omp_sched_dynamic && mod == 4, "get_schedule dynamic,4");
    CHECK(run(&team) == 0, "runtime dynamic iterations");
    bad = 0;
    for (i = 0; i < N; i++)
        bad += owner[i] != owner[(i / 4) * 4];
    CHECK(bad == 0, "runtime dynamic,4 chunks");
    printf("%s,%d done\n", kind_name(kind), mod);

    omp_set_schedule(omp_sched_guided, 7);
    omp_get_schedule(&kind, &mod);
    CHECK(kind == omp_sched_guided && mod == 7, "get_schedule guided,7");
    CHECK(run(&team) == 0, "runtime guided iterations");
    CHECK(short_runs(7) <= 1, "runtime guided,7 chunk sizes");
    printf("%s,%d done\n", kind_name(kind), mod);

    omp_set_schedule(omp_sched_auto, 1);
    omp_get_schedule(&kind, &mod);
    CHECK(kind == omp_sched_auto, "get_schedule auto");
    CHECK(run(&team) == 0, "runtime auto iterations");
    printf("%s done\n", kind_name(kind));

    printf("sched_runtime: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
