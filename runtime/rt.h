/* runtime/rt.h - libompdsm's internal interface: the ICVs, the team and
 * thread state, and the helpers the construct files share; only what one
 * file uses of another (the rest is static in its file).  Grouped by the
 * file that defines each declaration.  The ABI ompcc emits is in
 * ompdsm_abi.h; the user API in omp.h. */
#ifndef OMPDSM_RT_H
#define OMPDSM_RT_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include "comm/comm.h"
#include "dsm/dsm.h"
#include "sched/sched.h"
#include "ompdsm_abi.h"
#include "omp.h"

/* The runtime's comm region: work-share slots and ordered counters. */
enum { RT_REG_AREA = DSM_REG_NEXT, RT_REG_TASK = DSM_REG_NEXT + 1 };

#define RT_API __attribute__((visibility("default")))

/* ---- env.c: internal control variables, parsed once at start ---- */
/* The ICVs of a task's data environment, which each implicit task of a
 * region inherits from the encountering one and may change for itself. */
struct rt_dicv {
    int nthreads;          /* OMP_NUM_THREADS (nthreads-var), capped */
    int dynamic;           /* OMP_DYNAMIC */
    int nested;            /* OMP_NESTED */
    int sched_kind;        /* OMP_SCHEDULE: OMPDSM_SCHED_* */
    long long sched_chunk;
};
struct rt_icv {
    struct rt_dicv dv;     /* outside regions (each region's threads hold
                              their own copies: rt_dv()) */
    unsigned long long stacksize; /* OMP_STACKSIZE (bytes), 0 = default */
    int thread_limit;      /* OMP_THREAD_LIMIT */
    int max_active_levels; /* OMP_MAX_ACTIVE_LEVELS */
    int nest_limit;        /* largest nested team: OMP_THREAD_LIMIT if set */
    int nt_list[8];        /* OMP_NUM_THREADS's list: nthreads-var of the */
    int nt_list_len;       /* implicit tasks of level i (nest.c) */
    int threads_per_node;  /* OMPDSM_THREADS_PER_NODE (hybrid.c) */
    int max_threads;       /* nodes x threads per node */
    double prof_gain;      /* OMPDSM_PROFILED_GAIN */
    double prof_drift;     /* OMPDSM_PROFILED_DRIFT */
    int prof_share;        /* OMPDSM_PROFILED_SHARE */
    int prof_stalls;       /* OMPDSM_PROFILED_STALLS */
    struct rt_prof_override *prof_over; /* OMPDSM_PROFILED */
    int nprof_over;
};
extern struct rt_icv rt_icv;
void rt_env_init(int nodes);
/* The most active levels omp_set_max_active_levels and omp_set_nested
 * give (libgomp's) */
enum { RT_MAX_LEVELS = 255 };
/* Parses "kind[,chunk]" as OMP_SCHEDULE does; 0 or -EINVAL. */
int rt_parse_schedule(const char *s, int *kind, long long *chunk);
/* One entry of OMPDSM_PROFILED: the loop at file:line (file "*": every
 * loop) runs schedule(profiled, chunk, eval_size, eval_skip), or the
 * schedule kind[,chunk] named instead (static, dynamic, guided). */
struct rt_prof_override {
    char file[256];
    int line;
    int kind;        /* OMPDSM_SCHED_* */
    long long chunk, eval_size, eval_skip; /* -1: the clause's own */
};
/* Parses OMPDSM_PROFILED's "file:line=chunk[,eval_size[,eval_skip]];..."
 * into a new array; 0, -EINVAL or -ENOMEM (the caller says what is
 * expected). */
int rt_parse_prof_overrides(const char *s, struct rt_prof_override **out,
                            int *n);
/* Parses a non-negative decimal fraction such as 0.05; 0 or -EINVAL. */
int rt_parse_fraction(const char *s, double *out);

/* ---- envtab.c: the table of every variable, OMP_DISPLAY_ENV ---- */
/* Prints the settings in force on node 0 when OMP_DISPLAY_ENV=true or
 * verbose (every node parses the variable); call once, after start-up. */
void rt_display_env(void);

/* ---- team.c: teams and threads ---- */
struct rt_thread {
    int tid;          /* thread number in the current team */
    int nthreads;     /* size of the current team */
    int level;        /* nesting level of parallel regions */
    int active_level; /* levels with more than one thread */
    int outer_tid;    /* thread number in the level-1 team */
    int outer_size;   /* size of the level-1 team */
    struct comm_group group; /* nodes of the team, for its barriers */
    uint64_t ws_seq;  /* work-sharing constructs met in this team */
    /* The first instance whose claim slot other threads may still be
     * using (rt_ws_gate): RT_WS_SLOTS after the last barrier or fork. */
    uint64_t ws_safe;
    int in_fork;      /* between fork and join of an active region */
    /* Reductions waiting for the next barrier. */
    struct rt_red_item *red;
    int nred, capred;
    /* The ordered loop this thread is in, its current iteration, and
     * whether that iteration has passed the ordered baton on (ran its
     * ordered region, or was found to have none). */
    struct rt_loop *ordered_loop;
    unsigned long long ordered_iter;
    int ordered_passed;
    /* Hybrid nodes (hybrid.c): the team's threads per node, this thread's
     * index among its node's team threads (0: the node's leader) and the
     * number of them (1 without hybrid nodes). */
    int tpn, local, nlocal;
    /* This implicit task's data-environment ICVs (has_dv: inside a
     * region; else rt_icv.dv's apply). */
    struct rt_dicv dv;
    int has_dv;
    /* A nested team's thread (nest.c): the team, whose barriers, claim
     * words and ordered words are in this process's memory; NULL in a
     * team over the nodes. */
    struct rt_lteam *lteam;
    /* The encountering thread's state at the region this thread's team
     * runs (levels above: omp_get_ancestor_thread_num); NULL in the
     * level-1 team over the nodes, whose level 0 is node 0's master. */
    const struct rt_thread *up;
};
extern __thread struct rt_thread rt_self;
/* A number for the calling thread, unique in the job (owners of nestable
 * locks). */
long long rt_thread_owner(void);
static inline struct rt_dicv *rt_dv(void)
{
    return rt_self.has_dv ? &rt_self.dv : &rt_icv.dv;
}
/* Worker side of a fork: runs region r if this node is among the team's
 * nthreads (as the thread numbered by its rank), then joins (main.c's
 * dispatch loop). */
void rt_team_run(OMPDSM_region *r, void *frame, size_t frame_size,
                 int nthreads, uint64_t ws_base);
/* Runs region r on this node as thread tid of a team of nthreads over the
 * nodes of g; *team receives the thread's team state (for tasks at the
 * join).  The pool threads of hybrid nodes call it too. */
void rt_team_member(OMPDSM_region *r, void *frame, int nthreads, int tid,
                    uint64_t ws_base, struct comm_group g,
                    struct rt_thread *team);
/* Team barrier with pending reductions (and optional copyprivate data). */
void rt_team_barrier(const void *cp, size_t cplen, int cp_executor,
                     void *cp_out);
/* A team barrier that also gathers a record of reclen bytes from every
 * thread: recs_out receives all of them, concatenated in no set order
 * (schedule(profiled)'s per-thread times). */
void rt_team_barrier_rec(const void *rec, size_t reclen,
                         struct comm_buf *recs_out);
/* Barriers this node passed on channel 0 (joins and barriers of teams of
 * every node): equal on every node between regions in a conforming
 * program, so a fork or shutdown compares them (main.c). */
extern uint64_t rt_world_barriers;
/* Work-share slot words (RT_REG_AREA).  ws: one claim word per instance
 * slot (dynamic, guided, single, sections), at node seq mod team nodes.
 * ordered: per ordered-loop slot, one word per sending node, holding
 * sched_word(gen, iterations completed): each sender's words only grow in the
 * order it sends them (one connection), while notifies from different
 * senders may overtake each other, so a waiter takes the maximum. */
enum { RT_WS_SLOTS = 256, RT_ORD_SLOTS = 64, RT_WS_THREADS = 256 };
struct rt_area {
    volatile uint64_t ws[RT_WS_SLOTS];
    /* progress[l]: the instance the node's team thread l entered last
     * (so it is done with every earlier one), for rt_ws_gate. */
    volatile uint64_t progress[RT_WS_THREADS];
    volatile uint64_t ordered[]; /* [RT_ORD_SLOTS][nodes] */
};
/* After them, schedule(profiled)'s checkpoint records (profiled_ck.c):
 * their offset in the area and their bytes. */
static inline size_t rt_area_ck_off(int nodes)
{
    return (sizeof(struct rt_area) + (size_t)RT_ORD_SLOTS * (size_t)nodes * 8 +
            63) & ~(size_t)63;
}
size_t rt_prof_ck_len(int nodes); /* (profiled_ck.c) */
static inline size_t rt_area_len(int nodes)
{
    return rt_area_ck_off(nodes) + rt_prof_ck_len(nodes);
}
/* The node holding the claim word of work-share instance seq, and its offset. */
void rt_ws_where(uint64_t seq, int *node, uint64_t *off);
/* The calling thread enters work-share instance seq (a team over the
 * nodes): publishes it in progress[], and for a dynamic or guided claim
 * (claims = 1) whose slot an instance RT_WS_SLOTS earlier used, waits
 * until every team thread is past that one (team.c).  A thread still in
 * it would make its last fetch-add on a dynamic loop's word after the
 * new instance took the slot, and take a chunk of it that nobody runs. */
void rt_ws_enter(uint64_t seq, int claims);
/* After a barrier of the whole team: every earlier instance is done. */
static inline void rt_ws_all_done(void)
{
    rt_self.ws_safe = rt_self.ws_seq + RT_WS_SLOTS;
}
/* Generation tag of an instance, stored in a slot word's top 24 bits. */
static inline uint64_t rt_ws_gen(uint64_t seq)
{
    return ((seq / RT_WS_SLOTS) + 1) & SCHED_WORD_GEN_MASK;
}

/* ---- hybrid.c: several threads per node ---- */
enum { RT_MAX_TPN = 256 };
_Static_assert((int)RT_WS_THREADS >= (int)RT_MAX_TPN, "rt_area.progress: a word per thread of a node");
/* A team of nthreads over the job's nodes: tpn threads per node (at most
 * OMPDSM_THREADS_PER_NODE), on nodes 0..nodes-1; thread t runs on node
 * t / tpn (node-major numbers). */
void rt_team_layout(int nthreads, int *tpn, int *nodes);
/* The team's threads on node `node`. */
int rt_team_local(int nthreads, int tpn, int node);
/* The node's leader posts region r to the pool: local threads 1..nlocal-1
 * run it as threads tid0+1 .. tid0+nlocal-1 (they copy the frame first). */
void rt_node_post(OMPDSM_region *r, const void *frame, size_t frame_size,
                  int nthreads, int tpn, int nlocal, int tid0, uint64_t ws_base,
                  struct comm_group g);
/* A team barrier on a node with several team threads.  A thread other than
 * the leader hands over its reductions (and copyprivate data when it
 * executed the single) and waits for the leader's release; it returns the
 * network barrier's result.  The leader waits for the others and combines
 * their reductions into its own list; *cp gets another thread's
 * copyprivate data when it had none; it then runs the network barrier
 * and calls rt_node_release with the result. */
const struct comm_buf *rt_node_barrier_member(const void *cp, size_t cplen,
                                              int cp_executor, const void *rec,
                                              size_t reclen);
void rt_node_barrier_leader(int nlocal, const void **cp, size_t *cplen,
                            struct comm_buf *recs);
void rt_node_release(const struct comm_buf *down);
/* The leader at the end of a region: waits for the pool threads' ends and
 * takes their reductions into its list (the join then carries them). */
void rt_node_join_gather(int nlocal);
/* Every team thread's len bytes, in thread order, into all (nthreads *
 * len bytes): one network allgather per node.  < 0: the job is failing. */
int rt_team_allgather(const void *mine, size_t len, void *all);
/* Futex words shared by a node's threads: waits while *w == val (a short
 * spin, then sleep; sleepers counts the sleeping), and wakes them. */
void rt_word_wait(uint32_t *w, uint32_t val, uint32_t *sleepers);
void rt_word_wake(uint32_t *w, uint32_t *sleepers);
/* rt_word_wait with a spin of `spin` ns (0: none) instead of the node's;
 * rt_spin_ns: the node's. */
void rt_word_wait_spin(uint32_t *w, uint32_t val, uint32_t *sleepers,
                       uint64_t spin);
uint64_t rt_spin_ns(void);
/* Sets how long rt_word_wait spins (OMP_WAIT_POLICY, OMPDSM_SPIN_US, the
 * host's threads against its CPUs); 2 us until it is called. */
void rt_spin_init(void);
/* Runs the units' threadprivate initialisers in a new thread. */
void rt_thread_init_tp(void);
/* The node's CPUs when its threads are bound one per CPU (*set filled,
 * returns 1), else 0: a new thread keeps its creator's mask. */
int rt_node_cpus(cpu_set_t *set);
/* How many CPUs the node's threads may run on. */
int rt_node_ncpus(void);
/* Attributes of a thread the runtime starts: OMP_STACKSIZE, else 8 MiB. */
void rt_thread_attr(pthread_attr_t *a);
/* Serialises the node's threads' ordered publications (loop.c). */
void rt_node_ordered_lock(int on);


/* ---- nest.c: nested parallel regions with more than one thread ---- */
/* A parallel region met inside another (level >= 1) with active levels to
 * spare runs on the encountering thread's node, with threads of a pool of
 * this process: its barriers, reductions, copyprivate, claim words
 * (dynamic, guided, single, sections) and ordered words are process
 * memory, and its threads share the node's page copies, so no message and
 * no DSM release is needed inside it.  Runs region r with nthreads threads
 * (the caller is thread 0) and returns after its join. */
void rt_nest_run(OMPDSM_region *r, void *frame, size_t frame_size,
                 int nthreads);
/* The nested team's barrier (rt_team_barrier in a nested team). */
void rt_nest_barrier(const void *cp, size_t cplen, int cp_executor,
                     void *cp_out);
/* The claim word of the nested team's work-share instance seq. */
uint64_t *rt_nest_ws_word(uint64_t seq);
/* Ordered regions of a nested team's loop instance seq: waits until
 * `iter` iterations have passed; publishes that iter + 1 have. */
void rt_nest_ordered_wait(uint64_t seq, uint64_t iter);
void rt_nest_ordered_publish(uint64_t seq, uint64_t iter);

/* ---- main.c: start-up, registration, the fork, the workers' loop ---- */
/* Maps a shared memfd region of len bytes (rounded to pages) and registers
 * it with comm as region reg; ends the job if it cannot. */
void *rt_region_map(int reg, size_t len, const char *name, const char *what);
/* The runtime area (RT_REG_AREA), mapped at start. */
extern struct rt_area *rt_area;
/* Node 0's side of a fork: sends the region, the team size, the
 * work-share counter, the ICVs the team inherits and the frame to every
 * node (team.c, OMPDSM_parallel). */
void rt_fork_send(int region, int nthreads, uint64_t ws_base, const void *frame,
                  size_t frame_size);
/* Lock id of a critical section (name NULL: the unnamed one). */
uint32_t rt_critical_id(const char *name);
/* The registered translation units. */
const OMPDSM_unit *rt_units(void);

/* ---- lock.c: the OpenMP lock routines ---- */
/* A job of one node: omp locks are futex words in the lock objects, with
 * no DSM lock and no held list (set at start, before any lock). */
extern int rt_solo_locks;

/* ---- atomic.c: the atomic construct ---- */
/* Every node, at start: the update function of atomics posted to a home
 * reached over tcp (dsm_atomic_post). */
void rt_atomic_start(void);

/* ---- reduction.c: reductions, and the barrier payload's records ---- */
/* Bytes of a value of OMPDSM_TY_* type (atomic.c shares it). */
size_t rt_type_size(int type);
struct rt_red_item {
    void *shared;
    int type, op;
    unsigned char value[16];
};
/* The reductions several threads of one node hand over at a barrier,
 * combined item by item (hybrid.c's node, nest.c's nested teams). */
struct rt_red_acc {
    struct rt_red_item *red;
    int nred, cap;
    int has;           /* some thread deposited since the last take */
};
/* Combines a thread's nred pending items into acc (under the caller's
 * lock); node: the node whose threads these are, for the messages, or -1
 * for a nested team's. */
void rt_red_deposit(struct rt_red_acc *acc, const struct rt_red_item *red,
                    int nred, int node);
/* Applies *shared = *shared op value (the root, or a team of one). */
void rt_red_apply(const struct rt_red_item *it);
/* The barrier payload of the runtime: records {u32 kind, u32 len, bytes}. */
enum { RT_REC_RED = 1, RT_REC_COPYPRIV = 2, RT_REC_PROF = 3, RT_REC_TASK = 4 };
int rt_ext_combine(void *ctx, struct comm_buf *acc, const void *in,
                   size_t inlen);
int rt_ext_at_root(void *ctx, struct comm_buf *acc);
int rt_ext_append(struct comm_buf *b, uint32_t kind, const void *p,
                  size_t len);
const void *rt_ext_find(const void *buf, size_t len, uint32_t kind,
                        size_t *outlen);

/* ---- loop.c: loops and sections, ordered, single ---- */
struct rt_loop {
    unsigned long long n;
    unsigned long long chunk;
    unsigned long long next;   /* static: next chunk round; dynamic: words
                                  found exhausted (sched_dynamic_next_spread);
                                  profiled: next round */
    unsigned long long seq;    /* work-share instance */
    unsigned long long gen;
    int kind;
    int tid, nthreads;
    int flags;
    int did_last;
    int done;
    OMPDSM_loop_site *site;
    /* profiled only */
    struct rt_prof_site *ps;
    unsigned long long base;     /* the measurement's iterations end here */
    unsigned long long skip, size; /* eval_skip, eval_size */
    unsigned long long t0, tm;   /* start of the loop, of the timed part */
    unsigned long long xchg_ns;  /* spent exchanging speeds */
    unsigned long long iters;    /* iterations handed to this thread */
    int phase;
    int frozen;                  /* equal weights, never measured: static
                                    timed like a profiled loop */
};
_Static_assert(sizeof(struct rt_loop) <= sizeof(OMPDSM_loop),
               "OMPDSM_loop too small for struct rt_loop");

/* ---- profiled.c: the profiled schedule's driver ---- */
/* A profiled loop's state on this node, kept across its executions (one
 * per loop site, hung on OMPDSM_loop_site.rt).  Every team node holds the
 * same weights and vector: they come from exchanged data only. */
enum { RT_PROF_HIST = 256 };
/* Profiled loops whose first executions had the same trip count, chunk
 * and team share one partition (OMPDSM_PROFILED_SHARE): one measures,
 * the others split by its weights, so that a node runs the same
 * iterations in every loop of the group and the pages those iterations
 * use (and homes migrated to it) stay its own. */
struct rt_prof_group {
    struct rt_prof_group *next;
    unsigned long long n, chunk; /* of its loops' first executions */
    int nthreads;
    int sites;                   /* loops in it */
    int measure;                 /* the next execution of any of its loops
                                    measures */
    int measured, brief;         /* as a site's, for speed[] */
    double *speed, *weight;      /* [nthreads] */
    uint64_t gen;                /* weights changed this many times */
    struct rt_prof_site *owner;  /* the loop whose measurement they are:
                                    only it judges drift */
    struct rt_prof_site *lead;   /* with OMPDSM_PROFILED_STALLS, the loop
                                    executed most often: the owner's sums
                                    are windows of its executions, decided
                                    at its ends (runtime/profiled_drift.c) */
};
/* Ranges a thread's part may have after checkpoints: a split that would
 * give a thread more ends the checkpoints of that execution. */
enum { RT_CK_RANGES = 16 };
/* One thread's part of an execution of a profiled loop.  The checkpoints
 * of a measuring execution (OMPDSM_PROFILED_CHECK): this thread's part, a
 * list of iteration ranges, is handed out in pieces until ck_at, when the
 * threads exchange what they ran since ck_t0 and the ranges left, and
 * split what is left; again, while what is left is long enough. */
struct rt_prof_thr {
    double *speed;                  /* [nthreads] the speeds measured */
    uint64_t *vec;                  /* [nthreads] this execution's vector */
    uint64_t ck_at, ck_t0, ck_it;   /* deadline; phase start; iterations */
    uint64_t ck_piece;              /* piece size before the deadline */
    uint64_t ck_lo[RT_CK_RANGES], ck_hi[RT_CK_RANGES]; /* this thread's
                                       ranges left, in order */
    int ck_n, ck_i;                 /* ranges; the one being handed out */
    int ck_last;                    /* no checkpoint follows this part */
    uint64_t ck_rounds;             /* checkpoints of this execution */
    uint64_t ck_cit, ck_cns;        /* iterations and time since the
                                       first checkpoint phase began, at
                                       the last record */
    /* Asynchronous checkpoints: at its deadline a thread publishes its
     * record (what it ran, and its ranges left but a reserve taken from
     * their front) and runs the reserve while the others' records come;
     * the rest is split when every record of the round is in. */
    uint64_t ck_rlo[RT_CK_RANGES], ck_rhi[RT_CK_RANGES]; /* the reserve */
    int ck_rn, ck_ri;               /* its ranges; the one handed out */
    uint64_t ck_rpiece;             /* its pieces */
    int ck_pending;                 /* published, round not complete */
    uint64_t ck_pub;                /* when it published */
    uint64_t ck_blk;                /* ns blocked since the last record */
    uint64_t ck_gap;                /* last round: publication to split */
    /* This thread's stalls outside the loop body (prof_stall): run delay
     * from its last profiled execution's end to this one's start. */
    uint64_t stall0, stall_out;
    uint64_t stall_bw; /* its node's time in DSM barriers meanwhile */
    uint64_t gap_ns;   /* wall time from its previous profiled loop-end
                          barrier's exit to this start, 0 when over 100 ms
                          (a serial part) */
};
struct rt_prof_site {
    OMPDSM_loop_site *site;
    struct rt_prof_site *next;   /* all sites, in order of first use */
    struct rt_prof_group *grp;   /* its group, or NULL (not shared) */
    uint64_t grp_gen;            /* the group's weights last taken */
    int nthreads;                /* the team the state is for */
    int measure;                 /* the next execution measures */
    int measured;                /* speed[] holds a measurement */
    int brief;                   /* it was too short to trust: keep the
                                    split, judge no drift */
    unsigned long long chunk;    /* of the last execution (0: block) */
    double *speed;               /* [nthreads] iterations per ns, measured */
    double *weight;              /* [nthreads] the partition in use */
    uint64_t *vec;               /* [nthreads] its vector, last execution */
    uint64_t executions, measurements, repartitions, drifts;
    uint64_t *acc_it, *acc_ns;   /* [nthreads] iterations and time of the
                                    executions since the weights changed */
    uint64_t acc_splits;         /* re-partitions by those (prof_drift) */
    double *hist;                /* [SCHED_PROF_HIST][nthreads] the last
                                    windows' speeds of those sums; their
                                    median decides a move */
    int hist_n, hist_next;       /* windows in it; the row for the next */
    /* Each move of the sums (OMPDSM_PROFILED_STALLS) is judged by its
     * result: the cost per execution of the window after it against the
     * window before (prof_judge). */
    double acc_cost;             /* each execution's longest thread time
                                    (stalls included), summed, since the
                                    weights changed (all loops of a group) */
    uint64_t acc_execs;          /* and the site's executions counted */
    double acc_cmax;             /* the longest of those executions' costs
                                    (one hiccup is left out of the window's
                                    cost) */
    double *prev_weight;         /* [nthreads] the weights before the move
                                    on trial */
    double prev_cost;            /* the cost per execution with them */
    int trial;                   /* 1: the weights in use are a move of the
                                    sums on trial; 2: static's split on
                                    trial against the measured one; 3: a
                                    move kept, on confirmation */
    int eq_judged;               /* the measured split was judged against
                                    static's */
    int fails, backoff;          /* moves undone in a row; windows to let
                                    pass before the next move */
    uint64_t reverts;            /* moves undone (counted in repartitions) */
    int settle;                  /* the sums restarted: their records count
                                    from the site's next execution's end */
    uint64_t stall_ns;           /* this node's threads' stalls outside the
                                    loop body (run delay: throttled, or
                                    preempted), counted in their times */
    int drift_run;               /* executions in a row that strayed */
    uint64_t measure_ns;         /* timed iterations' clock reads and the
                                    exchange of speeds, this node */
    /* Each of this node's team threads' part of the current execution
     * ([tpn], indexed by the thread's number in its node).  With several
     * threads per node, the fields above are written by the node's leader
     * only (the others wait for its start of each execution). */
    struct rt_prof_thr *thr;
    int nthr;
    uint64_t checks, check_splits; /* checkpoints; those that re-split */
    uint64_t ck_waits, ck_wait_ns; /* this node's threads' blocking waits
                                      for a checkpoint's records (reserve
                                      run out), and their time */
    uint64_t cycles, instructions; /* hardware counters, when present */
    long long cnt0[2];           /* their values at the loop's start */
    uint64_t nhist;              /* executions recorded (at most RT_PROF_HIST) */
    uint64_t hist_ns[RT_PROF_HIST]; /* this node's time per execution (its
                                       share and the speed exchange) */
    uint64_t hist_it[RT_PROF_HIST]; /* and its iterations */
    unsigned char hist_measured[RT_PROF_HIST]; /* execution measured */
};
extern struct rt_prof_site *rt_prof_sites;
/* 1 when PAPI hardware counters could be read on this node; else 0 with
 * the reason in rt_prof_counters_why. */
extern int rt_prof_counters;
extern const char *rt_prof_counters_why;
/* The OMPDSM_PROFILED entry for the loop at site s whose clause says
 * schedule kind sched, or NULL. */
const struct rt_prof_override *rt_prof_override(const OMPDSM_loop_site *s,
                                                int sched);
/* A profiled loop's start, next range and end on this thread (loop.c's
 * OMPDSM_loop_init, _next and _end). */
void rt_prof_init(struct rt_loop *L, long long eval_size,
                  long long eval_skip);
int rt_prof_next(struct rt_loop *L, uint64_t *a, uint64_t *b);
/* Wall time in ns: PAPI's real-time clock when it is up. */
uint64_t rt_prof_now(void);
/* This thread's part of the current execution. */
struct rt_prof_thr *rt_prof_thr(const struct rt_loop *L);
/* Whether this thread writes the node's shared state of the loop. */
int rt_prof_leader(void);
/* calloc that ends the job when memory is out. */
void *rt_prof_alloc(size_t n);
/* After a measurement, a checkpoint or a move of one of its loops: the
 * group takes the site's weights. */
void rt_prof_group_give(struct rt_prof_site *ps);
/* A fraction from the environment, read once into *cache (negative until
 * then); zero_ok: in [0, 1), else (0, 1]. */
double rt_prof_fraction(double *cache, const char *name, double dflt,
                        int zero_ok, const char *hint);
/* OMPDSM_PROFILED_STEP. */
double rt_prof_step(void);

/* ---- profiled_ck.c: checkpoints of a measuring execution ---- */
/* The shortest predicted rest of a measuring execution that gets a
 * checkpoint: one more allgather is then well under 1% of it. */
#define RT_PROF_CK_MIN_NS 20000000
/* Right after the exchange: whether this execution gets checkpoints (and
 * arms the first). */
int rt_prof_ck_start(struct rt_loop *L);
/* The checkpoint phase: 1 with the next range; 0 once the last part
 * follows, which rt_prof_ck_range hands out (max: the most iterations in
 * one range). */
int rt_prof_ck_next(struct rt_loop *L, uint64_t *a, uint64_t *b);
int rt_prof_ck_range(struct rt_loop *L, uint64_t max, uint64_t *a,
                     uint64_t *b);

/* ---- profiled_drift.c: loop-end records, stalls, drift, judging ---- */
/* At the start of an execution (t0): the stalls since this thread's last
 * profiled execution ended. */
void rt_prof_stall_start(struct rt_prof_thr *th, uint64_t t0);
/* OMPDSM_loop_end of a profiled loop: the barrier with every thread's
 * record (none with nowait), and the drift check. */
void rt_prof_end(struct rt_loop *L, int nowait);
/* The executions' sums: forgotten (the weights just changed), and started
 * again after the site's next execution (with stalls). */
void rt_prof_acc_reset(struct rt_prof_site *ps, int nt);
void rt_prof_acc_settle(struct rt_prof_site *ps);

/* ---- diag.c: what each thread waits on (docs/diagnostics.md) ---- */
enum rt_wait_kind {
    RT_WAIT_NONE = 0, RT_WAIT_BARRIER, RT_WAIT_LOOP_END, RT_WAIT_SINGLE_END,
    RT_WAIT_COPYPRIVATE, RT_WAIT_JOIN, RT_WAIT_FORK, RT_WAIT_LOCK,
    RT_WAIT_NEST_LOCK, RT_WAIT_CRITICAL, RT_WAIT_ORDERED, RT_WAIT_FLUSH,
    RT_WAIT_FAULT,
    RT_WAIT_IDLE, /* a pool thread between regions (hybrid.c, nest.c) */
};
/* The calling thread enters (and leaves) a construct that may wait for
 * other nodes: pc is the return address into the user's code (resolved to
 * file:line by the launcher), or file:line a known site; name a critical
 * section's or region's; lock the lock id waited for or ~0.  Nested calls
 * keep the outermost. */
void rt_wait_begin(int kind, const void *pc, const char *file, int line,
                   const char *name, uint64_t lock);
void rt_wait_end(void);
/* A task run by a thread that waits (at a barrier, a join or taskwait) is
 * user code, not a wait: the wait is set aside while it runs, so that a
 * long task never looks like a deadlock. */
struct rt_wait_saved {
    int kind, depth, line;
    const void *pc;
    const char *file, *name;
    uint64_t lock;
};
void rt_wait_suspend(struct rt_wait_saved *w);
void rt_wait_resume(const struct rt_wait_saved *w);
/* A flush from pc: repeated from the same place with nothing in between,
 * the thread counts as spinning on a flag. */
void rt_diag_flush(const void *pc);
/* The parallel region the thread runs now (NULL: none). */
void rt_diag_region(const char *name);
/* This node now holds (or no longer holds) lock id. */
void rt_diag_lock_held(uint64_t id, int now_held);
/* Reads OMPDSM_DEADLOCK_S and starts the reporting thread. */
void rt_diag_start(void);
/* The node finishes: with OMPDSM_MONITOR, its last sample, so that every
 * job, even one shorter than the monitor's second, leaves one. */
void rt_diag_finish(void);
#define RT_CALLER __builtin_extract_return_addr(__builtin_return_address(0))
/* The address of code at pc as the program's file numbers it (what
 * addr2line -e PROGRAM takes; the instruction before a return address),
 * or 0 when pc is not in the program itself. */
uint64_t rt_program_pc(const void *pc);

/* ---- thrash.c: the thrashing report by variable (OMPDSM_STATS) ---- */
struct thrash_wire;
struct rt_thrash {
    struct thrash_wire *all; /* every node's top pages, named */
    int nodes;
};
/* Starts the per-page counters when OMPDSM_STATS is set. */
void rt_thrash_start(void);
/* A block the program allocated in the shared heap, and the call's
 * return address (named in the report). */
void rt_thrash_alloc(const void *p, size_t size, const void *pc);
/* Every node: gathers the nodes' top pages (collective); 0 or -1. */
int rt_thrash_gather(struct rt_thrash *t);
/* Node 0: the report as text, or as the JSON member "thrashing". */
void rt_thrash_print(FILE *f, const struct rt_thrash *t);
void rt_thrash_json(FILE *f, const struct rt_thrash *t);
void rt_thrash_free(struct rt_thrash *t);

/* ---- stats.c: the counters every construct adds to, and their report ---- */
struct rt_stats {
    uint64_t regions, team_barriers, loops, singles, criticals;
    uint64_t region_ns;
    /* tasks met, deferred to a queue, deferred ones this node ran from its
     * own queue, took from another node's, and its own run elsewhere */
    uint64_t tasks_created, tasks_deferred, tasks_local, tasks_stolen, tasks_remote;
    /* dynamic or guided loops that waited for a thread RT_WS_SLOTS
     * work-sharing constructs behind (rt_ws_enter) */
    uint64_t ws_gate_waits;
};
extern struct rt_stats rt_st;
#define RT_STAT(f, v) __atomic_fetch_add(&rt_st.f, (v), __ATOMIC_RELAXED)
void rt_stats_report(void);
/* OMPDSM_STATS: a node ended by a signal prints its own counters */
void rt_stats_install(void);

/* ---- task.c: explicit tasks ---- */
/* Creates and registers this node's task region (before comm_connect). */
void rt_task_setup(void);
/* Adds this node's counts of deferred tasks to a barrier's payload. */
void rt_task_append(struct comm_buf *up);
/* Sums two RT_REC_TASK records into acc (rt_ext_combine). */
void rt_task_combine(void *acc, const void *in);
/* After a barrier over g whose result is *down: while the team's tasks
 * are not all complete, runs tasks (member: the team thread state to run
 * them as, NULL on a node outside the team) and meets again.  Returns the
 * extra barriers held. */
int rt_task_rounds(struct comm_group g, struct comm_buf *down,
                   struct rt_thread *member);
/* Region start (every member, before the region's function) and end
 * (every node, after the join). */
void rt_task_region_start(void);
/* A nested region's implicit task (nest.c), set around the region's body
 * on each of its threads: a taskwait inside waits for the children of
 * that implicit task only, not for those of the task that encountered the
 * region.  rt_task_nest_enter returns what rt_task_nest_leave restores. */
void *rt_task_nest_enter(void);
void rt_task_nest_leave(void *saved);
void rt_task_region_end(void);
/* Before a barrier of the team `member` is a thread of (the node's
 * leader, after the node's other threads arrived): in a region that
 * creates tasks, runs tasks until every member has arrived; then closes
 * the node to its waiting threads (rt_task_help) until rt_task_rounds
 * ends. */
void rt_task_arrive(struct rt_thread *member);
/* A thread of a hybrid node waiting in a barrier (hybrid.c): in a program
 * with tasks, runs one of the team's tasks, or waits a little (*idle
 * counts the idle calls; a task queued on this node or rt_task_kick ends
 * the wait), and returns 1; returns 0 at once when the program has no
 * tasks (the caller then sleeps as it would). */
int rt_task_help(unsigned *idle);
/* Wakes threads waiting in rt_task_help (a barrier word changed). */
void rt_task_kick(void);
/* Does some unit of the program create tasks? */
int rt_task_program(void);
/* Fills in the counters derived at the end (tasks_remote). */
void rt_task_stats(struct rt_stats *s);

#endif
