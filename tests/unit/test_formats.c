/* tests/unit/test_formats.c - the dsm layer's packed words: home map
 * entries, node 0's chunk-table entries and lock words.  Each format is
 * round-tripped at its edge values, and its bit layout is checked against
 * words written out here by hand (other nodes and older binaries read
 * these words, so a change of layout must show up as a failure here).
 * Run with one argument naming the format: home, chunk or lockword. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dsm/dsm_int.h"

/* ---- home map entries ---- */

static void home_roundtrip(void **state)
{
    (void)state;
    const int nodes[] = {0, 1, 2, 255, 256, 4095, DSM_HOME_MAX_NODES - 1};
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        assert_int_equal(home_decode(home_encode(nodes[i])), nodes[i]);
        assert_int_not_equal(home_encode(nodes[i]), DSM_HOME_UNKNOWN);
    }
    assert_int_equal(home_decode(DSM_HOME_UNKNOWN), -1);
}

static void home_layout(void **state)
{
    (void)state;
    /* node + 1 in 16 bits; 0 is unknown, so a zeroed map knows nothing. */
    assert_int_equal(DSM_HOME_UNKNOWN, 0);
    assert_int_equal(home_encode(0), 1);
    assert_int_equal(home_encode(7), 8);
    assert_int_equal(home_encode(DSM_HOME_MAX_NODES - 1), 0xfffe);
    uint16_t zeroed = 0;
    assert_int_equal(home_decode(zeroed), -1);
    assert_int_equal(sizeof(*dsm_g.home), 2);
}

/* ---- chunk-table entries ---- */

static void chunk_roundtrip(void **state)
{
    (void)state;
    const int owners[] = {0, 1, 3, 1000, DSM_HOME_MAX_NODES - 1};
    const uint32_t firsts[] = {0, 1, 12345, (1u << 24) - 1};
    const uint64_t dpages[] = {1, 2, 31, 1ull << 32, DSM_CHUNK_DPAGES_MASK};
    for (size_t o = 0; o < sizeof owners / sizeof *owners; o++) {
        uint64_t w[2];
        chunk_ent_encode(w, owners[o], 77, 0);
        struct dsm_chunk_ent e = chunk_ent_decode(w);
        assert_int_equal(e.owner, owners[o]);
        assert_int_equal(e.run, 0);
        for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++)
            for (size_t d = 0; d < sizeof dpages / sizeof *dpages; d++) {
                chunk_ent_encode(w, owners[o], firsts[f], dpages[d]);
                e = chunk_ent_decode(w);
                assert_int_equal(e.owner, owners[o]);
                assert_int_equal(e.run, 1);
                assert_int_equal(e.first, firsts[f]);
                assert_int_equal(e.dpages, dpages[d]);
            }
    }
    /* A never-claimed chunk (node 0's table starts zeroed). */
    uint64_t zero[2] = {0, 0};
    struct dsm_chunk_ent z = chunk_ent_decode(zero);
    assert_int_equal(z.owner, -1);
    assert_int_equal(z.run, 0);
}

static void chunk_layout(void **state)
{
    (void)state;
    uint64_t w[2];
    assert_int_equal(DSM_CHUNK_ENT_SIZE, 2 * sizeof(uint64_t));
    chunk_ent_encode(w, 2, 9, 0);
    assert_true(w[0] == 0x3ull);
    assert_true(w[1] == 0);
    chunk_ent_encode(w, 2, 5, 7);
    assert_true(w[0] == 0x100000003ull);
    assert_true(w[1] == 0x0000050000000007ull);
    chunk_ent_encode(w, 0, 0xabcdef, 0xffffffffffull);
    assert_true(w[0] == 0x100000001ull);
    assert_true(w[1] == 0xabcdefffffffffffull);
    /* Decoding words laid out by hand. */
    uint64_t h[2] = {0x100000010ull, (3ull << 40) | 100};
    struct dsm_chunk_ent e = chunk_ent_decode(h);
    assert_int_equal(e.owner, 15);
    assert_int_equal(e.run, 1);
    assert_int_equal(e.first, 3);
    assert_int_equal(e.dpages, 100);
}

/* ---- lock words ---- */

static void lockword_roundtrip(void **state)
{
    (void)state;
    const int nodes[] = {0, 1, 2, 255, 65534, 0x7ffffffe};
    const uint32_t qs[] = {0, 1, DSM_QNODES - 1, 0xffffffffu};
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
        for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
            uint64_t w = lockword_encode(nodes[i], qs[j]);
            assert_true(w != DSM_LOCKWORD_NONE);
            int n;
            uint32_t q;
            lockword_decode(w, &n, &q);
            assert_int_equal(n, nodes[i]);
            assert_int_equal(q, qs[j]);
        }
}

static void lockword_layout(void **state)
{
    (void)state;
    assert_true(DSM_LOCKWORD_NONE == 0);
    assert_true(lockword_encode(0, 0) == 0x100000000ull);
    assert_true(lockword_encode(3, 17) == 0x400000011ull);
    int n;
    uint32_t q;
    lockword_decode(0x0000000700000123ull, &n, &q);
    assert_int_equal(n, 6);
    assert_int_equal(q, 0x123);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest home[] = {
        cmocka_unit_test(home_roundtrip),
        cmocka_unit_test(home_layout),
    };
    const struct CMUnitTest chunk[] = {
        cmocka_unit_test(chunk_roundtrip),
        cmocka_unit_test(chunk_layout),
    };
    const struct CMUnitTest lockword[] = {
        cmocka_unit_test(lockword_roundtrip),
        cmocka_unit_test(lockword_layout),
    };
    const char *which = argc > 1 ? argv[1] : "";
    if (!strcmp(which, "home"))
        return cmocka_run_group_tests_name("home map entries", home, NULL, NULL);
    if (!strcmp(which, "chunk"))
        return cmocka_run_group_tests_name("chunk-table entries", chunk, NULL,
                                           NULL);
    if (!strcmp(which, "lockword"))
        return cmocka_run_group_tests_name("lock words", lockword, NULL, NULL);
    fprintf(stderr, "usage: %s home|chunk|lockword\n", argv[0]);
    return 2;
}
