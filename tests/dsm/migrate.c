/* tests/dsm/migrate.c - home migration (OMPDSM_MIGRATION).  Run with
 * OMPDSM_MIGRATION_FORCE=N, every page used in an interval changes home at
 * every N-th barrier, and three phases check that nothing is lost:
 *   1. pages written by several nodes: every node writes its own words,
 *      interleaved over the same pages, reads all of them after each
 *      barrier, and also writes some pages it is not home of;
 *   2. a lock held across a barrier: the holder writes a page, the barrier
 *      moves the page's home, the holder writes again and unlocks; every
 *      other node then updates it under the lock, and all must see every
 *      update (the diff after the move must go to the new home);
 *   3. lock-protected increments released just before a barrier that
 *      moves the page, and acquired by the next holder after it.
 * Under OMPDSM_MIGRATION=faults without forcing, phase 4 checks the
 * policy: a page only one node uses moves to that node, after which it
 * takes no more remote faults on it.  Under OMPDSM_MIGRATION=diffs, phase
 * 5 checks that policy: of two pages, each written in its last three
 * quarters by one of nodes 0 and 1 and in its first 8 bytes by the other,
 * at least one is homed at its 8-byte writer (the roles swap after the first interval if
 * neither is); each must move to its main writer, after which neither
 * node sends more than its 8 bytes of diffs an interval.  (With the former
 * count of half a page per home write fault the update-protocol run fails;
 * under invalidate the home skips a fault in some interval and the page
 * moves anyway.)  Phase 6, under diffs too: a page two nodes write all
 * over in turn, a barrier each, moves at most 5 times in 40 barriers (its
 * cooldown doubles with each move; without the doubling it moved 8
 * times).  Phase 7, under diffs: pages node 0 alone writes before a fork
 * (a serial part) and the others then read do not move (all 8 moved
 * before node 0 forgot its counts at a fork).  With OMPDSM_MIGRATION_STREAK
 * above 1, phase 5 does not run (a page with a second writer never moves
 * then) and phase 6's page must not move at all (its two writers take
 * turns, so neither is its sole user twice in a row), while phase 4's
 * page, node 1's alone, still moves.  The migrations counted must not be
 * 0 whenever migration is on, so a mechanism that silently never moves a
 * page fails. */
#include "dsmtest.h"

#include <string.h>

enum { WORDS = 48 * 1024, EPOCHS = 12, LOCK_ROUNDS = 8, INCS = 5 };

struct g {
    /* phase 5: two whole pages of up to 64 KiB, first so that they are in
     * the first block of pages, homed at node 0 (OMPDSM_HOME_POLICY block):
     * the policy must move a page away from a home that writes it too. */
    int64_t tilt[3 * 8192];
    int64_t flip[2 * 8192]; /* phase 6: one whole page of up to 64 KiB */
    int64_t w[WORDS];     /* phase 1: several pages, every node's words */
    int64_t held[8192];   /* phase 2: its own page(s) */
    int64_t ctr[8192];    /* phase 3 */
    int64_t solo[8192];   /* phase 4: used by node 1 only */
    int64_t serial[8 * 8192]; /* phase 7: written by node 0 before a fork */
};

/* The first whole DSM page inside a (a field of struct g). */
static int64_t *first_page(int64_t *a, size_t ps)
{
    return (int64_t *)(((uintptr_t)a + ps - 1) & ~(uintptr_t)(ps - 1));
}

static int64_t val(int e, size_t i) { return (int64_t)e * 1000003 + (int64_t)i; }

/* Phase 5's words: all 8 bytes differ between consecutive e (odd e has
 * every byte 0x5a-ish flipped, even e not; the index keeps words apart). */
static int64_t tilt(int e, size_t i, int k)
{
    uint64_t v = ((uint64_t)i << 8 | (uint64_t)k) * 0x0101010101010101ull;
    return (int64_t)(e & 1 ? v ^ 0xa5a5a5a5a5a5a5a5ull : v ^ 0x5a5a5a5a5a5a5a5aull);
}

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    const char *pol = getenv("OMPDSM_MIGRATION");
    const char *force = getenv("OMPDSM_MIGRATION_FORCE");
    int forced = force && atoi(force) > 0;
    int on = forced || (pol && strcmp(pol, "off"));
    const char *streak_s = getenv("OMPDSM_MIGRATION_STREAK");
    int streak = streak_s ? atoi(streak_s) : 1;
    enum { LOCK = T_LOCK_BASE + 7 };

    /* Phase 1. */
    for (int e = 1; e <= EPOCHS; e++) {
        for (size_t i = (size_t)T_rank; i < WORDS; i += (size_t)T_size)
            g->w[(i + (size_t)e) % WORDS] = val(e, i);
        t_barrier();
        for (size_t i = 0; i < WORDS; i++)
            if (g->w[(i + (size_t)e) % WORDS] != val(e, i)) {
                T_FAIL("epoch %d: w[%zu] = %lld, expected %lld", e,
                       (i + (size_t)e) % WORDS,
                       (long long)g->w[(i + (size_t)e) % WORDS],
                       (long long)val(e, i));
                break;
            }
        t_barrier();
    }

    /* Phase 2: node 0 holds the lock across the barrier. */
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        if (T_rank == 0) {
            dsm_lock(LOCK);
            g->held[r] += 1;
            g->held[4096 + r] += 1;
        }
        t_barrier();
        if (T_rank == 0) {
            g->held[r] += 10;
            g->held[4096 + r] += 10;
            dsm_unlock(LOCK);
        } else {
            dsm_lock(LOCK);
            g->held[r] += 100;
            dsm_unlock(LOCK);
        }
        t_barrier();
        int64_t want = 11 + 100 * (T_size - 1);
        if (g->held[r] != want || g->held[4096 + r] != 11)
            T_FAIL("lock round %d: %lld and %lld, expected %lld and 11", r,
                   (long long)g->held[r], (long long)g->held[4096 + r],
                   (long long)want);
    }

    /* Phase 3: increments under the lock just before each barrier. */
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        for (int k = 0; k < INCS; k++) {
            dsm_lock(LOCK);
            g->ctr[1 + (r * 97 + k) % 8191] += 1;
            g->ctr[0] += 1;
            dsm_unlock(LOCK);
        }
        t_barrier();
    }
    dsm_lock(LOCK);
    int64_t c0 = g->ctr[0];
    dsm_unlock(LOCK);
    if (c0 != (int64_t)LOCK_ROUNDS * INCS * T_size)
        T_FAIL("counter %lld, expected %lld", (long long)c0,
               (long long)LOCK_ROUNDS * INCS * T_size);
    for (int r = 0; r < LOCK_ROUNDS; r++)
        for (int k = 1; k < INCS; k++) {
            int64_t v = g->ctr[1 + (r * 97 + k) % 8191];
            if (v < T_size)
                T_FAIL("ctr[%d] = %lld, expected at least %d",
                       1 + (r * 97 + k) % 8191, (long long)v, T_size);
        }
    t_barrier();

    /* Phase 4: the faults policy moves node 1's page to node 1. */
    struct dsm_stats st;
    uint64_t late_remote = 0;
    for (int e = 0; e < 8; e++) {
        if (e == 6 && T_rank == 1) {
            dsm_stats_get(&st);
            late_remote = st.remote_faults;
        }
        if (T_rank == 1) {
            /* Two write faults per interval: the policy's minimum. */
            g->solo[0] += g->solo[0] + 1;
            dsm_release();
            for (size_t i = 512; i < 8192; i += 512)
                g->solo[i] += g->solo[i] + 1;
        }
        t_barrier();
    }
    for (size_t i = 0; i < 8192; i += 512)
        if (g->solo[i] != 255)
            T_FAIL("solo[%zu] = %lld, expected 255", i, (long long)g->solo[i]);
    dsm_stats_get(&st);
    if (T_rank == 1 && on && !forced && pol && !strcmp(pol, "faults") &&
        st.remote_faults != late_remote)
        T_FAIL("policy faults: node 1 still takes remote faults on its own "
               "page (%llu more in the last 2 barriers)",
               (unsigned long long)(st.remote_faults - late_remote));
    /* Phase 5: the diffs policy moves a page to the node that writes
     * most of it, even when its home writes a little of it too. */
    size_t ps = dsm_page_size();
    int diffs = on && !forced && pol && !strcmp(pol, "diffs");
    if (diffs && streak <= 1 && ps <= 8192 * sizeof(int64_t)) {
        char *base = (char *)first_page(g->tilt, ps);
        size_t quarter = ps / 4 / sizeof(int64_t);
        int swap = 0;
        uint64_t d0 = 0, late = 0;
        enum { TILT_EPOCHS = 10 };
        /* Steady state from the start: both nodes read both pages, so
         * each home's next write faults (the pages are no longer its
         * alone), as in a loop that has run a while. */
        if (T_rank < 2) {
            volatile int64_t sum = 0;
            for (size_t i = 0; i < 2 * ps / sizeof(int64_t); i++)
                sum += ((int64_t *)base)[i];
        }
        t_barrier();
        for (int e = 0; e < TILT_EPOCHS; e++) {
            if (T_rank < 2) {
                /* Page k: node k writes its last three quarters, the
                 * other node its first 8 bytes (roles swapped when swap:
                 * more than half a page, as NPB-style CG's vector pages
                 * get from the node beside their home); every
                 * byte of a word changes from one interval to the next,
                 * as a double's do, so a diff's bytes are what its node
                 * wrote (tilt()). */
                for (int k = 0; k < 2; k++) {
                    int64_t *pg = (int64_t *)(base + (size_t)k * ps);
                    int main_writer = swap ? 1 - k : k;
                    if (T_rank == main_writer) {
                        for (size_t i = quarter; i < ps / sizeof(int64_t); i++)
                            pg[i] = tilt(e, i, k);
                    } else {
                        pg[0] = tilt(e, 0, k);
                    }
                }
            }
            dsm_stats_get(&st);
            if (e == 0)
                d0 = st.diff_bytes;
            if (e == TILT_EPOCHS - 2)
                late = st.diff_bytes;
            t_barrier();
            if (e == 0) {
                /* Both main writers at home: no big diff went out. */
                dsm_stats_get(&st);
                int64_t sent = (int64_t)(st.diff_bytes - d0);
                comm_allreduce(COMM_WORLD, &sent, 1, COMM_INT64, COMM_SUM);
                swap = sent < (int64_t)(ps / 2);
            }
        }
        for (int k = 0; k < 2; k++) {
            int64_t *pg = (int64_t *)(base + (size_t)k * ps);
            for (size_t i = 0; i < ps / sizeof(int64_t); i = i ? i + 1 : quarter)
                if (pg[i] != tilt(TILT_EPOCHS - 1, i, k)) {
                    T_FAIL("policy diffs: page %d word %zu = %lld, expected %lld", k, i,
                           (long long)pg[i], (long long)tilt(TILT_EPOCHS - 1, i, k));
                    break;
                }
        }
        dsm_stats_get(&st);
        if (st.diff_bytes - late > ps / 8)
            T_FAIL("policy diffs: node %d still sends %llu bytes of diffs in the last "
                   "2 intervals (a page stayed at the node that writes 8 bytes of it)",
                   T_rank, (unsigned long long)(st.diff_bytes - late));
        t_barrier();
    }
    /* Phase 6: a page written all over by node 0 and node 1 in turn, a
     * barrier each, under the diffs policy: it may follow its writer a
     * few times, but each move doubles the barriers it then stays put
     * (4, 8, 16, ...), so 40 barriers see at most 5 moves (8 or more with
     * a fixed cooldown of 4). */
    if (diffs && ps <= 8192 * sizeof(int64_t)) {
        int64_t *fp = first_page(g->flip, ps);
        enum { FLIP_EPOCHS = 40 };
        dsm_stats_get(&st);
        int64_t m0 = (int64_t)st.migrations;
        for (int e = 0; e < FLIP_EPOCHS; e++) {
            if (T_rank == e % 2)
                for (size_t i = 0; i < ps / sizeof(int64_t); i++)
                    fp[i] = tilt(e, i, 6);
            t_barrier();
        }
        for (size_t i = 0; i < ps / sizeof(int64_t); i++)
            if (fp[i] != tilt(FLIP_EPOCHS - 1, i, 6)) {
                T_FAIL("policy diffs: flip word %zu = %lld, expected %lld", i,
                       (long long)fp[i], (long long)tilt(FLIP_EPOCHS - 1, i, 6));
                break;
            }
        dsm_stats_get(&st);
        int64_t moves = (int64_t)st.migrations - m0;
        comm_allreduce(COMM_WORLD, &moves, 1, COMM_INT64, COMM_SUM);
        if (streak > 1 ? moves != 0 : moves < 1 || moves > 5)
            T_FAIL("policy diffs: a page written by two nodes in turn moved %lld times "
                   "in %d barriers (expected %s)", (long long)moves, FLIP_EPOCHS,
                   streak > 1 ? "none: never its sole writer twice in a row" : "1 to 5");
        else if (T_rank == 0)
            printf("flip page: %lld moves in %d barriers\n", (long long)moves, FLIP_EPOCHS);
    }
    /* Phase 7: node 0 alone writes pages homed elsewhere (the last pages
     * of the block distribution) before a fork, as a program's serial
     * part does, and then every node only reads them: under diffs they
     * stay where they are (what a serial part writes says nothing of who
     * uses a page inside parallel regions). */
    if (diffs) {
        dsm_stats_get(&st);
        int64_t m0 = (int64_t)st.migrations, d0 = (int64_t)st.diff_bytes;
        size_t nw = sizeof g->serial / sizeof g->serial[0];
        t_barrier();
        if (T_rank == 0) {
            for (size_t i = 0; i < nw; i++)
                g->serial[i] = tilt(3, i, 8);
            dsm_fork_send(COMM_WORLD, NULL, 0);
        } else {
            struct comm_buf fb = {0};
            dsm_fork_recv(COMM_WORLD, &fb);
            comm_buf_free(&fb);
        }
        for (int q = 0; q < 4; q++) {
            for (size_t i = (size_t)q; i < nw; i += 512)
                if (g->serial[i] != tilt(3, i, 8)) {
                    T_FAIL("policy diffs: serial[%zu] = %lld, expected %lld", i,
                           (long long)g->serial[i], (long long)tilt(3, i, 8));
                    break;
                }
            t_barrier();
        }
        dsm_stats_get(&st);
        int64_t moves = (int64_t)st.migrations - m0;
        int64_t sent = (int64_t)st.diff_bytes - d0;
        comm_allreduce(COMM_WORLD, &moves, 1, COMM_INT64, COMM_SUM);
        comm_allreduce(COMM_WORLD, &sent, 1, COMM_INT64, COMM_SUM);
        if (sent < (int64_t)ps)
            T_FAIL("phase 7: node 0's serial writes sent %lld bytes of diffs: the "
                   "pages are its own, so the phase tests nothing", (long long)sent);
        if (moves != 0)
            T_FAIL("policy diffs: %lld pages written by node 0's serial part moved",
                   (long long)moves);
    }
    int64_t moved = (int64_t)st.migrations;
    comm_allreduce(COMM_WORLD, &moved, 1, COMM_INT64, COMM_SUM);
    if (on && moved == 0)
        T_FAIL("migration on, but no page changed home");
    if (!on && moved != 0)
        T_FAIL("migration off, but %lld pages changed home", (long long)moved);
    if (T_rank == 0)
        printf("%lld pages changed home\n", (long long)moved);
    return t_finish();
}
