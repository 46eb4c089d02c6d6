"""tests/cluster/cluster_launch.py - cluster test cases of what ompdsmrun
carries between the launcher and remote nodes: the environment, ranks and
bootstrap addresses, output as whole lines, the agent tree
(OMPDSM_LAUNCH_FANOUT) with its signals and statuses, the bootstrap
aggregated by the agents, and stdin to node 0.
"""

import os
import re
import signal
import subprocess
import tempfile
import time

from cluster_hosts import (NETNS, ARGS, TestFailure, check, addr, Hosts,
                           job_env, launcher_cmd, start, finish, reap,
                           kill_and_finish, run, one_line, ns_pids, cmdline,
                           nothing_left, wait_ready, argv_of, agent_pids)


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
            reap(p)
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
            reap(p)
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
                rc, out, err, t = kill_and_finish(p, pids[0])
            finally:
                reap(p)
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
            reap(p)
        nothing_left(3)
