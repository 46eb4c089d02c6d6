/* comm/verbs.h - the RDMA transport as the rest of comm/ sees it: its part
 * of the contact card and the rules it obeys (verbs_card.c, built with or
 * without libibverbs), its table, and the set-up that must happen before
 * the card exchange (verbs.c, or verbs_none.c without libibverbs). */
#ifndef OMPDSM_COMM_VERBS_H
#define OMPDSM_COMM_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include "comm.h"

/* Region flags: COMM_VERBS_REG_WHOLE, one rkey covers the region; or
 * COMM_VERBS_REG_CHUNKS | shift << COMM_VERBS_REG_SHIFT, registered by the
 * owner in 2^shift-byte chunks as peers ask for them (rkey 0 here). */
enum {
    COMM_VERBS_REG_WHOLE = 1,
    COMM_VERBS_REG_CHUNKS = 2,
    COMM_VERBS_REG_SHIFT = 8,
    COMM_VERBS_CHUNK_SHIFT_MIN = 12, /* 4 KiB .. 1 TiB */
    COMM_VERBS_CHUNK_SHIFT_MAX = 40,
};

/* verbs' part of a card: what a peer needs to connect an RC queue pair to
 * this node and to address its registered memory.  All zero when present
 * is 0. */
struct comm_card_verbs {
    uint32_t present;     /* 1: a device is open and the fields are valid */
    uint16_t lid;         /* port LID (InfiniBand), 0 on RoCE */
    uint8_t port;         /* port number, 1-based */
    uint8_t mtu;          /* enum ibv_mtu of the port (1..5) */
    uint32_t psn;         /* first packet sequence number, 24 bits */
    uint32_t gid_index;   /* OMPDSM_IB_GID_INDEX, meaningful when gid is set */
    uint8_t gid[16];      /* all zero: no GRH (InfiniBand inside a subnet) */
    struct {
        uint64_t addr;    /* virtual address of the region in this node */
        uint32_t rkey;
        uint32_t flags;   /* COMM_VERBS_REG_* */
    } region[COMM_REG_MAX];
    /* On the wire the card is followed by uint32_t qpn[size]: qpn[p] is the
     * number of this node's queue pair for peer p (0 for itself and when
     * present is 0). */
};

struct comm_card;
/* Checks a verbs part and its queue pair table against the common part's
 * region sizes; 0, or -EPROTO with why (no newline) in why[0..whylen). */
int comm_card_verbs_check(const struct comm_card *c, const uint32_t *qpn,
                          int rank, int nodes, char *why, size_t whylen);

struct comm_transport_ops;
extern const struct comm_transport_ops comm_verbs_ops;

/* Before the card exchange: opens the device (OMPDSM_IB_DEVICE,
 * OMPDSM_IB_PORT, OMPDSM_IB_GID_INDEX), registers every region and creates
 * one queue pair per peer, then fills the verbs part of this node's card
 * and its queue pair table.  With required 0 (auto) a node without a
 * device leaves the part empty and returns 0; with required 1 that is an
 * error naming the cause.  Returns 0 or a negative errno after printing
 * the reason. */
int comm_verbs_prepare(struct comm_card_verbs *part, uint32_t *qpn,
                       int required);
/* Frees what comm_verbs_prepare made when no peer uses verbs after all. */
void comm_verbs_release(void);

#endif
