/* tests/unit/test_stats.c - the DSM layer's per-thread counters
 * (dsm/stats.c): threads that count and exit, more of them alive at once
 * than there are blocks (the rest count with atomics), blocks taken again
 * by later threads; the sums equal what the threads counted, and a reader
 * running beside them never sees a sum go down. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "dsm/dsm_int.h"

enum { WAVES = 3, PER_WAVE = 300, COUNTS = 2000 };

static pthread_barrier_t wave_start;
static int stop;

static void *counter(void *arg)
{
    (void)arg;
    /* every thread of a wave alive at once: more than the 256 blocks */
    pthread_barrier_wait(&wave_start);
    for (int i = 0; i < COUNTS; i++) {
        DSM_STAT(lock_acquires, 1);
        DSM_STAT(diff_bytes, 3);
    }
    return NULL;
}

static void *reader(void *arg)
{
    int *bad = arg;
    uint64_t last = 0, last_bytes = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        struct dsm_stats s;
        dsm_stats_get(&s);
        if (s.lock_acquires < last || s.diff_bytes < last_bytes)
            *bad = 1;
        last = s.lock_acquires;
        last_bytes = s.diff_bytes;
    }
    return NULL;
}

static void sums_whole(void **state)
{
    (void)state;
    struct dsm_stats s0;
    dsm_stats_get(&s0);
    int bad = 0;
    pthread_t r;
    assert_int_equal(pthread_create(&r, NULL, reader, &bad), 0);
    for (int w = 0; w < WAVES; w++) {
        pthread_t t[PER_WAVE];
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 64 * 1024);
        assert_int_equal(pthread_barrier_init(&wave_start, NULL, PER_WAVE), 0);
        for (int i = 0; i < PER_WAVE; i++)
            assert_int_equal(pthread_create(&t[i], &a, counter, NULL), 0);
        for (int i = 0; i < PER_WAVE; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&wave_start);
        pthread_attr_destroy(&a);
        struct dsm_stats s;
        dsm_stats_get(&s);
        uint64_t n = (uint64_t)(w + 1) * PER_WAVE * COUNTS;
        assert_int_equal(s.lock_acquires - s0.lock_acquires, n);
        assert_int_equal(s.diff_bytes - s0.diff_bytes, 3 * n);
        assert_int_equal(s.diffs, s0.diffs); /* untouched */
    }
    /* this thread counts too, into a block of its own */
    for (int i = 0; i < 7; i++)
        DSM_STAT(diffs, 1);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(r, NULL);
    struct dsm_stats s;
    dsm_stats_get(&s);
    assert_int_equal(s.diffs - s0.diffs, 7);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(sums_whole)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
