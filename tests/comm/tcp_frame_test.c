/* tests/comm/tcp_frame_test.c - unit tests of the tcp transport's wire
 * format (comm/tcp_frame.h): exact byte layout, round trips of every op,
 * and rejection of every kind of malformed header. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/tcp_frame.h"

static int decode(const unsigned char *b, struct tcp_frame *f, char *why)
{
    return tcp_frame_decode(b, f, why, 160);
}

static void test_layout(void **state)
{
    (void)state;
    struct tcp_frame f = {.op = TCP_OP_CAS, .region = 4, .len = 0,
                          .id = 0x0102030405060708ull, .off = 0x1000,
                          .a = 0x1122334455667788ull, .b = 0xffull};
    unsigned char b[TCP_FRAME_HDR];
    tcp_frame_encode(&f, b);
    static const unsigned char want[TCP_FRAME_HDR] = {
        0xd5, TCP_OP_CAS, 4, 0,   0, 0, 0, 0,
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
        0x00, 0x10, 0, 0, 0, 0, 0, 0,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        0xff, 0, 0, 0, 0, 0, 0, 0,
    };
    assert_memory_equal(b, want, TCP_FRAME_HDR);
    /* len is little-endian at byte 4 */
    struct tcp_frame p = {.op = TCP_OP_PUT, .len = 0x00030201u};
    tcp_frame_encode(&p, b);
    assert_int_equal(b[4], 1);
    assert_int_equal(b[5], 2);
    assert_int_equal(b[6], 3);
    assert_int_equal(b[7], 0);
}

static void roundtrip(const struct tcp_frame *f, size_t payload)
{
    unsigned char b[TCP_FRAME_HDR];
    char why[160] = "";
    struct tcp_frame g;
    memset(&g, 0x77, sizeof g);
    tcp_frame_encode(f, b);
    int rc = decode(b, &g, why);
    if (rc)
        print_error("op %s: %s\n", tcp_op_name(f->op), why);
    assert_int_equal(rc, 0);
    assert_int_equal(g.op, f->op);
    assert_int_equal(g.region, f->region);
    assert_int_equal(g.tag, f->tag);
    assert_int_equal(g.len, f->len);
    assert_true(g.id == f->id && g.off == f->off && g.a == f->a && g.b == f->b);
    assert_int_equal(tcp_frame_payload(&g), payload);
}

static void test_roundtrip_every_op(void **state)
{
    (void)state;
    roundtrip(&(struct tcp_frame){.op = TCP_OP_HELLO, .id = 7, .off = 8,
                                  .a = 0xdeadbeefcafef00dull}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_PUT, .region = COMM_REG_MAX - 1,
                                  .len = TCP_FRAME_MAX_LEN, .off = 3}, TCP_FRAME_MAX_LEN);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_PUT, .region = 1, .len = 0,
                                  .off = UINT64_MAX}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_GET, .region = 2, .len = 4096,
                                  .off = 12345, .id = UINT64_MAX}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_FADD, .region = 0, .off = 64,
                                  .a = (uint64_t)-1, .id = 1}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_CAS, .region = 3, .off = 8,
                                  .a = 1, .b = 2, .id = 2}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_NOTIFY, .region = 0, .off = 0,
                                  .a = 42}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_FENCE, .id = 99}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_SEND, .tag = COMM_TAG_MAX - 1,
                                  .len = COMM_MSG_MAX}, COMM_MSG_MAX);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_SEND, .tag = 0, .len = 0}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_REPLY, .id = 5, .len = 4096,
                                  .a = 17}, 4096);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_REPLY, .id = 5,
                                  .b = (uint64_t)(int64_t)-EFAULT}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_BYE}, 0);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_ABORT, .len = TCP_ABORT_MAX},
              TCP_ABORT_MAX);
    roundtrip(&(struct tcp_frame){.op = TCP_OP_ABORT, .len = 9, .a = 2,
                                  .b = 3}, 9);
}

/* Encodes f, lets mutate change bytes, expects decode to fail naming why. */
static void reject(const struct tcp_frame *f, int byte, unsigned char value,
                   const char *why_part)
{
    unsigned char b[TCP_FRAME_HDR];
    char why[160] = "";
    struct tcp_frame g;
    tcp_frame_encode(f, b);
    if (byte >= 0)
        b[byte] = value;
    assert_int_equal(decode(b, &g, why), -EPROTO);
    if (!strstr(why, why_part))
        print_error("reason '%s' does not mention '%s'\n", why, why_part);
    assert_non_null(strstr(why, why_part));
}

static void test_rejects(void **state)
{
    (void)state;
    struct tcp_frame ok = {.op = TCP_OP_FENCE, .id = 1};
    reject(&ok, 0, 0x00, "magic");
    reject(&ok, 1, 0, "unknown op 0");
    reject(&ok, 1, TCP_OP_END, "unknown op");
    reject(&ok, 1, 0xff, "unknown op 255");
    /* unused fields must be zero */
    reject(&ok, 2, 1, "'region'");
    reject(&ok, 3, 1, "'tag'");
    reject(&ok, 4, 1, "'len'");
    reject(&ok, 20, 1, "'off'");
    reject(&(struct tcp_frame){.op = TCP_OP_BYE}, 8, 1, "'id'");
    reject(&(struct tcp_frame){.op = TCP_OP_NOTIFY, .off = 8}, 32, 1, "'b'");
    /* ranges */
    reject(&(struct tcp_frame){.op = TCP_OP_PUT, .region = COMM_REG_MAX}, -1, 0,
           "region 8");
    reject(&(struct tcp_frame){.op = TCP_OP_SEND, .tag = COMM_TAG_MAX}, -1, 0,
           "tag 32");
    /* oversized lengths */
    reject(&(struct tcp_frame){.op = TCP_OP_SEND, .len = COMM_MSG_MAX + 1}, -1,
           0, "message limit");
    reject(&(struct tcp_frame){.op = TCP_OP_ABORT, .len = TCP_ABORT_MAX + 1},
           -1, 0, "abort text");
    reject(&(struct tcp_frame){.op = TCP_OP_ABORT, .len = 5, .id = 1}, -1, 0,
           "'id'");
    reject(&(struct tcp_frame){.op = TCP_OP_PUT, .len = TCP_FRAME_MAX_LEN + 1},
           -1, 0, "frame limit");
    reject(&(struct tcp_frame){.op = TCP_OP_GET, .len = UINT32_MAX, .id = 1},
           -1, 0, "frame limit");
    reject(&(struct tcp_frame){.op = TCP_OP_REPLY, .len = 0x80000000u, .id = 1},
           -1, 0, "frame limit");
    /* alignment of atomics and notifies */
    reject(&(struct tcp_frame){.op = TCP_OP_FADD, .off = 4, .id = 1}, -1, 0,
           "aligned");
    reject(&(struct tcp_frame){.op = TCP_OP_CAS, .off = 9, .id = 1}, -1, 0,
           "aligned");
    reject(&(struct tcp_frame){.op = TCP_OP_NOTIFY, .off = 1}, -1, 0, "aligned");
    /* reply status */
    reject(&(struct tcp_frame){.op = TCP_OP_REPLY, .id = 1, .b = 1}, -1, 0,
           "status 1");
    reject(&(struct tcp_frame){.op = TCP_OP_REPLY, .id = 1,
                               .b = (uint64_t)(int64_t)-5000}, -1, 0,
           "status -5000");
    reject(&(struct tcp_frame){.op = TCP_OP_REPLY, .id = 1, .len = 8,
                               .b = (uint64_t)(int64_t)-EFAULT}, -1, 0,
           "failed reply");
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tcp_op_name(TCP_OP_GET), "get");
    assert_string_equal(tcp_op_name(TCP_OP_FADD), "fetch-add");
    assert_string_equal(tcp_op_name(0), "unknown op");
    assert_string_equal(tcp_op_name(TCP_OP_END), "unknown op");
    assert_string_equal(tcp_op_name(1000), "unknown op");
}

/* A byte stream of several frames decodes frame by frame at the offsets
 * tcp_frame_payload gives. */
static void test_stream(void **state)
{
    (void)state;
    unsigned char buf[4 * TCP_FRAME_HDR + 100];
    size_t pos = 0;
    struct tcp_frame in[3] = {
        {.op = TCP_OP_PUT, .region = 4, .len = 60, .off = 100},
        {.op = TCP_OP_NOTIFY, .region = 4, .off = 8, .a = 1},
        {.op = TCP_OP_SEND, .tag = 3, .len = 40},
    };
    for (int i = 0; i < 3; i++) {
        tcp_frame_encode(&in[i], buf + pos);
        pos += TCP_FRAME_HDR;
        memset(buf + pos, 0xee, tcp_frame_payload(&in[i]));
        pos += tcp_frame_payload(&in[i]);
    }
    size_t end = pos;
    pos = 0;
    for (int i = 0; i < 3; i++) {
        struct tcp_frame g;
        char why[160];
        assert_int_equal(decode(buf + pos, &g, why), 0);
        assert_int_equal(g.op, in[i].op);
        pos += TCP_FRAME_HDR + tcp_frame_payload(&g);
    }
    assert_int_equal(pos, end);
    /* One byte out of step is caught at once. */
    struct tcp_frame g;
    char why[160];
    assert_int_equal(decode(buf + 1, &g, why), -EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_roundtrip_every_op),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
