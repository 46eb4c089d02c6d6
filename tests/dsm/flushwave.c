/* tests/dsm/flushwave.c - a flush-flag hand-off in NPB LU's shape under
 * software write detection (OMPDSM_WD=on): node t waits with flushes for
 * the flag node t-1 sets after computing its block of columns of a plane,
 * clears it, computes its own block from the plane before and node t-1's
 * last column, and sets its own flag for node t+1 (LU's sync_left and
 * sync_right); a barrier ends each sweep of SWEEP planes, as LU's
 * iterations do.  Checks: the last plane against the same recurrence
 * computed serially, and from the second sweep on (the copies a node
 * reads are then subscribed to pushes, dsm/push.c) at most one fault or
 * protection change per 10 hand-offs on every node: the spinning reader
 * sees the flag with no fault per poll and the data before it with no
 * fault.  The program marks its own stores as ompcc's pass would. */
#include "dsmtest.h"



enum { ROWS = 512, COLS_PER_NODE = 24, PLANES = 3, SWEEP = 20, SWEEPS = 4,
       MAXN = 64 };

static inline uint64_t cell(uint64_t up, uint64_t left, long i)
{
    return up * 3 + left + (uint64_t)i;
}

/* Plane `cur` from plane `up`, columns [c0, c1), [column][row]. */
static void plane(const uint64_t *up, uint64_t *cur, long c0, long c1, int mark)
{
    for (long j = c0; j < c1; j++)
        for (long i = 0; i < ROWS; i++) {
            uint64_t v = cell(up[j * ROWS + i], j ? cur[(j - 1) * ROWS + i] : 0, i);
            if (mark)
                T_STORE(cur[j * ROWS + i], v);
            else
                cur[j * ROWS + i] = v;
        }
}

struct flags {
    int32_t f[MAXN];
};

int main(void)
{
    struct flags *fl;
    t_init();
    int me = T_rank, n = T_size;
    long cols = (long)COLS_PER_NODE * n, psz = cols * ROWS;
    fl = dsm_global_alloc(sizeof *fl, 64, "flags");
    uint64_t *g = dsm_global_alloc(sizeof *g * (size_t)(PLANES * psz), 64, "grid");
    dsm_start();
    if (n > MAXN)
        T_FAIL("more than %d nodes", MAXN);
    if (!OMPDSM_wd_size) {
        if (me == 0)
            printf("skipped: write detection is off\n");
        return t_finish();
    }
    if (me == 0)
        for (long x = 0; x < psz; x++)
            T_STORE(g[x], (uint64_t)x);
    t_barrier();
    long c0 = COLS_PER_NODE * me, c1 = c0 + COLS_PER_NODE;
    struct dsm_stats s0, s1;
    int handoffs = 0;
    for (int k = 1; k <= SWEEP * SWEEPS; k++) {
        if (k == SWEEP + 1)
            dsm_stats_get(&s0);
        if (me > 0) {
            while (__atomic_load_n(&fl->f[me - 1], __ATOMIC_RELAXED) == 0)
                dsm_flush();
            T_STORE(fl->f[me - 1], 0);
            dsm_flush();
            handoffs += k > SWEEP;
        }
        plane(g + (k - 1) % PLANES * psz, g + k % PLANES * psz, c0, c1, 1);
        if (me < n - 1) {
            while (__atomic_load_n(&fl->f[me], __ATOMIC_RELAXED) == 1)
                dsm_flush();
            T_STORE(fl->f[me], 1);
            dsm_flush();
            handoffs += k > SWEEP;
        }
        if (k % SWEEP == 0)
            t_barrier();
    }
    dsm_stats_get(&s1);
    uint64_t *s = malloc(sizeof *s * (size_t)(PLANES * psz));
    for (long x = 0; x < psz; x++)
        s[x] = (uint64_t)x;
    for (int k = 1; k <= SWEEP * SWEEPS; k++)
        plane(s + (k - 1) % PLANES * psz, s + k % PLANES * psz, 0, cols, 0);
    const uint64_t *got = g + (SWEEP * SWEEPS) % PLANES * psz,
                   *want = s + (SWEEP * SWEEPS) % PLANES * psz;
    for (long x = 0; x < psz; x++)
        if (got[x] != want[x]) {
            T_FAIL("cell %ld: %llu, expected %llu", x, (unsigned long long)got[x],
                   (unsigned long long)want[x]);
            break;
        }
    free(s);
    uint64_t faults = s1.read_faults + s1.write_faults - s0.read_faults -
                      s0.write_faults;
    uint64_t prot = s1.protects - s0.protects;
    printf("node %d: %d hand-offs after the first sweep: %llu faults, %llu "
           "protection changes, %llu page fetches, %llu pushes, %llu flushes\n",
           me, handoffs, (unsigned long long)faults, (unsigned long long)prot,
           (unsigned long long)(s1.pages_fetched - s0.pages_fetched),
           (unsigned long long)(s1.pushes - s0.pushes),
           (unsigned long long)(s1.flushes - s0.flushes));
    if ((faults + prot) * 10 > (uint64_t)handoffs + 10)
        T_FAIL("%llu faults and %llu protection changes for %d hand-offs",
               (unsigned long long)faults, (unsigned long long)prot, handoffs);
    t_barrier();
    return t_finish();
}
