/* volatile (OpenMP 3.0: a read of a volatile object behaves as if a flush
   of it came before, a write as if one came after): threads hand a token
   along a chain by spinning on a shared volatile int, first upwards (the
   master starts it, every other thread spins on a value another thread
   writes), then downwards (the master spins last); then a data handoff
   through a volatile flag with flushes around it, and a volatile counter
   incremented in turn.  No lock, no barrier inside the chains. */
#include <stdio.h>
#include <omp.h>

static volatile int token;
static volatile long turn;
static volatile int ready;
static int data[64];

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int team = 1, up_seen = 0, down_seen = 0, bad_data = 0;
#pragma omp parallel reduction(+ : up_seen, down_seen, bad_data)
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp master
        team = n;
        /* upwards: 0 writes 1; thread k waits for k, writes k + 1 */
        if (me == 0) {
            token = 1;
        } else {
            while (token != me) {
                /* spin */
            }
            up_seen++;
            token = me + 1;
        }
#pragma omp barrier
        /* downwards: the last thread starts, the master ends it */
        if (me == n - 1) {
            turn = n == 1 ? 0 : n - 1;
        } else {
            while (turn != me + 1) {
                /* spin */
            }
            down_seen++;
            turn = me;
        }
#pragma omp barrier
        /* data through a volatile flag, with flushes (the OpenMP idiom):
           the master publishes, every other thread reads */
        if (me == 0) {
            for (int i = 0; i < 64; i++)
                data[i] = i * 7 + 3;
#pragma omp flush
            ready = 1;
        } else {
            while (ready == 0) {
                /* spin */
            }
#pragma omp flush
            for (int i = 0; i < 64; i++)
                if (data[i] != i * 7 + 3)
                    bad_data++;
        }
    }
    CHECK(token == team, "token after the upward chain");
    CHECK(turn == 0, "turn after the downward chain");
    CHECK(up_seen == team - 1, "threads that saw their token");
    CHECK(down_seen == team - 1, "threads that saw their turn");
    CHECK(bad_data == 0, "data published through a volatile flag");
    printf("team %d token %d turn %ld up %d down %d\n", team, token, turn,
           up_seen, down_seen);
    printf("volatile_spin: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
