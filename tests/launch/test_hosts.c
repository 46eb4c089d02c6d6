/* tests/launch/test_hosts.c - unit tests of the multi-host options of
 * ompdsmrun (comm/launch/opts.c) and of hostfile and -H parsing and node
 * mapping (comm/launch/hosts.c), with cmocka: every accepted form and every
 * error case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/launch/launch.h"

#define ARGV(...) ((char *[]){"ompdsmrun", __VA_ARGS__, NULL})

static struct launch_opts o;
static struct launch_hosts hs;
static char err[512];

static int parse(char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return launch_parse_opts(argc, argv, &o, err, sizeof err);
}

static void expect_err_text(const char *fragment)
{
    if (!strstr(err, fragment))
        fail_msg("error '%s' does not mention '%s'", err, fragment);
    assert_null(strchr(err, '\n'));
}

static void expect_opt_error(char **argv, const char *fragment)
{
    assert_int_equal(parse(argv), -EINVAL);
    expect_err_text(fragment);
}

static void expect_file_error(const char *text, const char *fragment)
{
    assert_int_equal(launch_parse_hostfile(text, "hf", &hs, err, sizeof err),
                     -EINVAL);
    expect_err_text(fragment);
    assert_int_equal(hs.n, 0);
}

static void expect_list_error(const char *list, const char *fragment)
{
    assert_int_equal(launch_parse_hostlist(list, &hs, err, sizeof err),
                     -EINVAL);
    expect_err_text(fragment);
    assert_int_equal(hs.n, 0);
}

/* ---- options ---- */

static void test_opts_hosts(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("--hostfile", "hf", "prog")), 0);
    assert_string_equal(o.hostfile, "hf");
    assert_null(o.hostlist);
    assert_int_equal(o.np, 0); /* every slot */
    assert_int_equal(parse(ARGV("--machinefile=hf", "-np", "3", "prog")), 0);
    assert_string_equal(o.hostfile, "hf");
    assert_int_equal(o.np, 3);
    assert_int_equal(parse(ARGV("-H", "a,b:2", "prog")), 0);
    assert_string_equal(o.hostlist, "a,b:2");
    assert_int_equal(parse(ARGV("--host", "a", "--map-by", "node",
                                "-npernode", "2", "--oversubscribe", "p")),
                     0);
    assert_int_equal(o.map_by, LAUNCH_MAP_NODE);
    assert_int_equal(o.npernode, 2);
    assert_int_equal(o.oversubscribe, 1);
    assert_int_equal(parse(ARGV("-H", "a", "--map-by=slot", "p")), 0);
    assert_int_equal(o.map_by, LAUNCH_MAP_SLOT);
    assert_int_equal(o.npernode, 0);
    assert_int_equal(o.oversubscribe, 0);
}

static void test_opts_hosts_errors(void **state)
{
    (void)state;
    expect_opt_error(ARGV("-H", "a", "--hostfile", "f", "p"), "once");
    expect_opt_error(ARGV("-H", "a", "-H", "b", "p"), "once");
    expect_opt_error(ARGV("--hostfile", "", "p"), "needs a file name");
    expect_opt_error(ARGV("-H", "a", "--map-by", "core", "p"),
                     "expected slot or node");
    expect_opt_error(ARGV("-H", "a", "--map-by", "node", "--map-by", "slot",
                          "p"), "twice");
    expect_opt_error(ARGV("-H", "a", "-npernode", "0", "p"), "'0' is not");
    expect_opt_error(ARGV("-H", "a", "-npernode", "x", "p"), "not valid");
    expect_opt_error(ARGV("-H", "a", "-npernode", "1", "-npernode", "1",
                          "p"), "twice");
    /* Mapping options mean nothing without hosts. */
    expect_opt_error(ARGV("-np", "2", "--map-by", "node", "p"),
                     "--map-by needs hosts");
    expect_opt_error(ARGV("-np", "2", "-npernode", "1", "p"),
                     "-npernode needs hosts");
    expect_opt_error(ARGV("-np", "2", "--oversubscribe", "p"),
                     "--oversubscribe needs hosts");
    expect_opt_error(ARGV("-np", "2", "--oversubscribe=1", "p"),
                     "takes no value");
    expect_opt_error(ARGV("-H"), "needs a value");
}

static void test_opts_x(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("-np", "2", "-x", "FOO", "-x", "BAR=a b=c",
                                "-x", "_E=", "p")), 0);
    assert_int_equal(o.nxvars, 3);
    assert_string_equal(o.xvars[0], "FOO");
    assert_string_equal(o.xvars[1], "BAR=a b=c");
    assert_string_equal(o.xvars[2], "_E=");
    expect_opt_error(ARGV("-np", "2", "-x", "1A", "p"), "'1A' is not valid");
    expect_opt_error(ARGV("-np", "2", "-x", "A-B=1", "p"), "VAR=VALUE");
    expect_opt_error(ARGV("-np", "2", "-x", "=1", "p"), "not valid");
    expect_opt_error(ARGV("-np", "2", "-x", "", "p"), "not valid");
    expect_opt_error(ARGV("-np", "2", "-x"), "needs a value");
}

static void test_opts_agent(void **state)
{
    (void)state;
    assert_int_equal(parse(ARGV("--agent")), 0);
    assert_int_equal(o.action, LAUNCH_AGENT);
    expect_opt_error(ARGV("--agent", "-np", "2"), "takes nothing else");
    expect_opt_error(ARGV("-np", "2", "--agent"), "takes nothing else");
}

/* ---- hostfile ---- */

static void test_hostfile_forms(void **state)
{
    (void)state;
    const char *text =
        "# a comment line\n"
        "\n"
        "   \t\n"
        "node1 slots=4\n"
        "  node2\tslots=2   # trailing comment\n"
        "user@10.0.0.3\n"
        "n_4.example-x slots=1\r\n"
        "last-without-newline slots=3";
    assert_int_equal(launch_parse_hostfile(text, "hf", &hs, err, sizeof err),
                     0);
    assert_int_equal(hs.n, 5);
    assert_string_equal(hs.h[0].name, "node1");
    assert_int_equal(hs.h[0].slots, 4);
    assert_string_equal(hs.h[1].name, "node2");
    assert_int_equal(hs.h[1].slots, 2);
    assert_string_equal(hs.h[2].name, "user@10.0.0.3");
    assert_int_equal(hs.h[2].slots, 1); /* default */
    assert_string_equal(hs.h[3].name, "n_4.example-x");
    assert_string_equal(hs.h[4].name, "last-without-newline");
    assert_int_equal(hs.h[4].slots, 3);
    launch_hosts_free(&hs);
}

static void test_hostfile_errors(void **state)
{
    (void)state;
    expect_file_error("", "names no host");
    expect_file_error("# only\n\n  # comments\n", "names no host");
    expect_file_error("a slots=0\n", "hf:1: slots='0' is not valid");
    expect_file_error("a\nb slots=-1\n", "hf:2: slots='-1'");
    expect_file_error("a slots=x\n", "expected a number");
    expect_file_error("a slots=\n", "slots=''");
    expect_file_error("a slots=2x\n", "not valid");
    expect_file_error("a slots=99999\n", "from 1 to 4096");
    expect_file_error("a slots=1 slots=2\n", "slots given twice");
    expect_file_error("a max_slots=4\n", "unknown key 'max_slots=4'");
    expect_file_error("a cpus\n", "unknown key 'cpus'");
    expect_file_error("a\n\nb\na slots=2\n", "hf:4: host 'a' is listed twice");
    expect_file_error("-oProxyCommand=x\n", "is not a host name");
    expect_file_error("a;rm slots=1\n", "'a;rm' is not a host name");
    expect_file_error("@a\n", "not a host name");
    expect_file_error("a@\n", "not a host name");
    expect_file_error("a b c d e f g h i\n", "too many words");
    expect_file_error("fe80::1 slots=2\n", "'fe80::1' is an IPv6 address");
    expect_file_error("[::1]\n", "IPv4 only");
}

static void test_load_hosts(void **state)
{
    (void)state;
    char path[] = "/tmp/ompdsm-hosts-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "h1 slots=2\nh2\n", 14), 14);
    close(fd);
    struct launch_opts lo = {.hostfile = path};
    assert_int_equal(launch_load_hosts(&lo, &hs, err, sizeof err), 0);
    assert_int_equal(hs.n, 2);
    assert_int_equal(hs.h[0].slots, 2);
    launch_hosts_free(&hs);
    unlink(path);
    assert_int_equal(launch_load_hosts(&lo, &hs, err, sizeof err), -EINVAL);
    expect_err_text("cannot read hostfile");
    struct launch_opts none = {0};
    assert_int_equal(launch_load_hosts(&none, &hs, err, sizeof err), 0);
    assert_int_equal(hs.n, 0);
    struct launch_opts lst = {.hostlist = "x:3"};
    assert_int_equal(launch_load_hosts(&lst, &hs, err, sizeof err), 0);
    assert_int_equal(hs.h[0].slots, 3);
    launch_hosts_free(&hs);
}

/* ---- -H ---- */

static void test_hostlist_forms(void **state)
{
    (void)state;
    assert_int_equal(launch_parse_hostlist("a,b:2,10.99.0.3:16,u@c", &hs,
                                           err, sizeof err), 0);
    assert_int_equal(hs.n, 4);
    assert_string_equal(hs.h[0].name, "a");
    assert_int_equal(hs.h[0].slots, 1);
    assert_string_equal(hs.h[1].name, "b");
    assert_int_equal(hs.h[1].slots, 2);
    assert_string_equal(hs.h[2].name, "10.99.0.3");
    assert_int_equal(hs.h[2].slots, 16);
    assert_string_equal(hs.h[3].name, "u@c");
    launch_hosts_free(&hs);
}

static void test_hostlist_errors(void **state)
{
    (void)state;
    expect_list_error("", "needs a host list");
    expect_list_error("a,", "'' is not a host name");
    expect_list_error(",a", "not a host name");
    expect_list_error("a,,b", "not a host name");
    expect_list_error("a:0", "'a:0' has bad slots");
    expect_list_error("a,fe80::1:2", "'fe80::1:2' is an IPv6 address");
    expect_list_error("[::1]:2,a", "IPv4 only");
    expect_list_error("a:", "bad slots");
    expect_list_error("a:x", "bad slots");
    expect_list_error("a:2:3", "bad slots");
    expect_list_error("a:5000", "from 1 to 4096");
    expect_list_error(":2", "not a host name");
    expect_list_error("a,b,a:2", "host 'a' is listed twice");
    expect_list_error("a b", "not a host name");
    expect_list_error("-lroot", "not a host name");
}

/* ---- mapping ---- */

/* Maps np nodes on "list" with the given options; returns the result and
 * leaves the rank -> host string ("0011" etc.) in map. */
static char map[128];

static int do_map(const char *list, int np, enum launch_map by, int npernode,
                  int over)
{
    struct launch_opts mo = {.map_by = by, .npernode = npernode,
                             .oversubscribe = over};
    int *nh = NULL;
    map[0] = 0;
    launch_hosts_free(&hs);
    assert_int_equal(launch_parse_hostlist(list, &hs, err, sizeof err), 0);
    int rc = launch_map_nodes(&hs, &mo, &np, &nh, err, sizeof err);
    if (rc)
        return rc;
    assert_true(np < (int)sizeof map);
    for (int r = 0; r < np; r++)
        map[r] = (char)('0' + nh[r]);
    map[np] = 0;
    /* The per-host rank lists agree with the array, in rank order. */
    int total = 0;
    for (int i = 0; i < hs.n; i++) {
        for (int k = 0; k < hs.h[i].nnodes; k++) {
            assert_int_equal(nh[hs.h[i].ranks[k]], i);
            if (k)
                assert_true(hs.h[i].ranks[k] > hs.h[i].ranks[k - 1]);
        }
        total += hs.h[i].nnodes;
    }
    assert_int_equal(total, np);
    free(nh);
    return 0;
}

static void test_map_slot(void **state)
{
    (void)state;
    assert_int_equal(do_map("a:2,b:2", 4, LAUNCH_MAP_SLOT, 0, 0), 0);
    assert_string_equal(map, "0011");
    assert_int_equal(do_map("a:2,b:2", 3, LAUNCH_MAP_SLOT, 0, 0), 0);
    assert_string_equal(map, "001");
    assert_int_equal(do_map("a:3,b,c:2", 0, LAUNCH_MAP_SLOT, 0, 0), 0);
    assert_string_equal(map, "000122"); /* no -np: every slot */
    assert_int_equal(do_map("a,b,c,d", 4, LAUNCH_MAP_SLOT, 0, 0), 0);
    assert_string_equal(map, "0123");
}

static void test_map_node(void **state)
{
    (void)state;
    assert_int_equal(do_map("a:2,b:2", 4, LAUNCH_MAP_NODE, 0, 0), 0);
    assert_string_equal(map, "0101");
    /* Full hosts are skipped. */
    assert_int_equal(do_map("a:3,b:1", 4, LAUNCH_MAP_NODE, 0, 0), 0);
    assert_string_equal(map, "0100");
    assert_int_equal(do_map("a:2,b:2,c:2", 5, LAUNCH_MAP_NODE, 0, 0), 0);
    assert_string_equal(map, "01201");
}

static void test_map_npernode(void **state)
{
    (void)state;
    assert_int_equal(do_map("a:4,b:4", 0, LAUNCH_MAP_SLOT, 1, 0), 0);
    assert_string_equal(map, "01");
    assert_int_equal(do_map("a:4,b:4", 4, LAUNCH_MAP_SLOT, 2, 0), 0);
    assert_string_equal(map, "0011");
    assert_int_equal(do_map("a:4,b:4", 3, LAUNCH_MAP_NODE, 2, 0), 0);
    assert_string_equal(map, "010");
    assert_int_equal(do_map("a:4,b:4", 5, LAUNCH_MAP_SLOT, 2, 0), -EINVAL);
    expect_err_text("-np 5 is more than -npernode 2 x 2 hosts");
    assert_int_equal(do_map("a:4,b:1", 4, LAUNCH_MAP_SLOT, 2, 0), -EINVAL);
    expect_err_text("exceeds the 1 slot of host b");
    assert_int_equal(do_map("a:4,b:1", 4, LAUNCH_MAP_SLOT, 2, 1), 0);
    assert_string_equal(map, "0011");
}

static void test_map_oversubscribe(void **state)
{
    (void)state;
    assert_int_equal(do_map("a:2,b:2", 5, LAUNCH_MAP_SLOT, 0, 0), -EINVAL);
    expect_err_text("-np 5 is more than the 4 slots of the 2 hosts");
    expect_err_text("--oversubscribe");
    assert_int_equal(do_map("a", 2, LAUNCH_MAP_NODE, 0, 0), -EINVAL);
    expect_err_text("1 slot of the 1 host ");
    assert_int_equal(do_map("a:2,b:2", 6, LAUNCH_MAP_SLOT, 0, 1), 0);
    assert_string_equal(map, "001101");
    assert_int_equal(do_map("a:2,b:1", 5, LAUNCH_MAP_NODE, 0, 1), 0);
    assert_string_equal(map, "01001");
    assert_int_equal(do_map("a", 3, LAUNCH_MAP_SLOT, 0, 1), 0);
    assert_string_equal(map, "000");
    launch_hosts_free(&hs);
}

/* ---- the agent tree ---- */

static char shape[256];

static void record(void *arg, int host, const int *sub, int nsub)
{
    (void)arg;
    size_t n = strlen(shape);
    n += (size_t)snprintf(shape + n, sizeof shape - n, "%d(", host);
    for (int i = 0; i < nsub; i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%d",
                              i ? "," : "", sub[i]);
    snprintf(shape + n, sizeof shape - n, ") ");
}

static const char *tree(int n, int fanout)
{
    int hosts[64];
    for (int i = 0; i < n; i++)
        hosts[i] = i + 1;
    shape[0] = 0;
    launch_tree_split(hosts, n, fanout, record, NULL);
    return shape;
}

static void test_tree_split(void **state)
{
    (void)state;
    /* Up to the fan-out: every host is a direct child (flat). */
    assert_string_equal(tree(3, 32), "1() 2() 3() ");
    assert_string_equal(tree(2, 2), "1() 2() ");
    /* More: near-equal groups, the first host of each starts the rest. */
    assert_string_equal(tree(4, 2), "1(2) 3(4) ");
    assert_string_equal(tree(5, 2), "1(2,3) 4(5) ");
    assert_string_equal(tree(7, 3), "1(2,3) 4(5) 6(7) ");
    assert_string_equal(tree(3, 1), "1(2,3) ");
    assert_string_equal(tree(0, 4), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_hosts),
        cmocka_unit_test(test_opts_hosts_errors),
        cmocka_unit_test(test_opts_x),
        cmocka_unit_test(test_opts_agent),
        cmocka_unit_test(test_hostfile_forms),
        cmocka_unit_test(test_hostfile_errors),
        cmocka_unit_test(test_load_hosts),
        cmocka_unit_test(test_hostlist_forms),
        cmocka_unit_test(test_hostlist_errors),
        cmocka_unit_test(test_map_slot),
        cmocka_unit_test(test_map_node),
        cmocka_unit_test(test_map_npernode),
        cmocka_unit_test(test_map_oversubscribe),
        cmocka_unit_test(test_tree_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
