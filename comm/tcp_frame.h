/* comm/tcp_frame.h - the tcp transport's wire format: a fixed 40-byte frame
 * header, little-endian, optionally followed by a payload.  Pure encoding,
 * decoding and validation, apart from the socket code so that unit tests can
 * check them (tests/comm/tcp_frame_test.c).
 *
 * Header layout (byte offsets):
 *   0 magic (TCP_FRAME_MAGIC)   1 op   2 region   3 tag
 *   4 len (u32)   8 id (u64)   16 off (u64)   24 a (u64)   32 b (u64)
 * Fields an op does not use must be zero. */
#ifndef OMPDSM_COMM_TCP_FRAME_H
#define OMPDSM_COMM_TCP_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum tcp_op {
    TCP_OP_HELLO = 1, /* handshake: id = sender's rank, off = job size,
                         a = job cookie (both directions, once) */
    TCP_OP_PUT,       /* region, off; len payload bytes follow */
    TCP_OP_GET,       /* region, off, len = bytes wanted, id; replied */
    TCP_OP_FADD,      /* region, off, a = addend, id; replied with old */
    TCP_OP_CAS,       /* region, off, a = expected, b = desired, id; replied
                         with old */
    TCP_OP_NOTIFY,    /* region, off, a = value */
    TCP_OP_FENCE,     /* id; replied once every earlier request is done */
    TCP_OP_SEND,      /* tag; len payload bytes follow */
    TCP_OP_REPLY,     /* id of the request, a = old value, b = status (0 or
                         -errno), off = the replier's count of puts,
                         notifies and sends to the requester so far;
                         len payload bytes follow (GET data) */
    TCP_OP_BYE,       /* orderly end: the sender sends nothing more */
    TCP_OP_ABORT,     /* the sender is failing: len bytes of text say why;
                         a = 1 + node X, b = 1 + node Y when X lost Y
                         through the network (the text then names no
                         hosts), else both 0 */
    TCP_OP_PUTV,      /* region, off = base, a = number of runs; len payload
                         bytes follow: a runs of (u32 off, u32 len), then
                         their data in order; run k goes to base + off_k */
    TCP_OP_END
};

enum {
    TCP_FRAME_HDR = 40,
    TCP_FRAME_MAGIC = 0xd5,
    TCP_ABORT_MAX = 1024, /* longest ABORT text */
};
/* Largest payload of one PUT, GET or REPLY frame; longer transfers are
 * split into several frames. */
#define TCP_FRAME_MAX_LEN (1u << 30)

/* A decoded header.  Which fields mean what depends on op (above). */
struct tcp_frame {
    uint8_t op;
    uint8_t region;
    uint8_t tag;
    uint32_t len;
    uint64_t id;
    uint64_t off;
    uint64_t a;
    uint64_t b;
};

/* Writes f's header into out (no validation: encode only what decode
 * accepts). */
void tcp_frame_encode(const struct tcp_frame *f,
                      unsigned char out[TCP_FRAME_HDR]);
/* Decodes and validates a header.  Returns 0, or -EPROTO with a one-line
 * reason in why ("unknown op 17", "put of 2147483648 bytes exceeds ...").
 * Checks: magic, op, region and tag ranges, unused fields zero, length
 * limits per op, 8-byte alignment of atomics and notifies, reply status. */
int tcp_frame_decode(const unsigned char in[TCP_FRAME_HDR],
                     struct tcp_frame *f, char *why, size_t whylen);
/* Payload bytes that follow the header of a valid frame on the wire. */
size_t tcp_frame_payload(const struct tcp_frame *f);
/* Walks the run table of a valid PUTV frame f whose len payload bytes are
 * in buf: *pos starts at 0; each call returns 1 with the next run's
 * target offset (from f->off) and length and where its data lie in buf
 * (*data), 0 once every run was read and the data add up to len, or
 * -EPROTO when they do not (a run past the payload, bytes left over). */
int tcp_putv_next(const struct tcp_frame *f, const unsigned char *buf,
                  uint64_t *pos, uint32_t *off, uint32_t *len,
                  const unsigned char **data);
/* "put", "get", ... for messages; "op N" style text for unknown ops. */
const char *tcp_op_name(unsigned op);

/* A little-endian field of the putv run table (tcp.c writes it). */
static inline void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

#endif
