/* comm/util/auth.c - the job's key and the connection handshake of
 * auth.h: HMAC-SHA256 from OpenSSL's libcrypto, nonces from getrandom,
 * and the acceptor's and connector's sides on sockets. */
#include "auth.h"
#include "base.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>

/* Version 1 of the handshake; a peer of another version fails at once
 * with a clear message instead of a wrong HMAC. */
static const unsigned char tag[OMPDSM_AUTH_TAG_LEN] = "OMPDSMA1";

int ompdsm_key_new(unsigned char key[OMPDSM_KEY_LEN])
{
    size_t got = 0;
    while (got < OMPDSM_KEY_LEN) {
        ssize_t n = getrandom(key + got, OMPDSM_KEY_LEN - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        got += (size_t)n;
    }
    return 0;
}

void ompdsm_key_hex(const unsigned char key[OMPDSM_KEY_LEN],
                    char hex[2 * OMPDSM_KEY_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < OMPDSM_KEY_LEN; i++) {
        hex[2 * i] = digits[key[i] >> 4];
        hex[2 * i + 1] = digits[key[i] & 15];
    }
    hex[(size_t)2 * OMPDSM_KEY_LEN] = 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int ompdsm_key_parse(const char *hex, unsigned char key[OMPDSM_KEY_LEN])
{
    if (strlen(hex) != (size_t)2 * OMPDSM_KEY_LEN)
        return -EINVAL;
    for (size_t i = 0; i < OMPDSM_KEY_LEN; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        key[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

int ompdsm_key_from_env(unsigned char key[OMPDSM_KEY_LEN])
{
    char *v = getenv(OMPDSM_KEY_VAR);
    if (!v)
        return 0;
    int rc = ompdsm_key_parse(v, key) < 0 ? -EINVAL : 1;
    /* The string is the one the process started with (or a copy setenv
     * made): overwritten here, it is gone from /proc/PID/environ too. */
    memset(v, 'x', strlen(v));
    unsetenv(OMPDSM_KEY_VAR);
    return rc;
}

/* HMAC-SHA256 under key of label, kind, then both nonces. */
static void mac_of(const unsigned char key[OMPDSM_KEY_LEN], const char *label,
                   const struct ompdsm_auth *a,
                   unsigned char out[OMPDSM_MAC_LEN])
{
    unsigned char msg[16 + 1 + 2 * OMPDSM_NONCE_LEN];
    size_t n = strlen(label);
    memset(msg, 0, 16);
    memcpy(msg, label, n < 16 ? n : 16);
    msg[16] = (unsigned char)a->kind;
    memcpy(msg + 17, a->nonce_a, OMPDSM_NONCE_LEN);
    memcpy(msg + 17 + OMPDSM_NONCE_LEN, a->nonce_c, OMPDSM_NONCE_LEN);
    unsigned int len = OMPDSM_MAC_LEN;
    if (!HMAC(EVP_sha256(), key, OMPDSM_KEY_LEN, msg, sizeof msg, out, &len))
        memset(out, 0, OMPDSM_MAC_LEN); /* then no answer can match it */
}

int ompdsm_auth_challenge(struct ompdsm_auth *a, enum ompdsm_auth_kind kind,
                          unsigned char out[OMPDSM_AUTH_CHALLENGE_LEN])
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    int rc = ompdsm_key_new(a->nonce_a);
    if (rc < 0)
        return rc;
    memcpy(out, tag, sizeof tag);
    memcpy(out + sizeof tag, a->nonce_a, OMPDSM_NONCE_LEN);
    return 0;
}

int ompdsm_auth_accept(struct ompdsm_auth *a,
                       const unsigned char key[OMPDSM_KEY_LEN],
                       const unsigned char in[OMPDSM_AUTH_RESPONSE_LEN],
                       unsigned char proof[OMPDSM_AUTH_PROOF_LEN])
{
    unsigned char want[OMPDSM_MAC_LEN];
    memcpy(a->nonce_c, in, OMPDSM_NONCE_LEN);
    mac_of(key, "ompdsm-connector", a, want);
    if (CRYPTO_memcmp(want, in + OMPDSM_NONCE_LEN, OMPDSM_MAC_LEN) != 0)
        return -EACCES;
    mac_of(key, "ompdsm-acceptor", a, proof);
    return 0;
}

int ompdsm_auth_respond(struct ompdsm_auth *a, enum ompdsm_auth_kind kind,
                        const unsigned char key[OMPDSM_KEY_LEN],
                        const unsigned char in[OMPDSM_AUTH_CHALLENGE_LEN],
                        unsigned char out[OMPDSM_AUTH_RESPONSE_LEN])
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    if (memcmp(in, tag, sizeof tag) != 0)
        return -EPROTO;
    memcpy(a->nonce_a, in + sizeof tag, OMPDSM_NONCE_LEN);
    int rc = ompdsm_key_new(a->nonce_c);
    if (rc < 0)
        return rc;
    memcpy(out, a->nonce_c, OMPDSM_NONCE_LEN);
    mac_of(key, "ompdsm-connector", a, out + OMPDSM_NONCE_LEN);
    return 0;
}

int ompdsm_auth_confirm(const struct ompdsm_auth *a,
                        const unsigned char key[OMPDSM_KEY_LEN],
                        const unsigned char proof[OMPDSM_AUTH_PROOF_LEN])
{
    unsigned char want[OMPDSM_MAC_LEN];
    mac_of(key, "ompdsm-acceptor", a, want);
    return CRYPTO_memcmp(want, proof, OMPDSM_MAC_LEN) ? -EACCES : 0;
}

/* ---- the acceptor's side, non-blocking ---- */

int ompdsm_auth_srv_start(struct ompdsm_auth_srv *s, int fd,
                          enum ompdsm_auth_kind kind, char *why, size_t whylen)
{
    unsigned char ch[OMPDSM_AUTH_CHALLENGE_LEN];
    int rc = ompdsm_auth_challenge(&s->a, kind, ch);
    s->got = 0;
    s->deadline_ns = ompdsm_now_ns() + OMPDSM_AUTH_TIMEOUT_MS * 1000000ull;
    if (rc < 0) {
        snprintf(why, whylen, "getrandom: %s", strerror(-rc));
        return rc;
    }
    /* A new connection's send buffer is empty: all of it goes, or the
     * connection is already broken. */
    ssize_t n = send(fd, ch, sizeof ch, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n != (ssize_t)sizeof ch) {
        rc = n < 0 ? -errno : -EIO;
        snprintf(why, whylen, "could not send the challenge: %s",
                 strerror(-rc));
        return rc;
    }
    return 0;
}

int ompdsm_auth_srv_step(struct ompdsm_auth_srv *s, int fd,
                         const unsigned char key[OMPDSM_KEY_LEN], char *why,
                         size_t whylen)
{
    while (s->got < sizeof s->buf) {
        ssize_t n = recv(fd, s->buf + s->got, sizeof s->buf - s->got,
                         MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            int e = n ? errno : ECONNRESET;
            /* Nothing sent, nothing to report: a node ended before it
             * answered (its job is ending), or a port scan. */
            if (!s->got)
                why[0] = 0;
            else
                snprintf(why, whylen, "%s after %zu bytes, without "
                         "answering the job's challenge",
                         n ? strerror(e) : "closed", s->got);
            return -e;
        }
        s->got += (size_t)n;
    }
    unsigned char proof[OMPDSM_AUTH_PROOF_LEN];
    if (ompdsm_auth_accept(&s->a, key, s->buf, proof) < 0) {
        snprintf(why, whylen, "its answer to the job's challenge is wrong "
                 "(not a node of this job)");
        return -EACCES;
    }
    ssize_t n = send(fd, proof, sizeof proof, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n != (ssize_t)sizeof proof) {
        int e = n < 0 ? errno : EIO;
        snprintf(why, whylen, "could not send the proof: %s", strerror(e));
        return -e;
    }
    return 1;
}

int ompdsm_auth_srv_expired(const struct ompdsm_auth_srv *s, uint64_t now_ns,
                            uint64_t *next, char *why, size_t whylen)
{
    if (now_ns >= s->deadline_ns) {
        snprintf(why, whylen, "no answer to the job's challenge within %d s",
                 OMPDSM_AUTH_TIMEOUT_MS / 1000);
        return 1;
    }
    if (!*next || s->deadline_ns < *next)
        *next = s->deadline_ns;
    return 0;
}

/* ---- the connector's side, blocking ---- */

int ompdsm_auth_client(int fd, enum ompdsm_auth_kind kind,
                       const unsigned char key[OMPDSM_KEY_LEN], int timeout_ms,
                       char *why, size_t whylen)
{
    unsigned char ch[OMPDSM_AUTH_CHALLENGE_LEN], resp[OMPDSM_AUTH_RESPONSE_LEN];
    unsigned char proof[OMPDSM_AUTH_PROOF_LEN];
    struct ompdsm_auth a;
    /* Each read gives up after timeout_ms (-EAGAIN), then blocks again. */
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000L};
    struct timeval none = {0, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int rc = ompdsm_read_full(fd, ch, sizeof ch);
    if (rc < 0) {
        snprintf(why, whylen, "no challenge came: %s", rc == -EPIPE
                 ? "the connection closed" : rc == -EAGAIN
                 ? "timed out" : strerror(-rc));
        return rc;
    }
    rc = ompdsm_auth_respond(&a, kind, key, ch, resp);
    if (rc == -EPROTO) {
        snprintf(why, whylen, "what came is not an ompdsm challenge (another "
                 "program, or another version of ompdsm, listens there)");
        return rc;
    }
    if (rc < 0) {
        snprintf(why, whylen, "getrandom: %s", strerror(-rc));
        return rc;
    }
    rc = ompdsm_send_full(fd, resp, sizeof resp);
    if (!rc)
        rc = ompdsm_read_full(fd, proof, sizeof proof);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    if (rc < 0) {
        snprintf(why, whylen, "%s", rc == -EPIPE
                 ? "the other side closed the connection: it does not hold "
                   "the job's key, or it ended"
                 : strerror(-rc));
        return rc;
    }
    if (ompdsm_auth_confirm(&a, key, proof) < 0) {
        snprintf(why, whylen, "the other side's proof is wrong: it does not "
                 "hold the job's key");
        return -EACCES;
    }
    return 0;
}
