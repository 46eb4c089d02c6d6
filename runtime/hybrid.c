/* runtime/hybrid.c - several OpenMP threads in one node process
 * (OMPDSM_THREADS_PER_NODE=T): the team's layout over the nodes, the
 * node's pool of T-1 extra threads, and the intra-node barrier under the
 * network barrier.
 *
 * Thread numbers are node-major: with tpn threads per node in the team,
 * node n runs threads n*tpn .. n*tpn+tpn-1 (the last node of the team may
 * run fewer), so a static schedule gives each node one contiguous block.
 * The thread that receives the fork (node 0's master, or a worker node's
 * dispatch loop) is the node's local thread 0, the node's leader: it posts
 * the region to the pool, runs its own part, and at every team barrier
 * waits for the node's other threads, takes their pending reductions
 * (combined inside the node first) and copyprivate data, and alone enters
 * the network barrier, whose DSM release and acquire then run once per node
 * after every thread of the node arrived (all the node's writes are then in
 * its dirty pages).  The others wait for the leader's release on a futex
 * after a short spin; in a program with tasks, waiting threads (the leader
 * too, until the others arrive) take the team's tasks instead
 * (rt_task_help, task.c). */
#include "rt.h"
#include "comm/util/futex.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void rt_team_layout(int nthreads, int *tpn, int *nodes)
{
    int n = comm_size(), t = rt_icv.threads_per_node;
    int per = (nthreads + n - 1) / n;
    /* more threads than nodes x T (num_threads, omp_set_num_threads):
     * more per node, the pool grows (rt_node_post) */
    if (per > t && nthreads <= n * t)
        per = t;
    if (per > RT_MAX_TPN)
        per = RT_MAX_TPN;
    if (per < 1)
        per = 1;
    int used = (nthreads + per - 1) / per;
    if (used > n)
        used = n;
    *tpn = per;
    *nodes = used;
}

int rt_team_local(int nthreads, int tpn, int node)
{
    int left = nthreads - node * tpn;
    if (left <= 0)
        return 0;
    return left < tpn ? left : tpn;
}

/* ---- futex words: spin briefly, then sleep ---- */

/* How long a waiting thread spins, as comm/wait.c decides for nodes
 * (ompdsm_spin_us: OMPDSM_SPIN_US, else OMP_WAIT_POLICY, shorter when the
 * host's nodes' threads outnumber its CPUs: a spinning waiter would steal
 * the CPU of the thread it waits for).  Set by the leader's first post,
 * or the first nested team (nest.c). */
static uint64_t spin_ns = 2000;
/* The most threads this node has run a team with (T, or more when a team
 * asked for more than nodes x T threads) */
static int tpn_max;

void rt_spin_init(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *ls = getenv("OMPDSM_LOCAL_SIZE");
    long local = ls && *ls ? atol(ls) : comm_size();
    if (local < 1)
        local = 1;
    long t = tpn_max > rt_icv.threads_per_node ? tpn_max
                                                : rt_icv.threads_per_node;
    spin_ns = ompdsm_spin_us(local * t > ncpu || t > rt_node_ncpus()) * 1000;
}

/* Waits while *w == val.  sleepers counts the threads that may be asleep
 * on w, so that a waker makes no system call when nobody sleeps. */
void rt_word_wait(uint32_t *w, uint32_t val, uint32_t *sleepers)
{
    rt_word_wait_spin(w, val, sleepers, spin_ns);
}

uint64_t rt_spin_ns(void)
{
    return spin_ns;
}

void rt_word_wait_spin(uint32_t *w, uint32_t val, uint32_t *sleepers,
                       uint64_t spin)
{
    uint64_t t0 = ompdsm_now_ns();
    for (unsigned i = 1; spin; i++) {
        if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != val)
            return;
        __builtin_ia32_pause();
        if (!(i & 63) && ompdsm_now_ns() - t0 >= spin)
            break;
    }
    for (int i = 0; i < 4; i++) {
        if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != val)
            return;
        sched_yield();
    }
    /* The timeout only bounds how long a lost wake-up could go
     * unnoticed; the job's failure ends the process anyway. */
    struct timespec ts = {0, 200 * 1000 * 1000};
    __atomic_fetch_add(sleepers, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == val)
        ompdsm_futex(w, FUTEX_WAIT_PRIVATE, val, &ts);
    __atomic_fetch_sub(sleepers, 1, __ATOMIC_SEQ_CST);
}

void rt_word_wake(uint32_t *w, uint32_t *sleepers)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST))
        ompdsm_futex(w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* ---- the node's state ---- */

struct rt_node {
    pthread_mutex_t mu;
    /* the region posted to the pool (read under mu with post) */
    uint32_t post, post_sleep;
    OMPDSM_region *r;
    const void *frame;
    size_t frame_size;
    int nthreads, tpn, nlocal, tid0;
    uint64_t ws_base;
    struct comm_group g;
    int pool;               /* threads of the node with the leader, once
                               its pool started (0 before) */
    /* the barrier: arrivals of threads other than the leader, and the
     * release generation */
    uint32_t arrived, arr_sleep;
    uint32_t gen, gen_sleep;
    /* what the arrived threads left for the leader (under mu) */
    struct rt_red_acc red;
    void *cp;
    size_t cplen;
    int has_cp;
    struct comm_buf recs;   /* the arrived threads' barrier records */
    /* the team allgather (rt_team_allgather): the node's threads' blocks,
     * arrivals, the result's generation and the result */
    unsigned char *ag_in, *ag_out;
    size_t ag_cap_in, ag_cap_out;
    uint32_t ag_arrived, ag_arr_sleep, ag_gen, ag_gen_sleep;
    /* the network barrier's result, for copyprivate */
    struct comm_buf down;
};

static struct rt_node node = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* A thread other than the leader arrives: leaves its reductions and
 * copyprivate data, and counts itself. */
static void arrive(const void *cp, size_t cplen, int cp_executor,
                   const void *rec, size_t reclen)
{
    pthread_mutex_lock(&node.mu);
    if (reclen && comm_buf_append(&node.recs, rec, reclen) < 0)
        ompdsm_fatal("out of memory for a barrier's records");
    rt_red_deposit(&node.red, rt_self.red, rt_self.nred, comm_rank());
    rt_self.nred = 0;
    if (cp && cp_executor) {
        free(node.cp);
        node.cp = malloc(cplen ? cplen : 1);
        if (!node.cp)
            ompdsm_fatal("out of memory for copyprivate data");
        memcpy(node.cp, cp, cplen);
        node.cplen = cplen;
        node.has_cp = 1;
    }
    pthread_mutex_unlock(&node.mu);
    __atomic_fetch_add(&node.arrived, 1, __ATOMIC_SEQ_CST);
    rt_word_wake(&node.arrived, &node.arr_sleep);
    rt_task_kick();
}

/* The leader: waits until the node's other nlocal-1 threads arrived and
 * takes their reductions into its own list. */
static void gather(int nlocal)
{
    uint32_t a;
    unsigned idle = 0;
    /* (waiting, it takes the team's tasks: rt_task_help) */
    while ((a = __atomic_load_n(&node.arrived, __ATOMIC_ACQUIRE)) <
           (uint32_t)(nlocal - 1))
        if (!rt_task_help(&idle))
            rt_word_wait(&node.arrived, a, &node.arr_sleep);
    __atomic_store_n(&node.arrived, 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&node.mu);
    if (node.red.has) {
        rt_red_deposit(&node.red, rt_self.red, rt_self.nred, comm_rank());
        if (rt_self.capred < node.red.nred) {
            struct rt_red_item *v =
                realloc(rt_self.red, (size_t)node.red.nred * sizeof *v);
            if (!v)
                ompdsm_fatal("out of memory for reductions");
            rt_self.red = v;
            rt_self.capred = node.red.nred;
        }
        memcpy(rt_self.red, node.red.red,
               (size_t)node.red.nred * sizeof *node.red.red);
        rt_self.nred = node.red.nred;
        node.red.has = 0;
        node.red.nred = 0;
    }
    pthread_mutex_unlock(&node.mu);
}

const struct comm_buf *rt_node_barrier_member(const void *cp, size_t cplen,
                                              int cp_executor, const void *rec,
                                              size_t reclen)
{
    uint32_t g = __atomic_load_n(&node.gen, __ATOMIC_ACQUIRE);
    unsigned idle = 0;
    arrive(cp, cplen, cp_executor, rec, reclen);
    /* (waiting, it takes the team's tasks until the barrier completes
     * them all: rt_task_help) */
    while (__atomic_load_n(&node.gen, __ATOMIC_ACQUIRE) == g)
        if (!rt_task_help(&idle))
            rt_word_wait(&node.gen, g, &node.gen_sleep);
    return &node.down;
}

void rt_node_barrier_leader(int nlocal, const void **cp, size_t *cplen,
                            struct comm_buf *recs)
{
    gather(nlocal);
    if (node.has_cp && !*cp) {
        *cp = node.cp;
        *cplen = node.cplen;
    }
    if (recs && node.recs.len &&
        comm_buf_append(recs, node.recs.data, node.recs.len) < 0)
        ompdsm_fatal("out of memory for a barrier's records");
    node.recs.len = 0;
}

void rt_node_release(const struct comm_buf *down)
{
    node.down.len = 0;
    if (down && down->len &&
        comm_buf_append(&node.down, down->data, down->len) < 0)
        ompdsm_fatal("out of memory for a barrier's result");
    free(node.cp);
    node.cp = NULL;
    node.has_cp = 0;
    __atomic_fetch_add(&node.gen, 1, __ATOMIC_SEQ_CST);
    rt_word_wake(&node.gen, &node.gen_sleep);
    rt_task_kick();
}

void rt_node_join_gather(int nlocal)
{
    gather(nlocal);
}

/* ---- the team allgather ---- */

/* Grows *buf to n bytes at least. */
static void ag_reserve(unsigned char **buf, size_t *cap, size_t n)
{
    if (*cap >= n)
        return;
    unsigned char *b = realloc(*buf, n);
    if (!b)
        ompdsm_fatal("out of memory for a team allgather of %zu bytes", n);
    *buf = b;
    *cap = n;
}

/* Every team thread's len bytes, in thread order, into all.  Thread
 * numbers are node-major with tpn per node, so one network allgather of
 * tpn blocks per node (a node with fewer threads leaves its last blocks
 * zero) puts thread t's block at t.  The node's threads leave their
 * blocks to the leader, which alone runs the network allgather and then
 * releases them. */
int rt_team_allgather(const void *mine, size_t len, void *all)
{
    int tpn = rt_self.tpn, nlocal = rt_self.nlocal, nt = rt_self.nthreads;
    if (tpn <= 1)
        return comm_allgather(rt_self.group, mine, len, all);
    size_t blk = (size_t)tpn * len;
    if (rt_self.local > 0) {
        uint32_t g = __atomic_load_n(&node.ag_gen, __ATOMIC_ACQUIRE);
        pthread_mutex_lock(&node.mu);
        ag_reserve(&node.ag_in, &node.ag_cap_in, blk);
        memcpy(node.ag_in + (size_t)rt_self.local * len, mine, len);
        pthread_mutex_unlock(&node.mu);
        __atomic_fetch_add(&node.ag_arrived, 1, __ATOMIC_SEQ_CST);
        rt_word_wake(&node.ag_arrived, &node.ag_arr_sleep);
        while (__atomic_load_n(&node.ag_gen, __ATOMIC_ACQUIRE) == g)
            rt_word_wait(&node.ag_gen, g, &node.ag_gen_sleep);
        /* the leader does not write ag_out again before this thread has
         * given its next block */
        memcpy(all, node.ag_out, (size_t)nt * len);
        return 0;
    }
    uint32_t a;
    while ((a = __atomic_load_n(&node.ag_arrived, __ATOMIC_ACQUIRE)) <
           (uint32_t)(nlocal - 1))
        rt_word_wait(&node.ag_arrived, a, &node.ag_arr_sleep);
    __atomic_store_n(&node.ag_arrived, 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&node.mu);
    ag_reserve(&node.ag_in, &node.ag_cap_in, blk);
    memcpy(node.ag_in, mine, len);
    memset(node.ag_in + (size_t)nlocal * len, 0, (size_t)(tpn - nlocal) * len);
    ag_reserve(&node.ag_out, &node.ag_cap_out,
               (size_t)rt_self.group.nodes * blk);
    pthread_mutex_unlock(&node.mu);
    int rc = comm_allgather(rt_self.group, node.ag_in, blk, node.ag_out);
    if (rc < 0)
        return rc; /* the job is failing: the caller ends it */
    memcpy(all, node.ag_out, (size_t)nt * len);
    __atomic_fetch_add(&node.ag_gen, 1, __ATOMIC_SEQ_CST);
    rt_word_wake(&node.ag_gen, &node.ag_gen_sleep);
    return 0;
}

/* ---- the pool ---- */

/* The units' threadprivate initialisers (OMPDSM_thread_init), registered
 * by constructors before main. */
struct tp_init {
    void (*fn)(void);
    struct tp_init *next;
};
static struct tp_init *tp_inits, **tp_tail = &tp_inits;

RT_API void OMPDSM_thread_init(void (*fn)(void))
{
    struct tp_init *t = malloc(sizeof *t);
    if (!t)
        ompdsm_fatal("out of memory registering a threadprivate initialiser");
    t->fn = fn;
    t->next = NULL;
    *tp_tail = t;
    tp_tail = &t->next;
}

/* OMPDSM_BIND_THREADS=1 (the launcher bound the node to one CPU per
 * thread): thread `local` of the node pins itself to the local-th CPU of
 * the node's mask (wrapping around).  The mask is read once, before any
 * thread narrows its own. */
static int bind_cpu[RT_MAX_TPN], nbind;

static void bind_init(void)
{
    const char *b = getenv("OMPDSM_BIND_THREADS");
    cpu_set_t set;
    if (!b || strcmp(b, "1") || sched_getaffinity(0, sizeof set, &set) < 0)
        return;
    for (int c = 0; c < CPU_SETSIZE && nbind < RT_MAX_TPN; c++)
        if (CPU_ISSET(c, &set))
            bind_cpu[nbind++] = c;
}

static void bind_self(int local)
{
    if (!nbind)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(bind_cpu[local % nbind], &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc)
        ompdsm_warn("node %d: cannot bind thread %d to CPU %d: %s",
                    comm_rank(), local, bind_cpu[local % nbind], strerror(rc));
}

void rt_thread_init_tp(void)
{
    for (struct tp_init *t = tp_inits; t; t = t->next)
        t->fn();
}

int rt_node_ncpus(void)
{
    static int n;
    if (!n) {
        cpu_set_t set;
        if (!rt_node_cpus(&set) && sched_getaffinity(0, sizeof set, &set) < 0)
            CPU_ZERO(&set);
        n = CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
    }
    return n;
}

int rt_node_cpus(cpu_set_t *set)
{
    if (!nbind)
        return 0;
    CPU_ZERO(set);
    for (int i = 0; i < nbind; i++)
        CPU_SET(bind_cpu[i], set);
    return 1;
}

void rt_thread_attr(pthread_attr_t *a)
{
    pthread_attr_init(a);
    size_t st = rt_icv.stacksize ? (size_t)rt_icv.stacksize : (size_t)8 << 20;
    if (st < (size_t)PTHREAD_STACK_MIN)
        st = (size_t)PTHREAD_STACK_MIN;
    pthread_attr_setstacksize(a, st);
}

/* A pool thread's start: its number in the node, and the post it has
 * seen (a thread added to a running pool must not rerun the last region) */
struct pool_arg {
    int local;
    uint32_t seen;
};

static void *pool_main(void *arg)
{
    struct pool_arg pa = *(struct pool_arg *)arg;
    free(arg);
    int local = pa.local;
    uint32_t seen = pa.seen;
    bind_self(local);
    rt_thread_init_tp();
    for (;;) {
        /* (idle counts as waiting: a deadlock elsewhere is still seen) */
        rt_wait_begin(RT_WAIT_IDLE, NULL, NULL, 0, NULL, ~0ull);
        pthread_mutex_lock(&node.mu);
        while (node.post == seen) {
            pthread_mutex_unlock(&node.mu);
            rt_word_wait(&node.post, seen, &node.post_sleep);
            pthread_mutex_lock(&node.mu);
        }
        rt_wait_end();
        seen = node.post;
        OMPDSM_region *r = node.r;
        size_t size = node.frame_size;
        int nthreads = node.nthreads, nlocal = node.nlocal, tid0 = node.tid0;
        uint64_t ws_base = node.ws_base;
        struct comm_group g = node.g;
        void *copy = NULL;
        if (local < nlocal) {
            copy = malloc(size ? size : 1);
            if (!copy)
                ompdsm_fatal("out of memory copying a %zu-byte region frame",
                             size);
            if (size)
                memcpy(copy, node.frame, size);
        }
        pthread_mutex_unlock(&node.mu);
        if (local >= nlocal)
            continue;
        struct rt_thread team;
        rt_team_member(r, copy, nthreads, tid0 + local, ws_base, g, &team);
        free(copy);
        /* the join: the leader takes this thread's reductions */
        arrive(NULL, 0, 0, NULL, 0);
    }
    return NULL;
}

/* Starts pool threads until the node has `want` threads with the leader
 * (T at the first region with several local threads; more when a team
 * asks for more than nodes x T threads).  Only the leader calls it, before
 * it posts the region the new threads then run. */
static void pool_grow(int want)
{
    if (want <= node.pool)
        return;
    int first = !node.pool;
    if (first) {
        node.pool = 1;
        bind_init();
    }
    pthread_attr_t a;
    rt_thread_attr(&a);
    for (int i = node.pool; i < want; i++) {
        pthread_t t;
        struct pool_arg *pa = malloc(sizeof *pa);
        if (!pa)
            ompdsm_fatal("out of memory starting thread %d of node %d", i,
                         comm_rank());
        pa->local = i;
        pa->seen = __atomic_load_n(&node.post, __ATOMIC_ACQUIRE);
        int rc = pthread_create(&t, &a, pool_main, pa);
        if (rc)
            ompdsm_fatal("cannot start thread %d of node %d (%d threads per "
                         "node): %s", i, comm_rank(), want, strerror(rc));
        pthread_detach(t);
    }
    pthread_attr_destroy(&a);
    node.pool = want;
    if (want > tpn_max)
        tpn_max = want;
    rt_spin_init();
    if (want > 1)
        dsm_volatile_threads(want);
    if (first)
        bind_self(0); /* the leader, after its pool inherited the mask */
}

void rt_node_post(OMPDSM_region *r, const void *frame, size_t frame_size,
                  int nthreads, int tpn, int nlocal, int tid0, uint64_t ws_base,
                  struct comm_group g)
{
    pool_grow(nlocal > rt_icv.threads_per_node ? nlocal
                                                : rt_icv.threads_per_node);
    pthread_mutex_lock(&node.mu);
    node.r = r;
    node.frame = frame;
    node.frame_size = frame_size;
    node.nthreads = nthreads;
    node.tpn = tpn;
    node.nlocal = nlocal;
    node.tid0 = tid0;
    node.ws_base = ws_base;
    node.g = g;
    __atomic_fetch_add(&node.post, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&node.mu);
    rt_word_wake(&node.post, &node.post_sleep);
}

/* Ordered regions: a node's threads publish one at a time (loop.c). */
static pthread_mutex_t ord_mu = PTHREAD_MUTEX_INITIALIZER;
void rt_node_ordered_lock(int on)
{
    if (on)
        pthread_mutex_lock(&ord_mu);
    else
        pthread_mutex_unlock(&ord_mu);
}
