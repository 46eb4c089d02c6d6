/* tests/cluster/ua_locks.c - the shape of NPB UA's mortar updates, for the
 * deadlock detection across hosts (cluster_test.py, test `deadlock`):
 * every element adds to the mortar points of its faces, each under that
 * point's own lock (transfer.c: omp_set_lock(&tlock[ig]); tmor[ig] += ...),
 * and neighbouring elements, on other nodes, share points; so the nodes
 * often all wait in omp_set_lock at once while the locks, and the page
 * of tmor, travel between them.  Node 0 checks every point against the
 * closed form: ROUNDS times the sum of what the elements touching it add.
 *
 *   ua_locks [ROUNDS]   prints "ua_locks: ok" (exit 0) or the first wrong
 *                       point (exit 1)
 *   ua_locks cross      the first and last threads each take one lock,
 *                       meet at a barrier, then wait for the other's: a
 *                       deadlock (@CROSS0, @CROSS1 mark the lines) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NELT = 256, NFACE = 6, NMOR = 512 };

static omp_lock_t tlock[NMOR];
static double tmor[NMOR];
static omp_lock_t la, lb;

/* The mortar point of element e's face f: elements e and e + 1 share one,
 * and points repeat across the blocks that a static schedule gives the
 * nodes. */
static int idmo(int e, int f)
{
    return (e * 3 + f * 37) % NMOR;
}

static void cross(void)
{
    omp_init_lock(&la);
    omp_init_lock(&lb);
#pragma omp parallel
    {
        int t = omp_get_thread_num(), last = omp_get_num_threads() - 1;
        if (t == 0)
            omp_set_lock(&la);
        if (t == last)
            omp_set_lock(&lb);
#pragma omp barrier
        if (t == 0)
            omp_set_lock(&lb); /* @CROSS0 */
        if (t == last)
            omp_set_lock(&la); /* @CROSS1 */
    }
    printf("ua_locks cross: finished\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "cross")) {
        cross();
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    for (int i = 0; i < NMOR; i++)
        omp_init_lock(&tlock[i]);
    for (int r = 0; r < rounds; r++) {
#pragma omp parallel for schedule(static)
        for (int e = 0; e < NELT; e++)
            for (int f = 0; f < NFACE; f++) {
                int ig = idmo(e, f);
                omp_set_lock(&tlock[ig]);
                tmor[ig] = tmor[ig] + (double)(e % 7 + f);
                omp_unset_lock(&tlock[ig]);
            }
    }
    static double want[NMOR];
    for (int e = 0; e < NELT; e++)
        for (int f = 0; f < NFACE; f++)
            want[idmo(e, f)] += (double)rounds * (e % 7 + f);
    for (int i = 0; i < NMOR; i++)
        if (tmor[i] != want[i]) {
            printf("ua_locks: tmor[%d] = %.1f, expected %.1f\n", i, tmor[i],
                   want[i]);
            return 1;
        }
    printf("ua_locks: ok\n");
    return 0;
}
