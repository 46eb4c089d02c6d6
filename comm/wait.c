/* comm/wait.c - waiting without burning the CPU forever: spin for a short
 * budget, then sleep on the node's doorbell futex, which every notify (local
 * or from a peer, directly through shared memory or via a service thread)
 * increments.
 *
 * Why this is free of lost wake-ups: a notifier stores its value, then
 * increments the doorbell, then wakes if anyone sleeps.  A waiter announces
 * itself in `sleepers`, reads the doorbell, re-checks its condition and only
 * then sleeps on that doorbell value; if the increment came after the read,
 * FUTEX_WAIT returns at once; if before, the re-check sees the value. */
#include "transport.h"
#include "util/futex.h"

#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/* Shared (not PRIVATE) futex operations: the doorbell lives in a memfd
 * mapped by several processes. */
void comm_doorbell_ring_area(struct comm_sync_area *sync)
{
    __atomic_fetch_add(&sync->doorbell, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sync->sleepers, __ATOMIC_SEQ_CST))
        ompdsm_futex(&sync->doorbell, FUTEX_WAKE, INT32_MAX, NULL);
}

void comm_doorbell_ring(void)
{
    comm_doorbell_ring_area(comm_g.sync);
}

int comm_wait_until(int (*pred)(void *arg), void *arg)
{
    if (pred(arg))
        return 0;
    uint64_t t0 = ompdsm_now_ns();
    uint64_t spin_end = t0 + comm_g.spin_ns;
    int slept = 0;
    unsigned n = 0;
    /* Spin: check the clock only every 64 polls. */
    while (comm_g.spin_ns) {
        for (int i = 0; i < 64; i++) {
            if (pred(arg))
                goto done;
            ompdsm_cpu_relax();
        }
        if (ompdsm_now_ns() >= spin_end)
            break;
    }
    /* A few yields let a peer on our core run before we go to sleep. */
    for (; n < 4; n++) {
        if (pred(arg))
            goto done;
        sched_yield();
    }
    struct comm_sync_area *s = comm_g.sync;
    for (;;) {
        __atomic_fetch_add(&s->sleepers, 1, __ATOMIC_SEQ_CST);
        uint32_t bell = __atomic_load_n(&s->doorbell, __ATOMIC_SEQ_CST);
        if (pred(arg)) {
            __atomic_fetch_sub(&s->sleepers, 1, __ATOMIC_SEQ_CST);
            break;
        }
        if (comm_g.failed) {
            __atomic_fetch_sub(&s->sleepers, 1, __ATOMIC_SEQ_CST);
            comm_stats_add_wait(ompdsm_now_ns() - t0, 1);
            return -ECONNABORTED;
        }
        /* The timeout only bounds how long a failure goes unnoticed. */
        struct timespec ts = {0, COMM_FAILURE_POLL_MS * 1000L * 1000};
        ompdsm_futex(&s->doorbell, FUTEX_WAIT, bell, &ts);
        slept = 1;
        __atomic_fetch_sub(&s->sleepers, 1, __ATOMIC_SEQ_CST);
    }
done:
    comm_stats_add_wait(ompdsm_now_ns() - t0, slept);
    return 0;
}

struct ge_arg {
    const volatile uint64_t *p;
    uint64_t target;
};

static int ge_pred(void *a)
{
    struct ge_arg *g = a;
    return __atomic_load_n(g->p, __ATOMIC_ACQUIRE) >= g->target;
}

int comm_wait_ge(const volatile uint64_t *p, uint64_t target)
{
    if (OMPDSM_LIKELY(__atomic_load_n(p, __ATOMIC_ACQUIRE) >= target))
        return 0;
    struct ge_arg a = {p, target};
    return comm_wait_until(ge_pred, &a);
}
