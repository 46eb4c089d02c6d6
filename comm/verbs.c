/* comm/verbs.c - placeholder for the libibverbs RC transport (RDMA READ,
 * WRITE and ATOMIC), which is not written yet.  Selecting it now
 * fails with a clear message instead of silently falling back. */
#include "transport.h"

#include <errno.h>

static int verbs_start(struct comm_transport **out)
{
    (void)out;
    ompdsm_err("OMPDSM_TRANSPORT=verbs: the verbs transport is not "
               "implemented yet; use shm (one host) or tcp");
    return -ENOSYS;
}

static void verbs_stop(struct comm_transport *t) { (void)t; }

const struct comm_transport_ops comm_verbs_ops = {
    .name = "verbs",
    .start = verbs_start,
    .stop = verbs_stop,
};
