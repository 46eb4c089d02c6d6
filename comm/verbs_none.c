/* comm/verbs_none.c - the verbs transport in a build without libibverbs
 * (meson option verbs disabled or the library not found): auto finds no
 * device and uses tcp between hosts; OMPDSM_TRANSPORT=verbs says why it
 * cannot work. */
#include "transport.h"
#include "verbs.h"

#include <errno.h>

int comm_verbs_prepare(struct comm_card_verbs *part, uint32_t *qpn,
                       int required)
{
    (void)part;
    (void)qpn;
    if (!required)
        return 0;
    ompdsm_err("OMPDSM_TRANSPORT=verbs: this libompdsm was built without "
               "libibverbs (meson option verbs); use tcp, or rebuild with "
               "libibverbs-dev installed");
    return -ENOSYS;
}

void comm_verbs_release(void) {}

static int verbs_start(struct comm_transport **out)
{
    (void)out;
    return -ENOSYS;
}

static void verbs_stop(struct comm_transport *t) { (void)t; }

const struct comm_transport_ops comm_verbs_ops = {
    .name = "verbs",
    .start = verbs_start,
    .stop = verbs_stop,
};
