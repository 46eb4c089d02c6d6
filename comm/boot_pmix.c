/* comm/boot_pmix.c - bootstrap through PMIx, for nodes started by
 * `mpirun` (Open MPI) or `srun --mpi=pmix` instead of ompdsmrun.  The contact
 * card exchange is a PMIx put/commit/fence/get of one byte object per node. */
#include "transport.h"
#include "ompdsm_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if OMPDSM_HAVE_PMIX
#include <pmix.h>

static pmix_proc_t myproc;
static int initialized;
static unsigned round_no;

int comm_boot_pmix_init(int *rank, int *size)
{
    if (!getenv("PMIX_NAMESPACE") && !getenv("PMIX_RANK"))
        return -ENOSYS;
    pmix_status_t st = PMIx_Init(&myproc, NULL, 0);
    if (st != PMIX_SUCCESS) {
        ompdsm_err("PMIx_Init failed: %s", PMIx_Error_string(st));
        return -EIO;
    }
    initialized = 1;
    pmix_proc_t wild;
    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_PROCID(&wild, myproc.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    st = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (st != PMIX_SUCCESS || !val) {
        ompdsm_err("PMIx_Get(PMIX_JOB_SIZE) failed: %s", PMIx_Error_string(st));
        return -EIO;
    }
    *size = (int)val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    *rank = (int)myproc.rank;
    return 0;
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
void comm_boot_pmix_abort(int status, const char *msg) { (void)status; (void)msg; }
void comm_boot_pmix_fini(void) {}
#endif
