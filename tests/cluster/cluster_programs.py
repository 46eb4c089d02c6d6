"""tests/cluster/cluster_programs.py - cluster test cases that run real
programs across namespace hosts: the conformance subset against gcc
-fopenmp, the DSM stress test, the deadlock report on NPB UA's lock
pattern, and ompdsm-tune with -H.
"""

import os
import re
import subprocess
import sys
import tempfile

import cluster_hosts as hosts
from cluster_hosts import (HERE, NETNS, ARGS, TestFailure, check, addr, Hosts,
                           job_env, run, nothing_left, eth0_bytes)


# The conformance subset run across hosts: locks, reductions, malloc'd
# data, threadprivate, flush handshakes, and the common constructs.
CONFORMANCE_PROGRAMS = [
    "lock_basic", "lock_nest", "lock_test", "lock_array",
    "reduction_int", "reduction_double", "reduction_multiple",
    "reduction_max_min_int",
    "malloc_list", "malloc_2d", "malloc_realloc", "malloc_free_other",
    "threadprivate_basic", "threadprivate_copyin", "threadprivate_init",
    "flush_pingpong", "flush_pipeline", "flush_list",
    "critical_named", "atomic_int", "barrier_phases", "single_copyprivate",
    "sched_dynamic", "misc_jacobi", "global_arrays_md",
]

CONFORMANCE = os.path.join(os.path.dirname(HERE), "omp", "conformance.py")


def test_conformance():
    """The conformance subset on 2 hosts x 2 nodes and 4 hosts x 1 node
    with the default transport (2 x 2: shm inside each host, tcp between
    them; 4 x 1: tcp only), each output compared with gcc -fopenmp on 4
    threads; the remote hosts' veth links must have carried the DSM's
    traffic."""
    check(ARGS.ompcc, "--ompcc is needed")
    with Hosts(4):
        before = [eth0_bytes(i) for i in range(4)]
        lst2 = "%s:2,%s:2" % (addr(0), addr(1))
        lst4 = ",".join(addr(i) for i in range(4))
        base = "ip netns exec %s-h0 %s -H " % (hosts.PREFIX, ARGS.ompdsmrun)
        cmd = [sys.executable, CONFORMANCE,
               "--programs", ",".join(CONFORMANCE_PROGRAMS),
               "--threads", "4", "--transports", "auto",
               "--launcher", "2x2=" + base + lst2,
               "--launcher", "4x1=" + base + lst4,
               "--ompcc", ARGS.ompcc, "--ompdsmrun", ARGS.ompdsmrun,
               "--ompdsm-env", "OMPDSM_RSH=" + NETNS + " rsh",
               "--ompdsm-env", "OMPDSM_NETNS_PREFIX=" + hosts.PREFIX,
               "--timeout", "60", "-j", "2"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=900)
        out = p.stdout.decode(errors="replace")
        sys.stdout.write(out)
        check(p.returncode == 0, "conformance runs failed (status %d)" %
              p.returncode)
        want = 2 * len(CONFORMANCE_PROGRAMS)
        check(re.search(r"runs: %d passed, 0 failed, 0 skipped" % want, out),
              "expected %d passing runs" % want)
        after = [eth0_bytes(i) for i in range(4)]
        for i in range(1, 4):
            rx = after[i][0] - before[i][0]
            tx = after[i][1] - before[i][1]
            print("host %d eth0: %d bytes in, %d bytes out" % (i, rx, tx))
            # Pages of 64 KiB go both ways between the hosts' nodes.
            check(rx > 1 << 20 and tx > 1 << 20,
                  "host %d's eth0 carried only %d/%d bytes" % (i, rx, tx))
        nothing_left(4)


def test_stress():
    """The DSM stress test across hosts: 2 x 2 nodes (shm inside a host,
    tcp between) and 4 x 1 (tcp), each pair's transport as auto picks it."""
    check(ARGS.stress, "--stress is needed")
    with Hosts(4):
        for hl, tr in [("%s:2,%s:2" % (addr(0), addr(1)), "shm+tcp"),
                       (",".join(addr(i) for i in range(4)), "tcp")]:
            before = eth0_bytes(1)
            rc, out, err, t = run(["-H", hl, ARGS.stress], timeout=120)
            check(rc == 0, "stress on %s: status %d\n%s%s" % (hl, rc, out,
                                                             err))
            check("ok (4 nodes, %s)" % tr in out, "stress said %r" % out)
            after = eth0_bytes(1)
            check(after[1] - before[1] > 1 << 20,
                  "host 1 sent only %d bytes" % (after[1] - before[1]))
            print("stress -H %s: %.1f s" % (hl, t))
        nothing_left(4)


def marker_line(src, tag):
    with open(src) as f:
        for n, text in enumerate(f, 1):
            if tag in text:
                return n
    raise TestFailure("no %s in %s" % (tag, src))


def test_deadlock():
    """The deadlock detection across hosts (docs/diagnostics.md) on 2 hosts
    x 2 nodes of tests/cluster/ua_locks.c: NPB UA's lock-heavy mortar
    updates with OMPDSM_DEADLOCK_S=2, stricter than the default, 3 runs:
    no report and the closed-form result (UA S ended twice in three runs
    with a false report before each node counted its progress and its own
    still time); then crossed locks between the hosts' nodes 0 and 3: the
    report, each lock line naming its holder, status 125, and no line of
    any node beside it (a "did node 0 die?" followed before)."""
    check(ARGS.ompcc, "--ompcc is needed")
    src = os.path.join(HERE, "ua_locks.c")
    with tempfile.TemporaryDirectory() as d, Hosts(2):
        prog = os.path.join(d, "ua_locks")
        c = subprocess.run([ARGS.ompcc, "-O1", "-g", src, "-o", prog],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
        check(c.returncode == 0, "ompcc: %s" % c.stdout.decode())
        hl = ["-H", "%s:2,%s:2" % (addr(0), addr(1))]
        env = {"OMPDSM_DEADLOCK_S": "2"}
        for i in range(3):
            rc, out, err, t = run(hl + [prog, "40"], env, timeout=100, cwd=d)
            check(rc == 0 and "ua_locks: ok" in out and "deadlock" not in err,
                  "run %d: status %d\n%s%s" % (i, rc, out, err))
            print("ua_locks 40 rounds: ok, no report (%.1f s)" % t)
        rc, out, err, t = run(hl + [prog, "cross"], env, timeout=60, cwd=d)
        check(rc == 125, "cross: status %d, expected 125\n%s" % (rc, err))
        lines = err.splitlines()
        check(lines and lines[0].startswith("ompdsmrun: deadlock: every "
                                            "thread of every node"),
              "cross: the first line is not the report: %r" % err)
        for node, tag, holder in ((0, "/* @CROSS0 */", 3),
                                  (3, "/* @CROSS1 */", 0)):
            want = (r"ompdsmrun: node %d thread 0: omp_set_lock\(&l[ab]\) "
                    r"at ua_locks\.c:%d, held by node %d" %
                    (node, marker_line(src, tag), holder))
            check(any(re.fullmatch(want, l) for l in lines),
                  "cross: no line %r in %r" % (want, err))
        for node in (1, 2):
            check(any(l.startswith("ompdsmrun: node %d thread 0: " % node)
                      for l in lines), "cross: node %d not named" % node)
        stray = [l for l in lines if not l.startswith("ompdsmrun: ")]
        check(not stray, "cross: lines beside the report: %r" % stray)
        check("finished" not in out, "cross: the program finished")
        print("cross: reported in %.1f s, status 125, no other line" % t)
        nothing_left(2)


def test_tune():
    """ompdsm-tune across hosts, as a cluster user runs it: -H with the two
    hosts' addresses, no wrapper; it tunes rt_tune_prog's profiled loop on
    a node of each host and prints the table of 2 nodes and the clause."""
    check(ARGS.tune and ARGS.tune_prog, "--tune and --tune-prog are needed")
    with Hosts(2):
        hl = "%s,%s" % (addr(0), addr(1))
        cmd = ["ip", "netns", "exec", hosts.PREFIX + "-h0", sys.executable,
               ARGS.tune, "--reps", "1", "--settings", "0,1,0",
               "--ompdsmrun", ARGS.ompdsmrun, "-H", hl, "--", ARGS.tune_prog]
        p = subprocess.run(cmd, env=job_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=200)
        out = p.stdout.decode(errors="replace")
        sys.stdout.write(out)
        check(p.returncode == 0, "ompdsm-tune -H %s: status %d" %
              (hl, p.returncode))
        check(re.search(r"^rt_tune_prog\.c:21 \(2 nodes,", out, re.M),
              "no table of 2 nodes")
        check(re.search(r"^rt_tune_prog\.c:21: schedule\(profiled, 0, 1, "
                        r"0\)", out, re.M), "no clause line")
        nothing_left(2)
