/* runtime/team.c - parallel regions: fork on node 0, the team's thread
 * state, the join, team barriers (carrying reductions and copyprivate data)
 * and where work-sharing instances keep their claim words.
 *
 * A region with a team of all nodes synchronises on channel 0 (the same
 * channel as fork and join, which every node follows).  A region run by a
 * sub-team (num_threads < nodes) uses channel 1 for its barriers; its
 * members track their writes since the fork so that the join tells the
 * nodes that sat out. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

__thread struct rt_thread rt_self = {.nthreads = 1};
uint64_t rt_world_barriers;

long long rt_thread_owner(void)
{
    static int next;
    static __thread int serial;
    if (!serial)
        serial = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
    return ((long long)comm_rank() << 32) + serial;
}

void rt_ws_where(uint64_t seq, int *node, uint64_t *off)
{
    int nodes = rt_self.group.nodes > 0 ? rt_self.group.nodes : 1;
    *node = (int)(seq % (uint64_t)nodes);
    *off = offsetof(struct rt_area, ws) + (seq % RT_WS_SLOTS) * 8;
}

/* The smallest instance every thread of the team has entered: each
 * node's progress words of its team threads (this node's in place). */
static uint64_t ws_min_progress(void)
{
    uint64_t min = UINT64_MAX, v[RT_WS_THREADS];
    for (int n = 0; n < rt_self.group.nodes; n++) {
        int k = rt_team_local(rt_self.nthreads, rt_self.tpn, n);
        if (k <= 0)
            continue;
        if (n == comm_rank()) {
            for (int l = 0; l < k; l++)
                v[l] = __atomic_load_n(&rt_area->progress[l], __ATOMIC_ACQUIRE);
        } else {
            COMM_CHECK(comm_get(n, RT_REG_AREA,
                                offsetof(struct rt_area, progress), v,
                                (size_t)k * sizeof *v));
        }
        for (int l = 0; l < k; l++)
            if (v[l] < min)
                min = v[l];
    }
    return min;
}

void rt_ws_enter(uint64_t seq, int claims)
{
    if (rt_self.lteam || rt_self.nthreads <= 1)
        return;
    __atomic_store_n(&rt_area->progress[rt_self.local], seq, __ATOMIC_RELEASE);
    if (!claims || seq < rt_self.ws_safe)
        return;
    /* A long run of nowait constructs: instance seq - RT_WS_SLOTS, the
     * slot's last user, must be done on every thread.  Rare (once per
     * RT_WS_SLOTS constructs with no barrier between), and a thread waits
     * here only for another that is that far behind: spin a little, then
     * sleep, doubling up to 1 ms. */
    long ns = 1000;
    for (int tries = 0;; tries++) {
        uint64_t min = ws_min_progress();
        if (min + RT_WS_SLOTS > seq) {
            rt_self.ws_safe = min + RT_WS_SLOTS;
            return;
        }
        RT_STAT(ws_gate_waits, !tries);
        if (tries < 8)
            continue;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 1000000)
            ns *= 2;
    }
}

/* Runs the region's function on this node as thread `tid` of the team;
 * *team receives the thread's team state, for running tasks at the join. */
void rt_team_member(OMPDSM_region *r, void *frame, int nthreads, int tid,
                    uint64_t ws_base, struct comm_group g,
                    struct rt_thread *team)
{
    struct rt_thread saved = rt_self;
    int tpn, nodes;
    rt_team_layout(nthreads, &tpn, &nodes);
    rt_self.tpn = tpn;
    rt_self.local = tid - comm_rank() * tpn;
    rt_self.nlocal = rt_team_local(nthreads, tpn, comm_rank());
    /* The implicit task's ICVs: the encountering task's (node 0's at the
     * fork, which the fork message gave every node) */
    rt_self.dv = rt_icv.dv;
    if (rt_icv.nt_list_len > 1) /* OMP_NUM_THREADS=a,b: b at level 1 */
        rt_self.dv.nthreads = rt_icv.nt_list[1];
    rt_self.has_dv = 1;
    rt_self.tid = tid;
    rt_self.nthreads = nthreads;
    rt_self.level = 1;
    rt_self.active_level = 1;
    rt_self.outer_tid = tid;
    rt_self.outer_size = nthreads;
    rt_self.group = g;
    rt_self.ws_seq = ws_base;
    rt_self.ws_safe = ws_base + RT_WS_SLOTS;
    rt_self.in_fork = 1;
    rt_self.red = NULL;
    rt_self.nred = rt_self.capred = 0;
    rt_self.ordered_loop = NULL;
    rt_self.lteam = NULL;
    rt_self.up = NULL;
    rt_task_region_start();
    rt_diag_region(r->name);
    r->fn(frame);
    /* With several threads per node, the region's tasks end in a team
     * barrier, where every thread takes tasks until all are complete (at
     * the join only the node's leader would). */
    if (tpn > 1 && rt_task_program())
        rt_team_barrier(NULL, 0, 0, NULL);
    rt_diag_region(NULL);
    struct rt_thread after = rt_self;
    *team = after;
    team->red = NULL;
    team->nred = team->capred = 0;
    rt_self = saved;
    rt_self.red = after.red;
    rt_self.nred = after.nred;
    rt_self.capred = after.capred;
    rt_self.ws_seq = after.ws_seq;
}

/* The join: every node, members or not, meets on channel 0 with the
 * members' pending reductions, and again while tasks are left (members
 * run them as their team thread `team`; NULL on other nodes). */
static void join(const OMPDSM_region *r, struct rt_thread *team)
{
    struct comm_buf up = {0}, down = {0};
    dsm_lock_settle();
    if (team)
        rt_task_arrive(team);
    rt_wait_begin(RT_WAIT_JOIN, NULL, NULL, 0, r->name, ~0ull);
    if (rt_self.nred)
        rt_ext_append(&up, RT_REC_RED, rt_self.red,
                      (size_t)rt_self.nred * sizeof(struct rt_red_item));
    rt_task_append(&up);
    struct dsm_sync_ext ext = {up.data, up.len, rt_ext_combine, rt_ext_at_root,
                               NULL, &down};
    dsm_barrier(COMM_WORLD, &ext);
    rt_world_barriers++;
    comm_buf_free(&up);
    rt_world_barriers += (uint64_t)rt_task_rounds(COMM_WORLD, &down, team);
    comm_buf_free(&down);
    rt_task_region_end();
    free(rt_self.red);
    rt_self.red = NULL;
    rt_self.nred = rt_self.capred = 0;
    rt_wait_end();
}

static void *frame_copy(const void *frame, size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        ompdsm_fatal("out of memory copying a %zu-byte region frame", size);
    if (size) /* a region without a frame passes NULL */
        memcpy(p, frame, size);
    return p;
}

/* This node's part of a team: the pool threads' (hybrid nodes) and its
 * own, as local thread 0; returns once every one of them has ended. */
static void run_node(OMPDSM_region *r, void *frame, size_t frame_size,
                     int nthreads, uint64_t ws_base, struct comm_group g,
                     struct rt_thread *team)
{
    int tpn, nodes;
    rt_team_layout(nthreads, &tpn, &nodes);
    int nlocal = rt_team_local(nthreads, tpn, comm_rank());
    int tid0 = comm_rank() * tpn;
    if (nlocal > 1)
        rt_node_post(r, frame, frame_size, nthreads, tpn, nlocal, tid0,
                     ws_base, g);
    /* Every thread gets its own copy of the frame, this one too. */
    void *copy = frame_copy(frame, frame_size);
    rt_team_member(r, copy, nthreads, tid0, ws_base, g, team);
    free(copy);
    if (nlocal > 1)
        rt_node_join_gather(nlocal);
}

void rt_team_run(OMPDSM_region *r, void *frame, size_t frame_size,
                 int nthreads, uint64_t ws_base)
{
    int me = comm_rank();
    int tpn, nodes;
    rt_team_layout(nthreads, &tpn, &nodes);
    int sub = nodes < comm_size();
    struct rt_thread team;
    if (me < nodes) {
        struct comm_group g = {sub ? 1 : 0, nodes};
        if (sub)
            dsm_track_since_fork(1);
        run_node(r, frame, frame_size, nthreads, ws_base, g, &team);
        if (sub)
            dsm_track_since_fork(0);
    }
    join(r, me < nodes ? &team : NULL);
}

/* A team of one: the encountering thread runs the region itself. */
static void run_alone(OMPDSM_region *r, void *frame)
{
    struct rt_thread saved = rt_self;
    rt_self.tid = 0;
    rt_self.nthreads = 1;
    rt_self.level = saved.level + 1;
    if (saved.level == 0) {
        rt_self.outer_tid = 0;
        rt_self.outer_size = 1;
    }
    rt_self.group = (struct comm_group){rt_self.group.chan, 1};
    rt_self.tpn = rt_self.nlocal = 1;
    rt_self.local = 0;
    rt_self.red = NULL;
    rt_self.nred = rt_self.capred = 0;
    rt_self.ordered_loop = NULL;
    rt_self.lteam = NULL;
    rt_self.up = &saved;
    r->fn(frame);
    /* The join of a team of one: apply its reductions right here. */
    for (int i = 0; i < rt_self.nred; i++)
        rt_red_apply(&rt_self.red[i]);
    free(rt_self.red);
    rt_self = saved;
}


RT_API void OMPDSM_parallel(OMPDSM_region *region, void *frame,
                            unsigned long frame_size, int num_threads,
                            int if_clause)
{
    RT_STAT(regions, 1);
    int req = num_threads > 0 ? num_threads : rt_dv()->nthreads;
    int nthreads = req;
    /* (above nodes x T: more threads per node, rt_team_layout) */
    if (nthreads > comm_size() * RT_MAX_TPN)
        nthreads = comm_size() * RT_MAX_TPN;
    if (nthreads > rt_icv.thread_limit)
        nthreads = rt_icv.thread_limit;
    if (rt_self.level > 0 || comm_rank() != 0) {
        /* nested: a team of this node's threads (nest.c) when an active
         * level is left; its size is not bound by the nodes */
        int n = req > rt_icv.nest_limit ? rt_icv.nest_limit : req;
        if (if_clause && n > 1 &&
            rt_self.active_level < rt_icv.max_active_levels) {
            rt_nest_run(region, frame, frame_size, n);
            return;
        }
    }
    if (!if_clause || rt_self.level > 0 || nthreads <= 1 || comm_rank() != 0 ||
        rt_icv.max_active_levels < 1) {
        void *copy = frame_copy(frame, frame_size);
        run_alone(region, copy);
        free(copy);
        return;
    }
    uint64_t t0 = ompdsm_now_ns();
    uint64_t base = rt_self.ws_seq;
    rt_fork_send(region->id, nthreads, base, frame, frame_size);
    int tpn, nodes;
    rt_team_layout(nthreads, &tpn, &nodes);
    int sub = nodes < comm_size();
    if (sub)
        dsm_track_since_fork(1);
    struct rt_thread team;
    run_node(region, frame, frame_size, nthreads, base,
             (struct comm_group){sub ? 1 : 0, nodes}, &team);
    if (sub)
        dsm_track_since_fork(0);
    join(region, &team);
    RT_STAT(region_ns, ompdsm_now_ns() - t0);
}

static void team_barrier(const void *cp, size_t cplen, int cp_executor,
                         void *cp_out, const void *rec, size_t reclen,
                         struct comm_buf *recs_out);

void rt_team_barrier(const void *cp, size_t cplen, int cp_executor,
                     void *cp_out)
{
    team_barrier(cp, cplen, cp_executor, cp_out, NULL, 0, NULL);
    rt_ws_all_done();
}

void rt_team_barrier_rec(const void *rec, size_t reclen,
                         struct comm_buf *recs_out)
{
    team_barrier(NULL, 0, 0, NULL, rec, reclen, recs_out);
    rt_ws_all_done();
}

/* The records of kind RT_REC_PROF in a barrier's result, appended to out. */
static void take_recs(const struct comm_buf *down, struct comm_buf *out)
{
    size_t n;
    const void *p = rt_ext_find(down->data, down->len, RT_REC_PROF, &n);
    if (out && p && n && comm_buf_append(out, p, n) < 0)
        ompdsm_fatal("out of memory for a barrier's records");
}

static void team_barrier(const void *cp, size_t cplen, int cp_executor,
                         void *cp_out, const void *rec, size_t reclen,
                         struct comm_buf *recs_out)
{
    RT_STAT(team_barriers, 1);
    if (rt_self.lteam) {
        rt_nest_barrier(cp, cplen, cp_executor, cp_out);
        if (recs_out && reclen && comm_buf_append(recs_out, rec, reclen) < 0)
            ompdsm_fatal("out of memory for a barrier's records");
        return;
    }
    if (rt_self.nthreads <= 1) {
        for (int i = 0; i < rt_self.nred; i++)
            rt_red_apply(&rt_self.red[i]);
        rt_self.nred = 0;
        if (recs_out && reclen && comm_buf_append(recs_out, rec, reclen) < 0)
            ompdsm_fatal("out of memory for a barrier's records");
        return;
    }
    if (rt_self.nlocal > 1 && rt_self.local > 0) {
        /* hybrid node: the node's leader enters the network barrier */
        const struct comm_buf *d = rt_node_barrier_member(cp, cplen,
                                                          cp_executor, rec,
                                                          reclen);
        rt_self.nred = 0;
        take_recs(d, recs_out);
        if (cp_out && !cp_executor) {
            size_t n;
            const void *p = rt_ext_find(d->data, d->len, RT_REC_COPYPRIV, &n);
            if (!p || n != cplen)
                ompdsm_fatal("copyprivate: expected %zu bytes from the single "
                             "thread, got %zu", cplen, p ? n : 0);
            memcpy(cp_out, p, n);
        }
        return;
    }
    const void *cp_up = cp && cp_executor ? cp : NULL;
    size_t cp_uplen = cplen;
    struct comm_buf recs = {0};
    if (reclen && comm_buf_append(&recs, rec, reclen) < 0)
        ompdsm_fatal("out of memory for a barrier's records");
    if (rt_self.nlocal > 1)
        rt_node_barrier_leader(rt_self.nlocal, &cp_up, &cp_uplen, &recs);
    dsm_lock_settle();
    rt_task_arrive(&rt_self);
    struct comm_buf up = {0}, down = {0};
    if (recs.len)
        rt_ext_append(&up, RT_REC_PROF, recs.data, recs.len);
    comm_buf_free(&recs);
    if (rt_self.nred)
        rt_ext_append(&up, RT_REC_RED, rt_self.red,
                      (size_t)rt_self.nred * sizeof(struct rt_red_item));
    if (cp_up)
        rt_ext_append(&up, RT_REC_COPYPRIV, cp_up, cp_uplen);
    rt_task_append(&up);
    struct dsm_sync_ext ext = {up.data, up.len, rt_ext_combine, rt_ext_at_root,
                               NULL, &down};
    dsm_barrier(rt_self.group, &ext);
    if (rt_self.group.chan == 0)
        rt_world_barriers++;
    rt_self.nred = 0;
    if (cp_out && !cp_executor) {
        size_t n;
        const void *p = rt_ext_find(down.data, down.len, RT_REC_COPYPRIV, &n);
        if (!p || n != cplen)
            ompdsm_fatal("copyprivate: expected %zu bytes from the single "
                         "thread, got %zu", cplen, p ? n : 0);
        memcpy(cp_out, p, n);
    }
    take_recs(&down, recs_out);
    int extra = rt_task_rounds(rt_self.group, &down, &rt_self);
    if (rt_self.group.chan == 0)
        rt_world_barriers += (uint64_t)extra;
    if (rt_self.nlocal > 1)
        rt_node_release(&down);
    comm_buf_free(&up);
    comm_buf_free(&down);
}

RT_API void OMPDSM_barrier(void)
{
    rt_wait_begin(RT_WAIT_BARRIER, RT_CALLER, NULL, 0, NULL, ~0ull);
    rt_team_barrier(NULL, 0, 0, NULL);
    rt_wait_end();
}

RT_API int OMPDSM_master(void)
{
    return rt_self.tid == 0;
}
