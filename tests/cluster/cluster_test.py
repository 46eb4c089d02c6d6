#!/usr/bin/env python3
"""Multi-host tests of ompdsmrun (docs/cluster.md), on "hosts" made of
network namespaces by tests/cluster/netns.sh.

Usage: cluster_test.py --ompdsmrun PATH --testnode PATH [--ompcc PATH]
                       [--stress PATH] [--tune PATH --tune-prog PATH] TEST

Each TEST makes its own set of namespaces (a prefix unique to the test and
process), runs ompdsmrun inside host 0's namespace with netns.sh as
OMPDSM_RSH and the default transport (auto: shm between the nodes of a
host, tcp between hosts), checks statuses, messages, output and
that nothing is left running in any namespace, and deletes the set at the
end even when it fails.  Exit status 0 when the test passed, 1 when it
failed, 77 (with a reason) when namespaces cannot be made here.  Every
wait has a deadline.  Standard library only.
"""

import argparse
import faulthandler
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NETNS = os.path.join(HERE, "netns.sh")
CONFORMANCE = os.path.join(os.path.dirname(HERE), "omp", "conformance.py")
SKIP = 77

ARGS = None
PREFIX = None

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


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def addr(i):
    return "10.99.0.%d" % (i + 1)


def sh(*cmd, check_rc=True, timeout=30):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    if check_rc and p.returncode != 0:
        raise TestFailure("%s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                  p.stderr.decode().strip()))
    return p


class Hosts:
    """A set of namespace hosts, deleted on exit (also on SIGTERM, which
    meson sends at a timeout)."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        sh("sh", NETNS, "up", PREFIX, str(self.n))
        return self

    def __exit__(self, *exc):
        down()
        return False


def down():
    subprocess.run(["sh", NETNS, "down", PREFIX], timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def job_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPDSM_", "OMP_"))}
    env["OMPDSM_RSH"] = NETNS + " rsh"
    env["OMPDSM_NETNS_PREFIX"] = PREFIX
    env.update(extra or {})
    return env


def launcher_cmd(args):
    return ["ip", "netns", "exec", PREFIX + "-h0", ARGS.ompdsmrun] + args


def start(args, extra_env=None, cwd=None):
    return subprocess.Popen(launcher_cmd(args), env=job_env(extra_env),
                            cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def finish(p, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate(timeout=10)
        raise TestFailure("the job did not end within %g s" % timeout)
    return p.returncode, out.decode(errors="replace"), \
        err.decode(errors="replace")


def run(args, extra_env=None, timeout=60, cwd=None):
    t0 = time.monotonic()
    p = start(args, extra_env, cwd)
    rc, out, err = finish(p, timeout)
    return rc, out, err, time.monotonic() - t0


def one_line(err, pattern):
    lines = [l for l in err.splitlines() if l.startswith("ompdsmrun:")]
    check(len(lines) == 1, "expected one ompdsmrun line, got %r" % err)
    check(re.search(pattern, lines[0]),
          "message %r does not match %r" % (lines[0], pattern))


def ns_pids(i):
    p = sh("ip", "netns", "pids", "%s-h%d" % (PREFIX, i), check_rc=False)
    return [int(x) for x in p.stdout.split()]


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "(gone)"


def nothing_left(nhosts, grace=3.0):
    """No process in any host namespace (after a short grace for the
    kernel to reap), and no ompdsm file in /dev/shm that was not there."""
    deadline = time.monotonic() + grace
    while True:
        left = {i: ns_pids(i) for i in range(nhosts)}
        left = {i: p for i, p in left.items() if p}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    check(not left, "processes left behind: %s" % {
        i: [(p, cmdline(p)) for p in ps] for i, ps in left.items()})
    shm = [f for f in os.listdir("/dev/shm") if "ompdsm" in f and
           f not in SHM_BEFORE]
    check(not shm, "files left in /dev/shm: %s" % shm)


def wait_ready(p_out_lines, want, timeout=20):
    """Reads 'ready rank=' lines of testnode sleep from the job's stdout
    until want ranks said so."""
    ranks = set()
    deadline = time.monotonic() + timeout
    import select
    buf = b""
    fd = p_out_lines.stdout.fileno()
    while len(ranks) < want:
        left = deadline - time.monotonic()
        check(left > 0, "only ranks %s became ready" % sorted(ranks))
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            rc, _, err = finish(p_out_lines, 10)
            raise TestFailure("the job ended (status %d) before its nodes "
                              "were ready: %r" % (rc, err))
        buf += chunk
        for m in re.finditer(rb"ready rank=(\d+) pid=(\d+)", buf):
            ranks.add(int(m.group(1)))
    return ranks


def argv_of(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def agent_pids(host):
    """The agents in host's namespace (not the shells that start them)."""
    return [p for p in ns_pids(host)
            if argv_of(p)[:2] == [ARGS.ompdsmrun, "--agent"]]


def eth0_bytes(i):
    """(rx, tx) byte counters of host i's eth0."""
    out = sh("ip", "-n", "%s-h%d" % (PREFIX, i), "-s", "link", "show",
             "eth0").stdout.decode()
    lines = out.splitlines()
    rx = int(lines[lines.index([l for l in lines if "RX:" in l][0]) + 1]
             .split()[0])
    tx = int(lines[lines.index([l for l in lines if "TX:" in l][0]) + 1]
             .split()[0])
    return rx, tx


# ---- tests ----

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
        base = "ip netns exec %s-h0 %s -H " % (PREFIX, ARGS.ompdsmrun)
        cmd = [sys.executable, CONFORMANCE,
               "--programs", ",".join(CONFORMANCE_PROGRAMS),
               "--threads", "4", "--transports", "auto",
               "--launcher", "2x2=" + base + lst2,
               "--launcher", "4x1=" + base + lst4,
               "--ompcc", ARGS.ompcc, "--ompdsmrun", ARGS.ompdsmrun,
               "--ompdsm-env", "OMPDSM_RSH=" + NETNS + " rsh",
               "--ompdsm-env", "OMPDSM_NETNS_PREFIX=" + PREFIX,
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


def test_env():
    """Every node, local or remote, gets the same OMPDSM_*/OMP_* and -x
    variables, its rank, local rank and an OMPDSM_BOOT it can reach; the
    working directory is the launcher's; bootstrap allgathers work."""
    with Hosts(3):
        hl = "%s:2,%s:2,%s" % (addr(0), addr(1), addr(2))
        env = {"OMP_SCHEDULE": "dynamic,3", "OMPDSM_FOO": "bar baz",
               "XVAR": "from-launcher", "OMPDSM_TCP_ADDR": addr(0)}
        rc, out, err, _ = run(["-H", hl, "-x", "XVAR", "-x", "YV=a'b c",
                               ARGS.testnode, "info", "x y"], env,
                              cwd="/tmp")
        check(rc == 0, "status %d: %s" % (rc, err))
        infos = {}
        for line in out.splitlines():
            m = re.match(r"info rank=(\d+) size=(\d+) local_rank=(\d+) "
                         r"local_size=(\d+) jobid=\S+ boot=(\S+)", line)
            if m:
                infos[int(m.group(1))] = m.groups()
        check(sorted(infos) == list(range(5)), "ranks: %s" % sorted(infos))
        want_local = {0: (0, 2), 1: (1, 2), 2: (0, 2), 3: (1, 2), 4: (0, 1)}
        for r, g in infos.items():
            check(g[1] == "5", "rank %d size %s" % (r, g[1]))
            check((int(g[2]), int(g[3])) == want_local[r],
                  "rank %d local %s/%s" % (r, g[2], g[3]))
            # Remote nodes bootstrap through their host's agent, which
            # listens on that host's own address.
            host = 0 if r < 2 else 1 if r < 4 else 2
            check(g[4].startswith(addr(host) + ":"),
                  "rank %d boot %s is not host %d's address" % (r, g[4],
                                                               host))
        check(out.count("args=x y") == 5, "args: %r" % out)
        # testnode info prints these variables when set
        rc, out, err, _ = run(["-H", hl, "-x", "XVAR", "-x", "YV=a'b c",
                               "/bin/sh", "-c",
                               "echo \"$OMPDSM_RANK|$OMP_SCHEDULE|"
                               "$OMPDSM_FOO|$XVAR|$YV|$(pwd)|"
                               "$OMPDSM_TCP_ADDR\""], env, cwd="/tmp")
        check(rc == 0, "status %d: %s" % (rc, err))
        lines = sorted(out.splitlines())
        # OMPDSM_TCP_ADDR is an address of the launcher's host: only its
        # own nodes (ranks 0 and 1) get it.
        check(lines == ["%d|dynamic,3|bar baz|from-launcher|a'b c|/tmp|%s" %
                        (r, addr(0) if r < 2 else "") for r in range(5)],
              "environment: %r" % lines)
        rc, out, err, _ = run(["-H", hl, ARGS.testnode, "gather", "4", "9"])
        check(rc == 0 and out.count("gather ok") == 5,
              "gather: %d %r %r" % (rc, out, err))
        # The launcher's own host need not run nodes.
        rc, out, err, _ = run(["-H", "%s:2,%s" % (addr(1), addr(2)),
                               ARGS.testnode, "gather", "2", "4"])
        check(rc == 0 and out.count("gather ok") == 3,
              "without the launcher's host: %d %r %r" % (rc, out, err))
        # A remote shell whose rc file prints on stdout before the agent
        # runs (a banner without a newline too) must not confuse the frames.
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            noisy = os.path.join(d, "noisy-rsh")
            with open(noisy, "w") as f:
                f.write("#!/bin/sh\nprintf 'Welcome to %%s\\n\\001\\002no "
                        "newline' \"$1\"\nexec %s rsh \"$@\"\n" % NETNS)
            os.chmod(noisy, 0o755)
            rc, out, err, _ = run(["-H", hl, ARGS.testnode, "gather", "2",
                                   "3"], {"OMPDSM_RSH": noisy})
            check(rc == 0 and out.count("gather ok") == 5 and
                  "Welcome" not in out + err,
                  "noisy shell: %d %r %r" % (rc, out, err))
        nothing_left(3)


def check_spew(out, err, nranks, lines, length):
    """Every line of testnode spew arrived whole, on the right stream."""
    seen = set()
    for fd, text in ((1, out), (2, err)):
        for line in text.splitlines():
            if line.startswith("ompdsmrun:"):
                continue
            m = re.match(r"^(\d+):(\d):(\d+):([a-z]*)$", line)
            check(m, "mangled line %r" % line[:80])
            r, f, i = int(m.group(1)), int(m.group(2)), int(m.group(3))
            want = "".join(chr(ord("a") + (r * 7 + i + j) % 26)
                           for j in range(length))
            check(f == fd and m.group(4) == want,
                  "line %d of node %d damaged or on the wrong stream" % (i, r))
            seen.add((r, i))
    check(len(seen) == nranks * lines, "%d of %d lines arrived" %
          (len(seen), nranks * lines))


def test_output():
    """Output of remote nodes, written in small random pieces, arrives as
    whole lines on the right stream, nothing lost, also through the tree."""
    with Hosts(4):
        hl = "%s:2,%s:2,%s,%s" % (addr(0), addr(1), addr(2), addr(3))
        for fan in ("32", "2"):
            rc, out, err, _ = run(["-H", hl, ARGS.testnode, "spew", "100",
                                   "2000"], {"OMPDSM_LAUNCH_FANOUT": fan})
            check(rc == 0, "status %d: %s" % (rc, err[-300:]))
            check_spew(out, err, 6, 100, 2000)
        # A remote node's ABORT (its explanation) and its exit, which its
        # agent reports on another path, race: the explanation must win
        # every time.
        for i in range(10):
            rc, out, err, _ = run(["-H", hl, ARGS.testnode, "abortexit",
                                   "5", "9", "why%d" % i])
            check(rc == 9 and "node 5 aborted the job: why%d\n" % i in err,
                  "run %d: ABORT of a remote node lost: %d %r" % (i, rc, err))
        nothing_left(4)


def test_tree():
    """With OMPDSM_LAUNCH_FANOUT=2 and 4 remote hosts, the launcher starts
    the agents of hosts 1 and 3, which start those of 2 and 4; output,
    exit statuses and signals pass through both hops; a middle agent
    killed takes its subtree's nodes with it."""
    with Hosts(5):
        hl = ",".join("%s:2" % addr(i) for i in range(5))
        env = {"OMPDSM_LAUNCH_FANOUT": "2"}
        rc, out, err, _ = run(["-H", hl, "--tag-output", ARGS.testnode,
                               "gather", "3", "5"], env)
        check(rc == 0 and out.count("gather ok") == 10,
              "gather through the tree: %d %r %r" % (rc, out, err))
        rc, out, err, _ = run(["-H", hl, ARGS.testnode, "exitif", "9", "7",
                               "tm0"], env)
        check(rc == 7, "exit status through two hops: %d %r" % (rc, err))
        one_line(err, r"node 9 \(pid \d+ on host %s\) exited with status 7"
                 % re.escape(addr(4)))

        p = start(["-H", hl, ARGS.testnode, "sleep", "tm1"], env)
        try:
            wait_ready(p, 10)
            parent = {}
            for h in range(1, 5):
                ag = agent_pids(h)
                check(len(ag) == 1, "host %d runs agents %s" % (h, ag))
                # the first ompdsmrun above it: the launcher or an agent
                pp = ag[0]
                while True:
                    pp = int(open("/proc/%d/stat" % pp).read()
                             .rsplit(")", 1)[1].split()[1])
                    if argv_of(pp)[:1] == [ARGS.ompdsmrun] or pp <= 1:
                        break
                owner = None
                for g in range(5):
                    if pp in ns_pids(g):
                        owner = g
                parent[h] = owner
            check(parent == {1: 0, 2: 1, 3: 0, 4: 3},
                  "agent tree: host -> host of the ompdsmrun that started "
                  "it: %s" % parent)
            # SIGUSR1 makes the launcher print where every node is; no
            # node (which would die of it) gets it, the job carries on.
            os.kill(p.pid, signal.SIGUSR1)
            time.sleep(0.5)
            check(p.poll() is None, "SIGUSR1 ended the job")
            # SIGINT goes down two hops.
            t0 = time.monotonic()
            os.kill(p.pid, signal.SIGINT)
            rc, out, err = finish(p, 20)
            check(rc == 130, "SIGINT: status %d %r" % (rc, err))
            check(re.search(r"ompdsmrun: job \S+, 10 nodes, running for",
                            err) and
                  all("ompdsmrun: node %d: " % k in err for k in range(10)),
                  "no status naming every node after SIGUSR1: %r" % err)
            check(time.monotonic() - t0 < 6, "SIGINT took %.1f s" %
                  (time.monotonic() - t0))
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        nothing_left(5)

        p = start(["-H", hl, ARGS.testnode, "sleep", "tm2"], env)
        try:
            wait_ready(p, 10)
            t0 = time.monotonic()
            for a in agent_pids(1):
                os.kill(a, signal.SIGKILL)
            rc, out, err = finish(p, 20)
            check(rc == 1, "middle agent killed: status %d %r" % (rc, err))
            one_line(err, r"host %s: lost the agent of nodes 2, 3, 4, 5" %
                     re.escape(addr(1)))
            check(time.monotonic() - t0 < 6, "took %.1f s" %
                  (time.monotonic() - t0))
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        nothing_left(5)


BOOT_TRACE = re.compile(r"^ompdsmrun: bootstrap: allgather round (\d+) of "
                        r"(\d+) nodes done; (\d+) connections accepted "
                        r"here, (\d+) cards came in (\d+) frames from "
                        r"agents$", re.M)


def test_bootagg():
    """The bootstrap of remote nodes goes through the agents: the launcher
    accepts connections from its own host's nodes only, and gets one
    AG_GATHER frame per top-level agent and round carrying the cards of
    that agent's whole subtree (2 hosts x 2 nodes; 4 hosts in a chain,
    OMPDSM_LAUNCH_FANOUT=1).  A node, then a middle agent, killed while
    the others wait in an allgather round ends the job within seconds,
    naming the host and node, with nothing left."""
    with Hosts(4):
        for hl, nodes, nlocal, fan in [
                ("%s:2,%s:2" % (addr(0), addr(1)), 4, 2, "32"),
                ("%s:2,%s,%s,%s" % (addr(0), addr(1), addr(2), addr(3)), 5,
                 2, "1")]:
            rc, out, err, _ = run(["-H", hl, ARGS.testnode, "gather", "3",
                                   "11"], {"OMPDSM_LAUNCH_FANOUT": fan,
                                           "OMPDSM_TRACE": "boot"})
            check(rc == 0 and out.count("gather ok") == nodes,
                  "gather %s: %d %r %r" % (hl, rc, out, err))
            rounds = [tuple(int(x) for x in m.groups())
                      for m in BOOT_TRACE.finditer(err)]
            remote = nodes - nlocal
            want = [(k, nodes, nlocal, remote * (k + 1), k + 1)
                    for k in range(3)]
            check(rounds == want, "%s: (round, nodes, connections, cards, "
                  "frames) %s, expected %s: %r" % (hl, rounds, want, err))
        nothing_left(4)

        # Mid-bootstrap failures, in the chain: rank 4 is on host 3, at its
        # end; host 2's agent is in its middle.
        hl = "%s:2,%s,%s,%s" % (addr(0), addr(1), addr(2), addr(3))
        env = {"OMPDSM_LAUNCH_FANOUT": "1"}
        for victim in ("node", "agent"):
            p = start(["-H", hl, ARGS.testnode, "gatherhold", "4",
                       "gh-" + victim], env)
            try:
                wait_ready(p, 5)
                time.sleep(0.3)  # the others are in the round now
                if victim == "node":
                    pids = [x for x in ns_pids(3)
                            if "gh-node" in cmdline(x)]
                else:
                    pids = agent_pids(2)
                check(len(pids) == 1, "%s to kill: %s" % (victim, pids))
                t0 = time.monotonic()
                os.kill(pids[0], signal.SIGKILL)
                rc, out, err = finish(p, 20)
                t = time.monotonic() - t0
            finally:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.communicate(timeout=10)
            if victim == "node":
                check(rc == 137, "node killed: status %d %r" % (rc, err))
                one_line(err, r"node 4 \(pid \d+ on host %s\) was killed "
                         r"by signal 9" % re.escape(addr(3)))
            else:
                check(rc == 1, "agent killed: status %d %r" % (rc, err))
                one_line(err, r"host %s: lost the agent of nodes 3, 4"
                         % re.escape(addr(2)))
            check(t < 6, "%s killed mid-bootstrap: the job took %.1f s to "
                  "end" % (victim, t))
            nothing_left(4)


def fnv64(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xffffffffffffffff
    return h


def test_stdin():
    """Our stdin reaches node 0 on another host through its agent, EOF
    included, and only node 0; a node 0 that closes its stdin early ends
    nothing; a node 0 that does not read stops the launcher reading (at
    most a buffer in flight, as locally)."""
    with Hosts(3):
        data = os.urandom(2000000)
        hl = "%s:2,%s,%s" % (addr(1), addr(0), addr(2))
        p = subprocess.Popen(launcher_cmd(["-H", hl, ARGS.testnode, "stdin"]),
                             env=job_env(), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        try:
            out, err = p.communicate(data, timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate(timeout=10)
            raise TestFailure("stdin job did not end within 60 s")
        got = {}
        for l in out.decode().splitlines():
            m = re.match(r"stdin rank=(\d+) bytes=(\d+) fnv=([0-9a-f]+)", l)
            if m:
                got[int(m.group(1))] = (int(m.group(2)), int(m.group(3), 16))
        check(p.returncode == 0, "status %d %r" % (p.returncode, err))
        check(got.get(0) == (len(data), fnv64(data)),
              "node 0 on host 1 got %r of %d bytes" % (got.get(0), len(data)))
        check(all(got.get(r, (None,))[0] == 0 for r in (1, 2, 3)),
              "other nodes read stdin: %r" % got)

        # Node 0 reads 6 bytes and closes its stdin; more keeps coming.
        p = subprocess.Popen(launcher_cmd(
            ["-H", "%s,%s" % (addr(1), addr(0)), "/bin/sh", "-c",
             'if [ "$OMPDSM_RANK" = 0 ]; then head -c 6; fi; '
             'echo " done $OMPDSM_RANK"']), env=job_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = p.communicate(b"hello\n" + b"y" * 3000000,
                                     timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate(timeout=10)
            raise TestFailure("node 0 closing its stdin: no end in 30 s")
        lines = sorted(out.decode().split("\n"))
        check(p.returncode == 0 and "hello" in lines and " done 0" in lines
              and " done 1" in lines,
              "early close: %d %r %r" % (p.returncode, out, err))

        # Node 0 never reads: what the launcher takes stays bounded.
        p = subprocess.Popen(launcher_cmd(
            ["-H", "%s,%s" % (addr(1), addr(0)), ARGS.testnode, "sleep",
             "sd-fc"]), env=job_env(), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        try:
            wait_ready(p, 2)
            os.set_blocking(p.stdin.fileno(), False)
            sent, idle = 0, time.monotonic()
            chunk = b"z" * 65536
            while time.monotonic() - idle < 1.5 and sent < (8 << 20):
                try:
                    sent += os.write(p.stdin.fileno(), chunk)
                    idle = time.monotonic()
                except BlockingIOError:
                    time.sleep(0.05)
            # Our pipe (64 KiB), the launcher's window (64 KiB), node 0's
            # pipe (64 KiB) and the frames' pipes between: well under 2 MiB.
            check(0 < sent < (2 << 20),
                  "the launcher took %d bytes for a node 0 that does not "
                  "read" % sent)
            print("a node 0 that does not read: the launcher took %d "
                  "bytes of stdin" % sent)
            os.kill(p.pid, signal.SIGINT)
            rc, out, err = finish(p, 20)
            check(rc == 130, "SIGINT: status %d %r" % (rc, err))
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        nothing_left(3)


def kill_remote(mode, host, pattern, status):
    with Hosts(3):
        hl = "%s,%s:2,%s" % (addr(0), addr(1), addr(2))
        p = start(["-H", hl, ARGS.testnode, "sleep", "k-" + mode])
        try:
            wait_ready(p, 4)
            if mode == "node":
                victims = [x for x in ns_pids(host)
                           if "k-" + mode in cmdline(x)]
            else:
                victims = agent_pids(host)
            check(victims, "nothing to kill on host %d" % host)
            t0 = time.monotonic()
            os.kill(victims[0], signal.SIGKILL)
            rc, out, err = finish(p, 20)
            t = time.monotonic() - t0
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        check(rc == status, "status %d, expected %d: %r" % (rc, status, err))
        one_line(err, pattern)
        check(t < 6, "the job took %.1f s to end" % t)
        nothing_left(3)


def test_kill_node():
    """kill -9 of a node on another host ends the job, naming it."""
    kill_remote("node", 1, r"^ompdsmrun: node [12] \(pid \d+ on host "
                r"10\.99\.0\.2\) was killed by signal 9 \(Killed\); ending "
                r"the job$", 137)


def test_kill_dsm():
    """kill -9 of a node of a real ompdsm program on another host while the
    DSM runs: the launcher's one line names that node, not the peers that
    lost their connections to it."""
    import tempfile
    check(ARGS.ompcc, "--ompcc is needed")
    with tempfile.TemporaryDirectory() as d, Hosts(2):
        prog = os.path.join(d, "dsm_loop")
        c = subprocess.run([ARGS.ompcc, "-O1", os.path.join(HERE,
                            "dsm_loop.c"), "-o", prog],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
        check(c.returncode == 0, "ompcc: %s" % c.stdout.decode())
        p = start(["-H", "%s:2,%s:2" % (addr(0), addr(1)), prog], cwd=d)
        try:
            buf = b""
            deadline = time.monotonic() + 30
            import select
            while b"running" not in buf:
                check(time.monotonic() < deadline, "the program did not "
                      "start: %r" % buf)
                r, _, _ = select.select([p.stdout], [], [], 1)
                if r:
                    chunk = os.read(p.stdout.fileno(), 4096)
                    check(chunk, "the job ended early")
                    buf += chunk
            victims = [x for x in ns_pids(1) if argv_of(x)[:1] == [prog]]
            check(victims, "no node of the program on host 1")
            t0 = time.monotonic()
            os.kill(victims[0], signal.SIGKILL)
            rc, out, err = finish(p, 20)
            t = time.monotonic() - t0
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        check(rc == 137, "status %d: %r" % (rc, err))
        one_line(err, r"^ompdsmrun: node [23] \(pid %d on host 10\.99\.0\.2\)"
                 r" was killed by signal 9 \(Killed\); ending the job$" %
                 victims[0])
        check(t < 6, "took %.1f s" % t)
        nothing_left(2)


def test_kill_agent():
    """kill -9 of an agent ends the job, naming its host and nodes; its
    nodes die with it."""
    # The remote shell may report the death itself ("Killed", 128 + 9),
    # as it does through ssh, or be the agent (exec) and die with it.
    kill_remote("agent", 2, r"^ompdsmrun: host 10\.99\.0\.3: lost the "
                r"agent of node 3(: Killed)? \(rsh (killed by signal 9 "
                r"\(Killed\)|exited with status 137)\); ending the job$", 1)


def test_kill_launcher():
    """kill -9 of ompdsmrun itself: every agent sees its connection close
    and ends its nodes; nothing is left on any host."""
    with Hosts(3):
        hl = "%s,%s:2,%s" % (addr(0), addr(1), addr(2))
        p = start(["-H", hl, ARGS.testnode, "ignterm", "kl"])
        try:
            wait_ready(p, 4)
            os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate(timeout=10)
        nothing_left(3, grace=5.0)


def test_unreachable():
    """A host rsh cannot reach (netns.sh exits 255 as ssh does)."""
    with Hosts(2):
        rc, out, err, t = run(["-H", "%s,%s,10.99.0.9" % (addr(0), addr(1)),
                               ARGS.testnode, "sleep", "unr"], timeout=30)
        check(rc == 1, "status %d: %r" % (rc, err))
        one_line(err, r"^ompdsmrun: host 10\.99\.0\.9: cannot start the "
                 r"agent of node 2 with '.*netns\.sh rsh 10\.99\.0\.9 \.\.\.'"
                 r": ssh: connect to host 10\.99\.0\.9 port 22: No route to "
                 r"host \(rsh exited with status 255\); ending the job$")
        check(t < 6, "took %.1f s" % t)
        nothing_left(2)
        # Without OMPDSM_RSH: ssh with BatchMode (no prompt) and a connect
        # timeout (a host that drops packets fails in seconds, not
        # minutes).  An ssh stand-in first in PATH records its words.
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ssh"), "w") as f:
                f.write('#!/bin/sh\necho "$@" > %s/args\n'
                        'echo "ssh: stand-in" >&2\nexit 255\n' % d)
            os.chmod(os.path.join(d, "ssh"), 0o755)
            env = job_env({"PATH": d + ":" + os.environ.get("PATH", "")})
            del env["OMPDSM_RSH"]
            p = subprocess.run(launcher_cmd(["-H", "%s,%s" % (addr(0),
                                                               addr(1)),
                                             ARGS.testnode, "info"]),
                               env=env, capture_output=True, timeout=30)
            check(p.returncode == 1, "stand-in ssh: %d %r" % (p.returncode,
                                                              p.stderr))
            with open(os.path.join(d, "args")) as f:
                args = f.read().split()
            check(args[:5] == ["-o", "BatchMode=yes", "-o",
                               "ConnectTimeout=10", addr(1)],
                  "default rsh words: %r" % args)


def test_paths():
    """The working directory or the program missing on one host."""
    import tempfile
    with Hosts(2), tempfile.TemporaryDirectory() as d:
        wd = os.path.join(d, "wd")
        os.makedirs(wd)
        rc, out, err, t = run(["-H", "%s,%s" % (addr(0), addr(1)),
                               ARGS.testnode, "sleep", "wd"],
                              {"OMPDSM_NETNS_HIDE": addr(1) + ":" + d},
                              cwd=wd)
        check(rc == 1, "missing cwd: status %d %r" % (rc, err))
        one_line(err, r"^ompdsmrun: host 10\.99\.0\.2 \(node 1\): cannot "
                 r"enter the working directory %s: No such file or "
                 r"directory \(it must exist on every host\); ending the "
                 r"job$" % re.escape(wd))
        check(t < 6, "took %.1f s" % t)
        nothing_left(2)

        bindir = os.path.join(d, "bin")
        os.makedirs(bindir)
        prog = os.path.join(bindir, "tn")
        with open(ARGS.testnode, "rb") as src, open(prog, "wb") as dst:
            dst.write(src.read())
        os.chmod(prog, 0o755)
        rc, out, err, t = run(["-H", "%s,%s:2" % (addr(0), addr(1)),
                               prog, "sleep", "pr"],
                              {"OMPDSM_NETNS_HIDE": addr(1) + ":" + bindir})
        check(rc == 127, "missing program: status %d %r" % (rc, err))
        one_line(err, r"^ompdsmrun: host 10\.99\.0\.2 \(nodes 1, 2\): "
                 r"cannot run '%s': No such file or directory \(the program "
                 r"must be at the same path on every host\); ending the job$"
                 % re.escape(prog))
        check(t < 6, "took %.1f s" % t)
        nothing_left(2)


def test_sigint():
    """Ctrl-C (SIGINT to ompdsmrun) ends every remote node."""
    with Hosts(3):
        hl = "%s,%s:2,%s" % (addr(0), addr(1), addr(2))
        p = start(["-H", hl, ARGS.testnode, "ignterm", "si"])
        try:
            wait_ready(p, 4)
            t0 = time.monotonic()
            os.kill(p.pid, signal.SIGINT)
            rc, out, err = finish(p, 20)
            t = time.monotonic() - t0
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        check(rc == 130, "status %d %r" % (rc, err))
        one_line(err, r"^ompdsmrun: received SIGINT; ending the job$")
        # Nodes that ignore SIGTERM get SIGKILL after the 2 s grace.
        check(t < 7, "took %.1f s" % t)
        nothing_left(3)


ATTACK = os.path.join(HERE, "attack.py")
# A refusal line: the launcher's, an agent's (host H) or a node's (node K).
REFUSED = re.compile(r"^(?:ompdsmrun: (?:host (\S+): )?bootstrap|"
                     r"ompdsm: node (\d+): warning: tcp): refused a "
                     r"connection from (\d+\.\d+\.\d+\.\d+:\d+): ", re.M)


def build_dsm_loop(d, variant=None):
    """tests/cluster/dsm_loop.c built by ompcc into d."""
    check(ARGS.ompcc, "--ompcc is needed")
    prog = os.path.join(d, "dsm_loop" + (variant or ""))
    cmd = [ARGS.ompcc, "-O1", os.path.join(HERE, "dsm_loop.c"), "-o", prog]
    if variant:
        cmd.insert(2, "-DDSM_LOOP_VARIANT=\"%s\"" % variant)
    c = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=120)
    check(c.returncode == 0, "ompcc: %s" % c.stdout.decode())
    return prog


def read_until(p, word, timeout):
    """Reads the job's stdout until word; returns what was read."""
    import select
    buf = b""
    deadline = time.monotonic() + timeout
    while word.encode() not in buf:
        check(time.monotonic() < deadline, "no %r within %g s: %r" %
              (word, timeout, buf))
        r, _, _ = select.select([p.stdout], [], [], 0.5)
        if r:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                rc, _, err = finish(p, 10)
                raise TestFailure("the job ended (status %d) before %r: %r %r"
                                  % (rc, word, buf, err))
            buf += chunk
    return buf


def listening(i):
    """ip:port:dialect of every TCP socket listening in host i: boot for
    the launcher's and agents' (ompdsmrun), tcp for the nodes'."""
    out = sh("ip", "netns", "exec", "%s-h%d" % (PREFIX, i), "ss", "-Htlnp",
             check_rc=False).stdout.decode()
    found = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 4:
            continue
        dialect = "boot" if '"ompdsmrun"' in line else "tcp"
        found.add("%s:%s" % (f[3], dialect))
    return found


def attacker(ns, args, nobody=False):
    """attack.py in host ns's namespace, as user nobody when asked."""
    cmd = ["ip", "netns", "exec", "%s-h%d" % (PREFIX, ns)]
    if nobody:
        cmd += ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.Popen(cmd + [sys.executable, ATTACK] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def results(procs, timeout=60):
    recs = []
    for a in procs:
        out, err = a.communicate(timeout=timeout)
        check(a.returncode == 0, "attack.py failed: %s" % err.decode())
        recs += [json.loads(l) for l in out.decode().splitlines() if l]
    return recs


def test_attack():
    """Connections from a stranger to every socket a job listens on (the
    launcher's and the agents' bootstrap sockets, and the nodes' tcp
    listeners while the nodes connect: one host's agent starts 4 s late to
    hold them open), from another namespace and from user nobody in the
    socket's own: random bytes, a forged HELLO, one node too many, a forged
    ABORT, a silent connection, and a handshake captured on the wire and
    replayed.  The job must finish and verify, and each connection that
    was accepted must be refused with exactly one line naming its
    address."""
    import tempfile
    with tempfile.TemporaryDirectory() as d, Hosts(4):
        os.chmod(d, 0o755)
        prog = build_dsm_loop(d)
        slow = os.path.join(d, "slow-rsh")
        with open(slow, "w") as f:
            f.write('#!/bin/sh\n[ "$1" = %s ] && sleep 4\nexec %s rsh "$@"\n'
                    % (addr(2), NETNS))
        os.chmod(slow, 0o755)
        sniffers = [attacker(i, ["sniff", "lo", "20"]) for i in (0, 1)]
        time.sleep(0.5)
        hl = "%s:2,%s:2,%s" % (addr(0), addr(1), addr(2))
        p = start(["-H", hl, prog, "400"], {"OMPDSM_RSH": slow}, cwd=d)
        procs, seen = [], set()
        try:
            # While the nodes of hosts 0 and 1 wait for host 2's, every
            # socket they listen on is attacked as soon as it appears.
            t0 = time.monotonic()
            while time.monotonic() - t0 < 3.0:
                for i in (0, 1):
                    new = listening(i) - seen
                    if new:
                        seen |= new
                        procs.append(attacker(3, ["hit"] + sorted(new)))
                        procs.append(attacker(i, ["hit", "--kinds",
                                                  "garbage,hello,abort"] +
                                              sorted(new), nobody=True))
                time.sleep(0.1)
            tcp_ports = [t for t in seen if t.endswith(":tcp")]
            check(len(tcp_ports) >= 2 and any(t.endswith(":boot")
                                              for t in seen),
                  "the nodes' and the launcher's sockets were not all seen "
                  "listening: %s" % sorted(seen))
            read_until(p, "running", 60)
            # The job runs: its bootstrap sockets again, and the answers
            # captured on hosts 0 and 1 replayed on new connections.
            caught = results(sniffers)
            check(caught, "no handshake was captured")
            boot = set()
            for i in (0, 1, 2):
                boot |= {t for t in listening(i) if t.endswith(":boot")}
            procs.append(attacker(3, ["hit"] + sorted(boot)))
            for c in caught:
                ns = int(c["acceptor"].split(".")[3].split(":")[0]) - 1
                target = c["acceptor"] + ":boot"
                for nobody, where in ((False, 3), (True, ns)):
                    procs.append(attacker(where, ["hit", "--kinds", "replay",
                                                  "--replay", c["answer"],
                                                  target], nobody=nobody))
            recs = results(procs)
            rc, out, err = finish(p, 120)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
        sys.stdout.write(err)
        check(rc == 0, "the attacked job ended with status %d" % rc)
        check("sum 79800" in out, "the attacked job's result: %r" % out)
        # Which socket refused (its host's address) and whom: two of our
        # connections to different hosts may share a local port.
        logged = {}
        for m in REFUSED.finditer(err):
            if m.group(2):       # node K: 2 nodes a host, in rank order
                host = addr(int(m.group(2)) // 2)
            else:                # an agent's host, or the launcher's
                host = m.group(1) or addr(0)
            key = (host, m.group(3))
            logged[key] = logged.get(key, 0) + 1
        accepted = [r for r in recs if r["challenge"]]
        kinds = {}
        for r in recs:
            kinds.setdefault(r["kind"], [0, 0])[0 if r["challenge"] else 1] += 1
        print("attacks (accepted, refused by the kernel): %s; %d captured "
              "handshakes replayed" % (kinds, len(caught)))
        for r in recs:
            want = 1 if r["challenge"] else 0
            got = logged.pop((r["target"].split(":")[0], r.get("local")), 0)
            check(got == want, "%s %s from %s: logged %d times, expected %d"
                  % (r["kind"], r["target"], r.get("local"), got, want))
            check(not r["challenge"] or r["closed"],
                  "%s %s was not closed" % (r["kind"], r["target"]))
        check(not logged, "refusals of connections nobody made: %s" % logged)
        check(len(accepted) >= 20 and "replay" in kinds and
              kinds["replay"][0] >= 2,
              "too few attacks reached the sockets: %s" % kinds)
        nothing_left(4)


def cut(i, up, nhosts=3):
    """Host i's cable: its port on the bridge.  Back up, the hosts forget
    the neighbours they failed to reach meanwhile, which would answer the
    next job's first connections with "No route to host"."""
    sh("ip", "-n", PREFIX + "-br", "link", "set", "v%d" % i,
       "up" if up else "down")
    for h in range(nhosts) if up else ():
        sh("ip", "-n", "%s-h%d" % (PREFIX, h), "neigh", "flush", "all",
           check_rc=False)


def test_linkdown():
    """A link taken down for good: the job ends naming both hosts and the
    network between them, within OMPDSM_TCP_TIMEOUT_S (3 s here, and the
    30 s default), while every node still runs."""
    import tempfile
    with tempfile.TemporaryDirectory() as d, Hosts(3):
        prog = build_dsm_loop(d)
        hl = ",".join(addr(i) for i in range(3))
        for tmo, limit in ((3, 10), (None, 60)):
            env = {"OMPDSM_TCP_TIMEOUT_S": str(tmo)} if tmo else {}
            p = start(["-H", hl, prog, "100000"], env, cwd=d)
            try:
                read_until(p, "running", 60)
                time.sleep(1)
                t0 = time.monotonic()
                cut(2, False)
                rc, out, err = finish(p, limit + 30)
                t = time.monotonic() - t0
            finally:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.communicate(timeout=10)
                cut(2, True)
            print("link of host 2 down, OMPDSM_TCP_TIMEOUT_S=%s: the job "
                  "ended after %.1f s" % (tmo or "30 (default)", t))
            check(rc == 1, "status %d: %r" % (rc, err))
            print(err.rstrip())
            one_line(err, r"^ompdsmrun: the network between host "
                     r"10\.99\.0\.[12] and host 10\.99\.0\.3 failed|"
                     r"^ompdsmrun: the network between host 10\.99\.0\.3 "
                     r"and host 10\.99\.0\.[12] failed")
            check("still runs" in err and "did node" not in err,
                  "the line must say the peer still runs: %r" % err)
            check(t < limit, "took %.1f s (limit %d s)" % (t, limit))
            nothing_left(3)


def test_outage():
    """A 12 s outage of one host's link is survived with the default
    OMPDSM_TCP_TIMEOUT_S: the job ends normally with the right sum."""
    import tempfile
    with tempfile.TemporaryDirectory() as d, Hosts(3):
        prog = build_dsm_loop(d)
        hl = ",".join(addr(i) for i in range(3))
        p = start(["-H", hl, prog, "300"], cwd=d)
        try:
            read_until(p, "running", 60)
            time.sleep(1)
            cut(1, False)
            time.sleep(12)
            check(p.poll() is None, "the job ended during the outage")
            cut(1, True)
            rc, out, err = finish(p, 120)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate(timeout=10)
            cut(1, True)
        check(rc == 0, "a 12 s outage ended the job: %d %r" % (rc, err))
        check("sum 44850" in out, "result after the outage: %r" % out)
        nothing_left(3)


def test_build():
    """Another build of the program at the same path on one host: the job
    ends with the launcher's one line naming both builds, before any node
    connects to another, in each of 10 runs."""
    import tempfile
    with tempfile.TemporaryDirectory() as d, Hosts(2):
        prog = build_dsm_loop(d)
        other = build_dsm_loop(d, "b")
        hl = "%s:2,%s:2" % (addr(0), addr(1))
        env = {"OMPDSM_NETNS_SWAP": "%s:%s:%s" % (addr(1), prog, other)}
        named = 0
        for i in range(10):
            rc, out, err, t = run(["-H", hl, prog, "5"], env, cwd=d)
            check(rc == 1, "run %d: status %d %r" % (i, rc, err))
            one_line(err, r"^ompdsmrun: node [23] \(pid \d+ on host "
                     r"10\.99\.0\.2\) runs %s \(build id [0-9a-f]+\), a "
                     r"different executable than node 0 \(pid \d+ on host "
                     r"10\.99\.0\.1\) runs %s \(build id [0-9a-f]+\)" %
                     (re.escape(prog), re.escape(prog)))
            named += 1
            check(t < 6, "run %d took %.1f s" % (i, t))
        print("the build mismatch was named in %d of 10 runs" % named)
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
    import tempfile
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
        cmd = ["ip", "netns", "exec", PREFIX + "-h0", sys.executable,
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


TESTS = {
    "conformance": test_conformance, "stress": test_stress, "env": test_env,
    "tree": test_tree, "output": test_output, "kill_node": test_kill_node,
    "kill_agent": test_kill_agent, "kill_launcher": test_kill_launcher,
    "kill_dsm": test_kill_dsm, "bootagg": test_bootagg, "stdin": test_stdin,
    "unreachable": test_unreachable,
    "paths": test_paths, "sigint": test_sigint, "attack": test_attack,
    "linkdown": test_linkdown, "outage": test_outage, "build": test_build,
    "deadlock": test_deadlock,
    "tune": test_tune,
}
SHM_BEFORE = set()


def main():
    global ARGS, PREFIX, SHM_BEFORE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ompdsmrun", required=True)
    ap.add_argument("--testnode", required=True)
    ap.add_argument("--ompcc")
    ap.add_argument("--stress")
    ap.add_argument("--tune")
    ap.add_argument("--tune-prog")
    ap.add_argument("test", choices=sorted(TESTS))
    ARGS = ap.parse_args()
    for a in ("ompdsmrun", "testnode", "ompcc", "stress", "tune",
              "tune_prog"):
        v = getattr(ARGS, a)
        if v:
            setattr(ARGS, a, os.path.abspath(v))

    c = subprocess.run(["sh", NETNS, "check"], stderr=subprocess.PIPE)
    if c.returncode != 0:
        sys.stdout.write(c.stderr.decode())
        return SKIP if c.returncode == SKIP else 1
    PREFIX = "oc%d-%s" % (os.getpid(), ARGS.test)
    SHM_BEFORE = set(os.listdir("/dev/shm"))

    def on_term(sig, frame):
        raise SystemExit("cluster_test: signal %d" % sig)
    signal.signal(signal.SIGTERM, on_term)
    # At meson's timeout the log shows where the test waited (one
    # cluster-deadlock run passed its timeout with no other trace).
    faulthandler.register(signal.SIGTERM, chain=True)

    t0 = time.monotonic()
    try:
        TESTS[ARGS.test]()
    except TestFailure as e:
        print("FAIL %s: %s" % (ARGS.test, e))
        return 1
    finally:
        down()
    print("PASS %s (%.2f s)" % (ARGS.test, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
