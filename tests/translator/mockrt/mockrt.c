/* mockrt.c - a single-process, pthreads implementation of the ompcc ABI
 * (runtime/ompdsm_abi.h) and of omp.h, for testing the translator without
 * the DSM: programs translated by ompcc and linked with this library run
 * with OMP_NUM_THREADS threads (default 4) sharing ordinary memory.
 *
 * It is deliberately simple (a new thread per region member, one lock for
 * all atomics, work-sharing state in a ring indexed by construct count) and
 * checks nothing the real runtime must provide across nodes.  Nested
 * regions run with a team of one, as in libompdsm. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompdsm_abi.h"
#include "omp.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 256

typedef struct ws {
    long long gen;                 /* which construct occupies the slot */
    unsigned long long next;       /* dynamic/guided: next iteration */
    unsigned long long ordered;    /* ordered: iterations completed in order */
    int taken;                     /* single: the block was claimed */
    void *cp;                      /* single copyprivate: the data */
} ws;

typedef struct team {
    int n;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int bar_count;
    long bar_gen;
    ws ring[RING];
    struct team *parent;
    int parent_tid;
} team;

/* internal control variables: per thread, inherited by a new team */
typedef struct icv {
    int nthreads_v;
    int dyn_v, nested_v, levels_v;
    omp_sched_t sched_v;
    int chunk_v;
} icv;

typedef struct thr {
    team *t;
    int tid;
    int level;
    long long nws;                 /* work-sharing constructs met so far */
    unsigned long long iter;       /* current iteration (ordered loops) */
    ws *loop_ws;                   /* the current loop's slot */
    unsigned long long chunk_lo, chunk_hi;
    ws *single_ws;
    icv icv;
} thr;

static __thread thr self;
static __thread int self_ready;
static icv initial_icv = {4, 0, 0, 1, omp_sched_static, 0};

static thr *me(void)
{
    if (!self_ready) {
        self.icv = initial_icv;
        self_ready = 1;
    }
    return &self;
}
#define max_threads (me()->icv.nthreads_v)
#define dyn_var (me()->icv.dyn_v)
#define nested_var (me()->icv.nested_v)
#define max_levels (me()->icv.levels_v)
#define run_sched (me()->icv.sched_v)
#define run_chunk (me()->icv.chunk_v)
static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;
static OMPDSM_unit *units;

/* ------------------------------------------------------------------------
 * start
 * ------------------------------------------------------------------------ */

void OMPDSM_register_unit(OMPDSM_unit *u)
{
    u->next = units;
    units = u;
}

void OMPDSM_global_decls(const OMPDSM_unit *u, const OMPDSM_srcpos *decls)
{
    (void)u; (void)decls;
}

static void read_env(void)
{
    const char *s = getenv("OMP_NUM_THREADS");
    icv *i = &initial_icv;
    if (s && atoi(s) > 0)
        i->nthreads_v = atoi(s);
    s = getenv("OMP_SCHEDULE");
    if (s) {
        if (!strncmp(s, "dynamic", 7))
            i->sched_v = omp_sched_dynamic;
        else if (!strncmp(s, "guided", 6))
            i->sched_v = omp_sched_guided;
        else if (!strncmp(s, "auto", 4))
            i->sched_v = omp_sched_auto;
        s = strchr(s, ',');
        if (s)
            i->chunk_v = atoi(s + 1);
    }
    s = getenv("OMP_DYNAMIC");
    i->dyn_v = s && (!strcmp(s, "true") || !strcmp(s, "TRUE") || !strcmp(s, "1"));
    s = getenv("OMP_NESTED");
    i->nested_v = s && (!strcmp(s, "true") || !strcmp(s, "TRUE") || !strcmp(s, "1"));
    s = getenv("OMP_MAX_ACTIVE_LEVELS");
    if (s)
        i->levels_v = atoi(s);
    self_ready = 0;
    me();
}

int OMPDSM_main(int argc, char **argv, char **envp,
                int (*user_main)(int, char **, char **))
{
    OMPDSM_unit *u;
    unsigned i;
    read_env();
    for (u = units; u; u = u->next) {
        if (u->abi_version != OMPDSM_ABI_VERSION) {
            fprintf(stderr, "mockrt: %s: ABI version %d\n", u->file, u->abi_version);
            exit(70);
        }
        for (i = 0; i < u->nglobals; i++) {
            OMPDSM_global *g = &u->globals[i];
            unsigned long al = g->align < sizeof(void *) ? sizeof(void *) : g->align;
            void *p = NULL;
            if (posix_memalign(&p, al, g->size ? g->size : 1) != 0) {
                fprintf(stderr, "mockrt: cannot allocate %s\n", g->name);
                exit(70);
            }
            memset(p, 0, g->size);
            *g->slot = p;
        }
    }
    for (u = units; u; u = u->next)
        if (u->init)
            u->init();
    return user_main(argc, argv, envp);
}

/* ------------------------------------------------------------------------
 * teams
 * ------------------------------------------------------------------------ */

static void team_barrier(team *t)
{
    long gen;
    if (!t || t->n == 1)
        return;
    pthread_mutex_lock(&t->lock);
    gen = t->bar_gen;
    if (++t->bar_count == t->n) {
        t->bar_count = 0;
        t->bar_gen++;
        pthread_cond_broadcast(&t->cond);
    } else {
        while (gen == t->bar_gen)
            pthread_cond_wait(&t->cond, &t->lock);
    }
    pthread_mutex_unlock(&t->lock);
}

/* A pool of worker threads that live as long as the program, so that
 * threadprivate variables (__thread) persist from region to region. */
typedef struct worker {
    pthread_t th;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int has_job;
    team *t;
    int tid, level;
    icv icv;
    OMPDSM_region *r;
    void *frame;
} worker;

static worker *pool[1024];
static int npool;
static pthread_mutex_t done_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static int done_count;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->m);
        while (!w->has_job)
            pthread_cond_wait(&w->cv, &w->m);
        pthread_mutex_unlock(&w->m);
        me();
        self.t = w->t;
        self.tid = w->tid;
        self.level = w->level;
        self.nws = 0;
        self.loop_ws = self.single_ws = NULL;
        self.icv = w->icv;
        w->r->fn(w->frame);
        free(w->frame);
        self.t = NULL;
        pthread_mutex_lock(&w->m);
        w->has_job = 0;
        pthread_mutex_unlock(&w->m);
        pthread_mutex_lock(&done_m);
        done_count++;
        pthread_cond_broadcast(&done_cv);
        pthread_mutex_unlock(&done_m);
    }
    return NULL;
}

void OMPDSM_parallel(OMPDSM_region *region, void *frame,
                     unsigned long frame_size, int num_threads, int if_clause)
{
    team *t = calloc(1, sizeof *t);
    thr saved = *me();
    int n = num_threads > 0 ? num_threads : max_threads, i;
    void *f0;
    if (!if_clause || saved.level >= 1 || max_levels < 1)
        n = 1; /* nested regions run with a team of one */
    if (n > 1024)
        n = 1024;
    t->n = n;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    t->parent = saved.t;
    t->parent_tid = saved.tid;
    for (i = 0; i < RING; i++)
        t->ring[i].gen = -1;
    if (n > 1) { /* only the initial thread starts a real team */
        pthread_mutex_lock(&done_m);
        done_count = 0;
        pthread_mutex_unlock(&done_m);
    }
    for (i = 1; i < n; i++) {
        worker *w;
        if (i > npool) {
            w = calloc(1, sizeof *w);
            pthread_mutex_init(&w->m, NULL);
            pthread_cond_init(&w->cv, NULL);
            pool[npool++] = w;
            if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
                fprintf(stderr, "mockrt: pthread_create failed\n");
                exit(70);
            }
        }
        w = pool[i - 1];
        pthread_mutex_lock(&w->m);
        w->t = t;
        w->tid = i;
        w->level = saved.level + 1;
        w->icv = saved.icv;
        w->r = region;
        w->frame = malloc(frame_size ? frame_size : 1);
        memcpy(w->frame, frame, frame_size);
        w->has_job = 1;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->m);
    }
    f0 = malloc(frame_size ? frame_size : 1);
    memcpy(f0, frame, frame_size);
    self.t = t;
    self.tid = 0;
    self.level = saved.level + 1;
    self.nws = 0;
    self.loop_ws = self.single_ws = NULL;
    region->fn(f0);
    free(f0);
    if (n > 1) {
        pthread_mutex_lock(&done_m);
        while (done_count < n - 1)
            pthread_cond_wait(&done_cv, &done_m);
        pthread_mutex_unlock(&done_m);
    }
    self = saved; /* the region's ICV changes end with it */
    free(t);
}

static ws *next_ws(void)
{
    team *t = self.t;
    long long g = self.nws++;
    ws *w;
    static ws solo;
    if (!t) {
        memset(&solo, 0, sizeof solo);
        return &solo;
    }
    w = &t->ring[g % RING];
    pthread_mutex_lock(&t->lock);
    if (w->gen != g) {
        memset(w, 0, sizeof *w);
        w->gen = g;
    }
    pthread_mutex_unlock(&t->lock);
    return w;
}

static int team_n(void)
{
    return self.t ? self.t->n : 1;
}

/* ------------------------------------------------------------------------
 * loops
 * ------------------------------------------------------------------------ */

enum { L_N, L_SCHED, L_CHUNK, L_POS, L_LAST, L_FLAGS, L_INIT };

void OMPDSM_loop_init(OMPDSM_loop *l, OMPDSM_loop_site *site,
                      unsigned long long n, int sched, long long chunk,
                      long long eval_size, long long eval_skip, int flags)
{
    (void)site;
    (void)eval_size;
    (void)eval_skip;
    memset(l, 0, sizeof *l);
    l->n = n;
    if (sched == OMPDSM_SCHED_RUNTIME) {
        sched = run_sched == omp_sched_dynamic ? OMPDSM_SCHED_DYNAMIC
                : run_sched == omp_sched_guided ? OMPDSM_SCHED_GUIDED
                                                 : OMPDSM_SCHED_STATIC;
        chunk = run_chunk;
    }
    if (sched == OMPDSM_SCHED_AUTO || sched == OMPDSM_SCHED_DEFAULT ||
        sched == OMPDSM_SCHED_PROFILED)
        sched = OMPDSM_SCHED_STATIC;
    l->opaque[L_SCHED] = (unsigned long long)sched;
    l->opaque[L_CHUNK] = chunk > 0 ? (unsigned long long)chunk : 0;
    l->opaque[L_POS] = 0;
    l->opaque[L_FLAGS] = (unsigned long long)flags;
    l->p[0] = next_ws();
    self.loop_ws = l->p[0];
    self.chunk_lo = self.chunk_hi = 0;
}

void OMPDSM_sections_init(OMPDSM_loop *l, OMPDSM_loop_site *site, unsigned n)
{
    OMPDSM_loop_init(l, site, n, OMPDSM_SCHED_DYNAMIC, 1, 0, 0, 0);
}

/* ordered loops hand the turn on chunk by chunk */
static void ordered_chunk_done(OMPDSM_loop *l)
{
    ws *w = l->p[0];
    team *t = self.t;
    if (!(l->opaque[L_FLAGS] & OMPDSM_LOOP_ORDERED) || self.chunk_hi == self.chunk_lo)
        return;
    for (;;) {
        unsigned long long d = __atomic_load_n(&w->ordered, __ATOMIC_ACQUIRE);
        if (d >= self.chunk_lo)
            break;
        sched_yield();
    }
    (void)t;
    __atomic_store_n(&w->ordered, self.chunk_hi, __ATOMIC_RELEASE);
    self.chunk_lo = self.chunk_hi;
}

int OMPDSM_loop_next(OMPDSM_loop *l, unsigned long long *lo,
                     unsigned long long *hi)
{
    unsigned long long n = l->n, chunk = l->opaque[L_CHUNK];
    int nt = team_n(), tid = self.tid;
    ws *w = l->p[0];
    ordered_chunk_done(l);
    switch ((int)l->opaque[L_SCHED]) {
    case OMPDSM_SCHED_STATIC:
        if (chunk == 0) {
            unsigned long long q = n / (unsigned)nt, r = n % (unsigned)nt, b, e;
            if (l->opaque[L_POS]++)
                return 0;
            b = (unsigned)tid * q + ((unsigned)tid < r ? (unsigned)tid : r);
            e = b + q + ((unsigned)tid < r);
            if (b >= e)
                return 0;
            *lo = b;
            *hi = e;
        } else {
            unsigned long long k = l->opaque[L_POS]++, b;
            b = (k * (unsigned)nt + (unsigned)tid) * chunk;
            if (b >= n)
                return 0;
            *lo = b;
            *hi = b + chunk < n ? b + chunk : n;
        }
        break;
    case OMPDSM_SCHED_GUIDED: {
        unsigned long long b, c;
        pthread_mutex_lock(&big);
        b = w->next;
        c = (n - b) / (2 * (unsigned)nt);
        if (c < (chunk ? chunk : 1))
            c = chunk ? chunk : 1;
        if (b >= n) {
            pthread_mutex_unlock(&big);
            return 0;
        }
        w->next = b + c < n ? b + c : n;
        pthread_mutex_unlock(&big);
        *lo = b;
        *hi = b + c < n ? b + c : n;
        break;
    }
    default: { /* dynamic */
        unsigned long long c = chunk ? chunk : 1;
        unsigned long long b = __atomic_fetch_add(&w->next, c, __ATOMIC_SEQ_CST);
        if (b >= n)
            return 0;
        *lo = b;
        *hi = b + c < n ? b + c : n;
    }
    }
    if (*hi == n)
        l->opaque[L_LAST] = 1;
    self.chunk_lo = *lo;
    self.chunk_hi = *hi;
    return 1;
}

int OMPDSM_loop_last(OMPDSM_loop *l)
{
    return (int)l->opaque[L_LAST];
}

void OMPDSM_loop_end(OMPDSM_loop *l, int nowait)
{
    ordered_chunk_done(l);
    if (!nowait)
        team_barrier(self.t);
}

void OMPDSM_loop_iter(OMPDSM_loop *l, unsigned long long k)
{
    (void)l;
    self.iter = k;
}

void OMPDSM_ordered_start(void)
{
    ws *w = self.loop_ws;
    if (!w)
        return;
    while (__atomic_load_n(&w->ordered, __ATOMIC_ACQUIRE) < self.chunk_lo)
        sched_yield();
}

void OMPDSM_ordered_end(void)
{
}

/* ------------------------------------------------------------------------
 * single, master, synchronisation
 * ------------------------------------------------------------------------ */

int OMPDSM_single_start(void)
{
    ws *w = next_ws();
    int mine;
    self.single_ws = w;
    if (!self.t)
        return 1;
    pthread_mutex_lock(&self.t->lock);
    mine = !w->taken;
    w->taken = 1;
    pthread_mutex_unlock(&self.t->lock);
    return mine;
}

void OMPDSM_single_end(int nowait)
{
    if (!nowait)
        team_barrier(self.t);
}

void OMPDSM_single_copyprivate(int executed, void *data, unsigned long size)
{
    ws *w = self.single_ws;
    if (executed)
        w->cp = data;
    team_barrier(self.t);
    if (!executed)
        memcpy(data, w->cp, size);
    team_barrier(self.t);
}

int OMPDSM_master(void)
{
    return self.tid == 0;
}

void OMPDSM_barrier(void)
{
    team_barrier(self.t);
}

typedef struct crit {
    char *name;
    pthread_mutex_t m;
    struct crit *next;
} crit;
static crit *crits;
static pthread_mutex_t unnamed = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *crit_lock(const char *name)
{
    crit *c;
    if (!name)
        return &unnamed;
    pthread_mutex_lock(&big);
    for (c = crits; c; c = c->next)
        if (!strcmp(c->name, name))
            break;
    if (!c) {
        c = calloc(1, sizeof *c);
        c->name = strdup(name);
        pthread_mutex_init(&c->m, NULL);
        c->next = crits;
        crits = c;
    }
    pthread_mutex_unlock(&big);
    return &c->m;
}

void OMPDSM_critical_start(const char *name)
{
    pthread_mutex_lock(crit_lock(name));
}

void OMPDSM_critical_end(const char *name)
{
    pthread_mutex_unlock(crit_lock(name));
}

void OMPDSM_flush(void)
{
    __sync_synchronize();
}

void OMPDSM_flush_range(const void *p, unsigned long size)
{
    (void)p;
    (void)size;
    __sync_synchronize();
}

/* Threads of one process share memory: a volatile access needs only the
 * fence its flush implies. */
void *OMPDSM_volatile_read(const volatile void *p, unsigned long size)
{
    (void)size;
    __sync_synchronize();
    return (void *)p;
}

void OMPDSM_volatile_write(const volatile void *p, unsigned long size)
{
    (void)p;
    (void)size;
    __sync_synchronize();
}

/* ------------------------------------------------------------------------
 * atomic and reductions
 * ------------------------------------------------------------------------ */

#define APPLY(T, x, op, v)                                                   \
    do {                                                                     \
        T *X = (T *)(x), V = *(const T *)(v);                                \
        switch (op) {                                                        \
        case OMPDSM_OP_ADD: *X = *X + V; break;                              \
        case OMPDSM_OP_SUB: *X = rev ? V - *X : *X - V; break;               \
        case OMPDSM_OP_MUL: *X = (T)(*X * V + 0); break;                     \
        case OMPDSM_OP_DIV: *X = rev ? V / *X : *X / V; break;               \
        case OMPDSM_OP_MAX: *X = *X > V ? *X : V; break;                     \
        case OMPDSM_OP_MIN: *X = *X < V ? *X : V; break;                     \
        case OMPDSM_OP_LAND: *X = *X && V; break;                            \
        case OMPDSM_OP_LOR: *X = *X || V; break;                             \
        default: INTOPS(T, X, op, V);                                        \
        }                                                                    \
    } while (0)
#define INTOPS(T, X, op, V)                                                  \
    switch (op) {                                                            \
    case OMPDSM_OP_AND: *X = *X & V; break;                                  \
    case OMPDSM_OP_OR: *X = *X | V; break;                                   \
    case OMPDSM_OP_XOR: *X = *X ^ V; break;                                  \
    case OMPDSM_OP_SHL: *X = rev ? V << *X : *X << V; break;                 \
    case OMPDSM_OP_SHR: *X = rev ? V >> *X : *X >> V; break;                 \
    }
#define NOINT(T, X, op, V) (void)0

static void apply(void *x, int type, int op, const void *v, int rev)
{
    switch (type) {
    case OMPDSM_TY_I8: APPLY(signed char, x, op, v); break;
    case OMPDSM_TY_U8: APPLY(unsigned char, x, op, v); break;
    case OMPDSM_TY_I16: APPLY(short, x, op, v); break;
    case OMPDSM_TY_U16: APPLY(unsigned short, x, op, v); break;
    case OMPDSM_TY_I32: APPLY(int, x, op, v); break;
    case OMPDSM_TY_U32: APPLY(unsigned, x, op, v); break;
    case OMPDSM_TY_I64: APPLY(long long, x, op, v); break;
    case OMPDSM_TY_U64: APPLY(unsigned long long, x, op, v); break;
    case OMPDSM_TY_BOOL: APPLY(_Bool, x, op, v); break;
#undef INTOPS
#define INTOPS NOINT
    case OMPDSM_TY_F32: APPLY(float, x, op, v); break;
    case OMPDSM_TY_F64: APPLY(double, x, op, v); break;
    case OMPDSM_TY_F80: APPLY(long double, x, op, v); break;
    }
}

void OMPDSM_atomic(void *x, int type, int op, const void *operand, int reversed)
{
    pthread_mutex_lock(&big);
    apply(x, type, op, operand, reversed);
    pthread_mutex_unlock(&big);
}

#define INIT(T, p, op, maxv, minv)                                           \
    do {                                                                     \
        T *P = (T *)(p);                                                     \
        switch (op) {                                                        \
        case OMPDSM_OP_MUL: case OMPDSM_OP_LAND: *P = 1; break;              \
        case OMPDSM_OP_AND: memset(P, 0xff, sizeof *P); break;               \
        case OMPDSM_OP_MAX: *P = minv; break;                                \
        case OMPDSM_OP_MIN: *P = maxv; break;                                \
        default: *P = 0;                                                     \
        }                                                                    \
    } while (0)

void OMPDSM_reduce_init(void *p, int type, int op)
{
    switch (type) {
    case OMPDSM_TY_I8: INIT(signed char, p, op, 127, -128); break;
    case OMPDSM_TY_U8: INIT(unsigned char, p, op, 255, 0); break;
    case OMPDSM_TY_I16: INIT(short, p, op, 32767, -32768); break;
    case OMPDSM_TY_U16: INIT(unsigned short, p, op, 65535, 0); break;
    case OMPDSM_TY_I32: INIT(int, p, op, 2147483647, -2147483647 - 1); break;
    case OMPDSM_TY_U32: INIT(unsigned, p, op, 4294967295u, 0); break;
    case OMPDSM_TY_I64: INIT(long long, p, op, 9223372036854775807LL, -9223372036854775807LL - 1); break;
    case OMPDSM_TY_U64: INIT(unsigned long long, p, op, 18446744073709551615ULL, 0); break;
    case OMPDSM_TY_BOOL: INIT(_Bool, p, op, 1, 0); break;
    case OMPDSM_TY_F32: INIT(float, p, op, __builtin_inff(), -__builtin_inff()); break;
    case OMPDSM_TY_F64: INIT(double, p, op, __builtin_inf(), -__builtin_inf()); break;
    case OMPDSM_TY_F80: INIT(long double, p, op, __builtin_infl(), -__builtin_infl()); break;
    }
}

void OMPDSM_reduce(const OMPDSM_red *items, int n)
{
    int i;
    pthread_mutex_lock(&big);
    for (i = 0; i < n; i++) {
        int op = items[i].op == OMPDSM_OP_SUB ? OMPDSM_OP_ADD : items[i].op;
        apply(items[i].shared, items[i].type, op, items[i].priv, 0);
    }
    pthread_mutex_unlock(&big);
}

/* Tasks run undeferred here: the outlined function at once, on the
 * encountering thread (task_spread and task_cross_node, which need tasks
 * to spread, are expected failures of omp-mock-run). */
void OMPDSM_task(void (*fn)(void *), void *data, unsigned long size,
                 unsigned long align, int flags)
{
    (void)size;
    (void)align;
    (void)flags;
    fn(data);
}

void OMPDSM_task_region(void)
{
}

void OMPDSM_taskwait(void)
{
}

/* ------------------------------------------------------------------------
 * memory and system calls
 * ------------------------------------------------------------------------ */

void *OMPDSM_local_alloc(unsigned long size, unsigned long align, const void *init)
{
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
                       size ? size : 1) != 0)
        abort();
    if (init)
        memcpy(p, init, size);
    else
        memset(p, 0, size);
    return p;
}

void *OMPDSM_local_new(unsigned long size, unsigned long align)
{
    return OMPDSM_local_alloc(size, align, NULL);
}

void OMPDSM_local_free(void *pointer_variable_address)
{
    free(*(void **)pointer_variable_address);
}

void *OMPDSM_malloc(unsigned long size) { return malloc(size); }
void *OMPDSM_calloc(unsigned long n, unsigned long size) { return calloc(n, size); }
void *OMPDSM_realloc(void *p, unsigned long size) { return realloc(p, size); }
void OMPDSM_free(void *p) { free(p); }
int OMPDSM_posix_memalign(void **out, unsigned long al, unsigned long size)
{
    return posix_memalign(out, al, size);
}
void *OMPDSM_aligned_alloc(unsigned long al, unsigned long size) { return aligned_alloc(al, size); }
void *OMPDSM_memalign(unsigned long al, unsigned long size)
{
    void *p = NULL;
    return posix_memalign(&p, al, size) ? NULL : p;
}
void *OMPDSM_valloc(unsigned long size)
{
    void *p = NULL;
    return posix_memalign(&p, 4096, size) ? NULL : p;
}
char *OMPDSM_strdup(const char *s) { return strdup(s); }
char *OMPDSM_strndup(const char *s, unsigned long n) { return strndup(s, n); }
long OMPDSM_read(int fd, void *b, unsigned long n) { return read(fd, b, n); }
long OMPDSM_write(int fd, const void *b, unsigned long n) { return write(fd, b, n); }
long OMPDSM_pread(int fd, void *b, unsigned long n, long off) { return pread(fd, b, n, off); }
long OMPDSM_pwrite(int fd, const void *b, unsigned long n, long off) { return pwrite(fd, b, n, off); }
unsigned long OMPDSM_fread(void *b, unsigned long s, unsigned long n, void *f)
{
    return fread(b, s, n, f);
}
unsigned long OMPDSM_fwrite(const void *b, unsigned long s, unsigned long n, void *f)
{
    return fwrite(b, s, n, f);
}

/* ------------------------------------------------------------------------
 * omp.h
 * ------------------------------------------------------------------------ */

void omp_set_num_threads(int n) { if (n > 0) max_threads = n; }
int omp_get_num_threads(void) { return team_n(); }
int omp_get_max_threads(void) { return max_threads; }
int omp_get_thread_num(void) { return self.tid; }
int omp_get_num_procs(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }
int omp_in_parallel(void)
{
    team *t;
    for (t = self.t; t; t = t->parent)
        if (t->n > 1)
            return 1;
    return 0;
}
void omp_set_dynamic(int d) { dyn_var = d != 0; }
int omp_get_dynamic(void) { return dyn_var; }
void omp_set_nested(int n) { nested_var = n != 0; }
int omp_get_nested(void) { return nested_var; }
void omp_set_schedule(omp_sched_t k, int chunk) { run_sched = k; run_chunk = chunk; }
void omp_get_schedule(omp_sched_t *k, int *chunk) { *k = run_sched; *chunk = run_chunk; }
int omp_get_thread_limit(void) { return 1 << 20; }
void omp_set_max_active_levels(int n) { if (n >= 0) max_levels = n; }
int omp_get_max_active_levels(void) { return max_levels; }
int omp_get_level(void) { return self.level; }
int omp_get_ancestor_thread_num(int level)
{
    team *t = self.t;
    int tid = self.tid, l = self.level;
    if (level < 0 || level > l)
        return -1;
    while (l > level && t) {
        tid = t->parent_tid;
        t = t->parent;
        l--;
    }
    return tid;
}
int omp_get_team_size(int level)
{
    team *t = self.t;
    int l = self.level;
    if (level < 0 || level > l)
        return -1;
    while (l > level && t) {
        t = t->parent;
        l--;
    }
    return t ? t->n : 1;
}
int omp_get_active_level(void)
{
    team *t;
    int n = 0;
    for (t = self.t; t; t = t->parent)
        n += t->n > 1;
    return n;
}

void omp_init_lock(omp_lock_t *l)
{
    pthread_mutex_t *m = malloc(sizeof *m);
    pthread_mutex_init(m, NULL);
    l->_ompdsm_id = (unsigned long long)(unsigned long)m;
}
void omp_destroy_lock(omp_lock_t *l) { free((void *)(unsigned long)l->_ompdsm_id); }
void omp_set_lock(omp_lock_t *l) { pthread_mutex_lock((void *)(unsigned long)l->_ompdsm_id); }
void omp_unset_lock(omp_lock_t *l) { pthread_mutex_unlock((void *)(unsigned long)l->_ompdsm_id); }
int omp_test_lock(omp_lock_t *l)
{
    return pthread_mutex_trylock((void *)(unsigned long)l->_ompdsm_id) == 0;
}

static long long me_id(void)
{
    return (long long)(unsigned long)pthread_self();
}
void omp_init_nest_lock(omp_nest_lock_t *l)
{
    omp_init_lock((omp_lock_t *)l);
    l->_ompdsm_owner = 0;
    l->_ompdsm_count = 0;
}
void omp_destroy_nest_lock(omp_nest_lock_t *l) { omp_destroy_lock((omp_lock_t *)l); }
void omp_set_nest_lock(omp_nest_lock_t *l)
{
    if (l->_ompdsm_count && l->_ompdsm_owner == me_id()) {
        l->_ompdsm_count++;
        return;
    }
    omp_set_lock((omp_lock_t *)l);
    l->_ompdsm_owner = me_id();
    l->_ompdsm_count = 1;
}
void OMPDSM_set_lock_at(omp_lock_t *l, const char *file, int line,
                        const char *text)
{
    (void)file; (void)line; (void)text;
    omp_set_lock(l);
}
void OMPDSM_set_nest_lock_at(omp_nest_lock_t *l, const char *file, int line,
                             const char *text)
{
    (void)file; (void)line; (void)text;
    omp_set_nest_lock(l);
}
void omp_unset_nest_lock(omp_nest_lock_t *l)
{
    if (--l->_ompdsm_count == 0) {
        l->_ompdsm_owner = 0;
        omp_unset_lock((omp_lock_t *)l);
    }
}
int omp_test_nest_lock(omp_nest_lock_t *l)
{
    if (l->_ompdsm_count && l->_ompdsm_owner == me_id())
        return (int)++l->_ompdsm_count;
    if (!omp_test_lock((omp_lock_t *)l))
        return 0;
    l->_ompdsm_owner = me_id();
    l->_ompdsm_count = 1;
    return 1;
}

double omp_get_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
double omp_get_wtick(void) { return 1e-9; }
