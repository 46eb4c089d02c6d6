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

#include "comm/base.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_env_values),
        cmocka_unit_test(test_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
