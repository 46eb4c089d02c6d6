/* tests/unit/test_env.c - strict parsing of sizes, numbers and schedules
 * (the values of OMPDSM_* and OMP_* variables). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "comm/util/base.h"
#include "runtime/rt.h"

static void test_u64(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(ompdsm_parse_u64("0", 0, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(ompdsm_parse_u64("  42 ", 0, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(ompdsm_parse_u64("16G", 1, &v), 0);
    assert_int_equal(v, 16ull << 30);
    assert_int_equal(ompdsm_parse_u64("4k", 1, &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(ompdsm_parse_u64("2MiB", 1, &v), 0);
    assert_int_equal(v, 2u << 20);
    assert_int_equal(ompdsm_parse_u64("3MB", 1, &v), 0);
    assert_int_equal(v, 3u << 20);
    assert_int_equal(ompdsm_parse_u64("1T", 1, &v), 0);
    assert_int_equal(v, 1ull << 40);
    /* Rejected: suffix where not allowed, garbage, signs, empty, overflow. */
    assert_int_equal(ompdsm_parse_u64("16G", 0, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("12x", 1, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("-1", 0, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("", 0, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("G", 1, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("99999999999999999999", 0, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("20000000000T", 1, &v), -EINVAL);
    assert_int_equal(ompdsm_parse_u64("1 2", 0, &v), -EINVAL);
}

static void test_env_values(void **state)
{
    (void)state;
    setenv("OMPDSM_TEST_X", "8M", 1);
    assert_int_equal(ompdsm_env_u64("OMPDSM_TEST_X", 1, 0, 1ull << 40, 1), 8u << 20);
    unsetenv("OMPDSM_TEST_X");
    assert_int_equal(ompdsm_env_u64("OMPDSM_TEST_X", 77, 0, 100, 0), 77);
    setenv("OMPDSM_TEST_B", "yes", 1);
    assert_int_equal(ompdsm_env_bool("OMPDSM_TEST_B", 0), 1);
    setenv("OMPDSM_TEST_B", "OFF", 1);
    assert_int_equal(ompdsm_env_bool("OMPDSM_TEST_B", 1), 0);
    static const char *const ch[] = {"shm", "tcp"};
    setenv("OMPDSM_TEST_C", "TCP", 1);
    assert_int_equal(ompdsm_env_choice("OMPDSM_TEST_C", ch, 2, 0), 1);
}

static void test_schedule(void **state)
{
    (void)state;
    int k;
    long long c;
    assert_int_equal(rt_parse_schedule("static", &k, &c), 0);
    assert_int_equal(k, OMPDSM_SCHED_STATIC);
    assert_int_equal(c, 0);
    assert_int_equal(rt_parse_schedule("dynamic,4", &k, &c), 0);
    assert_int_equal(k, OMPDSM_SCHED_DYNAMIC);
    assert_int_equal(c, 4);
    assert_int_equal(rt_parse_schedule(" GUIDED , 7", &k, &c), 0);
    assert_int_equal(k, OMPDSM_SCHED_GUIDED);
    assert_int_equal(c, 7);
    assert_int_equal(rt_parse_schedule("profiled,2", &k, &c), 0);
    assert_int_equal(k, OMPDSM_SCHED_PROFILED);
    assert_int_equal(rt_parse_schedule("auto", &k, &c), 0);
    assert_int_equal(k, OMPDSM_SCHED_AUTO);
    assert_int_equal(rt_parse_schedule("dynamic,0", &k, &c), -EINVAL);
    assert_int_equal(rt_parse_schedule("dynamic,-2", &k, &c), -EINVAL);
    assert_int_equal(rt_parse_schedule("dynamic,", &k, &c), -EINVAL);
    assert_int_equal(rt_parse_schedule("fast", &k, &c), -EINVAL);
    assert_int_equal(rt_parse_schedule("static;3", &k, &c), -EINVAL);
}

/* OMPDSM_PROFILED's per-loop overrides and the fractions of
 * OMPDSM_PROFILED_GAIN / _DRIFT. */
static void test_prof_overrides(void **state)
{
    (void)state;
    struct rt_prof_override *o;
    int n;
    assert_int_equal(rt_parse_prof_overrides("cg.c:512=0,2,1; src/ep.c:7=8 ;*=,3,2;"
                                             "x.c:1=static,4;y.c:2=dynamic;z.c:3=,,5",
                                             &o, &n), 0);
    assert_int_equal(n, 6);
    assert_string_equal(o[0].file, "cg.c");
    assert_int_equal(o[0].line, 512);
    assert_int_equal(o[0].kind, OMPDSM_SCHED_PROFILED);
    assert_true(o[0].chunk == 0 && o[0].eval_size == 2 && o[0].eval_skip == 1);
    assert_string_equal(o[1].file, "src/ep.c");
    assert_true(o[1].chunk == 8 && o[1].eval_size == -1 && o[1].eval_skip == -1);
    assert_string_equal(o[2].file, "*");
    assert_true(o[2].chunk == -1 && o[2].eval_size == 3 && o[2].eval_skip == 2);
    assert_int_equal(o[3].kind, OMPDSM_SCHED_STATIC);
    assert_int_equal(o[3].chunk, 4);
    assert_int_equal(o[4].kind, OMPDSM_SCHED_DYNAMIC);
    assert_true(o[5].chunk == -1 && o[5].eval_size == -1 && o[5].eval_skip == 5);
    free(o);
    assert_int_equal(rt_parse_prof_overrides("", &o, &n), 0);
    assert_int_equal(n, 0);
    free(o);
    static const char *const bad[] = {
        "cg.c=0,1,0", "cg.c:0=1", "cg.c:x=1", ":5=1", "cg.c:5", "cg.c:5=1,2,3,4",
        "cg.c:5=-1", "cg.c:5=1,", "cg.c:5=fast", "cg.c:5=auto", "cg.c:5=1;d.c:6=q",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rt_parse_prof_overrides(bad[i], &o, &n), -EINVAL);
    double d;
    assert_int_equal(rt_parse_fraction("0.05", &d), 0);
    assert_true(d == 0.05);
    assert_int_equal(rt_parse_fraction("0", &d), 0);
    assert_int_equal(rt_parse_fraction(" 1.5 ", &d), 0);
    assert_int_equal(rt_parse_fraction("-0.1", &d), -EINVAL);
    assert_int_equal(rt_parse_fraction("5%", &d), -EINVAL);
    assert_int_equal(rt_parse_fraction("nan", &d), -EINVAL);
    assert_int_equal(rt_parse_fraction("", &d), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_env_values),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_prof_overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
