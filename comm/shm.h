/* comm/shm.h - the shared-memory transport (shm.c) as the rest of comm/
 * sees it: its part of the contact card, its table and its share of the
 * comm layer's own region. */
#ifndef OMPDSM_COMM_SHM_H
#define OMPDSM_COMM_SHM_H

#include <stddef.h>
#include <stdint.h>
#include "comm.h"

/* shm's part of a card: the memfd behind each registered region in the
 * owner process, which a peer on the same host opens through
 * /proc/PID/fd; -1 for a region without one. */
struct comm_card_shm {
    int32_t fd[COMM_REG_MAX];
};

struct comm_transport_ops;
extern const struct comm_transport_ops comm_shm_ops;

/* Bytes shm's mailboxes take at the end of COMM_REG_SYNC in a job of
 * `nodes` nodes (transport.h). */
size_t comm_shm_area_len(int nodes);

#endif
