/* default(shared) and the implicit rules: variables from outside are
   shared, variables declared inside are private, static locals declared
   inside the region are shared, locals of called functions are private and
   their statics shared. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int called(int me)
{
    int local = me * 3;         /* private: on each thread's stack */
    static int calls = 0;       /* shared */
#pragma omp atomic
    calls++;
#pragma omp barrier
    return local == me * 3 ? calls : -1;
}

int main(void)
{
    int outside = 0, bad = 0, team = 0, calls_seen = -1;
#pragma omp parallel default(shared) reduction(+:bad)
    {
        int me = omp_get_thread_num();
        int inside = me;
        static int st = 0;
#pragma omp master
        team = omp_get_num_threads();
#pragma omp atomic
        outside++;
#pragma omp atomic
        st += 2;
#pragma omp barrier
        if (inside != me)
            bad++;
        int c = called(me);
        if (c < 0)
            bad++;
#pragma omp master
        calls_seen = c;
#pragma omp barrier
        if (st != 2 * omp_get_num_threads())
            bad++;
    }
    CHECK(bad == 0, "private/shared rules");
    CHECK(outside == team, "shared outside variable");
    CHECK(calls_seen == team, "static local of a called function is shared");
    printf("team %d outside %d calls %d\n", team, outside, calls_seen);
    printf("data_default_shared: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
