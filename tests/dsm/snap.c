/* tests/dsm/snap.c - snapshots of a home's writes (dsm/snap.c) under
 * software write detection (OMPDSM_WD=on), the program marking its own
 * stores as ompcc's pass would:
 * - flag hand-offs: in each round node 0 writes a block of data words at
 *   a moving place of a page it is home of, flushes, writes a flag on
 *   another, and flushes; every other node spins on flushes until it sees
 *   the round's flag, flushes, and checks the data; it then writes its
 *   acknowledgement and flushes, and node 0 spins until it has every
 *   acknowledgement (OpenMP's flag pattern, with the flushes it asks for;
 *   without the reader's flush after the flag, NPB LU's shape, this fails
 *   on 4 nodes with or without snapshots: the reader's fault on the flag's
 *   page fetches it from node 0's memory, flag set, while its copy of the
 *   data's page is valid and old.  omp_flush_wavefront runs that shape
 *   on the pages the compiler lays out);
 * - over shm, each reader must have taken node 0's releases from
 *   snapshots (dsm_snap_updates at least a third of the rounds), on 2
 *   nodes with fewer page faults than one in ten rounds (before snapshots:
 *   a fault a round and more); over tcp snapshots are not used (two round
 *   trips) and only the values are checked.
 * Lock hand-offs under write detection, which take snapshots too, are
 * tests/dsm/wd.c's. */
#include "dsmtest.h"

/* The ABI the pass targets (runtime/ompdsm_abi.h declares it). */
extern unsigned long OMPDSM_wd_size;

enum { PAGE = 65536, NDATA = 96, ROUNDS = 300 };

struct g {
    double data[PAGE / 8];         /* page 0: the block a round writes */
    int64_t flag;                  /* page 1: the round's flag */
    char pad1[PAGE - 8];
    int64_t ack[64];               /* page 2: the readers' acknowledgements */
};

static double dv(int r, int k) { return r * 1000.25 + k; }

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    int me = T_rank, n = T_size;
    const char *asked = getenv("OMPDSM_WD");
    if (!asked || strcmp(asked, "on") || !OMPDSM_wd_size ||
        strcmp(dsm_wd_mode_name(), "on"))
        T_FAIL("OMPDSM_WD=on expected, but write detection is %s",
               dsm_wd_mode_name());
    if (n > 64)
        T_FAIL("at most 64 nodes");
    t_barrier();
    struct dsm_stats s0, s1;
    dsm_stats_get(&s0);
    for (int r = 1; r <= ROUNDS; r++) {
        /* Each round writes data words at a moving place, a few lines. */
        int base = (r * 37) % (PAGE / 8 - NDATA);
        if (me == 0) {
            for (int k = 0; k < NDATA; k++)
                T_WD_STORE(g->data[base + k], dv(r, k));
            dsm_flush();
            T_WD_STORE(g->flag, (int64_t)r);
            dsm_flush();
            for (int j = 1; j < n; j++)
                while (__atomic_load_n(&g->ack[j], __ATOMIC_RELAXED) != r)
                    dsm_flush();
            continue;
        }
        while (__atomic_load_n(&g->flag, __ATOMIC_RELAXED) < r)
            dsm_flush();
        dsm_flush();
        int64_t f = g->flag;
        if (f != r)
            T_FAIL("round %d: flag %lld", r, (long long)f);
        for (int k = 0; k < NDATA; k++)
            if (g->data[base + k] != dv(r, k)) {
                T_FAIL("round %d: data[%d] = %g after the flag, expected %g", r,
                       base + k, g->data[base + k], dv(r, k));
                break;
            }
        T_WD_STORE(g->ack[me], (int64_t)r);
        dsm_flush();
    }
    dsm_stats_get(&s1);
    uint64_t snaps = s1.snap_updates - s0.snap_updates;
    uint64_t faults = s1.read_faults + s1.write_faults - s0.read_faults - s0.write_faults;
    printf("node %d: %d rounds: %llu snapshots applied, %llu faults\n", me, ROUNDS,
           (unsigned long long)snaps, (unsigned long long)faults);
    /* (with more nodes the acknowledgements, written by nodes that are
     * not their page's home, still invalidate: only snapshots are asked) */
    if (me && !strcmp(comm_transport_name(), "shm") &&
        (snaps < ROUNDS / 3 || (n == 2 && faults > ROUNDS / 10)))
        T_FAIL("over shm: %llu snapshots applied (at least %d) and %llu faults "
               "(at most %d) in %d rounds", (unsigned long long)snaps, ROUNDS / 3,
               (unsigned long long)faults, ROUNDS / 10, ROUNDS);
    return t_finish();
}
