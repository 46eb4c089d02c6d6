/* tests/unit/test_notice.c - write notices: normalising and merging page
 * ranges, writer attribution (a page written by two nodes is MULTI) and
 * snapshots (a one-page notice keeps its writer's snapshot only while
 * nothing else is said of its page), checked against a per-page model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsm/dsm_int.h"

enum { NP = 512, NONE = -2 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Expands a list to a per-page writer array; checks sortedness/disjointness. */
static void expand(const struct notice_list *l, int *w)
{
    for (int i = 0; i < NP; i++)
        w[i] = NONE;
    uint64_t prev_end = 0;
    for (size_t i = 0; i < l->n; i++) {
        assert_true(l->v[i].npages > 0);
        assert_true(l->v[i].page >= prev_end);
        /* Coalesced: adjacent ranges share a writer only where one has a
         * snapshot, which belongs to one page. */
        if (i && l->v[i].page == prev_end && l->v[i].writer == l->v[i - 1].writer)
            assert_true(l->v[i].snap || l->v[i - 1].snap);
        if (l->v[i].npages > 1)
            assert_true(l->v[i].snap == 0);
        for (uint32_t k = 0; k < l->v[i].npages; k++)
            w[l->v[i].page + k] = l->v[i].writer;
        prev_end = (uint64_t)l->v[i].page + l->v[i].npages;
    }
}

static void random_list(struct notice_list *l, int *model, int writer)
{
    int n = (int)(next() % 20);
    for (int i = 0; i < n; i++) {
        uint32_t p = (uint32_t)(next() % (NP - 40)), len = 1 + (uint32_t)(next() % 30);
        notice_push(l, p, len, writer);
        for (uint32_t k = 0; k < len; k++)
            model[p + k] = writer;
    }
    notice_normalize(l);
}

static void test_normalize(void **state)
{
    (void)state;
    for (int iter = 0; iter < 500; iter++) {
        struct notice_list l = {0};
        int model[NP], got[NP];
        for (int i = 0; i < NP; i++)
            model[i] = NONE;
        random_list(&l, model, 3);
        expand(&l, got);
        assert_memory_equal(model, got, sizeof model);
        notice_free(&l);
    }
}

static void test_merge(void **state)
{
    (void)state;
    for (int iter = 0; iter < 1000; iter++) {
        struct notice_list a = {0}, b = {0}, c = {0}, ab = {0}, abc = {0};
        int ma[NP], mb[NP], mc[NP], got[NP];
        for (int i = 0; i < NP; i++)
            ma[i] = mb[i] = mc[i] = NONE;
        random_list(&a, ma, 0);
        random_list(&b, mb, 1);
        random_list(&c, mc, (int)(next() % 2)); /* sometimes a repeat writer */
        notice_merge(a.v, a.n, b.v, b.n, &ab);
        notice_merge(ab.v, ab.n, c.v, c.n, &abc);
        expand(&abc, got);
        for (int i = 0; i < NP; i++) {
            int ws[3] = {ma[i], mb[i], mc[i]}, who = NONE;
            for (int k = 0; k < 3; k++) {
                if (ws[k] == NONE)
                    continue;
                if (who == NONE)
                    who = ws[k];
                else if (who != ws[k])
                    who = NOTICE_MULTI;
            }
            assert_int_equal(got[i], who);
        }
        notice_free(&a);
        notice_free(&b);
        notice_free(&c);
        notice_free(&ab);
        notice_free(&abc);
    }
}

/* Overlapping entries of different writers in one list (the barrier's
 * root adds its own reduction writes to everyone's notices). */
static void test_normalize_mixed(void **state)
{
    (void)state;
    struct notice_list l = {0};
    notice_push(&l, 10, 10, 1);
    notice_push(&l, 15, 10, 2);
    notice_push(&l, 40, 2, 2);
    notice_normalize(&l);
    int got[NP];
    expand(&l, got);
    for (int i = 10; i < 15; i++)
        assert_int_equal(got[i], 1);
    for (int i = 15; i < 20; i++)
        assert_int_equal(got[i], NOTICE_MULTI);
    for (int i = 20; i < 25; i++)
        assert_int_equal(got[i], 2);
    assert_int_equal(got[40], 2);
    assert_int_equal(got[42], NONE);
    notice_free(&l);
}

/* What the model says of a page's snapshot: the snapshot of the one push
 * of one page that named it, if that was all that was said of the page. */
enum { SNAP_NONE = 0 };
struct snap_model {
    int said;       /* pushes that covered the page */
    uint64_t snap;  /* the snapshot of the single push, if one */
};

static void random_snaps(struct notice_list *l, int *model, struct snap_model *sm,
                         int writer, uint64_t *next_snap)
{
    int n = (int)(next() % 20);
    for (int i = 0; i < n; i++) {
        uint32_t p = (uint32_t)(next() % (NP - 40)), len = 1 + (uint32_t)(next() % 30);
        uint64_t snap = 0;
        if (next() % 2) {
            len = 1;
            snap = ++*next_snap;
            notice_push_snap(l, p, writer, snap);
        } else {
            notice_push(l, p, len, writer);
        }
        for (uint32_t k = 0; k < len; k++) {
            model[p + k] = writer;
            sm[p + k].said++;
            sm[p + k].snap = snap;
        }
    }
    notice_normalize(l);
}

static void check_snaps(const struct notice_list *l, const struct snap_model *sm)
{
    for (size_t i = 0; i < l->n; i++)
        for (uint32_t k = 0; k < l->v[i].npages; k++) {
            const struct snap_model *m = &sm[l->v[i].page + k];
            uint64_t want = m->said == 1 ? m->snap : SNAP_NONE;
            assert_true(l->v[i].snap == want);
        }
}

static void test_snap_normalize(void **state)
{
    (void)state;
    uint64_t ns = 0;
    for (int iter = 0; iter < 500; iter++) {
        struct notice_list l = {0};
        int model[NP], got[NP];
        struct snap_model sm[NP];
        memset(sm, 0, sizeof sm);
        for (int i = 0; i < NP; i++)
            model[i] = NONE;
        random_snaps(&l, model, sm, 3, &ns);
        expand(&l, got);
        assert_memory_equal(model, got, sizeof model);
        check_snaps(&l, sm);
        notice_free(&l);
    }
}

/* Through merges of three writers' lists: a snapshot survives only on a
 * page that one push of one list named. */
static void test_snap_merge(void **state)
{
    (void)state;
    uint64_t ns = 0;
    for (int iter = 0; iter < 1000; iter++) {
        struct notice_list a = {0}, b = {0}, c = {0}, ab = {0}, abc = {0};
        int ma[NP], mb[NP], mc[NP], got[NP];
        struct snap_model sm[NP];
        memset(sm, 0, sizeof sm);
        for (int i = 0; i < NP; i++)
            ma[i] = mb[i] = mc[i] = NONE;
        random_snaps(&a, ma, sm, 0, &ns);
        random_snaps(&b, mb, sm, 1, &ns);
        random_snaps(&c, mc, sm, (int)(next() % 2), &ns);
        notice_merge(a.v, a.n, b.v, b.n, &ab);
        notice_merge(ab.v, ab.n, c.v, c.n, &abc);
        expand(&abc, got);
        check_snaps(&abc, sm);
        notice_free(&a);
        notice_free(&b);
        notice_free(&c);
        notice_free(&ab);
        notice_free(&abc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_normalize_mixed),
        cmocka_unit_test(test_snap_normalize),
        cmocka_unit_test(test_snap_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
