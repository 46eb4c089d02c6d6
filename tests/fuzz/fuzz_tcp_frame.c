/* tests/fuzz/fuzz_tcp_frame.c - libFuzzer target: the tcp transport's frame
 * header decoder and, for a vectored put, its run table, on bytes as they
 * would arrive from a peer.  A header the decoder accepts must encode back
 * to the same bytes (decode accepts only what encode writes). */
#include "comm/tcp_frame.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < TCP_FRAME_HDR)
        return 0;
    struct tcp_frame f;
    char why[160];
    if (tcp_frame_decode(data, &f, why, sizeof why) < 0) {
        if (!memchr(why, 0, sizeof why) || !why[0])
            abort(); /* a rejection always says why */
        return 0;
    }
    unsigned char again[TCP_FRAME_HDR];
    tcp_frame_encode(&f, again);
    if (memcmp(again, data, TCP_FRAME_HDR))
        abort();
    size_t payload = tcp_frame_payload(&f);
    if (f.op != TCP_OP_PUTV || payload > size - TCP_FRAME_HDR)
        return 0;
    /* The payload in a buffer of its own size: ASan sees any read past it. */
    unsigned char *buf = malloc(payload ? payload : 1);
    if (!buf)
        return 0;
    memcpy(buf, data + TCP_FRAME_HDR, payload);
    const unsigned char *run;
    uint64_t pos = 0, sum = 0;
    uint32_t off, len;
    int rc;
    while ((rc = tcp_putv_next(&f, buf, &pos, &off, &len, &run)) > 0) {
        if (run < buf + f.a * 8 || run + len > buf + payload)
            abort();
        sum += len;
    }
    if (rc == 0 && sum + f.a * 8 != payload)
        abort();
    free(buf);
    return 0;
}
