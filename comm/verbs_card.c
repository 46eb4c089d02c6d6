/* comm/verbs_card.c - the rules a verbs part of a contact card obeys
 * (comm_card_verbs_check).  Built with or without libibverbs: the card is
 * checked the same on nodes that cannot use it. */
#include "transport.h"
#include "card.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum {
    PSN_MASK = 0xffffff, /* packet sequence numbers and QPNs are 24 bits */
    MTU_MIN = 1,         /* IBV_MTU_256 */
    MTU_MAX = 5,         /* IBV_MTU_4096 */
    FIRST_QPN = 2,       /* 0 and 1 are the management queue pairs */
};

static int all_zero(const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i])
            return 0;
    return 1;
}

int comm_card_verbs_check(const struct comm_card *c, const uint32_t *qpn,
                          int rank, int nodes, char *why, size_t whylen)
{
    const struct comm_card_verbs *v = &c->verbs;
    if (v->present > 1) {
        snprintf(why, whylen, "verbs part: present is %u", v->present);
        return -EPROTO;
    }
    if (!v->present) {
        if (!all_zero(v, sizeof *v) || !all_zero(qpn, (size_t)nodes * 4)) {
            snprintf(why, whylen, "verbs part: no device, but fields set");
            return -EPROTO;
        }
        return 0;
    }
    if (!v->port) {
        snprintf(why, whylen, "verbs part: port 0");
        return -EPROTO;
    }
    if (v->mtu < MTU_MIN || v->mtu > MTU_MAX) {
        snprintf(why, whylen, "verbs part: mtu code %u", v->mtu);
        return -EPROTO;
    }
    if (v->psn & ~(uint32_t)PSN_MASK) {
        snprintf(why, whylen, "verbs part: psn 0x%x is over 24 bits", v->psn);
        return -EPROTO;
    }
    if (!v->lid && all_zero(v->gid, sizeof v->gid)) {
        snprintf(why, whylen, "verbs part: neither a LID nor a GID");
        return -EPROTO;
    }
    for (int p = 0; p < nodes; p++) {
        if (p == rank ? qpn[p] != 0
                      : qpn[p] < FIRST_QPN || (qpn[p] & ~(uint32_t)PSN_MASK)) {
            snprintf(why, whylen, "verbs part: queue pair number 0x%x for "
                     "node %d", qpn[p], p);
            return -EPROTO;
        }
    }
    for (int r = 0; r < COMM_REG_MAX; r++) {
        uint64_t len = c->region_len[r];
        uint64_t a = v->region[r].addr;
        uint32_t f = v->region[r].flags;
        unsigned shift = f >> COMM_VERBS_REG_SHIFT;
        int chunks = (f & ((1u << COMM_VERBS_REG_SHIFT) - 1)) ==
                     COMM_VERBS_REG_CHUNKS;
        int flags_ok = f == COMM_VERBS_REG_WHOLE ||
                       (chunks && shift >= COMM_VERBS_CHUNK_SHIFT_MIN &&
                        shift <= COMM_VERBS_CHUNK_SHIFT_MAX && !v->region[r].rkey);
        int bad = len ? (!flags_ok || !a || a + len < a)
                      : (a || v->region[r].rkey || f);
        if (bad) {
            snprintf(why, whylen, "verbs part: region %d (%llu bytes) has "
                     "address 0x%llx, rkey 0x%x, flags %u", r,
                     (unsigned long long)len, (unsigned long long)a,
                     v->region[r].rkey, f);
            return -EPROTO;
        }
    }
    return 0;
}
