/* tests/comm/comm_check_atomics.c - comm_check's group "atomics": remote
 * fetch-adds on one word and spread over every node, summed exactly, and a
 * compare-swap lock that must exclude. */
#include "comm_check.h"

#include <sched.h>
#include <unistd.h>

enum { NFADD = 10000 };

static void test_fadd_one(void)
{
    uint64_t prev = 0, sum = 0, max = 0;
    for (int i = 0; i < NFADD; i++) {
        uint64_t old;
        OK(comm_fetch_add(0, USER_REG, W_ONE * 8, 1, &old));
        if (i)
            CHECK(old > prev, "fetch-add returned %" PRIu64 " after %" PRIu64,
                  old, prev);
        prev = old;
        sum += old;
        if (old > max)
            max = old;
    }
    barrier();
    uint64_t total = (uint64_t)NFADD * nodes;
    if (rank == 0)
        CHECK(wload(W_ONE) == total, "one word: %" PRIu64 " after %" PRIu64
              " fetch-adds", wload(W_ONE), total);
    /* Every old value 0..total-1 was returned exactly once. */
    int64_t v[2] = {(int64_t)sum, (int64_t)max};
    OK(comm_allreduce(COMM_WORLD, &v[0], 1, COMM_INT64, COMM_SUM));
    OK(comm_allreduce(COMM_WORLD, &v[1], 1, COMM_INT64, COMM_MAX));
    CHECK((uint64_t)v[0] == total * (total - 1) / 2 &&
          (uint64_t)v[1] == total - 1,
          "old values sum to %" PRId64 ", max %" PRId64 " (not a permutation)",
          v[0], v[1]);
}

static void test_fadd_spread(void)
{
    for (int i = 0; i < NFADD; i++) {
        int p = (rank + i) % nodes;
        uint64_t old;
        OK(comm_fetch_add(p, USER_REG, (W_SPREAD + rank) * 8,
                          (uint64_t)i + 1, &old));
        OK(comm_fetch_add(p, USER_REG, W_TOTAL * 8, 1, &old));
    }
    barrier();
    uint64_t total = 0;
    for (int w = 0; w < nodes; w++) {
        /* i = j*n + d with (w + d) % n == rank */
        int d = ((rank - w) % nodes + nodes) % nodes;
        uint64_t cnt = d < NFADD ? (uint64_t)(NFADD - 1 - d) / nodes + 1 : 0;
        uint64_t want = cnt * (uint64_t)(d + 1) + (uint64_t)nodes * cnt * (cnt - 1) / 2;
        CHECK(wload(W_SPREAD + w) == want, "spread word of node %d: %" PRIu64
              ", expected %" PRIu64, w, wload(W_SPREAD + w), want);
        total += cnt;
    }
    CHECK(wload(W_TOTAL) == total, "spread total %" PRIu64 ", expected %" PRIu64,
          wload(W_TOTAL), total);
}

static void test_cas_lock(void)
{
    int L = nodes - 1, iters = nodes > 4 ? 60 : 150;
    struct rng r = rng_for(4, rank, 0, 0);
    for (int i = 0; i < iters; i++) {
        uint64_t old;
        for (int spin = 0;; spin++) {
            OK(comm_cas(L, USER_REG, W_LOCK * 8, 0, (uint64_t)rank + 1, &old));
            if (old == 0)
                break;
            CHECK(old <= (uint64_t)nodes, "lock word holds %" PRIu64, old);
            if (spin > 2)
                usleep((useconds_t)(rnd_below(&r, 200) + 1));
            else
                sched_yield();
        }
        OK(comm_fetch_add(L, USER_REG, W_INSIDE * 8, 1, &old));
        CHECK(old == 0, "%" PRIu64 " other holders inside the lock", old);
        uint64_t v;
        OK(comm_get(0, USER_REG, W_COUNTER * 8, &v, 8));
        v++;
        OK(comm_put(0, USER_REG, W_COUNTER * 8, &v, 8));
        OK(comm_fence(0));
        OK(comm_fetch_add(L, USER_REG, W_INSIDE * 8, (uint64_t)-1, &old));
        OK(comm_cas(L, USER_REG, W_LOCK * 8, (uint64_t)rank + 1, 0, &old));
        CHECK(old == (uint64_t)rank + 1, "released a lock held by %" PRIu64, old);
    }
    barrier();
    if (rank == 0)
        CHECK(wload(W_COUNTER) == (uint64_t)iters * nodes,
              "lock-protected counter %" PRIu64 ", expected %" PRIu64,
              wload(W_COUNTER), (uint64_t)iters * nodes);
}

void group_atomics(void)
{
    test_fadd_one();
    test_fadd_spread();
    test_cas_lock();
    barrier();
}
