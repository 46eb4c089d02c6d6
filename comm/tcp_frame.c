/* comm/tcp_frame.c - the tcp wire format's codec (pure; see tcp_frame.h). */
#include "transport.h"
#include "tcp_frame.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Little-endian fields: the header's and the putv run table's. */
static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void tcp_frame_encode(const struct tcp_frame *f,
                      unsigned char out[TCP_FRAME_HDR])
{
    out[0] = TCP_FRAME_MAGIC;
    out[1] = f->op;
    out[2] = f->region;
    out[3] = f->tag;
    put_le32(out + 4, f->len);
    put_le64(out + 8, f->id);
    put_le64(out + 16, f->off);
    put_le64(out + 24, f->a);
    put_le64(out + 32, f->b);
}

static const char *const op_names[TCP_OP_END] = {
    [TCP_OP_HELLO] = "hello",  [TCP_OP_PUT] = "put",
    [TCP_OP_GET] = "get",      [TCP_OP_FADD] = "fetch-add",
    [TCP_OP_CAS] = "compare-swap", [TCP_OP_NOTIFY] = "notify",
    [TCP_OP_FENCE] = "fence",  [TCP_OP_SEND] = "send",
    [TCP_OP_REPLY] = "reply",  [TCP_OP_BYE] = "bye",
    [TCP_OP_ABORT] = "abort",  [TCP_OP_PUTV] = "vectored put",
};

const char *tcp_op_name(unsigned op)
{
    return op > 0 && op < TCP_OP_END ? op_names[op] : "unknown op";
}

/* Which header fields each op uses. */
enum {
    F_REGION = 1 << 0,
    F_TAG = 1 << 1,
    F_LEN = 1 << 2,
    F_ID = 1 << 3,
    F_OFF = 1 << 4,
    F_A = 1 << 5,
    F_B = 1 << 6,
    F_ALIGN = 1 << 7, /* off must be 8-byte aligned */
};
static const uint8_t op_fields[TCP_OP_END] = {
    [TCP_OP_HELLO] = F_ID | F_OFF | F_A,
    [TCP_OP_PUT] = F_REGION | F_LEN | F_OFF,
    [TCP_OP_GET] = F_REGION | F_LEN | F_OFF | F_ID,
    [TCP_OP_FADD] = F_REGION | F_OFF | F_A | F_ID | F_ALIGN,
    [TCP_OP_CAS] = F_REGION | F_OFF | F_A | F_B | F_ID | F_ALIGN,
    [TCP_OP_NOTIFY] = F_REGION | F_OFF | F_A | F_ALIGN,
    [TCP_OP_FENCE] = F_ID,
    [TCP_OP_SEND] = F_TAG | F_LEN,
    [TCP_OP_REPLY] = F_ID | F_LEN | F_OFF | F_A | F_B,
    [TCP_OP_BYE] = 0,
    [TCP_OP_ABORT] = F_LEN | F_A | F_B,
    [TCP_OP_PUTV] = F_REGION | F_LEN | F_OFF | F_A,
};

int tcp_frame_decode(const unsigned char in[TCP_FRAME_HDR],
                     struct tcp_frame *f, char *why, size_t whylen)
{
    if (in[0] != TCP_FRAME_MAGIC) {
        snprintf(why, whylen, "bad magic byte 0x%02x (stream out of step)",
                 in[0]);
        return -EPROTO;
    }
    f->op = in[1];
    f->region = in[2];
    f->tag = in[3];
    f->len = get_le32(in + 4);
    f->id = get_le64(in + 8);
    f->off = get_le64(in + 16);
    f->a = get_le64(in + 24);
    f->b = get_le64(in + 32);
    if (f->op == 0 || f->op >= TCP_OP_END) {
        snprintf(why, whylen, "unknown op %u", f->op);
        return -EPROTO;
    }
    const char *name = op_names[f->op];
    unsigned u = op_fields[f->op];
    static const struct {
        unsigned bit;
        const char *name;
    } unused[] = {{F_REGION, "region"}, {F_TAG, "tag"}, {F_LEN, "len"},
                  {F_ID, "id"},         {F_OFF, "off"}, {F_A, "a"},
                  {F_B, "b"}};
    const uint64_t val[] = {f->region, f->tag, f->len, f->id,
                            f->off,    f->a,   f->b};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(unused); i++)
        if (!(u & unused[i].bit) && val[i]) {
            snprintf(why, whylen, "%s frame with its unused field '%s' set",
                     name, unused[i].name);
            return -EPROTO;
        }
    if ((u & F_REGION) && f->region >= COMM_REG_MAX) {
        snprintf(why, whylen, "%s on region %u (regions are 0..%d)", name,
                 f->region, COMM_REG_MAX - 1);
        return -EPROTO;
    }
    if ((u & F_TAG) && f->tag >= COMM_TAG_MAX) {
        snprintf(why, whylen, "%s with tag %u (tags are 0..%d)", name, f->tag,
                 COMM_TAG_MAX - 1);
        return -EPROTO;
    }
    if (f->op == TCP_OP_SEND && f->len > COMM_MSG_MAX) {
        snprintf(why, whylen, "send of %u bytes exceeds the %d-byte message "
                 "limit", f->len, COMM_MSG_MAX);
        return -EPROTO;
    }
    if (f->op == TCP_OP_PUTV && (!f->a || f->a > f->len / 8)) {
        snprintf(why, whylen, "vectored put of %llu runs in %u bytes",
                 (unsigned long long)f->a, f->len);
        return -EPROTO;
    }
    if (f->op == TCP_OP_ABORT && f->len > TCP_ABORT_MAX) {
        snprintf(why, whylen, "abort text of %u bytes exceeds %d", f->len,
                 TCP_ABORT_MAX);
        return -EPROTO;
    }
    if ((u & F_LEN) && f->len > TCP_FRAME_MAX_LEN) {
        snprintf(why, whylen, "%s of %u bytes exceeds the %u-byte frame limit",
                 name, f->len, TCP_FRAME_MAX_LEN);
        return -EPROTO;
    }
    if ((u & F_ALIGN) && (f->off & 7)) {
        snprintf(why, whylen, "%s at offset %llu, not 8-byte aligned", name,
                 (unsigned long long)f->off);
        return -EPROTO;
    }
    if (f->op == TCP_OP_REPLY) {
        int64_t st = (int64_t)f->b;
        if (st > 0 || st < -4095) {
            snprintf(why, whylen, "reply with status %lld (not 0 or -errno)",
                     (long long)st);
            return -EPROTO;
        }
        if (st && f->len) {
            snprintf(why, whylen, "failed reply carrying %u bytes", f->len);
            return -EPROTO;
        }
    }
    return 0;
}

size_t tcp_frame_payload(const struct tcp_frame *f)
{
    return (f->op == TCP_OP_PUT || f->op == TCP_OP_SEND ||
            f->op == TCP_OP_REPLY || f->op == TCP_OP_ABORT ||
            f->op == TCP_OP_PUTV) ? f->len : 0;
}

/* *pos counts runs read so far in its low 32 bits (at most len / 8 runs)
 * and data bytes consumed in its high 32 (at most len < 2^31). */
int tcp_putv_next(const struct tcp_frame *f, const unsigned char *buf,
                  uint64_t *pos, uint32_t *off, uint32_t *len,
                  const unsigned char **data)
{
    uint64_t k = *pos & 0xffffffffu, used = *pos >> 32;
    uint64_t at = f->a * 8 + used;
    if (k == f->a)
        return at == f->len ? 0 : -EPROTO;
    *off = get_le32(buf + 8 * k);
    *len = get_le32(buf + 8 * k + 4);
    if (at + *len > f->len)
        return -EPROTO;
    *data = buf + at;
    *pos = ((used + *len) << 32) | (k + 1);
    return 1;
}
