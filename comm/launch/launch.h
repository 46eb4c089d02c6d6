/* comm/launch/launch.h - the interface between the files of ompdsmrun, the
 * launcher: options (opts.c), hosts and mapping (hosts.c), the multi-host
 * plan (plan.c), starting nodes (spawn.c), stdio relay (relay.c) and its
 * output queues (outq.c), the bootstrap server (bootsrv.c) and its door
 * (door.c, shared with the agents' agboot.c), the agents on
 * other hosts (link.c for their parent's side, setup.c for their orders,
 * agent.c for ompdsmrun --agent) and the job's event loop and failure handling (ompdsmrun.c).
 *
 * One thread, the poll loop, owns every structure here, and signals arrive
 * through a signalfd, so nothing here needs a lock.  The only other threads
 * are outq.c's writers, which touch nothing but their own queues. */
#ifndef OMPDSM_COMM_LAUNCH_H
#define OMPDSM_COMM_LAUNCH_H

#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "comm/boot_proto.h"
#include "comm/util/auth.h"

#define LAUNCH_MAX_NP 4096
/* A line longer than this is relayed in pieces. */
#define LAUNCH_LINE_MAX ((size_t)64 * 1024)
/* SIGTERM to SIGKILL when ending a job (docs/ompdsmrun.md promises at
 * most 2 s). */
#define LAUNCH_GRACE_S 2.0
/* launch_fail_quiet: SIGSTOP to SIGTERM, time for the stop to reach the
 * nodes of every host through their agents. */
#define LAUNCH_QUIET_S 0.5
/* How long a lost bootstrap connection waits for the node's exit status, so
 * that a crash is reported as the crash rather than as the lost socket. */
#define LAUNCH_LOST_WAIT_S 0.5
/* How long output is still drained once every node has been reaped (a
 * grandchild may hold a pipe open forever). */
#define LAUNCH_DRAIN_S 1.0
#define LAUNCH_DRAIN_FAILED_S 0.3
/* How long queued output may take to drain when the job failed (a normal
 * end waits for the reader, like any program). */
#define LAUNCH_OUT_FLUSH_FAILED_S 1.0
/* Longest ABORT message accepted. */
#define LAUNCH_ABORT_MSG_MAX ((size_t)64 * 1024)
/* Exit status of a job ended because it deadlocked (docs/ompdsmrun.md). */
#define LAUNCH_DEADLOCK_STATUS 125

/* ---- options (opts.c) ---- */
enum launch_bind {
    LAUNCH_BIND_AUTO, /* core when N <= CPUs of our affinity mask, else none */
    LAUNCH_BIND_CORE,
    LAUNCH_BIND_NONE,
};

enum launch_action {
    LAUNCH_RUN, LAUNCH_HELP, LAUNCH_VERSION, LAUNCH_AGENT, LAUNCH_STATUS,
};

enum launch_map { LAUNCH_MAP_SLOT, LAUNCH_MAP_NODE };

#define LAUNCH_MAX_XVARS 256
#define LAUNCH_MAX_TPN 256 /* --threads-per-node (RT_MAX_TPN) */
/* Longest host name, user@ included. */
#define LAUNCH_HOST_MAX 256

struct launch_opts {
    enum launch_action action;
    int np;                /* number of nodes, 1..LAUNCH_MAX_NP; 0: not
                            * given (every slot of the hosts) */
    const char *hostfile;  /* --hostfile; NULL if none */
    const char *hostlist;  /* -H; NULL if none */
    enum launch_map map_by;
    int npernode;          /* 0: no limit */
    int oversubscribe;
    const char *xvars[LAUNCH_MAX_XVARS]; /* -x: "VAR" or "VAR=value" */
    int nxvars;
    enum launch_bind bind;
    double timeout;        /* seconds; 0 = none */
    int tag_output;        /* prefix each relayed line with "[node K] " */
    const char *status_of; /* --status PID; NULL: the only job */
    int monitor;           /* --monitor: live bars (or monitor_file) */
    const char *monitor_file; /* --monitor=FILE: JSON lines */
    char **prog_argv;      /* points into argv: program, its args, NULL */
    int prog_argc;
    int threads_per_node;  /* --threads-per-node: 0 not given, -1 auto */
};

/* Writes a one-line reason (no prefix, no newline) into err and returns
 * -EINVAL: how the parsers and the planner (opts.c, hosts.c, plan.c) fail. */
int launch_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Parses ompdsmrun's command line (argv[0] is ompdsmrun).  Returns 0, or
 * -EINVAL with a one-line reason (no prefix, no newline) in err.  Nothing
 * after the program name is looked at. */
int launch_parse_opts(int argc, char **argv, struct launch_opts *o, char *err,
                      size_t errlen);
/* Finds an executable like execvp does: names with a '/' as given, others
 * in $PATH (default /bin:/usr/bin).  Returns 0 with a malloc'd path in
 * *path, or -ENOENT/-EACCES/-EISDIR/-ENOMEM with a reason in err. */
int launch_find_program(const char *name, char **path, char *err,
                        size_t errlen);
/* The --help text. */
extern const char launch_usage[];

/* ---- hosts (hosts.c) ---- */
struct launch_host {
    char *name;        /* as given: [user@]host */
    int slots;
    int nnodes;        /* nodes mapped here */
    int *ranks;        /* their ranks, in local-rank order */
};

struct launch_hosts {
    struct launch_host *h;
    int n;
};

/* Parse a hostfile's text / an -H list.  0, or -EINVAL with one line in
 * err (hostfile errors start with "FILE:LINE: "). */
int launch_parse_hostfile(const char *text, const char *fname,
                          struct launch_hosts *hs, char *err, size_t errlen);
int launch_parse_hostlist(const char *list, struct launch_hosts *hs,
                          char *err, size_t errlen);
/* The hosts of o (none: hs->n == 0); reads the hostfile. */
int launch_load_hosts(const struct launch_opts *o, struct launch_hosts *hs,
                      char *err, size_t errlen);
/* Maps *np nodes (0: every slot, or -npernode per host) onto the hosts
 * as o says; sets *np, each host's ranks, and a malloc'd rank -> host
 * index array in *node_host.  0 or -EINVAL with the reason in err. */
int launch_map_nodes(struct launch_hosts *hs, const struct launch_opts *o,
                     int *np, int **node_host, char *err, size_t errlen);
void launch_hosts_free(struct launch_hosts *hs);
/* Splits hosts[0..n) into at most fanout groups; for each, calls fn with
 * the group's first host (an agent to start) and the rest (its subtree). */
void launch_tree_split(const int *hosts, int n, int fanout,
                       void (*fn)(void *arg, int host, const int *sub,
                                  int nsub),
                       void *arg);

/* ---- stdio relay (relay.c) ---- */
/* One pipe from a node (its stdout or stderr) to ours. */
struct relay_stream {
    int fd;            /* our read end; -1 after EOF */
    int out;           /* 1 or 2: the launcher's descriptor it goes to */
    int at_line_start; /* the next byte begins a line (gets the tag) */
    char *pend;        /* the partial line read so far */
    size_t pend_len, pend_cap;
};

/* ---- the door of a bootstrap socket (door.c) ---- */
/* Connections that may wait for the job key's handshake at once. */
#define LAUNCH_DOOR_MAX 256

/* An accepted connection that has not passed the handshake; fd -1: a
 * free slot. */
struct launch_door_wait {
    int fd;
    char peer[96];         /* "addr:port" */
    struct ompdsm_auth_srv auth;
};

struct launch_door {
    int listen_fd;         /* the bootstrap socket, or -1 */
    const unsigned char *key; /* the job's */
    char who[LAUNCH_HOST_MAX + 32]; /* "bootstrap", "host H: bootstrap" */
    /* Writes one line about a refused connection (ours: stderr; an
     * agent's: AG_LOG to the launcher). */
    void (*log)(const char *line, size_t len);
    /* Takes a connection that passed, with its address. */
    void (*admit)(void *arg, int fd, const char *peer);
    void *arg;
    struct launch_door_wait *w;
    size_t nw;             /* slots */
    int waiting;           /* slots in use */
};

struct launch_pollset;
/* The poll set's entries: the socket (LFD_LISTEN) and the waiting
 * connections (LFD_DOOR, the slot as idx). */
void launch_door_add_fds(struct launch_door *d, struct launch_pollset *ps);
/* Accepts (LFD_LISTEN) or reads a waiting connection (LFD_DOOR); 0, or
 * -errno when accept failed for good (EMFILE and friends: the socket
 * would stay readable for ever and the caller must end the job). */
int launch_door_event(struct launch_door *d, int kind, int idx);
/* Accepts what waits in the backlog and reads every waiting connection
 * (before a node's exit is judged, its connection may be among them); as
 * launch_door_event. */
int launch_door_pump(struct launch_door *d);
/* Refuses the connections past their deadline; the ms until the next
 * deadline, or -1. */
int launch_door_expire(struct launch_door *d, double now);
void launch_door_close(struct launch_door *d);

/* ---- bootstrap server (bootsrv.c) ---- */
/* A message shared by the send queues of several connections: an allgather
 * result goes to every node from one buffer. */
struct boot_blob {
    size_t refs;
    size_t len;            /* bytes in data, header included */
    unsigned char data[];  /* struct boot_hdr then the payload */
};

struct boot_out {
    struct boot_blob *blob;
    size_t off;            /* bytes of blob already sent */
    struct boot_out *next;
};

struct boot_conn {
    int fd;                /* -1: slot free */
    int rank;              /* -1 until HELLO */
    char peer[96];         /* "addr:port" for messages before HELLO */
    struct boot_hdr hdr;   /* header being received */
    size_t hdr_got;
    unsigned char *body;   /* where the body goes (maybe inside a blob) */
    int body_owned;        /* body is ours to free */
    size_t body_got;
    struct boot_out *outq, *outq_tail;
    int fini;              /* sent BOOT_FINI */
};

struct boot_srv {
    struct launch_door door;   /* the socket, and who waits at it */
    int accepted;              /* connections admitted (OMPDSM_TRACE=boot) */
    int via_frames, via_cards; /* AG_GATHER frames and the cards in them */
    char addr[96];             /* advertised host:port (OMPDSM_BOOT) */
    struct boot_conn *conns;   /* slots; fd -1 when free */
    size_t nconns;
    unsigned round;            /* current allgather round, from 0 */
    int contributed;           /* nodes whose bytes for it fully arrived */
    int round_started;         /* someone announced a length */
    int round_first;           /* rank that fixed round_len */
    uint32_t round_len;
    struct boot_blob *result;  /* the round's answer being filled */
};

/* ---- agents: ompdsmrun --agent on other hosts (link.c, agent.c) ----
 * The launcher starts one agent per remote host with $OMPDSM_RSH (ssh)
 * and talks to it over the rsh's stdin and stdout: frames of struct
 * agent_hdr then len bytes.  With more hosts than the fan-out, an agent
 * also starts the agents of its subtree and passes their frames up and
 * the launcher's down (docs/cluster.md). */
enum agent_msg {
    AG_SETUP = 1,  /* down: the agent's part of the job (link.c encodes) */
    AG_SIGNAL,     /* down: int32 signal, int32 also to the process group */
    AG_STARTED,    /* up: rank's node was exec'd; int32 pid */
    AG_OUT,        /* up: bytes of rank's stdout */
    AG_ERR,        /* up: bytes of rank's stderr */
    AG_EXIT,       /* up: int32 wait status; -1: lost with its agent */
    AG_FAIL,       /* up: int32 exit status then one line (no newline):
                    * the agent could not do its part; the job ends */
    AG_LOG,        /* up: whole lines an agent wrote on its stderr */
    /* The bootstrap of the nodes behind an agent goes through it (agboot.c):
     * they connect to their own host's agent, never to the launcher. */
    AG_BOOT,       /* up: uint32 boot_msg_type then the message's body, as
                    * rank's node sent it to its agent; or AG_BOOT_CLOSED
                    * alone: its bootstrap connection closed */
    AG_GATHER,     /* up: one allgather round's contributions of every node
                    * of the agent's subtree: entries of int32 rank, uint32
                    * len, then len bytes */
    AG_GATHER_RESULT, /* down: the round's answer, every node's bytes in
                    * rank order (the body of BOOT_ALLGATHER_RESULT) */
    /* Our stdin to node 0 on another host (relay.c), down the agents on
     * its path; the launcher keeps at most LAUNCH_LINE_MAX bytes unwritten
     * to node 0's pipe, as it does for a local node 0. */
    AG_STDIN,      /* down: bytes for node 0's stdin; none: EOF */
    AG_STDIN_ACK,  /* up: uint32 bytes written to node 0's stdin, uint32 1
                    * if its stdin is closed (no more is wanted) */
};

#define AG_BOOT_CLOSED 0x10000u

struct agent_hdr {
    uint32_t type;
    int32_t rank;  /* the node it is about; -1 for none */
    uint32_t len;
    uint32_t pad;
};

/* The first bytes an agent writes on stdout, before any frame: whatever a
 * remote shell printed before them (an rc file's echo) is skipped. */
#define AGENT_SYNC "\nompdsm-agent-frames-1\n"

/* Largest frame accepted (a SETUP carries the environment; AG_GATHER and
 * AG_GATHER_RESULT carry up to a whole allgather answer). */
#define AGENT_MSG_MAX (BOOT_MSG_MAX + 8u * LAUNCH_MAX_NP)
/* Default fan-out of the agent tree (OMPDSM_LAUNCH_FANOUT). */
#define LAUNCH_FANOUT_DEFAULT 32
#define LAUNCH_FANOUT_MAX 4096

/* An agent this process started (the launcher: the first fan-out remote
 * hosts; an agent: the first hosts of its subtree's groups). */
struct launch_link {
    int host;              /* its host, index in job->hosts */
    int *sub;              /* hosts its agent starts in turn */
    int nsub;
    int *ranks;            /* every node of its subtree */
    unsigned char *exited; /* per ranks[] entry: AG_EXIT went through */
    int nranks, nexited;
    pid_t pid;             /* the rsh process */
    int reaped, wstatus;
    int to_fd, from_fd, err_fd; /* its stdin, stdout (frames), stderr */
    unsigned char *tx;     /* frames not yet written to to_fd */
    size_t tx_len, tx_off, tx_cap;
    unsigned char *rx;     /* bytes read from from_fd, not yet a frame */
    size_t rx_len, rx_cap;
    char *eline;           /* partial line read from err_fd */
    size_t eline_len;
    char last[256];        /* its last stderr line (for a failure) */
    char *held;            /* stderr lines before its first frame: shown
                            * only if it runs (an rsh failure is one line) */
    size_t held_len;
    int synced;            /* AGENT_SYNC seen on from_fd */
    int talked;            /* a frame arrived: the agent runs */
    double gone_at;        /* >0: from_fd closed or rsh reaped then */
    int done;              /* finished or lost: nothing more to expect */
};

/* ---- the job ---- */
struct launch_node {
    int rank;
    int host;             /* index in job->hosts; 0 without hosts */
    int local_rank;       /* among the nodes of its host */
    int link;             /* index in job->links reaching it; -1: ours */
    int lost;             /* its agent went away: status unknown */
    pid_t pid;
    int reaped;
    int wstatus;
    struct relay_stream out, err;
    int conn;             /* index in boot.conns, -1 if none (or closed) */
    int vconn;            /* its bootstrap connection is open at its agent */
    int hello;            /* identified itself on the bootstrap socket */
    int fini;             /* sent BOOT_FINI */
    int gathered;         /* announced bytes for the current round */
    double suspect_at;    /* >0: lost or exited without FINI since then */
    int exit_pending;     /* exited abnormally with its bootstrap connection
                           * still open: judged once that closes (an ABORT
                           * from another host may still be on its way) */
    double reaped_at;     /* when it was reaped (an agent drains its
                           * output for LAUNCH_DRAIN_S at most) */
    struct boot_sample mon[2]; /* its last two samples (--monitor) */
    int nmon;
    int mon_written;      /* mon[1] is in the --monitor file */
    double mon_at;        /* when mon[1] arrived */
    unsigned char *diag;  /* its last BOOT_STATE body (diag.c), or NULL */
    size_t diag_len;
    double diag_at;       /* when it came */
    double diag_since;    /* >0: it has waited, unchanged, since then */
    struct boot_hello *build; /* its HELLO (build ids and files), or NULL */
};

enum stdin_state {
    STDIN_ACTIVE,  /* relaying */
    STDIN_PAUSED,  /* stdin is our terminal and we are in the background */
    STDIN_DONE,    /* EOF, node 0 gone or closed its stdin */
};

struct launch_job {
    struct launch_opts opts;
    struct launch_hosts hosts; /* --hostfile or -H; none: n == 0.  In an
                              * agent: its own host first, then the hosts
                              * of its subtree */
    int *node_host;          /* rank -> index in hosts (with hosts) */
    int agent;               /* this process is ompdsmrun --agent */
    int remote;              /* some nodes run on other hosts */
    int size;                /* nodes in the whole job (n in the launcher;
                              * in an agent, n counts its own nodes) */
    int *host_local;         /* per host: nodes are forked here */
    char (*host_boot)[96];   /* per host: OMPDSM_BOOT for its nodes */
    char *cwd;               /* working directory of every node */
    char *self_exe;          /* this executable: the agents' path */
    char *rsh;               /* OMPDSM_RSH, or ssh -o BatchMode=yes */
    int fanout;              /* OMPDSM_LAUNCH_FANOUT */
    char **env_extra;        /* VAR=value given to every node */
    int nenv_extra;
    struct launch_link *links;
    int nlinks;
    char spawn_err[1024];    /* agent: why launch_spawn failed */
    char *prog_path;         /* resolved program */
    int n;
    struct launch_node *nodes;
    pid_t self;              /* the launcher's pid (children check it) */
    pid_t pgid;              /* process group of every node */
    int nreaped;
    int *cpus;               /* CPUs of our affinity mask */
    int ncpus;
    int bind;                /* pin node k to bind_width CPUs from
                                cpus[k * bind_width % ncpus] on */
    int bind_width;          /* CPUs per node: its threads per node */
    char jobid[128];
    /* The job's key (comm/util/auth.h): drawn by the launcher, sent to
     * agents in AG_SETUP and to every node as OMPDSM_JOB_KEY. */
    unsigned char key[OMPDSM_KEY_LEN];
    char key_hex[2 * OMPDSM_KEY_LEN + 1];
    char boot_host[64];      /* launcher with remote hosts: the address its
                              * bootstrap socket listens on (plan.c) */
    unsigned long nofile_orig; /* soft RLIMIT_NOFILE to restore in nodes */
    int devnull;             /* stdin of nodes other than 0 */
    int sigfd;
    struct boot_srv boot;
    /* stdin relay to node 0 */
    enum stdin_state in_state;
    int node0_in;            /* write end of node 0's stdin; -1 closed */
    int stdin_link;          /* launcher, node 0 elsewhere: the link
                              * reaching it; -1 none */
    size_t stdin_inflight;   /* bytes sent down but not yet written */
    int stdin_eof;
    char *inbuf;
    size_t in_len, in_off;
    /* ending */
    int ending;              /* a failure, signal or timeout ends the job */
    int status;              /* exit status decided by the first cause */
    int killed;              /* SIGKILL sent */
    int links_killed;        /* the agents' connections cut */
    double start, kill_at, drain_at;
    double term_at;          /* launch_fail_quiet: when to end the stopped
                              * nodes (0: done, or not stopped) */
    int nsuspects;
    /* diagnostics (diag.c) */
    int diag_reported;       /* the deadlock was reported */
    int status_fd;           /* listening status socket, or -1 */
    FILE *mon_out;           /* --monitor=FILE */
    double mon_next;         /* next frame or sample line */
    int mon_lines;           /* lines of the last frame drawn */
    char status_path[256];
};

/* poll set rebuilt each loop iteration; ref says what each entry is. */
enum launch_fd_kind {
    LFD_SIGNAL, LFD_LISTEN, LFD_DOOR, LFD_CONN, LFD_OUT, LFD_ERR, LFD_STDIN,
    LFD_NODE0_IN, LFD_WAKE, LFD_LINK_TO, LFD_LINK_FROM, LFD_LINK_ERR,
    LFD_PARENT, LFD_STATUS,
};

struct launch_pollset {
    struct pollfd *pfd;
    struct { int kind, idx; } *ref;
    size_t n, cap;
};

int launch_pollset_add(struct launch_pollset *ps, int fd, short events,
                       int kind, int idx);

/* ompdsmrun.c: the first abnormal end (or signal, timeout) prints its one
 * line "ompdsmrun: <msg>", fixes the exit status and starts ending the job;
 * later calls do nothing. */
void launch_fail(struct launch_job *job, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a job whose nodes all wait (a deadlock): every node is
 * stopped first and terminated LAUNCH_QUIET_S later, so that none, on any
 * host, sees another die while it can still run and complain about it:
 * the launcher's report is the last word. */
void launch_fail_quiet(struct launch_job *job, int status, const char *fmt,
                       ...) __attribute__((format(printf, 3, 4)));
/* A node's exit status is known (reaped here, or AG_EXIT): ends the job if
 * it is abnormal. */
void launch_node_exited(struct launch_job *job, struct launch_node *node);
/* Blocks our signals into job->sigfd; 0 or -errno (reason printed). */
int launch_setup_signals(struct launch_job *job);
/* Raises the descriptor limit for the pipes of job->n nodes and the links;
 * 0 or -EMFILE (reason printed). */
int launch_raise_nofile(struct launch_job *job);
/* Marks node as suspect (lost without FINI) unless it already is. */
void launch_suspect(struct launch_job *job, struct launch_node *node);

/* spawn.c */
/* Whether environ entry e is one of the variables we set for each node. */
int launch_own_var(const char *e);
/* Fills job->cpus from our affinity mask; returns 0 or -errno. */
int launch_cpus(struct launch_job *job);
/* Decides job->bind and job->bind_width for nlocal nodes on this host
 * (after launch_cpus and the -x variables): each node gets as many CPUs
 * as it runs threads, and --bind-to's default binds when every thread
 * then has a CPU of its own. */
void launch_decide_bind(struct launch_job *job, int nlocal);
/* Starts every node.  Returns 0; or -errno after printing why and stopping
 * any node already started, with *exit_status set (127 when an exec
 * failed, 1 otherwise). */
int launch_spawn(struct launch_job *job, int *exit_status);
/* Reaps every child that exited, without blocking: an agent's rsh goes to
 * launch_link_reaped, a node forked here is marked reaped (status, time)
 * and handed to exited when that is not NULL.  The launcher and the
 * agents both call it on SIGCHLD. */
void launch_reap(struct launch_job *job,
                 void (*exited)(struct launch_job *, struct launch_node *));

/* link.c */
/* Adds the link of an agent for host and its subtree sub[0..nsub) to
 * job->links (room for it must exist); 0 or -ENOMEM. */
int launch_link_add(struct launch_job *job, int host, const int *sub,
                    int nsub);
/* Starts the agent of every link; 0 or -errno (reason printed, or in an
 * agent sent up). */
int launch_links_start(struct launch_job *job);
void launch_links_add_fds(struct launch_job *job, struct launch_pollset *ps);
void launch_link_event(struct launch_job *job, int kind, int idx,
                       short revents);
/* A child process exited: returns 1 if it was a link's rsh. */
int launch_link_reaped(struct launch_job *job, pid_t pid, int wstatus);
/* Queues one frame to link i (if it still runs). */
void launch_link_send(struct launch_job *job, int i, int type,
                      const void *body, size_t len);
/* The link whose subtree runs rank, or -1. */
int launch_link_of(const struct launch_job *job, int rank);
/* Queues one frame to every link still running. */
void launch_links_send(struct launch_job *job, int type, const void *body,
                       size_t len);
/* Our address on the route toward a (a UDP connect: nothing is sent). */
int launch_route_source(const char *dst, char *out, size_t len, char *err,
                        size_t errlen);
/* Sends sig to every node behind the links. */
void launch_links_signal(struct launch_job *job, int sig, int group);
/* Decides links whose agent went away; returns the ms until the next
 * decision is due, or -1. */
int launch_links_check(struct launch_job *job, double now);
/* Whether every link is done. */
int launch_links_done(const struct launch_job *job);
/* Closes every agent's stdin (it ends its nodes and exits); with kill,
 * SIGKILLs the rsh processes too. */
void launch_links_close(struct launch_job *job, int kill_rsh);
/* setup.c: the encoded AG_SETUP of a link (malloc'd), or NULL. */
unsigned char *launch_setup_encode(const struct launch_job *job,
                                   const struct launch_link *l, size_t *len);
/* Fills an agent's job from an AG_SETUP body; 0 or -EINVAL with err. */
int launch_setup_decode(struct launch_job *job, const unsigned char *p,
                        size_t len, char *err, size_t errlen);
/* Frames up to the parent (agent) or into our stderr (launcher). */
void launch_agent_send(int type, int rank, const void *a, size_t alen,
                       const void *b, size_t blen);
/* "node 3" or "nodes 1, 2, 5, 6 and 3 more" for messages. */
void launch_format_ranks(char *buf, size_t len, const int *ranks, int n);
/* The name of node's host for messages: as -H or the hostfile gave it,
 * else this host's name. */
void launch_host_name(const struct launch_job *job,
                      const struct launch_node *node, char *buf, size_t len);
/* Names a node for messages: "node 3 (pid 42 on host h2)". */
const char *launch_node_name(const struct launch_job *job,
                             const struct launch_node *node, char *buf,
                             size_t len);

/* plan.c (launcher): -x, OMPDSM_RSH, OMPDSM_LAUNCH_FANOUT, cwd and our own
 * path; then which hosts are this one and each node's host (job->remote
 * says whether any is not); then, once the bootstrap socket listens, each
 * host's OMPDSM_BOOT and the agent tree.  0 or -EINVAL with err. */
int launch_plan_env(struct launch_job *job, char *err, size_t errlen);
int launch_plan_hosts(struct launch_job *job, char *err, size_t errlen);
int launch_plan_links(struct launch_job *job, char *err, size_t errlen);

/* agent.c: main of ompdsmrun --agent; returns the exit status. */
int launch_agent_main(struct launch_job *job);

/* relay.c */
/* Data of a remote node's stdout (which 1) or stderr (2). */
void launch_relay_data(struct launch_job *job, struct launch_node *node,
                       int which, const char *p, size_t n);
int launch_relay_init(struct launch_job *job);
void launch_relay_add_fds(struct launch_job *job, struct launch_pollset *ps);
void launch_relay_event(struct launch_job *job, int kind, int idx,
                        short revents);
/* Re-checks whether stdin may be read (after SIGCONT). */
void launch_relay_stdin_recheck(struct launch_job *job);
/* AG_STDIN from our parent (agent): to node 0's pipe or down a link. */
void launch_relay_stdin_frame(struct launch_job *job, const unsigned char *p,
                              size_t n);
/* AG_STDIN_ACK from the link of node 0 (launcher). */
void launch_relay_stdin_ack(struct launch_job *job, uint32_t bytes,
                            uint32_t closed);
/* Stops relaying stdin: node 0 ended. */
void launch_relay_stdin_stop(struct launch_job *job);
/* Whether every node's output pipe reached EOF. */
int launch_relay_all_closed(const struct launch_job *job);
/* Writes out partial lines still buffered (at exit). */
void launch_relay_flush_all(struct launch_job *job);

/* outq.c: our stdout (fd 1) and stderr (fd 2) */
/* Starts the writer threads (after the nodes are forked, so that fork
 * happens in a single-threaded process); without them output is written
 * directly.  Returns 0 or -errno (warning printed). */
int launch_outq_start(void);
/* Queues n bytes for fd; they are written in order, in one piece. */
void launch_outq_put(int fd, const char *p, size_t n);
/* Whether fd's queue is too long: stop reading what would go there. */
int launch_outq_full(int fd);
/* Readable when a full queue has drained (poll it; -1 if none). */
int launch_outq_wake_fd(void);
void launch_outq_woken(void);
/* Waits until the queues are written, or deadline (ompdsm_now() time; 0 for
 * none) passes; returns a terminating signal that came meanwhile, or 0. */
int launch_outq_finish(struct launch_job *job, double deadline);

/* diag.c */
/* A node's BOOT_STATE body: kept, and the job judged for a deadlock; 0, or
 * -EPROTO/-ENOMEM with the reason in why. */
int launch_diag_state(struct launch_job *job, struct launch_node *node,
                      const unsigned char *body, size_t len, char *why,
                      size_t whylen);
/* Prints where every thread is (SIGUSR1). */
void launch_diag_status(struct launch_job *job);
/* The status socket: listens (a warning if it cannot), answers, removes. */
int launch_diag_listen(struct launch_job *job);
void launch_diag_accept(struct launch_job *job);
void launch_diag_close(struct launch_job *job);
/* A node's BOOT_SAMPLE (--monitor). */
void launch_diag_sample(struct launch_job *job, struct launch_node *node,
                        const unsigned char *body);
/* --monitor: opens the file, or nothing; 0 or -1 (reason printed). */
int launch_monitor_open(struct launch_job *job);
/* Draws a frame or writes the samples when due; returns the ms until the
 * next, or -1 when there is no monitor. */
int launch_monitor_tick(struct launch_job *job, double now);
void launch_monitor_close(struct launch_job *job);
/* Main of ompdsmrun --status [PID]; returns the exit status. */
int launch_status_main(const char *which);

/* bootsrv.c */
/* Listens on bind_host (numeric or name, port chosen by the kernel) and
 * advertises advertise_host:port.  Returns 0 or -errno (reason printed). */
int launch_boot_listen(struct launch_job *job, const char *bind_host,
                       const char *advertise_host);
void launch_boot_add_fds(struct launch_job *job, struct launch_pollset *ps);
/* launch_door_expire of the bootstrap socket. */
int launch_boot_expire(struct launch_job *job, double now);
void launch_boot_event(struct launch_job *job, int kind, int idx,
                       short revents);
/* A node exited with status 0: checks allgather progress is still
 * possible. */
void launch_boot_node_gone(struct launch_job *job, struct launch_node *node);
/* Reads whatever node sent before it exited (an ABORT explains its exit
 * status better than the status does; a FINI makes exit 0 fine). */
void launch_boot_drain(struct launch_job *job, struct launch_node *node);
void launch_boot_close_all(struct launch_job *job);
/* A bootstrap message of rank's node that came through its agent
 * (AG_BOOT, or an AG_GATHER entry as BOOT_ALLGATHER): judged as if the
 * node had sent it on a connection of its own. */
void launch_boot_remote(struct launch_job *job, int rank, uint32_t type,
                        const unsigned char *body, size_t len);
/* One receive of a bootstrap message (header, then body) on a
 * non-blocking socket, for the launcher's and the agents' servers alike:
 * LAUNCH_RECV_HDR when the header became complete (the caller checks it
 * and provides the body), _BODY when the body did, _MORE after a partial
 * read, _AGAIN when nothing is there, _CLOSED at end or error. */
enum { LAUNCH_RECV_AGAIN, LAUNCH_RECV_MORE, LAUNCH_RECV_HDR, LAUNCH_RECV_BODY,
       LAUNCH_RECV_CLOSED };
int launch_boot_recv(int fd, struct boot_hdr *hdr, size_t *hdr_got,
                     unsigned char *body, size_t *body_got);
struct boot_blob *launch_blob_new(uint32_t type, size_t payload);
void launch_blob_unref(struct boot_blob *b);

/* agboot.c (agents): the bootstrap socket of this host's nodes. */
/* Listens on our address toward the launcher and points our nodes'
 * OMPDSM_BOOT at it; 0 or -errno with the reason in err. */
int launch_agboot_listen(struct launch_job *job, char *err, size_t errlen);
void launch_agboot_add_fds(struct launch_job *job, struct launch_pollset *ps);
/* launch_door_expire of the agent's socket. */
int launch_agboot_expire(struct launch_job *job, double now);
void launch_agboot_event(struct launch_job *job, int kind, int idx,
                         short revents);
/* An AG_GATHER from the agent of link l; -EPROTO if it makes no sense. */
int launch_agboot_gather(struct launch_job *job, struct launch_link *l,
                         const unsigned char *body, size_t len);
/* The parent's AG_GATHER_RESULT: to our links and our nodes. */
void launch_agboot_result(struct launch_job *job, const unsigned char *body,
                          size_t len);
/* Reads what node k (index in job->nodes) still sent before its exit goes
 * up, so that its ABORT or FINI precedes the exit. */
void launch_agboot_drain(struct launch_job *job, int k);
void launch_agboot_close(struct launch_job *job);

#endif
