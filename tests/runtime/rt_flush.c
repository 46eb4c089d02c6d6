/* rt_flush.c - flush: a producer/consumer handoff through a shared flag
 * (the producer writes data, flushes, sets the flag, flushes; consumers spin
 * on the flag with a flush in the loop, flush once more and must see the
 * data), in several rounds, with OMPDSM_flush and with OMPDSM_flush_range
 * on the flag; and a pipeline where thread t waits for thread t-1's flag
 * and passes on a value it read from t-1's data. */
#include "rt_test.h"

enum { MAXT = 64, N = 3000, ROUNDS = 4 };

static int (*g_data)[N];
static volatile int *g_flag;
static int (*g_pipe)[MAXT];
static volatile int (*g_pflag)[MAXT];
static OMPDSM_global globals[] = {
    {(void **)&g_data, sizeof *g_data, __alignof__(*g_data), "data"},
    {(void **)&g_flag, sizeof(int), __alignof__(int), "flag"},
    {(void **)&g_pipe, sizeof *g_pipe, __alignof__(*g_pipe), "pipe"},
    {(void **)&g_pflag, sizeof *g_pflag, __alignof__(*g_pflag), "pflag"},
};

struct frame {
    int ranged; /* flush(flag) instead of flush */
};

static void flush_flag(int ranged, const volatile void *p, unsigned long n)
{
    if (ranged)
        OMPDSM_flush_range((const void *)p, n);
    else
        OMPDSM_flush();
}

static void region(void *fp)
{
    struct frame *f = fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int r = 1; r <= ROUNDS; r++) {
        int producer = (r - 1) % T;
        if (t == producer) {
            for (int i = 0; i < N; i++)
                (*g_data)[i] = r * 100000 + i;
            OMPDSM_flush();
            *g_flag = r;
            flush_flag(f->ranged, g_flag, sizeof *g_flag);
        } else {
            long spins = 0;
            for (;;) {
                flush_flag(f->ranged, g_flag, sizeof *g_flag);
                if (*g_flag >= r)
                    break;
                spins++;
            }
            OMPDSM_flush();
            int bad = 0;
            for (int i = 0; i < N; i++)
                bad += (*g_data)[i] != r * 100000 + i;
            CHECK(!bad, "round %d: consumer %d saw the flag but %d stale data "
                  "words", r, t, bad);
        }
        OMPDSM_barrier(); /* nobody writes data while others still read */
    }
    /* Pipeline: t waits for t-1, reads its value, passes value + t on. */
    if (t > 0) {
        for (;;) {
            flush_flag(f->ranged, &(*g_pflag)[t - 1], sizeof(int));
            if ((*g_pflag)[t - 1])
                break;
        }
        OMPDSM_flush();
    }
    int prev = t ? (*g_pipe)[t - 1] : 0;
    (*g_pipe)[t] = prev + t + 1;
    OMPDSM_flush();
    (*g_pflag)[t] = 1;
    flush_flag(f->ranged, &(*g_pflag)[t], sizeof(int));
}
static OMPDSM_region rd = {region, "rt_flush.c:40 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_flush.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1, 0,
                           0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_flush", 45);
    int T = omp_get_max_threads();
    for (int ranged = 0; ranged < 2; ranged++) {
        rtt_phase(ranged ? "flush(list)" : "flush");
        *g_flag = 0;
        memset(*g_pipe, 0, sizeof *g_pipe);
        memset((void *)*g_pflag, 0, sizeof *g_pflag);
        struct frame f = {ranged};
        OMPDSM_parallel(&rd, &f, sizeof f, 0, 1);
        for (int t = 0; t < T; t++)
            CHECK_EQ_LL((*g_pipe)[t], (long long)(t + 1) * (t + 2) / 2,
                        "pipeline value");
    }
    char d[48];
    snprintf(d, sizeof d, "rounds=%d pipeline=%d", 2 * ROUNDS, T);
    return rtt_end(d);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
