/* tests/unit/test_diff.c - twins and diffs: apply(diff(twin, page)) must
 * give back the page for random pages and random changes, including runs
 * that start or end inside a word and the last word of the page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsm/dsm_int.h"

enum { PAGE = 4096 };

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A random twin and a copy with up to 63 random stretches changed; with
 * `gaps`, a quarter of the bytes inside a stretch stay unchanged. */
static void random_pages(unsigned char *twin, unsigned char *cur, int gaps)
{
    for (size_t i = 0; i < PAGE; i++)
        twin[i] = (unsigned char)next();
    memcpy(cur, twin, PAGE);
    int changes = (int)(next() % 64);
    for (int c = 0; c < changes; c++) {
        size_t at = next() % PAGE, len = 1 + next() % 40;
        for (size_t j = at; j < at + len && j < PAGE; j++)
            if (!gaps || next() % 4)
                cur[j] = (unsigned char)next();
    }
}

/* Checks that runs are sorted, disjoint, inside the page, non-empty, that
 * their first and last bytes really changed, and that every changed byte is
 * covered. */
static void check_runs(const unsigned char *twin, const unsigned char *cur,
                       const struct comm_run *runs, size_t n)
{
    unsigned char covered[PAGE] = {0};
    size_t prev_end = 0;
    for (size_t k = 0; k < n; k++) {
        assert_true(runs[k].len > 0);
        assert_true(runs[k].off >= prev_end);
        assert_true(runs[k].off + runs[k].len <= PAGE);
        assert_true(twin[runs[k].off] != cur[runs[k].off]);
        assert_true(twin[runs[k].off + runs[k].len - 1] !=
                    cur[runs[k].off + runs[k].len - 1]);
        memset(covered + runs[k].off, 1, runs[k].len);
        prev_end = runs[k].off + runs[k].len;
    }
    for (size_t i = 0; i < PAGE; i++)
        if (twin[i] != cur[i])
            assert_true(covered[i]);
}

static void roundtrip(unsigned char *twin, unsigned char *cur)
{
    static struct comm_run runs[PAGE / 2 + 1];
    size_t n = diff_page(twin, cur, PAGE, runs);
    check_runs(twin, cur, runs, n);
    unsigned char *home = malloc(PAGE);
    memcpy(home, twin, PAGE);
    diff_apply(home, cur, runs, n);
    assert_memory_equal(home, cur, PAGE);
    free(home);
}

static void test_random_pages(void **state)
{
    (void)state;
    unsigned char *twin = aligned_alloc(64, PAGE), *cur = aligned_alloc(64, PAGE);
    for (int iter = 0; iter < 2000; iter++) {
        random_pages(twin, cur, 0);
        roundtrip(twin, cur);
    }
    free(twin);
    free(cur);
}

static void test_edges(void **state)
{
    (void)state;
    unsigned char twin[PAGE] __attribute__((aligned(64))) = {0};
    unsigned char cur[PAGE] __attribute__((aligned(64)));
    static struct comm_run runs[PAGE / 2 + 1];
    /* No change: no runs. */
    memcpy(cur, twin, PAGE);
    assert_int_equal(diff_page(twin, cur, PAGE, runs), 0);
    /* The very last byte. */
    cur[PAGE - 1] = 7;
    assert_int_equal(diff_page(twin, cur, PAGE, runs), 1);
    assert_int_equal(runs[0].off, PAGE - 1);
    assert_int_equal(runs[0].len, 1);
    /* The very first byte. */
    memcpy(cur, twin, PAGE);
    cur[0] = 1;
    assert_int_equal(diff_page(twin, cur, PAGE, runs), 1);
    assert_int_equal(runs[0].off, 0);
    assert_int_equal(runs[0].len, 1);
    /* A run across a word boundary, trimmed to its bytes: bytes 5..10. */
    memcpy(cur, twin, PAGE);
    for (int i = 5; i <= 10; i++)
        cur[i] = 0xff;
    assert_int_equal(diff_page(twin, cur, PAGE, runs), 1);
    assert_int_equal(runs[0].off, 5);
    assert_int_equal(runs[0].len, 6);
    /* Changed bytes separated by unchanged ones are separate runs, also
     * inside one word (another node may own the bytes in between). */
    memcpy(cur, twin, PAGE);
    cur[3] = 1;
    cur[5] = 1;
    cur[20] = 1;
    assert_int_equal(diff_page(twin, cur, PAGE, runs), 3);
    assert_int_equal(runs[1].off, 5);
    assert_int_equal(runs[1].len, 1);
    /* Every byte changed: one run of the whole page. */
    memset(cur, 0xab, PAGE);
    assert_int_equal(diff_page(twin, cur, PAGE, runs), 1);
    assert_int_equal(runs[0].len, PAGE);
    /* Alternating bytes: the worst case count. */
    memcpy(cur, twin, PAGE);
    for (int i = 0; i < PAGE; i += 2)
        cur[i] = 1;
    assert_int_equal(diff_page(twin, cur, PAGE, runs), PAGE / 2);
    roundtrip(twin, cur);
}

/* Interleaved writers: applying each writer's diff in any order gives the
 * union of their writes (multiple-writer protocol at byte granularity). */
static void test_interleaved_writers(void **state)
{
    (void)state;
    unsigned char base[PAGE], a[PAGE], b[PAGE], home[PAGE];
    static struct comm_run ra[PAGE / 2 + 1], rb[PAGE / 2 + 1];
    for (size_t i = 0; i < PAGE; i++)
        base[i] = (unsigned char)next();
    memcpy(a, base, PAGE);
    memcpy(b, base, PAGE);
    for (size_t i = 0; i < PAGE; i++) {
        if (i % 2)
            a[i] = (unsigned char)(base[i] ^ 0x5a);
        else
            b[i] = (unsigned char)(base[i] ^ 0xa5);
    }
    size_t na = diff_page(base, a, PAGE, ra), nb = diff_page(base, b, PAGE, rb);
    memcpy(home, base, PAGE);
    diff_apply(home, b, rb, nb);
    diff_apply(home, a, ra, na);
    for (size_t i = 0; i < PAGE; i++)
        assert_int_equal(home[i], i % 2 ? a[i] : b[i]);
}

/* Diffs at a granule of g bytes: runs are g-aligned whole granules, every
 * granule with a changed byte is in one, no granule without a change is,
 * and applying gives back the page; writers of interleaved elements of g
 * bytes (doubles for g = 8) still merge at the home. */
static void test_granules(void **state)
{
    (void)state;
    static struct comm_run runs[PAGE / 2 + 1], rb[PAGE / 2 + 1];
    unsigned char *twin = aligned_alloc(64, PAGE), *cur = aligned_alloc(64, PAGE);
    unsigned char *home = aligned_alloc(64, PAGE), *b = aligned_alloc(64, PAGE);
    for (unsigned g = 1; g <= 8; g *= 2) {
        for (int iter = 0; iter < 500; iter++) {
            random_pages(twin, cur, 1); /* some bytes of a granule alone */
            size_t n = diff_page_g(twin, cur, PAGE, runs, g);
            unsigned char covered[PAGE] = {0};
            size_t prev_end = 0;
            for (size_t k = 0; k < n; k++) {
                assert_true(runs[k].len > 0);
                assert_true(runs[k].off >= prev_end);
                assert_true(runs[k].off % g == 0 && runs[k].len % g == 0);
                assert_true(runs[k].off + runs[k].len <= PAGE);
                memset(covered + runs[k].off, 1, runs[k].len);
                prev_end = runs[k].off + runs[k].len;
            }
            for (size_t i = 0; i < PAGE; i += g) {
                int changed = memcmp(twin + i, cur + i, g) != 0;
                assert_int_equal(covered[i], changed);
            }
            memcpy(home, twin, PAGE);
            diff_apply(home, cur, runs, n);
            assert_memory_equal(home, cur, PAGE);
        }
        /* Two writers of alternate granules (elements). */
        memcpy(cur, twin, PAGE);
        memcpy(b, twin, PAGE);
        for (size_t i = 0; i < PAGE; i++) {
            if ((i / g) % 2)
                cur[i] = (unsigned char)(twin[i] ^ (i % 3 ? 0x5a : 0)); /* some bytes kept */
            else
                b[i] = (unsigned char)(twin[i] ^ (i % 5 ? 0xa5 : 0));
        }
        size_t na = diff_page_g(twin, cur, PAGE, runs, g);
        size_t nb = diff_page_g(twin, b, PAGE, rb, g);
        memcpy(home, twin, PAGE);
        diff_apply(home, b, rb, nb);
        diff_apply(home, cur, runs, na);
        for (size_t i = 0; i < PAGE; i++)
            assert_int_equal(home[i], (i / g) % 2 ? cur[i] : b[i]);
    }
    /* Doubles whose top two bytes did not change: one run, not one a word. */
    double *tw = (double *)(void *)twin, *cu = (double *)(void *)cur;
    for (size_t i = 0; i < PAGE / 8; i++)
        tw[i] = 1.0 + (double)i * 1e-9;
    for (size_t i = 0; i < PAGE / 8; i++)
        cu[i] = tw[i] + 1e-12;
    assert_true(diff_page(twin, cur, PAGE, runs) > PAGE / 16);
    assert_int_equal(diff_page_g(twin, cur, PAGE, runs, 8), 1);
    assert_int_equal(runs[0].len, PAGE);
    free(twin);
    free(cur);
    free(home);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_pages),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_interleaved_writers),
        cmocka_unit_test(test_granules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
