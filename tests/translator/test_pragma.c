/* test_pragma.c - unit tests of ompcc's `#pragma omp` parser (pragma.c):
 * directives, clauses and their arguments, the canonical form used by
 * --dump-pragmas, error messages and their offsets, constant arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pragma.h"

/* Parses line; returns the canonical form (caller frees) or NULL and the
 * error in *err. */
static char *parse(const char *line, pragma_msg *err, int *nwarn)
{
    omp_pragma p;
    pragma_msg warns[8];
    int nw = 0;
    tr_sbuf b;
    if (tr_pragma_parse(line, 0, (unsigned)strlen(line), &p, err, warns, &nw, 8) < 0)
        return NULL;
    if (nwarn)
        *nwarn = nw;
    tr_sb_init(&b);
    tr_pragma_format(&p, line, &b);
    tr_pragma_free(&p);
    return tr_sb_take(&b);
}

static void expect_form(const char *line, const char *form)
{
    pragma_msg err;
    char *got = parse(line, &err, NULL);
    if (!got)
        fail_msg("'%s': unexpected error: %s", line, err.msg);
    assert_string_equal(got, form);
    free(got);
}

/* The error message must contain `what` and point at `at` (a substring of
 * the line whose first occurrence is the expected offset). */
static void expect_error(const char *line, const char *what, const char *at)
{
    pragma_msg err;
    char *got = parse(line, &err, NULL);
    if (got)
        fail_msg("'%s': parsed as '%s', expected an error", line, got);
    if (!strstr(err.msg, what))
        fail_msg("'%s': error '%s' does not mention '%s'", line, err.msg, what);
    if (at) {
        const char *pos = strstr(line, at);
        assert_non_null(pos);
        assert_int_equal(err.off, (unsigned)(pos - line));
    }
}

static void test_directives(void **state)
{
    (void)state;
    expect_form("#pragma omp parallel", "parallel");
    expect_form("  #  pragma   omp   parallel for", "parallel for");
    expect_form("#pragma omp parallel sections", "parallel sections");
    expect_form("#pragma omp for", "for");
    expect_form("#pragma omp sections", "sections");
    expect_form("#pragma omp section", "section");
    expect_form("#pragma omp single", "single");
    expect_form("#pragma omp master", "master");
    expect_form("#pragma omp critical", "critical");
    expect_form("#pragma omp critical (lock_a)", "critical(lock_a)");
    expect_form("#pragma omp barrier", "barrier");
    expect_form("#pragma omp atomic", "atomic");
    expect_form("#pragma omp atomic update", "atomic");
    expect_form("#pragma omp flush", "flush");
    expect_form("#pragma omp flush(a, b)", "flush(a, b)");
    expect_form("#pragma omp ordered", "ordered");
    expect_form("#pragma omp threadprivate(x, y)", "threadprivate(x, y)");
    expect_form("#pragma omp task", "task");
    expect_form("#pragma omp taskwait", "taskwait");
    expect_form("#pragma omp taskyield", "taskyield");
}

static void test_clauses(void **state)
{
    (void)state;
    expect_form("#pragma omp parallel if(n > 100) num_threads(nt * 2) "
                "default(none) shared(a) private(i, j) firstprivate(k) "
                "copyin(tp) reduction(+:s)",
                "parallel if(n > 100) num_threads(nt * 2) default(none) "
                "shared(a) private(i, j) firstprivate(k) copyin(tp) "
                "reduction(+: s)");
    expect_form("#pragma omp for schedule(dynamic, 4) collapse(2) ordered nowait "
                "lastprivate(x)",
                "for schedule(dynamic, 4) collapse(2) ordered nowait lastprivate(x)");
    expect_form("#pragma omp for schedule(static)", "for schedule(static)");
    expect_form("#pragma omp for schedule(guided,CH+1)", "for schedule(guided, CH+1)");
    expect_form("#pragma omp for schedule(runtime)", "for schedule(runtime)");
    expect_form("#pragma omp for schedule(auto)", "for schedule(auto)");
    expect_form("#pragma omp single copyprivate(a, b) nowait",
                "single copyprivate(a, b) nowait");
    expect_form("#pragma omp task if(d < 3) untied final(d > 8) mergeable "
                "default(shared) firstprivate(d)",
                "task if(d < 3) untied final(d > 8) mergeable default(shared) "
                "firstprivate(d)");
    /* commas between clauses are optional */
    expect_form("#pragma omp parallel private(a), shared(b)",
                "parallel private(a) shared(b)");
}

static void test_reduction_ops(void **state)
{
    (void)state;
    expect_form("#pragma omp parallel reduction(-:a) reduction(*:b) "
                "reduction(&:c) reduction(|:d) reduction(^:e) reduction(&&:f) "
                "reduction(||:g) reduction(max:h) reduction(min:i)",
                "parallel reduction(-: a) reduction(*: b) reduction(&: c) "
                "reduction(|: d) reduction(^: e) reduction(&&: f) "
                "reduction(||: g) reduction(max: h) reduction(min: i)");
    expect_error("#pragma omp parallel reduction(foo:x)", "reduction operator", "foo");
    expect_error("#pragma omp parallel reduction(+ x)", "':'", "x)");
}

static void test_profiled(void **state)
{
    (void)state;
    expect_form("#pragma omp for schedule(profiled)", "for schedule(profiled)");
    expect_form("#pragma omp for schedule(profiled, 8)", "for schedule(profiled, 8)");
    expect_form("#pragma omp for schedule(profiled, 0, 4, 2)",
                "for schedule(profiled, 0, 4, 2)");
    expect_form("#pragma omp for schedule(profiled, c, n/4, (2))",
                "for schedule(profiled, c, n/4, (2))");
    expect_error("#pragma omp for schedule(profiled, -1)", "must not be negative", "-1");
    expect_error("#pragma omp for schedule(profiled, 1, 2 - 5)", "eval_size", "2 - 5");
    expect_error("#pragma omp for schedule(profiled, 1, 2, -(3))", "eval_skip", "-(3)");
    expect_error("#pragma omp for schedule(profiled, 2.5)", "integer", "2.5");
    expect_error("#pragma omp for schedule(profiled, 1, 2, 3, 4)", "at most", "4)");
    expect_error("#pragma omp for schedule(profiled, )", "expected an expression", NULL);
}

static void test_bad_schedules(void **state)
{
    (void)state;
    expect_error("#pragma omp for schedule(foo)", "unknown schedule kind 'foo'", "foo");
    expect_error("#pragma omp for schedule()", "schedule kind", ")");
    expect_error("#pragma omp for schedule(static, 0)", "must be positive", "0)");
    expect_error("#pragma omp for schedule(dynamic, -2)", "must not be negative", "-2");
    expect_error("#pragma omp for schedule(runtime, 4)", "no chunk size", "4)");
    expect_error("#pragma omp for schedule(static, 1, 2)", "at most a chunk", "2)");
    expect_error("#pragma omp for schedule(static) schedule(dynamic)",
                 "more than one 'schedule'", "schedule(dynamic)");
}

static void test_bad_clauses(void **state)
{
    (void)state;
    expect_error("#pragma omp parallel num_threads()", "expected an expression", ")");
    expect_error("#pragma omp parallel num_threads(a b)", "unexpected 'b'", "b)");
    expect_error("#pragma omp parallel if()", "expected an expression", ")");
    expect_error("#pragma omp parallel frobnicate(3)", "unknown OpenMP clause 'frobnicate'",
                 "frobnicate");
    expect_error("#pragma omp parallel nowait", "not valid on '#pragma omp parallel'",
                 "nowait");
    expect_error("#pragma omp for copyin(x)", "not valid", "copyin");
    expect_error("#pragma omp parallel for nowait", "not valid", "nowait");
    expect_error("#pragma omp parallel private(a,)", "expected a variable name", ")");
    expect_error("#pragma omp parallel private(1)", "expected a variable name", "1)");
    expect_error("#pragma omp parallel default(private)", "'shared' or 'none'", "private)");
    expect_error("#pragma omp parallel private(a ) shared(b, a)",
                 "'a' appears in both 'private' and 'shared'", "a)");
    expect_error("#pragma omp parallel private(b, a, a)", "more than once", "a)");
    expect_error("#pragma omp for collapse(0)", "positive integer constant", "0");
    expect_error("#pragma omp for collapse(n)", "positive integer constant", "n)");
    expect_error("#pragma omp for ordered(2)", "not supported", "(2)");
    expect_error("#pragma omp barrier nowait", "not valid", "nowait");
    expect_error("#pragma omp parallel num_threads(4", "missing ')'", "(4");
    /* firstprivate and lastprivate may name the same variable */
    expect_form("#pragma omp for firstprivate(x) lastprivate(x)",
                "for firstprivate(x) lastprivate(x)");
}

static void test_bad_directives(void **state)
{
    (void)state;
    expect_error("#pragma omp", "expected an OpenMP directive", NULL);
    expect_error("#pragma omp frobnicate", "unknown OpenMP directive 'frobnicate'",
                 "frobnicate");
    expect_error("#pragma omp target teams", "unsupported OpenMP directive 'target teams'",
                 "target");
    expect_error("#pragma omp declare reduction(x)", "unsupported", "declare");
    expect_error("#pragma omp atomic capture", "not supported", "capture");
    expect_error("#pragma omp atomic read", "not supported", "read");
    expect_error("#pragma omp critical(", "expected a name", NULL);
    expect_error("#pragma omp threadprivate", "expected '('", NULL);
}

static void test_ignored(void **state)
{
    int nw = -1;
    pragma_msg err;
    char *got;
    (void)state;
    got = parse("#pragma omp parallel for simd safelen(4)", &err, &nw);
    assert_non_null(got);
    assert_string_equal(got, "parallel for");
    assert_int_equal(nw, 2);
    free(got);
    got = parse("#pragma omp simd aligned(a:32) linear(i)", &err, &nw);
    assert_non_null(got);
    assert_int_equal(nw, 3);
    free(got);
    got = parse("#pragma omp parallel proc_bind(close)", &err, &nw);
    assert_non_null(got);
    assert_string_equal(got, "parallel");
    assert_int_equal(nw, 1);
    free(got);
}

static void test_args_ranges(void **state)
{
    const char *line = "#pragma omp parallel for num_threads( n+1 ) schedule(profiled, c, e, s)";
    omp_pragma p;
    pragma_msg err;
    const omp_clause *c;
    (void)state;
    assert_int_equal(tr_pragma_parse(line, 0, (unsigned)strlen(line), &p, &err, NULL, NULL, 0), 0);
    assert_int_equal(p.dir, DIR_PARALLEL_FOR);
    c = tr_pragma_find_clause(&p, CL_NUM_THREADS);
    assert_non_null(c);
    assert_int_equal(c->nargs, 1);
    assert_int_equal(c->args[0].e - c->args[0].b, 3);
    assert_memory_equal(line + c->args[0].b, "n+1", 3);
    c = tr_pragma_find_clause(&p, CL_SCHEDULE);
    assert_non_null(c);
    assert_int_equal(c->sched, SCHED_PROFILED);
    assert_int_equal(c->nargs, 3);
    assert_memory_equal(line + c->args[2].b, "s", 1);
    assert_null(tr_pragma_find_clause(&p, CL_IF));
    tr_pragma_free(&p);
}

static void test_is_omp(void **state)
{
    (void)state;
    assert_true(tr_pragma_is_omp("#pragma omp parallel", 20));
    assert_true(tr_pragma_is_omp("  # pragma\tomp for", 19));
    assert_true(tr_pragma_is_omp("#pragma omp", 11));
    assert_false(tr_pragma_is_omp("#pragma ompx foo", 16));
    assert_false(tr_pragma_is_omp("#pragma once", 12));
    assert_false(tr_pragma_is_omp("#pragmaomp", 10));
    assert_false(tr_pragma_is_omp("x = 1; #pragma omp", 18));
}

static void test_const_eval(void **state)
{
    long long v = 0;
    const char *s;
    (void)state;
    s = "3 * (4 + 2) - 7";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), 1);
    assert_int_equal(v, 11);
    s = "-0x10 + 1";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), 1);
    assert_int_equal(v, -15);
    s = "1 << 4 >> 2";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), 1);
    assert_int_equal(v, 4);
    s = "100ULL / 7 % 5";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), 1);
    assert_int_equal(v, 4);
    s = "n - 1";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), 0);
    s = "1.5";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), -1);
    s = "2e3";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), -1);
    s = "4 / 0";
    assert_int_equal(tr_pragma_const_eval(s, 0, (unsigned)strlen(s), &v), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directives),
        cmocka_unit_test(test_clauses),
        cmocka_unit_test(test_reduction_ops),
        cmocka_unit_test(test_profiled),
        cmocka_unit_test(test_bad_schedules),
        cmocka_unit_test(test_bad_clauses),
        cmocka_unit_test(test_bad_directives),
        cmocka_unit_test(test_ignored),
        cmocka_unit_test(test_args_ranges),
        cmocka_unit_test(test_is_omp),
        cmocka_unit_test(test_const_eval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
