/* tests/launch/test_opts.c - unit tests of ompdsmrun's command-line parsing
 * and program lookup (comm/launch/opts.c), with cmocka. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/launch/launch.h"

#define ARGV(...) ((char *[]){"ompdsmrun", __VA_ARGS__, NULL})
#define ARGC(v) ((int)(sizeof(v) / sizeof(v[0])) - 1)

static struct launch_opts o;
static char err[512];

/* Parses a NULL-terminated argv; returns the result code. */
static int parse(char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return launch_parse_opts(argc, argv, &o, err, sizeof err);
}

static void expect_error(char **argv, const char *fragment)
{
    assert_int_equal(parse(argv), -EINVAL);
    if (!strstr(err, fragment))
        fail_msg("error '%s' does not mention '%s'", err, fragment);
    assert_null(strchr(err, '\n'));
}

static void test_np_forms(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("-np", "4", "prog")), 0);
    assert_int_equal(o.np, 4);
    assert_int_equal(parse(ARGV("-n", "2", "prog")), 0);
    assert_int_equal(o.np, 2);
    assert_int_equal(parse(ARGV("--np", "8", "prog")), 0);
    assert_int_equal(o.np, 8);
    assert_int_equal(parse(ARGV("--np=3", "prog")), 0);
    assert_int_equal(o.np, 3);
    assert_int_equal(parse(ARGV("-np", "1", "prog")), 0);
    assert_int_equal(o.np, 1);
    assert_int_equal(parse(ARGV("-np", "4096", "prog")), 0);
    assert_int_equal(o.np, 4096);
    assert_int_equal(o.action, LAUNCH_RUN);
    assert_int_equal(o.bind, LAUNCH_BIND_AUTO);
    assert_true(o.timeout == 0);
    assert_int_equal(o.tag_output, 0);
}

static void test_np_invalid(void **state)
{
    (void)state;
    expect_error(ARGV("-np", "0", "prog"), "'0' is not valid");
    expect_error(ARGV("-np", "-3", "prog"), "'-3' is not valid");
    expect_error(ARGV("-np", "x", "prog"), "'x' is not valid");
    expect_error(ARGV("-np", "4097", "prog"), "from 1 to 4096");
    expect_error(ARGV("-np", "99999999999999999999", "prog"), "not valid");
    expect_error(ARGV("-np", "", "prog"), "not valid");
    expect_error(ARGV("-np", "4x", "prog"), "not valid");
    expect_error(ARGV("-np", "+4", "prog"), "not valid");
    expect_error(ARGV("-np", " 4", "prog"), "not valid");
    expect_error(ARGV("-np", "0x4", "prog"), "not valid");
    expect_error(ARGV("-np"), "needs a value");
    expect_error(ARGV("prog"), "missing -np");
    expect_error(ARGV("-np", "2", "-np", "3", "prog"), "twice");
}

static void test_missing_program(void **state)
{
    (void)state;
    expect_error(ARGV("-np", "2"), "missing the program");
    expect_error(ARGV("-np", "2", "--"), "missing the program");
    expect_error(ARGV("-np", "2", "--tag-output"), "missing the program");
}

static void test_unknown_option(void **state)
{
    (void)state;
    expect_error(ARGV("-np", "2", "--frobnicate", "prog"), "--frobnicate");
    expect_error(ARGV("-y", "-np", "2", "prog"), "unknown option '-y'");
    expect_error(ARGV("-np", "2", "--tag-output=yes", "prog"),
                 "takes no value");
    expect_error(ARGV("-np", "2", "--hostfile-x", "h", "prog"), "unknown");
}

static void test_bind(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("-np", "2", "--bind-to", "core", "p")), 0);
    assert_int_equal(o.bind, LAUNCH_BIND_CORE);
    assert_int_equal(parse(ARGV("-np", "2", "--bind-to=none", "p")), 0);
    assert_int_equal(o.bind, LAUNCH_BIND_NONE);
    expect_error(ARGV("-np", "2", "--bind-to", "socket", "p"),
                 "expected core or none");
    expect_error(ARGV("-np", "2", "--bind-to", "CORE", "p"), "'CORE'");
    expect_error(ARGV("-np", "2", "--bind-to"), "needs a value");
}

/* --threads-per-node passes OMPDSM_THREADS_PER_NODE to every node (as an
 * -x after the others); the binding stays as given (the default is
 * decided with the CPUs at hand: launch_decide_bind). */
static void test_threads_per_node(void **state)
{
    (void)state;
    unsetenv("OMPDSM_THREADS_PER_NODE");
    assert_int_equal(parse(ARGV("-np", "2", "-x", "A=1", "--threads-per-node",
                                "4", "p")), 0);
    assert_int_equal(o.threads_per_node, 4);
    assert_int_equal(o.nxvars, 2);
    assert_string_equal(o.xvars[1], "OMPDSM_THREADS_PER_NODE=4");
    assert_int_equal(o.bind, LAUNCH_BIND_AUTO);
    assert_int_equal(parse(ARGV("-np", "2", "--threads-per-node=auto", "p")), 0);
    assert_int_equal(o.threads_per_node, -1);
    assert_string_equal(o.xvars[0], "OMPDSM_THREADS_PER_NODE=auto");
    assert_int_equal(o.bind, LAUNCH_BIND_AUTO);
    /* one thread per node: binding as before; an explicit one stays */
    assert_int_equal(parse(ARGV("-np", "2", "--threads-per-node", "1", "p")), 0);
    assert_int_equal(o.bind, LAUNCH_BIND_AUTO);
    assert_int_equal(parse(ARGV("-np", "2", "--threads-per-node", "2",
                                "--bind-to", "core", "p")), 0);
    assert_int_equal(o.bind, LAUNCH_BIND_CORE);
    /* the variable in the launcher's environment does the same */
    setenv("OMPDSM_THREADS_PER_NODE", "2", 1);
    assert_int_equal(parse(ARGV("-np", "2", "p")), 0);
    assert_int_equal(o.bind, LAUNCH_BIND_AUTO);
    unsetenv("OMPDSM_THREADS_PER_NODE");
    assert_int_equal(parse(ARGV("-np", "2", "p")), 0);
    assert_int_equal(o.bind, LAUNCH_BIND_AUTO);
    expect_error(ARGV("-np", "2", "--threads-per-node", "0", "p"), "'0'");
    expect_error(ARGV("-np", "2", "--threads-per-node", "257", "p"), "'257'");
    expect_error(ARGV("-np", "2", "--threads-per-node", "two", "p"), "auto");
    expect_error(ARGV("-np", "2", "--threads-per-node", "2",
                      "--threads-per-node", "2", "p"), "twice");
}

static void test_timeout_and_tag(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("-np", "2", "--timeout", "5",
                                "--tag-output", "p")), 0);
    assert_true(o.timeout == 5.0);
    assert_int_equal(o.tag_output, 1);
    assert_int_equal(parse(ARGV("-np", "2", "--timeout=0.25", "p")), 0);
    assert_true(o.timeout == 0.25);
    assert_int_equal(parse(ARGV("-np", "2", "--timeout", "0", "p")), 0);
    assert_true(o.timeout == 0);
    expect_error(ARGV("-np", "2", "--timeout", "-1", "p"), "'-1'");
    expect_error(ARGV("-np", "2", "--timeout", "inf", "p"), "'inf'");
    expect_error(ARGV("-np", "2", "--timeout", "1.2.3", "p"), "not valid");
    expect_error(ARGV("-np", "2", "--timeout", "5s", "p"), "not valid");
}

/* Everything from the program on belongs to the program. */
static void test_program_args_untouched(void **state)
{
    (void)state;
    char **argv = ARGV("-np", "2", "prog", "-np", "5", "--tag-output", "--");
    assert_int_equal(parse(argv), 0);
    assert_int_equal(o.np, 2);
    assert_int_equal(o.tag_output, 0);
    assert_int_equal(o.prog_argc, 5);
    assert_ptr_equal(o.prog_argv, argv + 3);
    assert_string_equal(o.prog_argv[0], "prog");
    assert_string_equal(o.prog_argv[1], "-np");
    assert_string_equal(o.prog_argv[2], "5");
    assert_string_equal(o.prog_argv[3], "--tag-output");
    assert_string_equal(o.prog_argv[4], "--");
    assert_null(o.prog_argv[5]);
}

static void test_double_dash(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("-np", "2", "--", "-weird", "--help")), 0);
    assert_int_equal(o.prog_argc, 2);
    assert_string_equal(o.prog_argv[0], "-weird");
    assert_string_equal(o.prog_argv[1], "--help");
    assert_int_equal(o.action, LAUNCH_RUN);
    /* Options may follow each other in any order before the program. */
    assert_int_equal(parse(ARGV("--tag-output", "--bind-to", "none", "-n",
                                "3", "--", "prog", "--")), 0);
    assert_int_equal(o.np, 3);
    assert_int_equal(o.prog_argc, 2);
    assert_string_equal(o.prog_argv[1], "--");
}

static void test_help_version(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("--help")), 0);
    assert_int_equal(o.action, LAUNCH_HELP);
    assert_int_equal(parse(ARGV("-np", "x", "--help")), -EINVAL);
    assert_int_equal(parse(ARGV("-h")), 0);
    assert_int_equal(o.action, LAUNCH_HELP);
    assert_int_equal(parse(ARGV("--version")), 0);
    assert_int_equal(o.action, LAUNCH_VERSION);
    /* After the program, --help is the program's. */
    assert_int_equal(parse(ARGV("-np", "1", "prog", "--help")), 0);
    assert_int_equal(o.action, LAUNCH_RUN);
    assert_non_null(strstr(launch_usage, "-np N"));
}

/* ---- program lookup ---- */

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ompdsm-opts-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char p[128];
    snprintf(p, sizeof p, "%s/runme", dir);
    int fd = open(p, O_CREAT | O_WRONLY, 0755);
    (void)!write(fd, "#!/bin/sh\n", 10);
    close(fd);
    snprintf(p, sizeof p, "%s/noexec", dir);
    fd = open(p, O_CREAT | O_WRONLY, 0644);
    close(fd);
    snprintf(p, sizeof p, "%s/subdir", dir);
    mkdir(p, 0755);
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char p[160];
    const char *names[] = {"runme", "noexec"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/subdir", dir);
    rmdir(p);
    rmdir(dir);
    return 0;
}

static void test_find_program(void **state)
{
    (void)state;
    char *path = NULL, p[160];

    setenv("PATH", "/nonexistent-dir", 1);
    assert_int_equal(launch_find_program("runme", &path, err, sizeof err),
                     -ENOENT);
    assert_non_null(strstr(err, "not found"));

    snprintf(p, sizeof p, "/nonexistent-dir:%s", dir);
    setenv("PATH", p, 1);
    assert_int_equal(launch_find_program("runme", &path, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/runme", dir);
    assert_string_equal(path, p);
    free(path);

    /* root may execute anything with an x bit; a file without any is
     * refused even for root. */
    assert_int_equal(launch_find_program("noexec", &path, err, sizeof err),
                     -EACCES);
    assert_non_null(strstr(err, "not executable"));
    assert_int_equal(launch_find_program("subdir", &path, err, sizeof err),
                     -EISDIR);

    snprintf(p, sizeof p, "%s/runme", dir);
    assert_int_equal(launch_find_program(p, &path, err, sizeof err), 0);
    free(path);
    snprintf(p, sizeof p, "%s/missing", dir);
    assert_int_equal(launch_find_program(p, &path, err, sizeof err),
                     -ENOENT);
    assert_non_null(strstr(err, "missing"));
    snprintf(p, sizeof p, "%s/noexec", dir);
    assert_int_equal(launch_find_program(p, &path, err, sizeof err),
                     -EACCES);
    assert_int_equal(launch_find_program("", &path, err, sizeof err),
                     -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_np_forms),
        cmocka_unit_test(test_np_invalid),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_bind),
        cmocka_unit_test(test_threads_per_node),
        cmocka_unit_test(test_timeout_and_tag),
        cmocka_unit_test(test_program_args_untouched),
        cmocka_unit_test(test_double_dash),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test_setup_teardown(test_find_program, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
