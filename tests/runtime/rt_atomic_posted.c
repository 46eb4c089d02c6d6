/* rt_atomic_posted.c - atomic updates posted to a home reached over tcp
 * (dsm/atomic.c, dsm_atomic_post: the update is sent, not waited for) must
 * still be seen where OpenMP says: by the updating thread at once, and by
 * every other thread after a synchronisation that follows them.  Over shm
 * (compare-swaps) the same checks hold.  Words homed on every node (a
 * block-distributed array) and on node 0 (a small global):
 *   own      each thread updates a word of its own R times and reads it
 *            back after every update (no other writer)
 *   lock     each thread adds under no lock, then passes a token under a
 *            lock: whoever holds the lock next reads the sum of every
 *            update made before the previous holders' unlocks
 *   flush    thread 1 updates, flushes and sets a flag; thread 0 spins on
 *            the flag with flushes, then reads the updated word
 *   barrier  every thread adds to shared sums; after the barrier every
 *            thread reads the totals; after the join, node 0 does too
 *   double   += on doubles that are exact in any order (integers)
 *   relay    thread 1 makes K updates of a word homed on node 0, flushes
 *            and sets a flag homed elsewhere; thread 2 sees the flag,
 *            flushes and reads the word: its fetch from node 0 must not
 *            overtake updates still on their way there (over tcp thread
 *            1's flush waits until node 0 applied them; here they got
 *            there first even without that wait)
 * Exact expected values; runs on any node and thread count. */
#include "rt_test.h"

enum { MAXT = 64, R = 200, BIG = 32768, K = 5000 };

static long long *g_small;         /* node 0's page */
static long long (*g_big)[BIG];    /* 256 KiB: homes spread over nodes */
static double *g_dsum;
static long long *g_flag;
static long long *g_token;
static omp_lock_t *g_lk;
static OMPDSM_global globals[] = {
    {(void **)&g_small, 8, 8, "small"},
    {(void **)&g_big, sizeof *g_big, 8, "big"},
    {(void **)&g_dsum, 8, 8, "dsum"},
    {(void **)&g_flag, 8, 8, "flag"},
    {(void **)&g_token, 8, 8, "token"},
    {(void **)&g_lk, sizeof(omp_lock_t), __alignof__(omp_lock_t), "lk"},
};

static void add(long long *p, long long v)
{
    OMPDSM_atomic(p, OMPDSM_TY_I64, OMPDSM_OP_ADD, &v, 0);
}

/* thread t's element of g_big: in quarter t mod 4 (homes differ), 16
 * elements from any other thread's */
static long long *elem(int t)
{
    return &(*g_big)[(size_t)(t % 4) * (BIG / 4) + (size_t)(t / 4) * 16 + 1];
}

/* Thread `from` adds v to g_small k times, flushes and sets *flag;
 * thread `to` waits for the flag with flushes and checks g_small. */
static void handoff(int t, int from, int to, volatile long long *flag, int k,
                    long long v, long long want, const char *what)
{
    if (t == from) {
        for (int i = 0; i < k; i++)
            add(g_small, v);
        OMPDSM_flush();
        *flag = 1;
        OMPDSM_flush();
    } else if (t == to) {
        for (;;) {
            OMPDSM_flush();
            if (*flag)
                break;
        }
        OMPDSM_flush();
        CHECK_EQ_LL(*g_small, want, what);
    }
}

static void region(void *fp)
{
    (void)fp;
    int t = omp_get_thread_num(), T = omp_get_num_threads();

    /* own: read back at once */
    long long *mine = elem(t);
    for (int i = 1; i <= R; i++) {
        add(mine, 1);
        CHECK_EQ_LL(*mine, i, "own word read back after its update");
    }
    OMPDSM_barrier();
    CHECK_EQ_LL(*elem(t), R, "own word after the barrier");
    OMPDSM_barrier();

    /* lock: the token holder sees every update made before an unlock */
    add(g_small, t + 1);
    add(elem((t + 1) % T) + 1, 1);
    omp_set_lock(g_lk);
    long long seen = *g_token;
    *g_token = seen + 1;
    omp_unset_lock(g_lk);
    OMPDSM_barrier();
    CHECK_EQ_LL(*g_small, (long long)T * (T + 1) / 2, "sum after the lock");
    CHECK_EQ_LL(elem(t)[1], 1, "neighbour's update after the barrier");
    OMPDSM_barrier(); /* (every check read before the next phase adds) */

    /* flush: a flag set after the update */
    if (T > 1)
        handoff(t, 1, 0, g_flag, 1, 1000, (long long)T * (T + 1) / 2 + 1000,
                "update seen after the flag");
    OMPDSM_barrier();

    /* barrier and double */
    for (int i = 0; i < R; i++) {
        add(g_small, 1);
        double d = 2.0;
        OMPDSM_atomic(g_dsum, OMPDSM_TY_F64, OMPDSM_OP_ADD, &d, 0);
    }
    OMPDSM_barrier();
    long long base = (long long)T * (T + 1) / 2 + (T > 1 ? 1000 : 0);
    CHECK_EQ_LL(*g_small, base + (long long)T * R, "sum after the barrier");
    CHECK(*g_dsum == 2.0 * T * R, "double sum %g, expected %g", *g_dsum,
          2.0 * T * R);
    OMPDSM_barrier();

    /* relay: the flag is thread 2's element, homed away from node 0 */
    if (T > 2)
        handoff(t, 1, 2, elem(2) + 2, K, 1, base + (long long)T * R + K,
                "updates seen after the relay's flag");
    OMPDSM_barrier();
    /* updated once more; read by node 0 after the join */
    add(g_small, 1);
}

static OMPDSM_region rd = {region, "rt_atomic_posted.c (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_atomic_posted.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 1,
                           0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_atomic_posted", 45);
    omp_init_lock(g_lk);
    int T = omp_get_max_threads();
    OMPDSM_parallel(&rd, NULL, 0, 0, 1);
    long long base = (long long)T * (T + 1) / 2 + (T > 1 ? 1000 : 0);
    CHECK_EQ_LL(*g_small, base + (long long)T * R + (T > 2 ? K : 0) + T,
                "sum after the join");
    CHECK_EQ_LL(*g_token, T, "lock token");
    omp_destroy_lock(g_lk);
    return rtt_end(NULL);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
