/* comm/boot_proto.h - the wire protocol between a node and the launcher
 * (ompdsmrun) that started it: the rendezvous through which nodes learn
 * each other's contact cards, and through which a failing node asks for
 * the whole job to end.
 *
 * ompdsmrun listens on a TCP socket and exports to every node:
 *   OMPDSM_RANK   0..N-1
 *   OMPDSM_SIZE   N
 *   OMPDSM_BOOT   host:port of the launcher's socket
 *   OMPDSM_JOBID  a string unique to the job (for names and messages)
 *   OMPDSM_JOB_KEY the job's secret (comm/util/auth.h)
 * A node that uses the runtime connects to OMPDSM_BOOT, passes the
 * challenge-response of comm/util/auth.h (the launcher, or its host's
 * agent, reads nothing else before it) and sends HELLO; programs that
 * never connect (any executable) are simply run.
 *
 * Every message is a header followed by len bytes, integers in host order
 * (launcher and nodes run the same build on one kind of machine). */
#ifndef OMPDSM_COMM_BOOT_PROTO_H
#define OMPDSM_COMM_BOOT_PROTO_H

#include <stdint.h>

#define BOOT_MAGIC 0x4f4d5042u /* "OMPB" */
#define BOOT_VERSION 2u /* 2: build ids in HELLO, the peer in ABORT */

enum boot_msg_type {
    /* node -> launcher: struct boot_hello */
    BOOT_HELLO = 1,
    /* node -> launcher: this node's bytes for the current allgather round;
     * every node sends the same length in a round.  The launcher answers
     * each node with BOOT_ALLGATHER_RESULT once all N contributed. */
    BOOT_ALLGATHER = 2,
    /* launcher -> node: N * len bytes, rank r's bytes at r * len */
    BOOT_ALLGATHER_RESULT = 3,
    /* node -> launcher: struct boot_abort then a message (no NUL needed);
     * the launcher prints the message once, ends every node, and exits with
     * status (1 if status is 0, unless flags has BOOT_ABORT_EXIT). */
    BOOT_ABORT = 4,
    /* node -> launcher: the node is finishing normally; a close of the
     * connection after this is not a failure. */
    BOOT_FINI = 5,
    /* node -> launcher: struct boot_state, nthreads struct boot_thread,
     * nheld uint64_t lock ids.  Where each thread of the node is now; sent
     * every BOOT_STATE_PERIOD while the node waits, and once whenever it
     * changes otherwise.  The launcher judges deadlock from these and
     * prints them for a status request (docs/diagnostics.md). */
    BOOT_STATE = 6,
    /* node -> launcher: struct boot_sample, once a second, only when the
     * launcher asked (OMPDSM_MONITOR=1, ompdsmrun --monitor). */
    BOOT_SAMPLE = 7,
};

struct boot_hdr {
    uint32_t type;
    uint32_t len;
};

/* magic and version come first in every version, so that a launcher can
 * tell a node of another version by them. */
struct boot_hello {
    uint32_t magic;
    uint32_t version;
    int32_t rank;
    int32_t size;
    int32_t pid;
    uint32_t pad;
    /* The node's build: the build ids of its executable and of the object
     * holding libompdsm (comm/card.h), and their files, NUL-terminated;
     * all empty for a node without libompdsm.  The launcher refuses a node
     * whose ids differ from node 0's before any node connects to another. */
    char exe_id[48];
    char lib_id[48];
    char exe_path[256];
    char lib_path[256];
};

struct boot_abort {
    int32_t status;
    uint32_t flags;  /* BOOT_ABORT_* */
    int32_t peer;    /* with BOOT_ABORT_LINK: the node lost; else -1 */
    int32_t by;      /* and the node that lost it (the sender, or the
                      * node that told it); else -1 */
};
/* The status is the program's own exit status (exit() inside a parallel
 * region), so 0 ends the job with status 0 instead of reading as a
 * failure without a status. */
#define BOOT_ABORT_EXIT 1u
/* Node `by` lost node `peer` through the network (no answer within
 * OMPDSM_TCP_TIMEOUT_S, or no route), not by the peer closing its
 * connections; the message says what happened without the hosts: the
 * launcher, which knows whether peer still runs, names both hosts and
 * says the network between them failed. */
#define BOOT_ABORT_LINK 2u

enum { BOOT_STATE_THREADS_MAX = 64, BOOT_STATE_HELD_MAX = 64 };

struct boot_state {
    uint32_t blocked;     /* every thread of the node waits in the runtime */
    uint32_t deadlock_ms; /* the node's OMPDSM_DEADLOCK_S; 0: off */
    uint32_t period_ms;   /* how often it reports while it waits */
    uint32_t nthreads;    /* struct boot_thread entries that follow */
    uint32_t nheld;       /* then this many lock ids the node holds */
    uint32_t still_ms;    /* by the node's own clock, how long it has been
                           * blocked with moves, tx, rx and progress all
                           * unchanged (0: not blocked, or just changed) */
    uint64_t tx, rx;      /* comm_traffic() */
    uint64_t moves;       /* changes of any thread's wait so far */
    uint64_t progress;    /* work completed so far: locks granted, pages
                           * fetched, barriers and forks met, diffs made and
                           * applied, lazy releases, atomics, tasks */
};

struct boot_thread {
    uint32_t waiting;     /* 0: running (not waiting in the runtime) */
    uint32_t has_lock;    /* lock below is the lock id waited for */
    uint64_t lock;
    uint64_t pc;          /* a code address of the program (its file's
                           * offset for a position-independent one) to
                           * turn into file:line; 0 if none */
    uint64_t waited_ms;   /* how long it has waited */
    char what[96];        /* "barrier", "omp_set_lock(lock 3)" */
    char where[160];      /* "foo.c:42" when the node knows it */
};

/* Counters since the node started (times in ns of its monotonic clock). */
struct boot_sample {
    uint64_t t_ns;
    uint64_t barrier_ns, lock_ns, fault_ns;
    uint64_t faults;      /* read and write faults */
    uint64_t bytes;       /* put, get and sent bytes */
};

#define BOOT_STATE_MAX                                                         \
    (sizeof(struct boot_state) +                                               \
     BOOT_STATE_THREADS_MAX * sizeof(struct boot_thread) +                     \
     BOOT_STATE_HELD_MAX * sizeof(uint64_t))

/* Largest message accepted (an allgather result of 4096 nodes x 16 KiB). */
#define BOOT_MSG_MAX (64u * 1024 * 1024)

#endif
