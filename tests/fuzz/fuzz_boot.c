/* tests/fuzz/fuzz_boot.c - libFuzzer target: what a node decodes from the
 * launcher during the bootstrap, the allgather answer's header and the
 * contact cards in it (comm_boot_answer_check, comm_card_decode), on
 * arbitrary bytes.  The first input byte picks the job size (1..8) and
 * the rank of the node whose card is read first.  Each rejection prints
 * a line, so the suite runs it with stderr closed (-close_fd_mask=2) and
 * replays a crashing input with stderr open. */
#include "comm/card.h"
#include "comm/boot.h"
#include "comm/boot_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + sizeof(struct boot_hdr))
        return 0;
    int nodes = 1 + (data[0] & 7);
    struct boot_hdr h;
    memcpy(&h, data + 1, sizeof h);
    const uint8_t *body = data + 1 + sizeof h;
    size_t blen = size - 1 - sizeof h;
    size_t wl = comm_card_wire_len(nodes);
    if (comm_boot_answer_check(&h, wl, nodes) < 0)
        return 0;
    if (h.len != blen)
        return 0; /* the socket read would wait for the rest */
    /* Each card in a buffer of exactly its length (ASan sees overreads). */
    unsigned char *one = malloc(wl);
    uint32_t *qpn = malloc((size_t)nodes * sizeof *qpn);
    if (one && qpn)
        for (int r = 0; r < nodes; r++) {
            struct comm_card c;
            memcpy(one, body + (size_t)r * wl, wl);
            comm_card_decode(one, wl, r, nodes, &c, qpn);
        }
    free(one);
    free(qpn);
    return 0;
}
