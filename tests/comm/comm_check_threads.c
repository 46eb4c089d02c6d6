/* tests/comm/comm_check_threads.c - comm_check's group "threads": several
 * threads per node flooding puts and gets, with fetch-adds, compare-swaps,
 * messages and fences at random, one node stopped and continued in the
 * middle when the nodes share a host; every count checked at the end. */
#include "comm_check.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static uint64_t rx_thread;

static void on_thread_msg(int src, int tag, const void *buf, size_t len,
                          void *arg)
{
    (void)src, (void)tag, (void)buf, (void)len, (void)arg;
    __atomic_fetch_add(&rx_thread, 1, __ATOMIC_RELEASE);
    comm_doorbell_ring();
}

struct thr {
    int id;
    pthread_t th;
    uint64_t fadd_to[256], cas_to[256], msg_to[256];
};

/* Puts len bytes of the pattern seed into node p's slot and gets them
 * back: the first byte that differs, or -1. */
static long put_then_get(int p, size_t slot, char *src, char *back,
                         size_t len, uint64_t seed)
{
    pat_fill(src, seed, 0, len);
    OK(comm_put(p, USER_REG, slot, src, len));
    OK(comm_get(p, USER_REG, slot, back, len));
    return pat_cmp(back, seed, 0, len);
}

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    struct rng r = rng_for(7, rank, t->id, 0);
    char *src = malloc(TSLOT), *back = malloc(TSLOT);
    /* A flood first: every thread of every node puts and gets whole slots
     * on node 0 and a neighbour at once, so that socket buffers fill up and
     * writes of concurrent frames would interleave if they could. */
    size_t slot = off_tslot + ((size_t)rank * THREADS + t->id) * TSLOT;
    for (int j = 0; j < 8; j++) {
        int p = j % 3 ? 0 : (rank + 1) % nodes;
        uint64_t seed = 1500 + (uint64_t)j * 4096 + rank * 64 + t->id;
        long bad = put_then_get(p, slot, src, back, TSLOT, seed);
        CHECK(bad < 0, "thread %d: flood put then get on node %d differs at "
              "%ld", t->id, p, bad);
    }
    int iters = nodes > 4 ? 150 : 300;
    for (int i = 0; i < iters; i++) {
        int p = (int)rnd_below(&r, nodes);
        uint64_t old;
        switch (rnd_below(&r, 5)) {
        case 0:
            OK(comm_fetch_add(p, USER_REG, W_TH_FADD * 8, 1, &old));
            t->fadd_to[p]++;
            break;
        case 1: {
            size_t len = rnd_size(&r, TSLOT);
            uint64_t seed = 1300 + (uint64_t)i * 4096 + rank * 64 + t->id;
            long bad = put_then_get(p, slot, src, back, len, seed);
            CHECK(bad < 0, "thread %d: put then get of %zu bytes on node %d "
                  "differs at %ld", t->id, len, p, bad);
            break;
        }
        case 2: {
            uint64_t cur = 0;
            for (;;) {
                OK(comm_cas(p, USER_REG, W_TH_CAS * 8, cur, cur + 1, &old));
                if (old == cur)
                    break;
                cur = old;
            }
            t->cas_to[p]++;
            break;
        }
        case 3: {
            uint64_t x = i;
            OK(comm_send(p, TAG_THREAD, &x, sizeof x));
            t->msg_to[p]++;
            break;
        }
        default:
            OK(comm_fence(p));
            break;
        }
    }
    free(src);
    free(back);
    return NULL;
}

static int thread_msgs_in(void *a)
{
    return __atomic_load_n(&rx_thread, __ATOMIC_ACQUIRE) >= *(uint64_t *)a;
}

void group_threads(void)
{
    OK(comm_set_handler(TAG_THREAD, on_thread_msg, NULL));
    barrier();
    struct thr *th = calloc(THREADS, sizeof *th);
    for (int i = 0; i < THREADS; i++) {
        th[i].id = i;
        pthread_create(&th[i].th, NULL, thread_main, &th[i]);
    }
    /* Stop node 0 in the middle of the flood (when on one host): its
     * senders' socket buffers fill and writes come back short, and the job
     * must carry on after SIGCONT. */
    if (side && rank == 1) {
        for (int k = 0; k < 5; k++) {
            usleep(2000);
            kill(node0_pid, SIGSTOP);
            usleep(40000);
            kill(node0_pid, SIGCONT);
        }
    }
    int64_t sent[3 * 256] = {0};
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i].th, NULL);
        for (int p = 0; p < nodes; p++) {
            sent[p] += (int64_t)th[i].fadd_to[p];
            sent[nodes + p] += (int64_t)th[i].cas_to[p];
            sent[2 * nodes + p] += (int64_t)th[i].msg_to[p];
        }
    }
    OK(comm_allreduce(COMM_WORLD, sent, 3 * (size_t)nodes, COMM_INT64, COMM_SUM));
    uint64_t want_msgs = (uint64_t)sent[2 * nodes + rank];
    if (!wait_timed(thread_msgs_in, &want_msgs, "the threads' messages"))
        exit(1);
    barrier();
    CHECK(wload(W_TH_FADD) == (uint64_t)sent[rank], "threads: %" PRIu64
          " fetch-adds arrived, %" PRId64 " sent", wload(W_TH_FADD), sent[rank]);
    CHECK(wload(W_TH_CAS) == (uint64_t)sent[nodes + rank], "threads: %" PRIu64
          " compare-swap increments, %" PRId64 " done", wload(W_TH_CAS),
          sent[nodes + rank]);
    CHECK(rx_thread == want_msgs, "threads: %" PRIu64 " messages, %" PRIu64
          " sent", rx_thread, want_msgs);
    free(th);
}
