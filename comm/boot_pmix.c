/* comm/boot_pmix.c - bootstrap through PMIx, for nodes started by
 * `mpirun` (Open MPI) or `srun --mpi=pmix` instead of ompdsmrun.  The contact
 * card exchange is a PMIx put/commit/fence/get of one byte object per node;
 * node 0 puts the job's key beside its first card, and only the processes
 * of the job, which the PMIx server serves, can get it. */
#include "transport.h"
#include "boot.h"
#include "util/auth.h"
#include "ompdsm_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if OMPDSM_HAVE_PMIX
#include <pmix.h>

static pmix_proc_t myproc;
static int initialized;
static unsigned round_no;
static char node0[256];   /* node 0's host name (PMIX_HOSTNAME) */
static unsigned char key0[OMPDSM_KEY_LEN]; /* node 0: the key it drew */
#define KEY_NAME "ompdsm.key"

/* Node 0 draws the job's key and puts it; the first allgather's commit
 * and fence publish it with node 0's card. */
static int put_key(void)
{
    int rc = ompdsm_key_new(key0);
    if (rc < 0) {
        ompdsm_err("PMIx: cannot draw the job's key: getrandom: %s",
                   strerror(-rc));
        return -EIO;
    }
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)key0;
    v.data.bo.size = sizeof key0;
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, KEY_NAME, &v);
    if (st != PMIX_SUCCESS) {
        ompdsm_err("PMIx_Put of the job's key failed: %s",
                   PMIx_Error_string(st));
        return -EIO;
    }
    return 0;
}

int comm_boot_pmix_key(unsigned char *key)
{
    if (!initialized || !round_no) {
        ompdsm_err("PMIx: the job's key is read after the first exchange");
        return -EIO;
    }
    if (myproc.rank == 0) {
        memcpy(key, key0, sizeof key0);
        return 0;
    }
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_PROCID(&p, myproc.nspace, 0);
    pmix_value_t *got = NULL;
    pmix_status_t st = PMIx_Get(&p, KEY_NAME, NULL, 0, &got);
    int ok = st == PMIX_SUCCESS && got && got->type == PMIX_BYTE_OBJECT &&
             got->data.bo.size == OMPDSM_KEY_LEN;
    if (ok)
        memcpy(key, got->data.bo.bytes, OMPDSM_KEY_LEN);
    if (got)
        PMIX_VALUE_RELEASE(got);
    if (!ok)
        ompdsm_err("PMIx_Get of the job's key from node 0 failed: %s",
                   PMIx_Error_string(st));
    return ok ? 0 : -EIO;
}
static int local_size;    /* PMIX_LOCAL_SIZE: nodes on this host */

/* A job-level (rank wildcard) or per-rank value as a number; -1 when the
 * server does not have it. */
static long get_uint(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_PROCID(&p, myproc.nspace, rank);
    pmix_value_t *val = NULL;
    long v = -1;
    if (PMIx_Get(&p, key, NULL, 0, &val) != PMIX_SUCCESS || !val)
        return -1;
    switch (val->type) {
    case PMIX_UINT32: v = (long)val->data.uint32; break;
    case PMIX_UINT16: v = (long)val->data.uint16; break;
    case PMIX_INT: v = (long)val->data.integer; break;
    case PMIX_UINT64: v = (long)val->data.uint64; break;
    case PMIX_SIZE: v = (long)val->data.size; break;
    default: break;
    }
    PMIX_VALUE_RELEASE(val);
    return v;
}

int comm_boot_pmix_init(int *rank, int *size)
{
    if (!getenv("PMIX_NAMESPACE") && !getenv("PMIX_RANK"))
        return -ENOSYS;
    pmix_status_t st = PMIx_Init(&myproc, NULL, 0);
    if (st != PMIX_SUCCESS) {
        ompdsm_err("PMIx_Init failed: %s (started by an mpirun or srun whose "
                   "PMIx server this libpmix cannot talk to?)",
                   PMIx_Error_string(st));
        return -EIO;
    }
    initialized = 1;
    long n = get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    if (n < 1) {
        ompdsm_err("PMIx: the server did not give the job size (PMIX_JOB_SIZE)");
        return -EIO;
    }
    *size = (int)n;
    *rank = (int)myproc.rank;
    ompdsm_log_rank = *rank;
    /* Waiting (spin or block) and the runtime read the local rank and size
     * as ompdsmrun passes them. */
    long lr = get_uint(myproc.rank, PMIX_LOCAL_RANK);
    long ls = get_uint(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE);
    local_size = ls > 0 ? (int)ls : (int)n;
    char num[24];
    snprintf(num, sizeof num, "%d", local_size);
    setenv("OMPDSM_LOCAL_SIZE", num, 1);
    if (lr >= 0) {
        snprintf(num, sizeof num, "%ld", lr);
        setenv("OMPDSM_LOCAL_RANK", num, 1);
    }
    pmix_proc_t p0;
    PMIX_PROC_CONSTRUCT(&p0);
    PMIX_LOAD_PROCID(&p0, myproc.nspace, 0);
    pmix_value_t *val = NULL;
    if (PMIx_Get(&p0, PMIX_HOSTNAME, NULL, 0, &val) == PMIX_SUCCESS && val &&
        val->type == PMIX_STRING && val->data.string)
        snprintf(node0, sizeof node0, "%s", val->data.string);
    if (val)
        PMIX_VALUE_RELEASE(val);
    OMPDSM_TRACE(OMPDSM_TR_BOOT, "PMIx: namespace %s rank %d of %d, local "
                 "rank %ld of %d, node 0 on '%s'", myproc.nspace, *rank, *size,
                 lr, local_size, node0);
    return *rank == 0 && n > 1 ? put_key() : 0;
}

const char *comm_boot_pmix_node0(void)
{
    return initialized && node0[0] ? node0 : NULL;
}

int comm_boot_pmix_local_size(void)
{
    return local_size;
}

int comm_boot_pmix_allgather(const void *mine, size_t len, void *all)
{
    char key[PMIX_MAX_KEYLEN];
    snprintf(key, sizeof key, "ompdsm.ag%u", round_no++);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)mine;
    v.data.bo.size = len;
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (st == PMIX_SUCCESS)
        st = PMIx_Commit();
    if (st == PMIX_SUCCESS) {
        pmix_info_t info;
        bool collect = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        st = PMIx_Fence(NULL, 0, &info, 1);
    }
    if (st != PMIX_SUCCESS) {
        ompdsm_err("PMIx exchange failed: %s", PMIx_Error_string(st));
        return -EIO;
    }
    int size = comm_g.size;
    for (int r = 0; r < size; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, myproc.nspace, (pmix_rank_t)r);
        pmix_value_t *got = NULL;
        st = PMIx_Get(&p, key, NULL, 0, &got);
        if (st != PMIX_SUCCESS || !got || got->type != PMIX_BYTE_OBJECT ||
            got->data.bo.size != len) {
            ompdsm_err("PMIx_Get of node %d's card failed: %s", r,
                       PMIx_Error_string(st));
            return -EIO;
        }
        memcpy((char *)all + (size_t)r * len, got->data.bo.bytes, len);
        PMIX_VALUE_RELEASE(got);
    }
    return 0;
}

void comm_boot_pmix_abort(int status, const char *msg)
{
    if (initialized)
        PMIx_Abort(status ? status : 1, msg, NULL, 0);
}

void comm_boot_pmix_fini(void)
{
    if (initialized)
        PMIx_Finalize(NULL, 0);
    initialized = 0;
}

#else

int comm_boot_pmix_init(int *rank, int *size)
{
    (void)rank;
    (void)size;
    if (getenv("PMIX_NAMESPACE") || getenv("PMIX_RANK"))
        ompdsm_fatal("started by a PMIx launcher (mpirun/srun), but this "
                     "libompdsm was built without PMIx; rebuild with "
                     "libpmix-dev installed or use ompdsmrun");
    return -ENOSYS;
}
int comm_boot_pmix_allgather(const void *mine, size_t len, void *all)
{
    (void)mine; (void)len; (void)all;
    return -ENOSYS;
}
int comm_boot_pmix_key(unsigned char *key)
{
    (void)key;
    return -ENOSYS;
}
void comm_boot_pmix_abort(int status, const char *msg) { (void)status; (void)msg; }
void comm_boot_pmix_fini(void) {}
const char *comm_boot_pmix_node0(void) { return NULL; }
int comm_boot_pmix_local_size(void) { return 0; }
#endif
