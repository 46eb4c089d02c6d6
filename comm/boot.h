/* comm/boot.h - the bootstrap as the rest of comm/ sees it (boot.c,
 * boot_pmix.c): rank and size, the allgather of the contact cards, the
 * connection to the launcher, and asking for the end of the job. */
#ifndef OMPDSM_COMM_BOOT_H
#define OMPDSM_COMM_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "boot_proto.h"

/* Learns rank and size from the environment (OMPDSM_RANK/SIZE/BOOT from
 * ompdsmrun, PMIx, or a single node). */
int comm_boot_init(int *rank, int *size);
/* Exchanges len bytes per node: all[r * len] holds rank r's bytes. */
int comm_boot_allgather(const void *mine, size_t len, void *all);
/* Checks the launcher's answer header to an allgather of len bytes per
 * node among size nodes; 0, or -EPROTO with the reason printed. */
int comm_boot_answer_check(const struct boot_hdr *h, size_t len, int size);
/* Local address of the connection to the launcher (0 if none): the address
 * the tcp transport advertises by default. */
uint32_t comm_boot_local_addr(void);
/* Descriptor the service thread watches for launcher loss (-1 if none). */
int comm_boot_fd(void);
/* The job's key (comm/util/auth.h): from OMPDSM_JOB_KEY under ompdsmrun,
 * from node 0 through PMIx (after the first allgather); NULL when there
 * is none (a job of one node). */
const unsigned char *comm_boot_key(void);
/* Asks the launcher to end the job; 0 if it was told, -1 if there is no
 * launcher to tell (the caller prints the message).  link_peer >= 0: the
 * cause is the network between nodes link_by and link_peer, and ompdsmrun
 * is told link_what, which its line completes with both hosts
 * (BOOT_ABORT_LINK); PMIx gets msg whole. */
int comm_boot_abort(int status, int link_by, int link_peer,
                    const char *link_what, const char *msg);
void comm_boot_fini(void);

/* ---- PMIx (boot_pmix.c) ----
 * comm_boot_pmix_init returns -ENOSYS when not launched by PMIx.  Node 0
 * draws the job's key there and puts it; the first allgather's fence
 * hands it to the job's other processes, and comm_boot_pmix_key reads it
 * (0, or -EIO with the reason printed). */
int comm_boot_pmix_init(int *rank, int *size);
int comm_boot_pmix_key(unsigned char *key);
int comm_boot_pmix_allgather(const void *mine, size_t len, void *all);
void comm_boot_pmix_abort(int status, const char *msg);
void comm_boot_pmix_fini(void);
/* Node 0's host name, NULL when not started by PMIx or unknown; and the
 * number of nodes on this host. */
const char *comm_boot_pmix_node0(void);
int comm_boot_pmix_local_size(void);

#endif
