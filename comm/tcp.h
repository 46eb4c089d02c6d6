/* comm/tcp.h - the tcp transport as the rest of comm/ sees it: its part of
 * the contact card, its table, and its listener, which must exist before
 * the card exchange so that the card can carry its port. */
#ifndef OMPDSM_COMM_TCP_H
#define OMPDSM_COMM_TCP_H

#include <stdint.h>

/* tcp's part of a card: where the node's listener is. */
struct comm_card_tcp {
    uint32_t addr;        /* IPv4, network order; 0 if no tcp listener */
    uint16_t port;        /* network order */
    uint16_t pad;
};

struct comm_transport_ops;
extern const struct comm_transport_ops comm_tcp_ops;

/* Opens the listener on the address tcp_addr.c chooses (ephemeral port)
 * and fills the card part; 0 or a negative errno after printing why. */
int comm_tcp_listen(struct comm_card_tcp *part);
/* Closes the listener when no peer uses tcp after all. */
void comm_tcp_release(void);

#endif
