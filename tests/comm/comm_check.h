/* tests/comm/comm_check.h - what comm_check's groups share: the failure
 * macros, the deterministic randomness and byte patterns every check is
 * computed from, the layout of the registered region, the waits with a
 * deadline, the one-host side channel, and each group's entry point (one
 * file a group: comm_check_onesided.c, _atomics.c, _coll.c, _send.c,
 * _threads.c; the driver and these helpers are comm_check.c). */
#ifndef OMPDSM_TESTS_COMM_CHECK_H
#define OMPDSM_TESTS_COMM_CHECK_H

#include "comm/comm.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/* The comm layer alone: this program's one region takes the first free id. */
enum { USER_REG = COMM_REG_FIRST };

extern int rank, nodes;
extern char *user;          /* this node's USER_REG */
extern long failures;       /* this node's failed checks (atomic) */

#define FAIL(...)                                                              \
    do {                                                                       \
        if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < 20) {         \
            char m_[512];                                                      \
            snprintf(m_, sizeof m_, __VA_ARGS__);                              \
            fprintf(stderr, "node %d: FAIL %s:%d: %s\n", rank, __FILE__,       \
                    __LINE__, m_);                                             \
        }                                                                      \
    } while (0)
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            FAIL(__VA_ARGS__);                                                 \
    } while (0)
/* A failing comm call ends the node: its reason is already printed. */
#define OK(call)                                                               \
    do {                                                                       \
        int ok_rc_ = (call);                                                   \
        if (ok_rc_ < 0) {                                                      \
            fprintf(stderr, "node %d: FAIL %s:%d: %s returned %d\n", rank,     \
                    __FILE__, __LINE__, #call, ok_rc_);                        \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* ---- deterministic randomness and byte patterns ---- */

/* Inline: pat() runs once per byte of every checked transfer. */
static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct rng {
    uint64_t s;
};
uint64_t rnd_below(struct rng *r, uint64_t n);
/* Log-uniform in [1, max]: as many small sizes as large ones. */
size_t rnd_size(struct rng *r, size_t max);
struct rng rng_for(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* Byte at absolute offset off of the pattern named seed. */
static inline uint8_t pat(uint64_t seed, uint64_t off)
{
    return (uint8_t)(mix64(seed * 0x100000001b3ull ^ (off >> 3)) >>
                     ((off & 7) * 8));
}
void pat_fill(void *dst, uint64_t seed, uint64_t off, size_t len);
/* Returns the index of the first byte that differs, or -1. */
long pat_cmp(const void *src, uint64_t seed, uint64_t off, size_t len);

/* ---- layout of USER_REG (same on every node) ---- */
enum {
    WIN = 1 << 20,            /* largest transfer; a put window */
    GETAREA_LEN = 2 * WIN,
    NSLOT = 256 * 1024,       /* notify test slot per writer */
    THREADS = 4,
    TSLOT = 1 << 20,          /* threads test slot per (node, thread) */
};
/* 8-byte words */
enum {
    W_ONE = 0,        /* fetch-add: one word, on node 0 */
    W_TOTAL = 1,      /* spread fetch-adds: per-target total */
    W_LOCK = 2,       /* CAS lock (node n-1) */
    W_INSIDE = 3,     /* holders of the lock (must stay <= 1) */
    W_COUNTER = 4,    /* lock-protected counter (node 0) */
    W_BAR = 5,        /* barrier test counter */
    W_TH_FADD = 6,    /* threads test */
    W_TH_CAS = 7,
    W_SPREAD = 64,    /* [n]: per-writer spread fetch-adds */
    W_FLAG = 64 + 4096,      /* [n]: notify flags, per writer */
    W_ACK = 64 + 2 * 4096,   /* [n]: notify acks, per reader */
    W_PB = 64 + 3 * 4096,    /* [n]: put-back flags, per writer */
    W_RO = 64 + 4 * 4096,    /* reply order: the round this node's put is
                                done; then [n] the readers' acks */
    WORDS = 64 + 5 * 4096,
};
extern size_t off_getarea, off_putarea, off_nslot, off_tslot;

uint64_t *word(int w);
uint64_t wload(int w);

/* Control-message tags of every group, distinct: "all" runs the groups in
 * one job, and a handler stays set from one group to the next. */
enum { TAG_DATA = 3, TAG_ECHO = 4, TAG_ECHOED = 5, TAG_PUTBACK = 6, TAG_THREAD = 7 };

/* ---- synchronisation ---- */

void barrier(void);
/* Waits with a deadline, so that a lost message fails with a message
 * instead of hanging until the test's timeout.  Returns 1 when pred came
 * true, 0 (after a FAIL naming what) at the deadline. */
int wait_timed(int (*pred)(void *), void *arg, const char *what);
int wait_ge(const uint64_t *p, uint64_t v, const char *what);

/* A side channel between the nodes of one host, outside the comm layer:
 * node 0's memfd of one word per node, mapped by everyone.  NULL when the
 * nodes are on several hosts. */
extern uint64_t *side;
extern pid_t node0_pid;

/* ---- the groups (comm_check GROUP) ---- */

void group_onesided(void);  /* comm_check_onesided.c */
void group_stream(void);
void group_atomics(void);   /* comm_check_atomics.c */
void group_barrier(void);   /* comm_check_coll.c */
void group_coll(void);
void group_send(void);      /* comm_check_send.c */
void group_threads(void);   /* comm_check_threads.c */

#endif
