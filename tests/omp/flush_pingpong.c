/* flush: two threads hand a data block back and forth 20 times through a
   shared turn variable, with the spin loop
       while (turn != h) { #pragma omp flush(turn) }
   and full flushes (no list) around the data; each side checks the data
   written by the other before overwriting it.  With a team of one the
   single thread plays both roles. */
#include <stdio.h>
#include <omp.h>

#define HANDOFFS 20
#define LEN 16
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int turn;
static int data[LEN];

static int play(int h)
{
    int k, bad = 0;
    for (k = 0; k < LEN; k++)
        if (data[k] != (h == 0 ? 0 : (h - 1) * 100 + k))
            bad++;
    for (k = 0; k < LEN; k++)
        data[k] = h * 100 + k;
    return bad;
}

int main(void)
{
    int bad = 0, team = 0;
#pragma omp parallel reduction(+:bad)
    {
        int me = omp_get_thread_num(), h;
#pragma omp master
        team = omp_get_num_threads();
        if (omp_get_num_threads() == 1) {
            for (h = 0; h < HANDOFFS; h++)
                bad += play(h);
        } else if (me < 2) {
            for (h = me; h < HANDOFFS; h += 2) {
                while (turn != h) {
#pragma omp flush(turn)
                }
#pragma omp flush
                bad += play(h);
#pragma omp flush
                turn = h + 1;
#pragma omp flush(turn)
            }
        }
    }
    CHECK(bad == 0, "data written before the flag was not seen");
    CHECK(turn == HANDOFFS || team == 1, "turn");
    CHECK(data[LEN - 1] == (HANDOFFS - 1) * 100 + LEN - 1, "final data");
    printf("handoffs %d last %d\n", HANDOFFS, data[LEN - 1]);
    printf("flush_pingpong: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
