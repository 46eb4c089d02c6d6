/* rt_counts.c - programs whose statistics counters tests/runtime/
 * counts_test.py checks (OMPDSM_STATS=FILE.json), on 2 nodes:
 *
 *   settle N    N times: a single copyprivate, every thread increments a
 *               counter in a critical section, a barrier, in a program
 *               with tasks (whose barriers first wait for every node's
 *               arrival, running tasks, then the DSM's barrier).  The
 *               thread that takes the lock second takes it from a node
 *               that left it with its release skipped (lazy release) and
 *               went on to the barrier; before nodes served such requests
 *               on the way into a barrier, the taker waited for the
 *               other node's release helper, which polls at up to 20 ms:
 *               the test bounds the time both nodes spent in lock
 *               operations (dsm_lock_ms).
 *   testfail K  the lock's manager node holds a lock while the other node
 *               calls omp_test_lock K times (each must fail), then frees
 *               it (the next test must succeed); the test compares the
 *               other node's comm operations with K = 0 to K = 1,000: at
 *               most one per failed test (two before: the manager's
 *               tail, then the holder's queue node) and no page.
 *   testpoll K  every thread K times: polls omp_test_lock until it gets
 *               the lock, adds 1 to a shared counter if its parity says
 *               it is the thread's turn, flushes, unlocks (the suites'
 *               test_lock shape, with turns that alternate).  A lock taken over from a
 *               node that left it cached with its release skipped waits
 *               for that node to release; the other node is polling
 *               omp_test_lock: the test bounds the serves of such
 *               requests that fell to the nodes' release helpers, which
 *               sleep up to 20 ms between polls (all of them before
 *               failed tests served requests: 0.2-30 s for 10,000 turns,
 *               0.1 s after); over tcp the turns hung before tests that
 *               failed for 2 ms left the want hint (dsm/lock.c).
 *   atomic K    node 0 writes a word (its page is node 0's, so node 1's
 *               copy is invalid after the barrier), then node 1 makes K
 *               atomic additions to another word of that page: the test
 *               compares node 1's gets with K = 0 to K = 400: the first
 *               update reads the word from the home, the others take
 *               their guess from the update before (one get per update
 *               before, then the compare-swap: two round trips); over
 *               tcp the updates are posted (a message each, no round
 *               trip).
 *   ordered K   a loop of K iterations, schedule(static,1), whose ordered
 *               region checks and advances a shared counter and adds to
 *               a shared sum, so that each turn passes between the
 *               nodes: the test bounds the gets that are not page
 *               fetches and the notice-log reads per iteration (each
 *               turn acquires from the node that passed the last one,
 *               whose positions came with its signal; before, a turn
 *               read every node's positions and the other node's log:
 *               two gets).
 *   flushes K   every thread makes K flushes with nothing written: the
 *               test bounds the flushes that yielded the CPU (every one
 *               before: a context switch each when another process can
 *               run; the suites' tasks that flush per term spent most
 *               of their time there).
 *
 * Checks the results (counter, test outcomes, sums) itself; exit 0 ok. */
#include "rt_test.h"

static long long *g_cnt;
static omp_lock_t *g_lk;
static int *g_fails, *g_singles;
static long long *g_sum;
static OMPDSM_global globals[] = {
    {(void **)&g_cnt, 8, 8, "cnt"},
    {(void **)&g_lk, sizeof(omp_lock_t), __alignof__(omp_lock_t), "lk"},
    {(void **)&g_fails, sizeof(int), __alignof__(int), "fails"},
    {(void **)&g_singles, sizeof(int), __alignof__(int), "singles"},
    {(void **)&g_sum, 8, 8, "sum"},
};

struct frame {
    int n;
    int holder;
};

static void settle_region(void *fp)
{
    const struct frame *f = fp;
    OMPDSM_task_region(); /* (as ompcc starts a region of a unit with tasks) */
    for (int i = 0; i < f->n; i++) {
        int x = -1, ex = OMPDSM_single_start();
        if (ex) {
            *g_singles += 1;
            x = i;
        }
        OMPDSM_single_copyprivate(ex, &x, sizeof x);
        CHECK_EQ_LL(x, i, "copyprivate value");
        OMPDSM_critical_start(0);
        long long v = *g_cnt;
        *g_cnt = v + 1;
        OMPDSM_critical_end(0);
        OMPDSM_barrier();
    }
}

static void testfail_region(void *fp)
{
    const struct frame *f = fp;
    int t = omp_get_thread_num();
    if (t == f->holder)
        omp_set_lock(g_lk);
    OMPDSM_barrier();
    if (t != f->holder)
        for (int i = 0; i < f->n; i++)
            if (omp_test_lock(g_lk))
                *g_fails += 1;
    OMPDSM_barrier();
    if (t == f->holder)
        omp_unset_lock(g_lk);
    OMPDSM_barrier();
    if (t != f->holder) {
        CHECK(omp_test_lock(g_lk), "omp_test_lock of the freed lock failed");
        omp_unset_lock(g_lk);
    }
}

static void testpoll_region(void *fp)
{
    const struct frame *f = fp;
    int t = omp_get_thread_num();
    for (int i = 0; i < f->n;) {
        while (!omp_test_lock(g_lk))
            ;
        OMPDSM_flush();
        if (*g_cnt % 2 == t) { /* (turns alternate: every one a takeover) */
            *g_cnt += 1;
            i++;
        }
        OMPDSM_flush();
        omp_unset_lock(g_lk);
    }
    OMPDSM_barrier();
}

static void atomic_region(void *fp)
{
    const struct frame *f = fp;
    int t = omp_get_thread_num();
    if (t == 0)
        *g_cnt = 1;
    OMPDSM_barrier();
    if (t == 1)
        for (int i = 1; i <= f->n; i++) {
            long long v = i;
            OMPDSM_atomic(g_sum, OMPDSM_TY_I64, OMPDSM_OP_ADD, &v, 0);
        }
    OMPDSM_barrier();
}

static OMPDSM_loop_site ord_site = {"rt_counts.c", 1, "ordered_region", 0};

static void ordered_region(void *fp)
{
    const struct frame *f = fp;
    OMPDSM_loop L;
    unsigned long long lo, hi;
    OMPDSM_loop_init(&L, &ord_site, (unsigned long long)f->n,
                     OMPDSM_SCHED_STATIC, 1, 0, 0, OMPDSM_LOOP_ORDERED);
    while (OMPDSM_loop_next(&L, &lo, &hi))
        for (unsigned long long k = lo; k < hi; k++) {
            OMPDSM_loop_iter(&L, k);
            OMPDSM_ordered_start();
            CHECK_EQ_LL(*g_cnt, (long long)k, "ordered turn's counter");
            *g_cnt = (long long)k + 1;
            *g_sum += (long long)k;
            OMPDSM_ordered_end();
        }
    OMPDSM_loop_end(&L, 0);
}

static void flushes_region(void *fp)
{
    const struct frame *f = fp;
    for (int i = 0; i < f->n; i++)
        OMPDSM_flush();
    OMPDSM_barrier();
}

static OMPDSM_region r_settle = {settle_region, "rt_counts.c (settle)", 0};
static OMPDSM_region r_testfail = {testfail_region, "rt_counts.c (testfail)", 0};
static OMPDSM_region r_atomic = {atomic_region, "rt_counts.c (atomic)", 0};
static OMPDSM_region r_testpoll = {testpoll_region, "rt_counts.c (testpoll)", 0};
static OMPDSM_region r_ordered = {ordered_region, "rt_counts.c (ordered)", 0};
static OMPDSM_region r_flushes = {flushes_region, "rt_counts.c (flushes)", 0};
static OMPDSM_region *regions[] = {&r_settle, &r_testfail, &r_atomic,
                                   &r_ordered, &r_flushes, &r_testpoll};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_counts.c", globals,
                           sizeof globals / sizeof *globals, 0, regions, 6,
                           0, 0, 0};
__attribute__((constructor)) static void reg(void)
{
    OMPDSM_register_unit(&unit);
    OMPDSM_task_region(); /* (a unit with tasks: ompcc's constructor) */
}

static int user_main(int argc, char **argv, char **envp)
{
    (void)envp;
    rtt_begin("rt_counts", 45);
    if (argc < 3 || omp_get_max_threads() != 2) {
        printf("usage: rt_counts settle|testfail|testpoll|atomic|ordered|"
               "flushes COUNT, on 2 nodes\n");
        return 2;
    }
    struct frame f = {atoi(argv[2]), 0};
    if (!strcmp(argv[1], "settle")) {
        rtt_phase("settle");
        OMPDSM_parallel(&r_settle, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*g_cnt, 2LL * f.n, "critical counter");
        CHECK_EQ_LL(*g_singles, f.n, "single executions");
    } else if (!strcmp(argv[1], "atomic")) {
        rtt_phase("atomic");
        OMPDSM_parallel(&r_atomic, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*g_sum, (long long)f.n * (f.n + 1) / 2, "atomic sum");
    } else if (!strcmp(argv[1], "ordered")) {
        rtt_phase("ordered");
        OMPDSM_parallel(&r_ordered, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*g_cnt, f.n, "ordered turns");
        CHECK_EQ_LL(*g_sum, (long long)f.n * (f.n - 1) / 2, "ordered sum");
    } else if (!strcmp(argv[1], "testpoll")) {
        rtt_phase("testpoll");
        omp_init_lock(g_lk);
        OMPDSM_parallel(&r_testpoll, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*g_cnt, 2LL * f.n, "counter under the polled lock");
        omp_destroy_lock(g_lk);
    } else if (!strcmp(argv[1], "flushes")) {
        rtt_phase("flushes");
        OMPDSM_parallel(&r_flushes, &f, sizeof f, 0, 1);
    } else {
        rtt_phase("testfail");
        omp_init_lock(g_lk);
        /* the lock's manager holds it (lock.c: id mod nodes) */
        f.holder = (int)(g_lk->_ompdsm_id % 2);
        OMPDSM_parallel(&r_testfail, &f, sizeof f, 0, 1);
        CHECK_EQ_LL(*g_fails, 0, "omp_test_lock calls that succeeded while "
                                 "another node held the lock");
        omp_destroy_lock(g_lk);
    }
    return rtt_end(argv[1]);
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
