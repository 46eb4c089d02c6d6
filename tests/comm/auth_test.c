/* tests/comm/auth_test.c - cmocka unit tests of the connections' handshake
 * (comm/util/auth.h) without sockets: a right handshake passes both ways;
 * another key, another kind of connection, a response replayed to a new
 * challenge, a proof replayed to a new response, and a challenge that is
 * not ours all fail; the key's hex form and its removal from the
 * environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "comm/util/auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static unsigned char key[OMPDSM_KEY_LEN], other[OMPDSM_KEY_LEN];

static int setup(void **state)
{
    (void)state;
    assert_int_equal(ompdsm_key_new(key), 0);
    assert_int_equal(ompdsm_key_new(other), 0);
    return memcmp(key, other, sizeof key) == 0; /* two draws differ */
}

/* One handshake: connector with ckey, acceptor with akey and kinds. */
static void handshake(const unsigned char *ckey, enum ompdsm_auth_kind ck,
                      const unsigned char *akey, enum ompdsm_auth_kind ak,
                      int *accepted, int *confirmed)
{
    struct ompdsm_auth acc, con;
    unsigned char ch[OMPDSM_AUTH_CHALLENGE_LEN], resp[OMPDSM_AUTH_RESPONSE_LEN];
    unsigned char proof[OMPDSM_AUTH_PROOF_LEN];
    assert_int_equal(ompdsm_auth_challenge(&acc, ak, ch), 0);
    assert_int_equal(ompdsm_auth_respond(&con, ck, ckey, ch, resp), 0);
    *accepted = ompdsm_auth_accept(&acc, akey, resp, proof);
    *confirmed = *accepted ? -1 : ompdsm_auth_confirm(&con, ckey, proof);
}

static void test_right_key_passes(void **state)
{
    (void)state;
    int a, c;
    handshake(key, OMPDSM_AUTH_BOOT, key, OMPDSM_AUTH_BOOT, &a, &c);
    assert_int_equal(a, 0);
    assert_int_equal(c, 0);
    handshake(key, OMPDSM_AUTH_TCP, key, OMPDSM_AUTH_TCP, &a, &c);
    assert_int_equal(a, 0);
    assert_int_equal(c, 0);
}

static void test_wrong_key_or_kind_fails(void **state)
{
    (void)state;
    int a, c;
    handshake(other, OMPDSM_AUTH_BOOT, key, OMPDSM_AUTH_BOOT, &a, &c);
    assert_int_equal(a, -EACCES);
    /* a bootstrap answer is no tcp answer */
    handshake(key, OMPDSM_AUTH_BOOT, key, OMPDSM_AUTH_TCP, &a, &c);
    assert_int_equal(a, -EACCES);
}

/* A response recorded on one connection, sent on another: the new
 * challenge's nonce differs, so the HMAC does not match. */
static void test_replayed_response_fails(void **state)
{
    (void)state;
    struct ompdsm_auth acc1, acc2, con;
    unsigned char ch1[OMPDSM_AUTH_CHALLENGE_LEN], ch2[OMPDSM_AUTH_CHALLENGE_LEN];
    unsigned char resp[OMPDSM_AUTH_RESPONSE_LEN], proof[OMPDSM_AUTH_PROOF_LEN];
    assert_int_equal(ompdsm_auth_challenge(&acc1, OMPDSM_AUTH_BOOT, ch1), 0);
    assert_int_equal(ompdsm_auth_respond(&con, OMPDSM_AUTH_BOOT, key, ch1,
                                         resp), 0);
    assert_int_equal(ompdsm_auth_accept(&acc1, key, resp, proof), 0);
    assert_int_equal(ompdsm_auth_challenge(&acc2, OMPDSM_AUTH_BOOT, ch2), 0);
    assert_memory_not_equal(ch1, ch2, sizeof ch1);
    assert_int_equal(ompdsm_auth_accept(&acc2, key, resp, proof), -EACCES);
}

/* A proof recorded by a stranger, played as the acceptor to a connector
 * that sent a fresh nonce: refused, so a fake launcher learns nothing. */
static void test_replayed_proof_fails(void **state)
{
    (void)state;
    struct ompdsm_auth acc, con1, con2;
    unsigned char ch[OMPDSM_AUTH_CHALLENGE_LEN];
    unsigned char r1[OMPDSM_AUTH_RESPONSE_LEN], r2[OMPDSM_AUTH_RESPONSE_LEN];
    unsigned char proof[OMPDSM_AUTH_PROOF_LEN];
    assert_int_equal(ompdsm_auth_challenge(&acc, OMPDSM_AUTH_TCP, ch), 0);
    assert_int_equal(ompdsm_auth_respond(&con1, OMPDSM_AUTH_TCP, key, ch, r1), 0);
    assert_int_equal(ompdsm_auth_accept(&acc, key, r1, proof), 0);
    /* the same challenge again (replayed by the stranger), a new answer */
    assert_int_equal(ompdsm_auth_respond(&con2, OMPDSM_AUTH_TCP, key, ch, r2), 0);
    assert_int_equal(ompdsm_auth_confirm(&con2, key, proof), -EACCES);
    assert_int_equal(ompdsm_auth_confirm(&con1, key, proof), 0);
}

static void test_not_a_challenge(void **state)
{
    (void)state;
    struct ompdsm_auth con;
    unsigned char ch[OMPDSM_AUTH_CHALLENGE_LEN];
    unsigned char resp[OMPDSM_AUTH_RESPONSE_LEN];
    memset(ch, 'A', sizeof ch);
    assert_int_equal(ompdsm_auth_respond(&con, OMPDSM_AUTH_BOOT, key, ch, resp),
                     -EPROTO);
}

static void test_key_hex_and_environment(void **state)
{
    (void)state;
    char hex[2 * OMPDSM_KEY_LEN + 1];
    unsigned char back[OMPDSM_KEY_LEN];
    ompdsm_key_hex(key, hex);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(ompdsm_key_parse(hex, back), 0);
    assert_memory_equal(key, back, sizeof key);
    assert_int_equal(ompdsm_key_parse("12", back), -EINVAL);
    hex[5] = 'g';
    assert_int_equal(ompdsm_key_parse(hex, back), -EINVAL);

    ompdsm_key_hex(key, hex);
    setenv(OMPDSM_KEY_VAR, hex, 1);
    char *was = getenv(OMPDSM_KEY_VAR);
    memset(back, 0, sizeof back);
    assert_int_equal(ompdsm_key_from_env(back), 1);
    assert_memory_equal(key, back, sizeof key);
    assert_null(getenv(OMPDSM_KEY_VAR));
    /* the string itself is overwritten, not only unlinked */
    assert_null(strstr(was, hex));
    assert_int_equal(ompdsm_key_from_env(back), 0);
    setenv(OMPDSM_KEY_VAR, "not hex", 1);
    assert_int_equal(ompdsm_key_from_env(back), -EINVAL);
    assert_null(getenv(OMPDSM_KEY_VAR));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_right_key_passes),
        cmocka_unit_test(test_wrong_key_or_kind_fails),
        cmocka_unit_test(test_replayed_response_fails),
        cmocka_unit_test(test_replayed_proof_fails),
        cmocka_unit_test(test_not_a_challenge),
        cmocka_unit_test(test_key_hex_and_environment),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
