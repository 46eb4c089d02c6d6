/* tests/comm/verbs_ladder_test.c - the verbs transport's set-up and its
 * cleanup ladder without a device: this program defines the libibverbs
 * calls comm_verbs_prepare makes (an executable's definitions win over the
 * shared library's), and makes each step that creates something fail in
 * turn.  After every failure each resource created before it must have
 * been released exactly once, and the node must have printed one line
 * naming the failing step. */
#include <infiniband/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "comm/transport.h"
#include "comm/verbs.h"

/* ---- bookkeeping ---- */

static int step, fail_at;   /* calls that create something; which fails */
static int live, created, double_free;
static const char *failed_name;

/* Counts a creating call; 1 when this one is to fail. */
static int fails(const char *name)
{
    if (++step == fail_at) {
        failed_name = name;
        return 1;
    }
    return 0;
}

/* Every object handed out starts with a tag, cleared when released. */
enum { TAG_LIVE = 0x5eedf00d };
struct obj {
    unsigned tag;
};
static void *make(size_t size)
{
    struct obj *o = calloc(1, size + sizeof *o);
    if (!o)
        abort();
    o->tag = TAG_LIVE;
    live++;
    created++;
    return o + 1;
}
static void release(void *p)
{
    struct obj *o = (struct obj *)p - 1;
    if (o->tag != TAG_LIVE) {
        double_free++;
        return;
    }
    o->tag = 0;
    live--;
    /* kept allocated: a second release must still be seen */
}

/* ---- libibverbs ---- */

static struct ibv_context_ops ops;
static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                     struct ibv_recv_wr **bad)
{
    (void)qp;
    (void)bad;
    (void)wr;
    return fails("ibv_post_recv") ? ENOMEM : 0;
}

struct ibv_device **(ibv_get_device_list)(int *n)
{
    if (fails("ibv_get_device_list")) {
        *n = 0;
        errno = ENOSYS;
        return NULL;
    }
    struct ibv_device **l = make(2 * sizeof *l);
    l[0] = (struct ibv_device *)make(sizeof(struct ibv_device));
    strcpy(l[0]->name, "fake0");
    l[1] = NULL;
    *n = 1;
    return l;
}
void ibv_free_device_list(struct ibv_device **l)
{
    release(l[0]);
    release(l);
}
const char *ibv_get_device_name(struct ibv_device *d) { return d->name; }
struct ibv_context *ibv_open_device(struct ibv_device *d)
{
    if (fails("ibv_open_device")) {
        errno = ENODEV;
        return NULL;
    }
    struct ibv_context *c = make(sizeof *c);
    c->device = d;
    ops.post_recv = post_recv;
    c->ops = ops;
    return c;
}
int ibv_close_device(struct ibv_context *c)
{
    release(c);
    return 0;
}
/* Called through the ibv_query_port macro for a context without the
 * extended operations. */
int (ibv_query_port)(struct ibv_context *c, uint8_t port,
                   struct _compat_ibv_port_attr *a)
{
    (void)c;
    (void)port;
    struct ibv_port_attr *pa = (struct ibv_port_attr *)a;
    pa->state = IBV_PORT_ACTIVE;
    pa->active_mtu = IBV_MTU_1024;
    pa->lid = 7;
    pa->link_layer = IBV_LINK_LAYER_INFINIBAND;
    return 0;
}
int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    (void)c;
    memset(a, 0, sizeof *a);
    return 0;
}
int ibv_query_gid(struct ibv_context *c, uint8_t port, int index,
                  union ibv_gid *gid)
{
    (void)c;
    (void)port;
    (void)index;
    memset(gid, 0, sizeof *gid);
    return 0;
}
struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
    if (fails("ibv_alloc_pd")) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_pd *pd = make(sizeof *pd);
    pd->context = c;
    return pd;
}
int ibv_dealloc_pd(struct ibv_pd *pd)
{
    release(pd);
    return 0;
}
static int null_fd = -1;
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *c)
{
    if (fails("ibv_create_comp_channel")) {
        errno = EMFILE;
        return NULL;
    }
    struct ibv_comp_channel *ch = make(sizeof *ch);
    ch->context = c;
    ch->fd = null_fd;
    return ch;
}
int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    release(ch);
    return 0;
}
struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *ctx,
                             struct ibv_comp_channel *ch, int vec)
{
    (void)cqe;
    (void)ctx;
    (void)ch;
    (void)vec;
    if (fails("ibv_create_cq")) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_cq *cq = make(sizeof *cq);
    cq->context = c;
    return cq;
}
int ibv_destroy_cq(struct ibv_cq *cq)
{
    release(cq);
    return 0;
}
static struct ibv_mr *reg(struct ibv_pd *pd)
{
    if (fails("ibv_reg_mr")) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_mr *mr = make(sizeof *mr);
    mr->pd = pd;
    mr->lkey = mr->rkey = 0x100 + (uint32_t)step;
    return mr;
}
struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len,
                            int access)
{
    (void)addr;
    (void)len;
    (void)access;
    return reg(pd);
}
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len,
                                uint64_t iova, unsigned int access)
{
    (void)addr;
    (void)len;
    (void)iova;
    (void)access;
    return reg(pd);
}
int ibv_dereg_mr(struct ibv_mr *mr)
{
    release(mr);
    return 0;
}
struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    (void)a;
    if (fails("ibv_create_qp")) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_qp *qp = make(sizeof *qp);
    qp->context = pd->context;
    qp->pd = pd;
    qp->qp_num = 0x40 + (uint32_t)step;
    return qp;
}
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    (void)qp;
    (void)a;
    (void)mask;
    return fails("ibv_modify_qp") ? EINVAL : 0;
}
int ibv_destroy_qp(struct ibv_qp *qp)
{
    release(qp);
    return 0;
}

/* The locked-memory limit the transport sees (this machine's may be too
 * small for its staging buffers alone). */
static rlim_t fake_memlock = RLIM_INFINITY;
int getrlimit(__rlimit_resource_t res, struct rlimit *rl)
{
    rl->rlim_cur = rl->rlim_max = res == RLIMIT_MEMLOCK ? fake_memlock
                                                        : RLIM_INFINITY;
    return 0;
}

/* ---- the test ---- */

/* Whether the line printed names the step that failed. */
static int names_step(const char *fn, const char *line)
{
    static const char *const said[][2] = {
        {"ibv_get_device_list", "no RDMA device"},
        {"ibv_open_device", "cannot open fake0"},
        {"ibv_alloc_pd", "ibv_alloc_pd"},
        {"ibv_create_comp_channel", "ibv_create_comp_channel"},
        {"ibv_create_cq", "ibv_create_cq"},
        {"ibv_reg_mr", "register"},
        {"ibv_create_qp", "cannot create the queue pair"},
        {"ibv_modify_qp", "to INIT"},
        {"ibv_post_recv", "posting receives"},
    };
    for (size_t i = 0; fn && i < sizeof said / sizeof said[0]; i++)
        if (!strcmp(fn, said[i][0]))
            return strstr(line, said[i][1]) != NULL;
    return 0;
}

/* Runs comm_verbs_prepare with stderr in a file; returns its result and
 * the number of lines printed, the text in out. */
static int run(int required, int *lines, char *out, size_t outlen)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    struct comm_card_verbs part;
    uint32_t qpn[2];
    memset(&part, 0, sizeof part);
    int rc = comm_verbs_prepare(&part, qpn, required);
    if (rc == 0 && part.present)
        comm_verbs_release();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, outlen - 1, tmp);
    out[n] = 0;
    fclose(tmp);
    *lines = 0;
    for (size_t i = 0; i < n; i++)
        *lines += out[i] == '\n';
    return rc;
}

int main(void)
{
    static char heap[1 << 16] __attribute__((aligned(4096)));
    null_fd = open("/dev/null", O_RDONLY);
    comm_g.size = 2;
    comm_g.rank = 0;
    comm_g.reg[1].base = heap;
    comm_g.reg[1].len = sizeof heap;
    setenv("OMPDSM_IB_REG", "chunks", 1);

    /* Without a failure: everything made is released at the end. */
    char out[4096];
    int lines;
    step = 0;
    fail_at = -1;
    int rc = run(1, &lines, out, sizeof out);
    int steps = step;
    if (rc != 0 || live || double_free || lines) {
        fprintf(stderr, "FAIL: set-up without a failure: rc %d, %d left, %d "
                "released twice, output:\n%s", rc, live, double_free, out);
        return 1;
    }
    printf("set-up makes %d calls that can fail\n", steps);
    int bad = 0;
    for (fail_at = 1; fail_at <= steps; fail_at++) {
        step = live = created = double_free = 0;
        failed_name = NULL;
        rc = run(1, &lines, out, sizeof out);
        int ok = rc < 0 && !live && !double_free && lines == 1 &&
                 names_step(failed_name, out);
        printf("%s: step %d (%s) fails: rc %d, %d of %d resources left, %d "
               "released twice, %d line%s: %s", ok ? "ok" : "FAIL", fail_at,
               failed_name ? failed_name : "?", rc, live, created,
               double_free, lines, lines == 1 ? "" : "s",
               lines ? out : "(nothing)\n");
        bad += !ok;
    }
    /* A cap smaller than the staging buffers: one line naming ulimit -l,
     * nothing left. */
    fake_memlock = 1 << 20;
    step = live = created = double_free = 0;
    fail_at = -1;
    rc = run(1, &lines, out, sizeof out);
    int ok = rc < 0 && !live && !double_free && lines == 1 &&
             strstr(out, "ulimit -l");
    printf("%s: ulimit -l of 1 MiB: rc %d, %d of %d resources left, %d "
           "line%s: %s", ok ? "ok" : "FAIL", rc, live, created, lines,
           lines == 1 ? "" : "s", out);
    bad += !ok;
    if (bad) {
        fprintf(stderr, "FAIL: %d of %d failing steps not cleaned up once "
                "with one line\n", bad, steps);
        return 1;
    }
    return 0;
}
