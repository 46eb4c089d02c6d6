/* comm/card.h - a node's contact card, exchanged once through the
 * bootstrap, and what host.c derives from the cards: which nodes share a
 * host, labels for messages, and whether every node runs the same build.
 *
 * The card is a common part (identity, build, host, registered region
 * sizes), then one part per transport from that transport's own header,
 * each filled whether or not the transport ends up used (the choice needs
 * every card).  Fixed layout, so that it travels as bytes between hosts of
 * one kind; on the wire it is followed by the verbs part's per-peer table
 * (comm_card_wire_len). */
#ifndef OMPDSM_COMM_CARD_H
#define OMPDSM_COMM_CARD_H

#include <stddef.h>
#include <stdint.h>
#include "comm.h"
#include "shm.h"
#include "tcp.h"
#include "verbs.h"

#define COMM_CARD_MAGIC 0x6f6d7066u /* "ompf": third layout, memfds in shm's part */

struct comm_card {
    uint32_t magic;
    int32_t rank;
    int32_t pid;
    uint32_t transport;   /* enum comm_transport_kind the node asked for */
    /* Build ids (GNU build-id note in hex, or "h" and a hash of the file
     * when the object has none) of the executable and of the object
     * holding libompdsm: addresses agree between nodes only when both
     * match node 0's.  Early in the card, so that a build with another
     * card layout is still told apart by them. */
    char exe_id[48];
    char lib_id[48];
    char host[64];        /* gethostname() */
    char boot_id[40];     /* /proc/sys/kernel/random/boot_id */
    uint64_t netns;       /* inode of /proc/self/ns/net */
    uint64_t region_len[COMM_REG_MAX]; /* 0 when not registered */
    struct comm_card_shm shm;
    struct comm_card_tcp tcp;
    struct comm_card_verbs verbs;
};

/* Bytes of one card on the wire in a job of `nodes` nodes. */
static inline size_t comm_card_wire_len(int nodes)
{
    return sizeof(struct comm_card) + (size_t)nodes * sizeof(uint32_t);
}
/* Writes c and its queue pair table (nodes entries) as wire bytes; buf
 * holds comm_card_wire_len(nodes). */
void comm_card_encode(const struct comm_card *c, const uint32_t *qpn,
                      int nodes, void *buf);
/* Reads the card node `rank` sent (len bytes) in a job of `nodes` nodes
 * into *c and qpn[0..nodes); 0, or -EPROTO with the reason printed. */
int comm_card_decode(const void *buf, size_t len, int rank, int nodes,
                     struct comm_card *c, uint32_t *qpn);

/* ---- host identity and build ids (host.c) ---- */
/* Fills c's host name, boot id, network namespace and build ids. */
void comm_host_card(struct comm_card *c);
/* The build ids (as in the card) of the executable and of libompdsm, and
 * their files (the bootstrap's HELLO carries them to the launcher). */
void comm_build_ids(char exe_id[48], char lib_id[48], char *exe_path,
                    size_t exe_len, char *lib_path, size_t lib_len);
/* True when two cards are on one host: same boot id, network namespace
 * and host name. */
int comm_card_same_host(const struct comm_card *a, const struct comm_card *b);
/* "name" or "name/a.b.c.d" (its tcp address), for messages. */
void comm_host_label(const struct comm_card *c, char *buf, size_t len);
/* After the card exchange: 0 when every node runs node 0's executable and
 * libompdsm; else it does not return: the lowest-ranked node that differs
 * ends the job naming both builds, the others wait for that end (or end
 * it themselves a few seconds later). */
int comm_check_same_build(void);

#endif
