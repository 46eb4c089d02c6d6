/* comm/boot.c - bootstrap: how a node learns its rank, the job size,
 * the job's key and every other node's contact card.  Three ways, tried in
 * order:
 *   ompdsmrun  OMPDSM_RANK/OMPDSM_SIZE/OMPDSM_BOOT set: talk to the
 *              launcher (or this host's agent) over TCP, after the
 *              challenge-response of comm/util/auth.h with OMPDSM_JOB_KEY
 *              (comm/boot_proto.h);
 *   PMIx       started by mpirun or srun --mpi=pmix (boot_pmix.c);
 *   single     nothing set: a job of one node (running ./prog directly). */
#include "transport.h"
#include "boot.h"
#include "card.h"
#include "util/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum boot_kind { BOOT_NONE, BOOT_LAUNCHER, BOOT_PMIX, BOOT_SINGLE };

static struct {
    enum boot_kind kind;
    int fd;                 /* connection to the launcher */
    int rank, size;
    uint32_t local_addr;    /* our end of the launcher connection */
    pthread_mutex_t lock;   /* one message at a time on fd */
    unsigned char key[OMPDSM_KEY_LEN]; /* the job's key, when has_key */
    int has_key;
} boot = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* How long the launcher may take to send its challenge and its proof. */
enum { BOOT_AUTH_WAIT_MS = 30000 };

/* ompdsm_send_full: a launcher that went away must not kill us with
 * SIGPIPE while we try to tell it we are failing. */
static int send_all(const void *p, size_t len)
{
    return ompdsm_send_full(boot.fd, p, len);
}

static int send_msg(uint32_t type, const void *a, size_t alen, const void *b,
                    size_t blen)
{
    struct boot_hdr h = {type, (uint32_t)(alen + blen)};
    int rc = send_all(&h, sizeof h);
    if (!rc && alen)
        rc = send_all(a, alen);
    if (!rc && blen)
        rc = send_all(b, blen);
    return rc;
}

static int connect_launcher(const char *spec)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host) {
        ompdsm_err("OMPDSM_BOOT='%s' is not host:port", spec);
        return -EINVAL;
    }
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    int e = getaddrinfo(host, colon + 1, &hints, &res);
    if (e) {
        ompdsm_err("OMPDSM_BOOT='%s': %s", spec, gai_strerror(e));
        return -EINVAL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
        e = errno;
        ompdsm_err("cannot reach the launcher at %s: %s", spec, strerror(e));
        freeaddrinfo(res);
        if (fd >= 0)
            close(fd);
        return -e;
    }
    freeaddrinfo(res);
    char why[256];
    int rc = ompdsm_auth_client(fd, OMPDSM_AUTH_BOOT, boot.key,
                                BOOT_AUTH_WAIT_MS, why, sizeof why);
    if (rc < 0) {
        ompdsm_err("bootstrap: the launcher at %s did not pass the job's "
                   "authentication: %s", spec, why);
        close(fd);
        return rc;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in sa = {0};
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        boot.local_addr = sa.sin_addr.s_addr;
    boot.fd = fd;
    return 0;
}

int comm_boot_init(int *rank, int *size)
{
    const char *r = getenv("OMPDSM_RANK");
    const char *s = getenv("OMPDSM_SIZE");
    const char *b = getenv("OMPDSM_BOOT");
    if (r && *r) {
        uint64_t rr, ss;
        if (!s || ompdsm_parse_u64(r, 0, &rr) < 0 ||
            ompdsm_parse_u64(s, 0, &ss) < 0 || ss < 1 || ss > 65536 || rr >= ss)
            ompdsm_fatal("OMPDSM_RANK='%s' OMPDSM_SIZE='%s' are not a valid "
                         "rank and job size", r, s ? s : "(unset)");
        boot.rank = (int)rr;
        boot.size = (int)ss;
        ompdsm_log_rank = boot.rank;
        if (!b || !*b) {
            if (ss != 1)
                ompdsm_fatal("OMPDSM_SIZE=%s but OMPDSM_BOOT is not set: start "
                             "multi-node jobs with ompdsmrun", s);
            boot.kind = BOOT_SINGLE;
        } else {
            int rc = ompdsm_key_from_env(boot.key);
            if (rc <= 0)
                ompdsm_fatal("OMPDSM_BOOT is set but %s: the launcher hands "
                             "every node the job's key (start multi-node "
                             "jobs with ompdsmrun)", rc ? "OMPDSM_JOB_KEY is "
                             "not 64 hex digits" : "OMPDSM_JOB_KEY is not");
            boot.has_key = 1;
            if ((rc = connect_launcher(b)) < 0)
                return rc;
            /* The launcher checks every node's build against node 0's
             * before any of them connects to another. */
            struct boot_hello h = {BOOT_MAGIC, BOOT_VERSION, boot.rank,
                                   boot.size, (int32_t)getpid(), 0};
            comm_build_ids(h.exe_id, h.lib_id, h.exe_path, sizeof h.exe_path,
                           h.lib_path, sizeof h.lib_path);
            if ((rc = send_msg(BOOT_HELLO, &h, sizeof h, NULL, 0)) < 0) {
                ompdsm_err("bootstrap: hello to the launcher: %s",
                           strerror(-rc));
                return rc;
            }
            boot.kind = BOOT_LAUNCHER;
        }
    } else {
        int rc = comm_boot_pmix_init(&boot.rank, &boot.size);
        if (rc == 0)
            boot.kind = BOOT_PMIX;
        else if (rc == -ENOSYS) {
            boot.kind = BOOT_SINGLE;
            boot.rank = 0;
            boot.size = 1;
        } else
            return rc;
    }
    *rank = boot.rank;
    *size = boot.size;
    if (!boot.has_key)
        ompdsm_key_from_env(boot.key); /* a stray one: out of the environment */
    OMPDSM_TRACE(OMPDSM_TR_BOOT, "bootstrap %d: rank %d size %d", boot.kind,
                 boot.rank, boot.size);
    return 0;
}

int comm_boot_answer_check(const struct boot_hdr *h, size_t len, int size)
{
    if (h->type != BOOT_ALLGATHER_RESULT ||
        h->len != (uint64_t)len * (uint64_t)size) {
        ompdsm_err("bootstrap: unexpected answer from the launcher (type %u, "
                   "%u bytes)", h->type, h->len);
        return -EPROTO;
    }
    return 0;
}

int comm_boot_allgather(const void *mine, size_t len, void *all)
{
    switch (boot.kind) {
    case BOOT_SINGLE:
        memcpy(all, mine, len);
        return 0;
    case BOOT_PMIX:
        return comm_boot_pmix_allgather(mine, len, all);
    case BOOT_LAUNCHER:
        break;
    default:
        return -EINVAL;
    }
    pthread_mutex_lock(&boot.lock);
    int rc = send_msg(BOOT_ALLGATHER, mine, len, NULL, 0);
    struct boot_hdr h = {0, 0}; /* (cppcheck cannot see rc guard its use) */
    if (!rc)
        rc = ompdsm_read_full(boot.fd, &h, sizeof h);
    if (!rc)
        rc = comm_boot_answer_check(&h, len, boot.size);
    if (!rc)
        rc = ompdsm_read_full(boot.fd, all, h.len);
    pthread_mutex_unlock(&boot.lock);
    if (rc < 0 && rc != -EPROTO)
        ompdsm_err("bootstrap: exchange with the launcher failed: %s",
                   rc == -EPIPE ? "launcher closed the connection"
                                : strerror(-rc));
    return rc;
}

int comm_report(uint32_t type, const void *buf, size_t len)
{
    if (boot.kind != BOOT_LAUNCHER || boot.fd < 0)
        return -ENOTSUP;
    if (len > BOOT_STATE_MAX)
        return -EMSGSIZE;
    if (pthread_mutex_trylock(&boot.lock) != 0)
        return -EAGAIN;
    if (boot.fd < 0) {
        pthread_mutex_unlock(&boot.lock);
        return -ENOTSUP;
    }
    /* One send for header and body: a stopped launcher with a full socket
     * costs us a skipped report, not a thread stuck holding the lock. */
    unsigned char msg[sizeof(struct boot_hdr) + BOOT_STATE_MAX];
    struct boot_hdr h = {type, (uint32_t)len};
    memcpy(msg, &h, sizeof h);
    memcpy(msg + sizeof h, buf, len);
    size_t total = sizeof h + len, done = 0;
    int rc = 0;
    ssize_t n;
    do
        n = send(boot.fd, msg, total, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        rc = errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
    else
        done = (size_t)n;
    /* Part of it went: the rest must follow, or the stream is broken. */
    if (!rc && done < total) {
        rc = send_all(msg + done, total - done);
    }
    pthread_mutex_unlock(&boot.lock);
    return rc;
}

const unsigned char *comm_boot_key(void)
{
    if (boot.kind == BOOT_PMIX && !boot.has_key &&
        comm_boot_pmix_key(boot.key) == 0)
        boot.has_key = 1;
    return boot.has_key ? boot.key : NULL;
}

uint32_t comm_boot_local_addr(void)
{
    return boot.local_addr;
}

int comm_boot_fd(void)
{
    return boot.fd;
}

int comm_boot_abort(int status, int link_by, int link_peer,
                    const char *link_what, const char *msg)
{
    if (boot.kind == BOOT_PMIX) {
        /* PMIx_Abort prints nothing of ours reliably: print it too. */
        ompdsm_err("%s", msg);
        comm_boot_pmix_abort(status, msg);
        return 0;
    }
    if (boot.kind != BOOT_LAUNCHER || boot.fd < 0)
        return -1;
    /* Never wait long for the lock: we may be failing inside a holder. */
    for (int i = 0; i < 1000; i++) {
        if (pthread_mutex_trylock(&boot.lock) == 0) {
            /* Status 0 is asked for only by the program's exit(0): a
             * failure always has a non-zero status. */
            struct boot_abort a = {status, status == 0 ? BOOT_ABORT_EXIT : 0,
                                   -1, -1};
            if (link_peer >= 0) {
                a.flags |= BOOT_ABORT_LINK;
                a.peer = link_peer;
                a.by = link_by;
                msg = link_what;
            }
            int rc = send_msg(BOOT_ABORT, &a, sizeof a, msg, strlen(msg));
            pthread_mutex_unlock(&boot.lock);
            return rc < 0 ? -1 : 0;
        }
        usleep(1000);
    }
    return -1;
}

void comm_boot_fini(void)
{
    if (boot.kind == BOOT_PMIX) {
        comm_boot_pmix_fini();
    } else if (boot.kind == BOOT_LAUNCHER && boot.fd >= 0) {
        pthread_mutex_lock(&boot.lock);
        send_msg(BOOT_FINI, NULL, 0, NULL, 0);
        close(boot.fd);
        boot.fd = -1;
        pthread_mutex_unlock(&boot.lock);
    }
    boot.kind = BOOT_NONE;
}
