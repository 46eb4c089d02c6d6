/* tests/dsm/lockpc.c - producer/consumer through locks, and mutual
 * exclusion: nodes pass items through a shared queue protected by one lock
 * (each item's payload written before the unlock must be seen by whoever
 * takes it), and increment a shared counter and a shared array with plain
 * read-modify-writes inside a second lock. */
#include "dsmtest.h"

#include <string.h>

enum { CAP = 64, ITEMS = 300, PAYLOAD = 200, BUMPS = 200 };

struct item {
    int64_t seq;
    int64_t producer;
    int64_t data[PAYLOAD];
};
struct g {
    int64_t head, tail;          /* queue indices */
    int64_t consumed_sum;
    int64_t counter;
    int64_t per_node[64];
    struct item q[CAP];
};

int main(void)
{
    struct g *g;
    t_start(sizeof *g, (void **)&g);
    enum { QLOCK = T_LOCK_BASE + 1, CLOCK = T_LOCK_BASE + 2 };
    int producers = T_size > 1 ? T_size / 2 : 1;
    int is_prod = T_rank < producers || T_size == 1;
    int is_cons = T_rank >= producers || T_size == 1;
    int64_t total = (int64_t)ITEMS * producers;
    int64_t produced = 0, expected_sum = 0;
    for (int p = 0; p < producers; p++)
        for (int i = 0; i < ITEMS; i++)
            expected_sum += (int64_t)p * 100000 + i;
    int done = 0;
    while (!done) {
        dsm_lock(QLOCK);
        if (is_prod && produced < ITEMS && g->tail - g->head < CAP) {
            struct item *it = &g->q[g->tail % CAP];
            it->seq = produced;
            it->producer = T_rank;
            for (int k = 0; k < PAYLOAD; k++)
                it->data[k] = (int64_t)T_rank * 100000 + produced + k;
            g->tail++;
            produced++;
        } else if (is_cons && g->head < g->tail) {
            struct item *it = &g->q[g->head % CAP];
            for (int k = 0; k < PAYLOAD; k++)
                if (it->data[k] != it->producer * 100000 + it->seq + k)
                    T_FAIL("item %lld of node %lld: data[%d] = %lld",
                           (long long)it->seq, (long long)it->producer, k,
                           (long long)it->data[k]);
            g->consumed_sum += it->producer * 100000 + it->seq;
            g->head++;
        }
        done = g->head == total && (!is_prod || produced == ITEMS);
        dsm_unlock(QLOCK);
    }
    for (int b = 0; b < BUMPS; b++) {
        dsm_lock(CLOCK);
        int64_t c = g->counter;
        g->counter = c + 1;
        g->per_node[T_rank % 64] += 2;
        dsm_unlock(CLOCK);
    }
    t_barrier();
    if (g->consumed_sum != expected_sum)
        T_FAIL("consumed sum %lld, expected %lld", (long long)g->consumed_sum,
               (long long)expected_sum);
    if (g->counter != (int64_t)BUMPS * T_size)
        T_FAIL("counter %lld, expected %lld", (long long)g->counter,
               (long long)BUMPS * T_size);
    for (int r = 0; r < T_size && r < 64; r++)
        if (g->per_node[r] != 2 * BUMPS)
            T_FAIL("per_node[%d] = %lld", r, (long long)g->per_node[r]);
    /* trylock: exactly one node gets a free lock per round. */
    for (int round = 0; round < 5; round++) {
        int64_t got = dsm_trylock(CLOCK + 1 + round);
        comm_allreduce(COMM_WORLD, &got, 1, COMM_INT64, COMM_SUM);
        if (got != 1)
            T_FAIL("trylock round %d: %lld nodes got the lock", round, (long long)got);
        t_barrier();
    }
    return t_finish();
}
