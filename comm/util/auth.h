/* comm/util/auth.h - the job's secret and the challenge-response that
 * every bootstrap connection (node to launcher or agent) and every tcp
 * transport connection (node to node) starts with, before anything else
 * is read from it.  docs/design.md, "Who may connect", says why and how.
 *
 * The launcher (or, under PMIx, node 0) draws a key of OMPDSM_KEY_LEN
 * random bytes per job; nodes get it as OMPDSM_JOB_KEY (hex).  On each
 * connection, the side that accepted it sends a challenge (a tag and its
 * fresh nonce); the side that connected answers with a fresh nonce of its
 * own and an HMAC-SHA256 under the key of both nonces; the acceptor checks
 * it and answers with its own HMAC of both nonces, which the connector
 * checks.  Labels in the HMACs tell the two directions and the two kinds
 * of connection apart, and fresh nonces on both sides make a recorded
 * handshake worthless on another connection.  Nothing after the handshake
 * is authenticated: it keeps out whoever does not hold the key, not an
 * attacker who can rewrite the traffic of a connection already made. */
#ifndef OMPDSM_COMM_UTIL_AUTH_H
#define OMPDSM_COMM_UTIL_AUTH_H

#include <stddef.h>
#include <stdint.h>

enum {
    OMPDSM_KEY_LEN = 32,
    OMPDSM_NONCE_LEN = 32,
    OMPDSM_MAC_LEN = 32,
    OMPDSM_AUTH_TAG_LEN = 8,
    /* acceptor -> connector: tag, the acceptor's nonce */
    OMPDSM_AUTH_CHALLENGE_LEN = OMPDSM_AUTH_TAG_LEN + OMPDSM_NONCE_LEN,
    /* connector -> acceptor: the connector's nonce, its HMAC */
    OMPDSM_AUTH_RESPONSE_LEN = OMPDSM_NONCE_LEN + OMPDSM_MAC_LEN,
    /* acceptor -> connector: the acceptor's HMAC */
    OMPDSM_AUTH_PROOF_LEN = OMPDSM_MAC_LEN,
    /* How long an accepted connection may take to answer the challenge. */
    OMPDSM_AUTH_TIMEOUT_MS = 10000,
};

/* The variable that carries the key to a node, in hex. */
#define OMPDSM_KEY_VAR "OMPDSM_JOB_KEY"

/* Which connections a handshake is for: a bootstrap answer cannot be
 * replayed on a tcp transport connection, nor the other way round. */
enum ompdsm_auth_kind { OMPDSM_AUTH_BOOT = 1, OMPDSM_AUTH_TCP = 2 };

/* A new random key (getrandom); 0 or -errno. */
int ompdsm_key_new(unsigned char key[OMPDSM_KEY_LEN]);
/* The key as 2 * OMPDSM_KEY_LEN hex digits and a NUL. */
void ompdsm_key_hex(const unsigned char key[OMPDSM_KEY_LEN],
                    char hex[2 * OMPDSM_KEY_LEN + 1]);
/* Reads a key from 2 * OMPDSM_KEY_LEN hex digits; 0 or -EINVAL. */
int ompdsm_key_parse(const char *hex, unsigned char key[OMPDSM_KEY_LEN]);
/* Reads OMPDSM_JOB_KEY, then overwrites its value in place and removes it
 * from the environment, so that the program's children do not inherit it
 * and /proc/PID/environ no longer shows it.  1 with the key, 0 when the
 * variable is not set, -EINVAL when it is not 64 hex digits. */
int ompdsm_key_from_env(unsigned char key[OMPDSM_KEY_LEN]);

/* One handshake, either side. */
struct ompdsm_auth {
    enum ompdsm_auth_kind kind;
    unsigned char nonce_a[OMPDSM_NONCE_LEN]; /* the acceptor's */
    unsigned char nonce_c[OMPDSM_NONCE_LEN]; /* the connector's */
};

/* Acceptor: draws its nonce and writes the challenge; 0 or -errno. */
int ompdsm_auth_challenge(struct ompdsm_auth *a, enum ompdsm_auth_kind kind,
                          unsigned char out[OMPDSM_AUTH_CHALLENGE_LEN]);
/* Acceptor: checks the connector's response to a's challenge; 0 with the
 * proof to send back in proof, or -EACCES (not the job's key, or not an
 * answer to this challenge). */
int ompdsm_auth_accept(struct ompdsm_auth *a,
                       const unsigned char key[OMPDSM_KEY_LEN],
                       const unsigned char in[OMPDSM_AUTH_RESPONSE_LEN],
                       unsigned char proof[OMPDSM_AUTH_PROOF_LEN]);
/* Connector: answers a challenge; 0, -EPROTO when it is no challenge of
 * this protocol, or -errno. */
int ompdsm_auth_respond(struct ompdsm_auth *a, enum ompdsm_auth_kind kind,
                        const unsigned char key[OMPDSM_KEY_LEN],
                        const unsigned char in[OMPDSM_AUTH_CHALLENGE_LEN],
                        unsigned char out[OMPDSM_AUTH_RESPONSE_LEN]);
/* Connector: checks the acceptor's proof; 0 or -EACCES. */
int ompdsm_auth_confirm(const struct ompdsm_auth *a,
                        const unsigned char key[OMPDSM_KEY_LEN],
                        const unsigned char proof[OMPDSM_AUTH_PROOF_LEN]);

/* The acceptor's side on a non-blocking socket, for event loops: start
 * sends the challenge, step reads what has come of the response (never
 * more) and, once it is whole and right, sends the proof.  The caller
 * gives up on a connection still unanswered at deadline_ns
 * (ompdsm_now_ns() time). */
struct ompdsm_auth_srv {
    struct ompdsm_auth a;
    unsigned char buf[OMPDSM_AUTH_RESPONSE_LEN];
    size_t got;
    uint64_t deadline_ns;
};
/* 0, or -errno with why. */
int ompdsm_auth_srv_start(struct ompdsm_auth_srv *s, int fd,
                          enum ompdsm_auth_kind kind, char *why, size_t whylen);
/* 1: authenticated (the proof is sent); 0: more is needed; -errno: the
 * connection must be closed, why says what it did (empty when it closed
 * without sending a byte: nothing to report). */
int ompdsm_auth_srv_step(struct ompdsm_auth_srv *s, int fd,
                         const unsigned char key[OMPDSM_KEY_LEN], char *why,
                         size_t whylen);

/* Whether s's connection missed its deadline by now_ns: 1 with why (close
 * it); else 0, and *next lowered to its deadline when that is sooner (0:
 * none yet), for the caller's next wake-up. */
int ompdsm_auth_srv_expired(const struct ompdsm_auth_srv *s, uint64_t now_ns,
                            uint64_t *next, char *why, size_t whylen);

/* The connector's whole handshake on a blocking socket fd, each read
 * bounded by timeout_ms: 0, or -errno with a one-line reason in why
 * (-EACCES: the other side does not hold the key). */
int ompdsm_auth_client(int fd, enum ompdsm_auth_kind kind,
                       const unsigned char key[OMPDSM_KEY_LEN], int timeout_ms,
                       char *why, size_t whylen);

#endif
