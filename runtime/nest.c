/* runtime/nest.c - nested parallel regions with more than one thread.
 *
 * A parallel region met by a thread that already runs one (level >= 1),
 * with active levels to spare (OMP_MAX_ACTIVE_LEVELS, omp_set_nested,
 * omp_set_max_active_levels), gets a team of threads of the encountering
 * thread's node process: the encountering thread is its thread 0, the
 * others come from a pool of this process (started on demand, kept for the
 * next nested region).  Everything the team shares is process memory: its
 * barrier (a count and a generation word, spin briefly then futex), the
 * reductions combined at the barrier, copyprivate data, the claim words of
 * its dynamic, guided, single and sections instances and the words of its
 * ordered loops.  Its threads share the node's page copies, so a nested
 * team needs no message and no DSM release or acquire between its own
 * threads; what they write reaches the other nodes at the enclosing team's
 * next release, as the encountering thread's own writes would.
 *
 * Within a nested team: tasks run undeferred (task.c defers only at level
 * 1), schedule(profiled) runs as static, locks, critical sections and
 * atomics are the job's (dsm/), and a region nested deeper is nested again
 * the same way. */
#include "rt.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rt_lteam {
    int n;                      /* threads */
    uint64_t spin;              /* how long its waits spin (ns) */
    OMPDSM_region *r;
    const void *frame;          /* each thread copies it */
    size_t frame_size;
    struct rt_thread parent;    /* the encountering thread at the fork */
    pthread_mutex_t mu;
    /* the barrier: arrivals, and the generation the last arrival bumps */
    uint32_t arrived;
    uint32_t gen, gen_sleep;
    /* reductions combined by the arrived threads (under mu) */
    struct rt_red_acc red;
    /* copyprivate: the executor's data, one buffer per generation parity
     * (readers of one barrier copy out before the next can complete) */
    void *cp[2];
    size_t cplen[2];
    /* threads still using the team: the last one to leave frees it (the
     * encountering thread goes on after the join's barrier, while the
     * others may still be waking from it) */
    int refs;
    /* claim words of work-share instances, and ordered words */
    uint64_t ws[RT_WS_SLOTS];
    uint64_t ord[RT_ORD_SLOTS];
    uint32_t ord_seq, ord_sleep;
};

/* ---- the pool ---- */

struct worker {
    struct worker *next;        /* idle list */
    uint32_t go, go_sleep;      /* bumped to hand it a team */
    struct rt_lteam *team;
    int tid;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
/* How long idle workers spin before they sleep: the last team's spin (an
 * idle worker spinning on the CPU its encountering thread needs would
 * delay the very fork it waits for). */
static uint64_t idle_spin;
static struct worker *idle;
static int nworkers;

static void member(struct rt_lteam *T, int tid);

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    uint32_t seen = 0;
    rt_thread_init_tp();
    for (;;) {
        /* (idle counts as waiting: a deadlock elsewhere is still seen) */
        rt_wait_begin(RT_WAIT_IDLE, NULL, NULL, 0, NULL, ~0ull);
        while (__atomic_load_n(&w->go, __ATOMIC_ACQUIRE) == seen)
            rt_word_wait_spin(&w->go, seen, &w->go_sleep,
                              __atomic_load_n(&idle_spin, __ATOMIC_RELAXED));
        rt_wait_end();
        seen = __atomic_load_n(&w->go, __ATOMIC_ACQUIRE);
        member(w->team, w->tid);
        pthread_mutex_lock(&pool_mu);
        w->next = idle;
        idle = w;
        pthread_mutex_unlock(&pool_mu);
    }
    return NULL;
}

/* An idle worker, or a new one. */
static struct worker *worker_get(void)
{
    pthread_mutex_lock(&pool_mu);
    struct worker *w = idle;
    if (w) {
        idle = w->next;
        pthread_mutex_unlock(&pool_mu);
        return w;
    }
    if (!nworkers++)
        rt_spin_init();
    pthread_mutex_unlock(&pool_mu);
    w = calloc(1, sizeof *w);
    if (!w)
        ompdsm_fatal("out of memory starting a thread of a nested team");
    pthread_attr_t a;
    rt_thread_attr(&a);
    /* Not pinned to the CPU of the thread that happens to start it: the
     * node's CPUs, as the node's own pool was given them. */
    cpu_set_t set;
    if (rt_node_cpus(&set))
        pthread_attr_setaffinity_np(&a, sizeof set, &set);
    pthread_t t;
    dsm_threads_at_least(2); /* (before it can write shared memory) */
    int rc = pthread_create(&t, &a, worker_main, w);
    pthread_attr_destroy(&a);
    if (rc)
        ompdsm_fatal("cannot start a thread for a nested parallel region "
                     "(%d threads started on node %d): %s", nworkers,
                     comm_rank(), strerror(rc));
    pthread_detach(t);
    return w;
}

/* ---- the team's barrier ---- */

void rt_nest_barrier(const void *cp, size_t cplen, int cp_executor,
                     void *cp_out)
{
    struct rt_lteam *T = rt_self.lteam;
    pthread_mutex_lock(&T->mu);
    uint32_t g = T->gen;
    rt_red_deposit(&T->red, rt_self.red, rt_self.nred, -1);
    rt_self.nred = 0;
    if (cp && cp_executor) {
        void *b = realloc(T->cp[g & 1], cplen ? cplen : 1);
        if (!b)
            ompdsm_fatal("out of memory for copyprivate data");
        memcpy(b, cp, cplen);
        T->cp[g & 1] = b;
        T->cplen[g & 1] = cplen;
    }
    if (++T->arrived == (uint32_t)T->n) {
        /* the last one applies the team's reductions, then releases */
        for (int i = 0; i < T->red.nred; i++)
            rt_red_apply(&T->red.red[i]);
        T->red.nred = 0;
        T->red.has = 0;
        T->arrived = 0;
        __atomic_store_n(&T->gen, g + 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&T->mu);
        rt_word_wake(&T->gen, &T->gen_sleep);
    } else {
        pthread_mutex_unlock(&T->mu);
        while (__atomic_load_n(&T->gen, __ATOMIC_ACQUIRE) == g)
            rt_word_wait_spin(&T->gen, g, &T->gen_sleep, T->spin);
    }
    if (cp_out && !cp_executor) {
        if (!T->cp[g & 1] || T->cplen[g & 1] != cplen)
            ompdsm_fatal("copyprivate: expected %zu bytes from the single "
                         "thread, got %zu", cplen,
                         T->cp[g & 1] ? T->cplen[g & 1] : 0);
        memcpy(cp_out, T->cp[g & 1], cplen);
    }
}

/* ---- claim words and ordered ---- */

uint64_t *rt_nest_ws_word(uint64_t seq)
{
    return &rt_self.lteam->ws[seq % RT_WS_SLOTS];
}

static uint64_t ord_tag(uint64_t seq)
{
    return (seq + 1) & SCHED_WORD_GEN_MASK;
}

static int ord_passed(const struct rt_lteam *T, uint64_t seq, uint64_t iter)
{
    uint64_t v = __atomic_load_n(&T->ord[seq % RT_ORD_SLOTS], __ATOMIC_ACQUIRE);
    return sched_word_gen(v) == ord_tag(seq) && sched_word_val(v) >= iter;
}

void rt_nest_ordered_wait(uint64_t seq, uint64_t iter)
{
    struct rt_lteam *T = rt_self.lteam;
    if (!iter)
        return;
    for (;;) {
        uint32_t s = __atomic_load_n(&T->ord_seq, __ATOMIC_ACQUIRE);
        if (ord_passed(T, seq, iter))
            return;
        rt_word_wait_spin(&T->ord_seq, s, &T->ord_sleep, T->spin);
    }
}

void rt_nest_ordered_publish(uint64_t seq, uint64_t iter)
{
    struct rt_lteam *T = rt_self.lteam;
    /* ordered regions pass one at a time: the word only grows */
    __atomic_store_n(&T->ord[seq % RT_ORD_SLOTS],
                     sched_word(ord_tag(seq), iter + 1), __ATOMIC_RELEASE);
    __atomic_fetch_add(&T->ord_seq, 1, __ATOMIC_SEQ_CST);
    rt_word_wake(&T->ord_seq, &T->ord_sleep);
}

/* ---- the region ---- */

/* Runs the region as thread tid of team T, and its join. */
static void member(struct rt_lteam *T, int tid)
{
    struct rt_thread saved = rt_self;
    const struct rt_thread *P = &T->parent;
    memset(&rt_self, 0, sizeof rt_self);
    rt_self.tid = tid;
    rt_self.nthreads = T->n;
    rt_self.level = P->level + 1;
    rt_self.active_level = P->active_level + 1;
    rt_self.outer_tid = P->level >= 1 ? P->outer_tid : tid;
    rt_self.outer_size = P->level >= 1 ? P->outer_size : T->n;
    rt_self.group = (struct comm_group){P->group.chan, 1};
    rt_self.tpn = rt_self.nlocal = 1;
    rt_self.local = 0;
    rt_self.dv = P->has_dv ? P->dv : rt_icv.dv;
    if (rt_self.level < rt_icv.nt_list_len) /* OMP_NUM_THREADS's list */
        rt_self.dv.nthreads = rt_icv.nt_list[rt_self.level];
    rt_self.has_dv = 1;
    rt_self.lteam = T;
    rt_self.up = P;
    void *copy = malloc(T->frame_size ? T->frame_size : 1);
    if (!copy)
        ompdsm_fatal("out of memory copying a %zu-byte region frame",
                     T->frame_size);
    if (T->frame_size)
        memcpy(copy, T->frame, T->frame_size);
    if (tid)
        rt_diag_region(T->r->name);
    void *task_saved = rt_task_nest_enter();
    T->r->fn(copy);
    rt_task_nest_leave(task_saved);
    free(copy);
    /* the join: the region's reductions, at a last barrier */
    rt_wait_begin(RT_WAIT_JOIN, NULL, NULL, 0, T->r->name, ~0ull);
    rt_nest_barrier(NULL, 0, 0, NULL);
    rt_wait_end();
    if (tid)
        rt_diag_region(NULL);
    free(rt_self.red);
    rt_self = saved;
    if (__atomic_sub_fetch(&T->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        /* (the reductions were applied at the join's barrier) */
        free(T->red.red);
        free(T->cp[0]);
        free(T->cp[1]);
        pthread_mutex_destroy(&T->mu);
        free(T);
    }
}

void rt_nest_run(OMPDSM_region *r, void *frame, size_t frame_size,
                 int nthreads)
{
    struct rt_lteam *T = calloc(1, sizeof *T);
    if (!T)
        ompdsm_fatal("out of memory for a nested team of %d threads",
                     nthreads);
    pthread_mutex_init(&T->mu, NULL);
    T->n = nthreads;
    T->r = r;
    T->frame = frame;
    T->frame_size = frame_size;
    T->parent = rt_self;
    T->refs = nthreads;
    /* A waiter that spins takes the CPU of the thread it waits for when
     * the node's threads (the enclosing team's on this node, less the
     * encountering one, and this team's) outnumber its CPUs: the node
     * bound to one CPU, as ompdsmrun binds by default, spun away its spin
     * at every wait (docs/design.md, "Nested regions") */
    static int cpus, host_cpus, host_nodes;
    if (!cpus) {
        cpus = rt_node_ncpus();
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        host_cpus = c > 0 ? (int)c : 1;
        const char *ls = getenv("OMPDSM_LOCAL_SIZE"); /* nodes on this host */
        host_nodes = ls && *ls ? atoi(ls) : comm_size();
        if (host_nodes < 1)
            host_nodes = 1;
    }
    int nlocal = rt_self.nlocal > 0 ? rt_self.nlocal : 1;
    int here = nlocal - 1 + nthreads;
    T->spin = here > cpus || (long)here * host_nodes > host_cpus
                  ? 0 : rt_spin_ns();
    __atomic_store_n(&idle_spin, T->spin, __ATOMIC_RELAXED);
    for (int i = 1; i < nthreads; i++) {
        struct worker *w = worker_get();
        w->team = T;
        w->tid = i;
        __atomic_fetch_add(&w->go, 1, __ATOMIC_SEQ_CST);
        rt_word_wake(&w->go, &w->go_sleep);
    }
    member(T, 0);
}
