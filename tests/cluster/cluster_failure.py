"""tests/cluster/cluster_failure.py - cluster test cases of how a job ends
when something fails: a remote node, agent, DSM node or the launcher
killed, Ctrl-C, a host that cannot be reached, a working directory or
program missing on one host, a link cut for good or for 12 s, and another
build of the program on one host; each named in one line, nothing left.
"""

import os
import re
import signal
import subprocess
import tempfile
import time

import cluster_hosts as hosts
from cluster_hosts import (ARGS, check, addr, sh, Hosts, job_env, launcher_cmd,
                           start, finish, reap, kill_and_finish, run, one_line,
                           ns_pids, cmdline, nothing_left, wait_ready, argv_of,
                           agent_pids, build_dsm_loop, read_until)


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
            rc, out, err, t = kill_and_finish(p, victims[0])
        finally:
            reap(p)
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
    with tempfile.TemporaryDirectory() as d, Hosts(2):
        prog = build_dsm_loop(d)
        p = start(["-H", "%s:2,%s:2" % (addr(0), addr(1)), prog], cwd=d)
        try:
            read_until(p, "running", 30)
            victims = [x for x in ns_pids(1) if argv_of(x)[:1] == [prog]]
            check(victims, "no node of the program on host 1")
            rc, out, err, t = kill_and_finish(p, victims[0])
        finally:
            reap(p)
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
            reap(p)
        check(rc == 130, "status %d %r" % (rc, err))
        one_line(err, r"^ompdsmrun: received SIGINT; ending the job$")
        # Nodes that ignore SIGTERM get SIGKILL after the 2 s grace.
        check(t < 7, "took %.1f s" % t)
        nothing_left(3)


def cut(i, up, nhosts=3):
    """Host i's cable: its port on the bridge.  Back up, the hosts forget
    the neighbours they failed to reach meanwhile, which would answer the
    next job's first connections with "No route to host"."""
    sh("ip", "-n", hosts.PREFIX + "-br", "link", "set", "v%d" % i,
       "up" if up else "down")
    for h in range(nhosts) if up else ():
        sh("ip", "-n", "%s-h%d" % (hosts.PREFIX, h), "neigh", "flush", "all",
           check_rc=False)


def test_linkdown():
    """A link taken down for good: the job ends naming both hosts and the
    network between them, within OMPDSM_TCP_TIMEOUT_S (3 s here, and the
    30 s default), while every node still runs."""
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
                reap(p)
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
            reap(p)
            cut(1, True)
        check(rc == 0, "a 12 s outage ended the job: %d %r" % (rc, err))
        check("sum 44850" in out, "result after the outage: %r" % out)
        nothing_left(3)


def test_build():
    """Another build of the program at the same path on one host: the job
    ends with the launcher's one line naming both builds, before any node
    connects to another, in each of 10 runs."""
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
