#!/usr/bin/env python3
"""Behaviour tests of ompdsmrun, the launcher (docs/ompdsmrun.md).

Usage: launch_test.py --ompdsmrun PATH --testnode PATH TEST [TEST...]
       launch_test.py --list

Each TEST starts real jobs of tests/launch/testnode (or of system programs),
checks exit status, messages, output and the processes left behind, and
never waits without a deadline.  Exit status 0 when every test passed, 1
otherwise.  Standard library only.
"""

import argparse
import fcntl
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time

OMPDSMRUN = None
TESTNODE = None
MARKER_BASE = "ompdsm-launch-test-%d" % os.getpid()
_marker_count = 0
_markers = []


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def marker():
    """A string unique to one job; it appears in every node's cmdline."""
    global _marker_count
    _marker_count += 1
    m = "%s-%d" % (MARKER_BASE, _marker_count)
    _markers.append(m)
    return m


# ---- processes ----

def proc_stat(pid):
    """(state, ppid, pgid) of pid, or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return rest[0], int(rest[1]), int(rest[2])


def live_procs():
    """pid -> (cmdline, state, pgid) of every process but zombies."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        st = proc_stat(pid)
        if st is None or st[0] in "ZX":
            continue
        out[pid] = (cmd, st[0], st[2])
    return out


def job_procs(mark, pgid=None):
    return sorted(pid for pid, (cmd, _, pg) in live_procs().items()
                  if pid != os.getpid() and
                  (mark in cmd or (pgid is not None and pg == pgid)))


def check_gone(mark, pgid=None, wait=1.5):
    """Nothing of the job may remain (killed grandchildren are reaped by
    init a moment later, hence the short wait)."""
    end = time.monotonic() + wait
    while True:
        left = job_procs(mark, pgid)
        if not left:
            return
        if time.monotonic() > end:
            info = live_procs()
            raise TestFailure("processes of the job remain: %s" %
                              ["%d %s %s" % (p, info[p][1], info[p][0])
                               for p in left if p in info])
        time.sleep(0.05)


def describe_tree(pid):
    """State and wait channel of pid's threads and of its children, to say
    where a hang is."""
    out = []
    for p in [pid] + [c for c, (_, _, _) in live_procs().items()
                      if (proc_stat(c) or (0, 0))[1] == pid]:
        try:
            for t in sorted(os.listdir("/proc/%d/task" % p)):
                with open("/proc/%d/task/%s/stat" % (p, t)) as f:
                    st = f.read().rsplit(")", 1)[1].split()[0]
                with open("/proc/%d/task/%s/wchan" % (p, t)) as f:
                    wchan = f.read()
                out.append("%d/%s:%s:%s" % (p, t, st, wchan))
        except OSError:
            pass
    return " ".join(out)


def kill_leftovers():
    for m in _markers:
        for pid in job_procs(m):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


class Job:
    """ompdsmrun running in the background, its output collected by
    threads so that the test can wait for lines with a deadline."""

    def __init__(self, args, stdin=subprocess.DEVNULL, env=None,
                 ignore_sigint=False, cwd=None):
        self.t0 = time.monotonic()
        cmd = [OMPDSMRUN] + args
        if ignore_sigint:
            # Through the shell, not preexec_fn, which is unsafe with
            # threads; exec keeps the pid.
            cmd = ["/bin/sh", "-c", 'trap "" INT; exec "$0" "$@"'] + cmd
        self.p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.out, self.err = [], []
        self.cond = threading.Condition()
        self.threads = [threading.Thread(target=self._read, args=(f, l),
                                         daemon=True)
                        for f, l in ((self.p.stdout, self.out),
                                     (self.p.stderr, self.err))]
        for t in self.threads:
            t.start()

    def _read(self, f, lines):
        for line in iter(f.readline, b""):
            with self.cond:
                lines.append(line.decode(errors="replace"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_lines(self, pattern, count, timeout=10.0, stream="out"):
        """Waits for count stdout lines matching pattern; returns them."""
        rx = re.compile(pattern)
        lines = self.out if stream == "out" else self.err
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                got = [l for l in lines if rx.search(l)]
                if len(got) >= count:
                    return got
                left = end - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and
                                 not any(t.is_alive() for t in self.threads)):
                    raise TestFailure(
                        "waited for %d lines /%s/, got %d; stdout %r stderr %r"
                        % (count, pattern, len(got), self.out[-5:],
                           self.err[-5:]))
                self.cond.wait(min(left, 0.1))

    def wait(self, timeout=20.0):
        """Returns (exit status, seconds since start)."""
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            diag = describe_tree(self.p.pid)
            self.p.kill()
            self.p.wait()
            kill_leftovers()
            raise TestFailure("ompdsmrun did not end within %g s; stderr %r; "
                              "processes: %s" % (timeout, self.err[-5:], diag))
        elapsed = time.monotonic() - self.t0
        for t in self.threads:
            t.join(5)
        return rc, elapsed

    def node_pids(self, n):
        lines = self.wait_lines(r"^ready rank=", n)
        pids = {}
        for l in lines:
            m = re.match(r"ready rank=(\d+) pid=(\d+) pgid=(\d+)", l)
            pids[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        check(sorted(pids) == list(range(n)), "ready ranks %s" % sorted(pids))
        return pids


def run(args, timeout=20.0, **kw):
    j = Job(args, **kw)
    rc, elapsed = j.wait(timeout)
    return rc, "".join(j.out), j.err, elapsed


def launcher_lines(err):
    return [l for l in err if l.startswith("ompdsmrun:")]


def one_line(err, pattern):
    """stderr holds exactly one ompdsmrun line, matching pattern."""
    lines = launcher_lines(err)
    check(len(lines) == 1, "expected one ompdsmrun line, got %r" % err)
    check(re.search(pattern, lines[0]),
          "line %r does not match /%s/" % (lines[0], pattern))
    return lines[0]


def info_lines(out):
    res = []
    for l in out.splitlines():
        if l.startswith("info "):
            d = dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv)
            res.append(d)
    return res


def my_cpus():
    with open("/proc/self/status") as f:
        for l in f:
            if l.startswith("Cpus_allowed_list:"):
                return l.split(":", 1)[1].strip()
    return "?"


# ---- tests ----

def test_env():
    """Every rank exactly once, SIZE, LOCAL_*, JOBID, BOOT, one process
    group, no address randomisation with more than one node, signals
    reset, inherited values of our variables replaced."""
    env = dict(os.environ, OMPDSM_RANK="99", OMPDSM_BOOT="bogus:1")
    # The launcher starts with SIGINT ignored; the nodes must not inherit it.
    for n in (1, 2, 4, 8):
        j = Job(["-np", str(n), TESTNODE, "info"], env=env,
                ignore_sigint=True)
        rc, _ = j.wait()
        check(rc == 0, "N=%d: status %d, stderr %r" % (n, rc, j.err))
        check(not j.err, "N=%d: stderr %r" % (n, j.err))
        infos = info_lines("".join(j.out))
        ranks = sorted(int(i["rank"]) for i in infos)
        check(ranks == list(range(n)), "N=%d: ranks %s" % (n, ranks))
        for i in infos:
            check(i["size"] == str(n), "size %s for N=%d" % (i["size"], n))
            check(i["local_rank"] == i["rank"], "local_rank %r" % i)
            check(i["local_size"] == str(n), "local_size %r" % i)
            check(i["jobid"] == infos[0]["jobid"] and i["jobid"] != "-",
                  "jobid %r" % i)
            check(i["jobid"].endswith("-%d" % j.p.pid), "jobid %r" % i)
            check(re.fullmatch(r"127\.0\.0\.1:\d+", i["boot"]),
                  "boot %r" % i["boot"])
            check(i["boot"] == infos[0]["boot"], "boot differs")
            # Several nodes share one address layout; one keeps its
            # randomisation (docs/design.md, "Who may connect").
            check(i["norandom"] == ("1" if n > 1 else "0"),
                  "N=%d: address randomisation %s: %r" %
                  (n, "on" if n > 1 else "off", i))
            check(i["sigint"] == "dfl", "SIGINT disposition inherited")
        by_rank = {int(i["rank"]): i for i in infos}
        pg = by_rank[0]["pgid"]
        check(pg == by_rank[0]["pid"], "node 0 does not lead its group")
        check(all(i["pgid"] == pg for i in infos), "nodes in several groups")
        check(int(pg) != os.getpgrp(), "nodes share the test's group")


def test_args():
    """Everything after the program reaches it untouched."""
    rc, out, err, _ = run(["-np", "2", TESTNODE, "info", "-np", "5",
                           "--tag-output", "--", "a b"])
    check(rc == 0, "status %d %r" % (rc, err))
    for i in info_lines(out):
        check(i["args"] == "-np|5|--tag-output|--|a",
              "args %r" % i["args"])
    # The tail "a b" was one argument: the line shows "a" then " b".
    check(out.count("|a b\n") == 2, "argument with a space split: %r" % out)
    rc, out, err, _ = run(["-np", "1", "/bin/echo", "hello", "-np", "3"])
    check(rc == 0 and out == "hello -np 3\n", "echo: %d %r" % (rc, out))
    rc, out, err, _ = run(["-np", "2", "true"])
    check(rc == 0 and not err, "true via PATH: %d %r" % (rc, err))


def test_exit_status():
    m = marker()
    rc, _, err, t = run(["-np", "4", TESTNODE, "exitif", "2", "3", m])
    check(rc == 3, "exit 3 on node 2 gave status %d" % rc)
    one_line(err, r"^ompdsmrun: node 2 \(pid \d+\) exited with status 3; "
             r"ending the job$")
    check(t < 5, "took %.1f s" % t)
    check_gone(m)
    # The others finish normally first: still the failing node's status.
    rc, _, err, _ = run(["-np", "3", TESTNODE, "exitcode", "1", "5"])
    check(rc == 5, "status %d, expected 5" % rc)
    one_line(err, r"node 1 \(pid \d+\) exited with status 5")
    rc, _, err, _ = run(["-np", "3", TESTNODE, "exitcode", "1", "0"])
    check(rc == 0 and not err, "all exit 0: %d %r" % (rc, err))


def test_segv():
    m = marker()
    rc, _, err, t = run(["-np", "3", TESTNODE, "killif", "1", "11", m])
    check(rc == 139, "SIGSEGV gave status %d" % rc)
    one_line(err, r"^ompdsmrun: node 1 \(pid \d+\) was killed by signal 11 "
             r"\(Segmentation fault\); ending the job$")
    check(t < 5, "took %.1f s" % t)
    check_gone(m)


def test_kill9():
    """kill -9 of one node: the launcher ends within 5 s and nothing of the
    job remains, the nodes' own children included."""
    m = marker()
    j = Job(["-np", "4", TESTNODE, "grandchild", m])
    pids = j.node_pids(4)
    pgid = pids[0][1]
    check(len(job_procs(m)) >= 9, "launcher, 4 nodes and 4 grandchildren "
          "expected: %s" % job_procs(m))
    t0 = time.monotonic()
    os.kill(pids[2][0], signal.SIGKILL)
    rc, _ = j.wait(10)
    t = time.monotonic() - t0
    check(rc == 137, "status %d" % rc)
    check(t < 5, "launcher took %.1f s to end the job" % t)
    one_line(j.err, r"^ompdsmrun: node 2 \(pid %d\) was killed by signal 9 "
             r"\(Killed\); ending the job$" % pids[2][0])
    check_gone(m, pgid)


def test_grace_kill():
    """Nodes that ignore SIGTERM get SIGKILL after the grace period."""
    m = marker()
    j = Job(["-np", "2", "--timeout", "1", TESTNODE, "ignterm", m])
    rc, t = j.wait(10)
    check(rc == 124, "status %d" % rc)
    check(len(j.wait_lines(r"^ready rank=", 2)) == 2, "nodes did not start")
    check(3.0 <= t < 4.5, "took %.1f s (grace must be 2 s)" % t)
    check_gone(m)


def test_signals():
    """SIGINT, SIGTERM, SIGHUP, SIGQUIT to the launcher end every node;
    exit status 128+signal."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                signal.SIGQUIT):
        m = marker()
        j = Job(["-np", "3", TESTNODE, "sleep", m])
        pids = j.node_pids(3)
        t0 = time.monotonic()
        j.p.send_signal(sig)
        rc, _ = j.wait(10)
        check(rc == 128 + sig, "%s gave status %d" % (sig.name, rc))
        check(time.monotonic() - t0 < 3, "%s took too long" % sig.name)
        one_line(j.err, r"received %s; ending the job" % sig.name)
        check_gone(m, pids[0][1])
    # Started with SIGINT ignored (a script's "&"): it stays ignored.
    j = Job(["-np", "2", TESTNODE, "ticks", "10", "30"], ignore_sigint=True)
    j.node_pids(2)
    j.p.send_signal(signal.SIGINT)
    rc, _ = j.wait(10)
    check(rc == 0 and not j.err, "ignored SIGINT: status %d %r" % (rc, j.err))
    # A terminating signal while the job is ending: SIGKILL at once.
    m = marker()
    j = Job(["-np", "2", TESTNODE, "ignterm", m])
    pids = j.node_pids(2)
    t0 = time.monotonic()
    j.p.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    j.p.send_signal(signal.SIGINT)
    rc, _ = j.wait(10)
    check(rc == 143, "status %d" % rc)
    check(time.monotonic() - t0 < 1.5, "second signal did not kill at once")
    check_gone(m, pids[0][1])


def wait_state(pids, stopped, timeout=5.0):
    end = time.monotonic() + timeout
    while True:
        states = {p: (proc_stat(p) or ("gone",))[0] for p in pids}
        if all((s in "tT") == stopped for s in states.values()):
            return states
        if time.monotonic() > end:
            raise TestFailure("states %s, wanted %s" %
                              (states, "stopped" if stopped else "running"))
        time.sleep(0.02)


def test_stop_cont():
    """SIGTSTP stops every node and then the launcher; SIGCONT resumes them
    and the job completes normally."""
    j = Job(["-np", "3", TESTNODE, "ticks", "40", "50"])
    pids = [p for p, _ in j.node_pids(3).values()]
    j.p.send_signal(signal.SIGTSTP)
    wait_state([j.p.pid] + pids, True)
    time.sleep(1.2)  # longer than the nodes' work: they must not progress
    wait_state([j.p.pid] + pids, True, 0)
    check(not [l for l in j.out if l.startswith("done")],
          "a node ran while stopped")
    j.p.send_signal(signal.SIGCONT)
    wait_state([j.p.pid] + pids, False)
    rc, _ = j.wait(10)
    check(rc == 0, "status %d after SIGCONT, stderr %r" % (rc, j.err))
    check(len([l for l in j.out if l.startswith("done")]) == 3,
          "not every node finished: %r" % j.out)


def test_usr1():
    """SIGUSR1 to the launcher prints where every node is (here: programs
    that never speak the bootstrap protocol, so "no report"); SIGUSR2 is
    ignored with a note.  The nodes (which do not handle either, so would
    die of them) carry on."""
    m = marker()
    j = Job(["-np", "3", TESTNODE, "sleep", m])
    pids = j.node_pids(3)
    j.p.send_signal(signal.SIGUSR1)
    j.wait_lines(r"^ompdsmrun: job \S+, 3 nodes, running for", 1, stream="err")
    for r in range(3):
        j.wait_lines(r"^ompdsmrun: node %d: no report" % r, 1, stream="err")
    j.p.send_signal(signal.SIGUSR2)
    j.wait_lines(r"^ompdsmrun: received SIGUSR2; ignored", 1, stream="err")
    time.sleep(0.3)
    check(j.p.poll() is None, "the job ended: status %s stderr %r" %
          (j.p.poll(), j.err))
    for r, (pid, _) in pids.items():
        st = proc_stat(pid)
        check(st is not None and st[0] != "Z", "node %d is gone" % r)
    j.p.send_signal(signal.SIGTERM)
    rc, _ = j.wait(10)
    check(rc == 143, "status %d stderr %r" % (rc, j.err))
    check_gone(m, pids[0][1])


def spew_payload(rank, i, length):
    return "".join(chr(ord("a") + (rank * 7 + i + k) % 26)
                   for k in range(length))


def check_spew(text, fds, n, lines, length, tag=False):
    """Every line whole and in order per node and descriptor; fds are the
    descriptors whose lines text holds (both when stderr was merged)."""
    seen = {(r, f): [] for r in range(n) for f in fds}
    rx = re.compile(r"^(\[node (\d+)\] )?(\d+):(\d):(\d+):([a-z]*)$")
    for l in text.split("\n")[:-1]:
        mm = rx.match(l)
        check(mm, "mangled line %r" % l[:120])
        r, f, i, p = int(mm.group(3)), int(mm.group(4)), int(mm.group(5)), \
            mm.group(6)
        check(f in fds, "line for fd %d among fds %s" % (f, fds))
        check(bool(mm.group(1)) == tag, "tag wrong on %r" % l[:40])
        if tag:
            check(int(mm.group(2)) == r, "tag says node %s for rank %d"
                  % (mm.group(2), r))
        check(p == spew_payload(r, i, length),
              "payload of rank %d line %d corrupted" % (r, i))
        seen[(r, f)].append(i)
    for (r, f), got in seen.items():
        want_i = [i for i in range(lines) if (i & 1) == (f == 2)]
        check(got == want_i, "rank %d: %d lines on fd %d, expected %d "
              "in order" % (r, len(got), f, len(want_i)))
    check(text.endswith("\n"), "output does not end with a newline")


def test_output():
    """8 nodes write thousands of long lines in small pieces to stdout and
    stderr: every line arrives whole, in order per node."""
    n, lines, length = 8, 3000, 300
    p = subprocess.run([OMPDSMRUN, "-np", str(n), TESTNODE, "spew",
                        str(lines), str(length)], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=40)
    check(p.returncode == 0, "status %d" % p.returncode)
    check_spew(p.stdout.decode(), [1], n, lines, length)
    check_spew(p.stderr.decode(), [2], n, lines, length)
    # 2>&1: stdout and stderr lines share one pipe, still whole.
    p = subprocess.run([OMPDSMRUN, "-np", "4", TESTNODE, "spew", "2000",
                        "700"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=40)
    check(p.returncode == 0, "2>&1: status %d" % p.returncode)
    check_spew(p.stdout.decode(), [1, 2], 4, 2000, 700)
    # --tag-output
    p = subprocess.run([OMPDSMRUN, "-np", "3", "--tag-output", TESTNODE,
                        "spew", "200", "100"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=20)
    check(p.returncode == 0, "status %d" % p.returncode)
    check_spew(p.stdout.decode(), [1], 3, 200, 100, tag=True)
    check_spew(p.stderr.decode(), [2], 3, 200, 100, tag=True)
    # Lines longer than 64 KiB come out complete on one node.
    p = subprocess.run([OMPDSMRUN, "-np", "1", TESTNODE, "spew", "4",
                        "200000"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=20)
    check(p.returncode == 0, "status %d" % p.returncode)
    check_spew(p.stdout.decode(), [1], 1, 4, 200000)
    # A last line without newline is flushed when the node ends.
    p = subprocess.run([OMPDSMRUN, "-np", "2", "sh", "-c",
                        "printf 'abc'; printf 'x%s' \"$OMPDSM_RANK\" >&2"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=20)
    check(p.returncode == 0, "status %d" % p.returncode)
    check(p.stdout == b"abcabc", "partial lines: %r" % p.stdout)
    check(sorted([p.stderr[:2], p.stderr[2:]]) == [b"x0", b"x1"],
          "partial stderr: %r" % p.stderr)


def node_pids_by_marker(launcher, mark, n, timeout=5.0):
    end = time.monotonic() + timeout
    while True:
        pids = [p for p in job_procs(mark)
                if (proc_stat(p) or (0, 0))[1] == launcher]
        if len(pids) == n:
            return pids
        if time.monotonic() > end:
            raise TestFailure("found nodes %s, expected %d" % (pids, n))
        time.sleep(0.02)


def test_stuck_output():
    """Nobody reads the launcher's stdout: a failing node, or a signal,
    still ends the job within 5 s."""
    for how in ("kill9", "sigterm"):
        m = marker()
        p = subprocess.Popen([OMPDSMRUN, "-np", "3", TESTNODE, "spew",
                              "1000000", "1000", m],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            pids = node_pids_by_marker(p.pid, m, 3)
            time.sleep(0.5)  # every pipe on the way is full by now
            t0 = time.monotonic()
            if how == "kill9":
                os.kill(pids[1], signal.SIGKILL)
                want = 137
            else:
                p.send_signal(signal.SIGTERM)
                want = 143
            try:
                rc = p.wait(10)
            except subprocess.TimeoutExpired:
                raise TestFailure("%s: the launcher hung on its stuck stdout"
                                  % how)
            t = time.monotonic() - t0
            err = p.stderr.read().decode(errors="replace")
        finally:
            p.kill()
            p.wait()
            p.stdout.close()
            p.stderr.close()
        check(rc == want, "%s: status %d, stderr %r" % (how, rc, err))
        check(t < 5, "%s: took %.1f s" % (how, t))
        check_gone(m)


def test_stdin():
    """stdin goes to node 0 only, EOF included; the others read
    /dev/null."""
    data = os.urandom(300000)
    fnv = 1469598103934665603
    for b in data:
        fnv = ((fnv ^ b) * 1099511628211) & 0xffffffffffffffff
    p = subprocess.run([OMPDSMRUN, "-np", "3", TESTNODE, "stdin"],
                       input=data, capture_output=True, timeout=20)
    check(p.returncode == 0, "status %d %r" % (p.returncode, p.stderr))
    got = {}
    for l in p.stdout.decode().splitlines():
        mm = re.match(r"stdin rank=(\d+) bytes=(\d+) fnv=([0-9a-f]+)", l)
        if mm:
            got[int(mm.group(1))] = (int(mm.group(2)), int(mm.group(3), 16))
    check(got.get(0) == (len(data), fnv), "node 0 got %r" % (got.get(0),))
    check(got.get(1, (None,))[0] == 0 and got.get(2, (None,))[0] == 0,
          "other nodes read stdin: %r" % got)
    # A node 0 that never reads stdin must not keep the job alive.
    p = subprocess.run([OMPDSMRUN, "-np", "2", TESTNODE, "info"],
                       input=data, capture_output=True, timeout=20)
    check(p.returncode == 0, "unread stdin: status %d" % p.returncode)


def pty_job(args, background, typed):
    """Runs ompdsmrun with a terminal as stdin and controlling tty, as the
    foreground job or in a background process group.  Returns (how it
    ended, output).  A launcher stopped by SIGTTIN is reported as
    'stopped' (then killed)."""
    master, slave = os.openpty()
    slave_name = os.ttyname(slave)
    out = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.setsid()
            fd = os.open(slave_name, os.O_RDWR)  # becomes our ctty
            fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
            os.dup2(fd, 0)
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            argv = [OMPDSMRUN] + args
            if not background:
                os.execv(OMPDSMRUN, argv)
            child = os.fork()
            if child == 0:
                os.setpgid(0, 0)  # not the terminal's foreground group
                os.execv(OMPDSMRUN, argv)
            os.setpgid(child, child)
            end = time.monotonic() + 15
            while time.monotonic() < end:
                wpid, st = os.waitpid(child, os.WNOHANG | os.WUNTRACED)
                if wpid == child:
                    if os.WIFSTOPPED(st):
                        os.kill(child, signal.SIGKILL)
                        os._exit(99)
                    os._exit(os.waitstatus_to_exitcode(st) & 0xff)
                time.sleep(0.02)
            os.kill(child, signal.SIGKILL)
            os._exit(98)
        except BaseException:
            os._exit(97)
    os.close(slave)
    time.sleep(0.2)
    os.write(master, typed)
    end = time.monotonic() + 20
    while True:
        wpid, st = os.waitpid(pid, os.WNOHANG)
        if wpid == pid:
            break
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(master)
            raise TestFailure("terminal job did not end")
        try:  # keep the echo from filling the terminal's buffer
            fl = fcntl.fcntl(master, fcntl.F_GETFL)
            fcntl.fcntl(master, fcntl.F_SETFL, fl | os.O_NONBLOCK)
            os.read(master, 65536)
        except OSError:
            pass
        time.sleep(0.02)
    os.close(master)
    out.seek(0)
    return os.waitstatus_to_exitcode(st), out.read().decode(errors="replace")


def test_stdin_tty():
    """With a terminal as stdin: in the background the launcher neither
    stops (SIGTTIN) nor hangs; in the foreground what is typed reaches
    node 0, and ^D closes its stdin."""
    # The nodes outlive the typing, so the launcher has a chance to err.
    rc, out = pty_job(["-np", "2", TESTNODE, "ticks", "20", "50"], True,
                      b"typed\n")
    check(rc != 99, "the launcher was stopped (SIGTTIN) in the background")
    check(rc == 0, "background job: status %d, output %r" % (rc, out))
    check(out.count("done rank=") == 2, "background output %r" % out)
    rc, out = pty_job(["-np", "2", TESTNODE, "stdin"], False,
                      b"hello\n\x04")
    check(rc == 0, "foreground job: status %d, output %r" % (rc, out))
    check(re.search(r"stdin rank=0 bytes=6 ", out), "node 0: %r" % out)
    check(re.search(r"stdin rank=1 bytes=0 ", out), "node 1: %r" % out)
    # ^C at the terminal reaches only the launcher's group; it ends the job.
    m = marker()
    rc, out = pty_job(["-np", "2", TESTNODE, "sleep", m], False, b"\x03")
    check(rc == 130, "^C: status %d, output %r" % (rc, out))
    check(re.search(r"^ompdsmrun: received SIGINT; ending the job$", out,
                    re.M), "^C: output %r" % out)
    check_gone(m)


def test_bind():
    cpus_list = sorted(os.sched_getaffinity(0))
    ncpu = len(cpus_list)
    mine = my_cpus()
    for n, opt, bound in ((2, ["--bind-to", "core"], True),
                          (ncpu + 2, ["--bind-to", "core"], True),
                          (2, ["--bind-to", "none"], False),
                          (ncpu, [], True), (ncpu + 1, [], False)):
        rc, out, err, _ = run(["-np", str(n)] + opt + [TESTNODE, "info"])
        check(rc == 0, "status %d %r" % (rc, err))
        infos = info_lines(out)
        check(len(infos) == n, "lines %r" % out)
        for i in infos:
            k = int(i["rank"])
            want = str(cpus_list[k % ncpu]) if bound else mine
            check(i["cpus"] == want, "N=%d %s node %d: Cpus_allowed_list %s,"
                  " expected %s" % (n, opt, k, i["cpus"], want))


def test_bad_args():
    with tempfile.TemporaryDirectory() as d:
        noexec = os.path.join(d, "noexec")
        with open(noexec, "w") as f:
            f.write("#!/bin/sh\n")
        cases = [
            ([], "missing -np"),
            (["-np"], "needs a value"),
            (["-np", "0", TESTNODE, "info"], "'0' is not valid"),
            (["-np", "-3", TESTNODE, "info"], "'-3' is not valid"),
            (["-np", "x", TESTNODE, "info"], "'x' is not valid"),
            (["-np", "4097", TESTNODE, "info"], "from 1 to 4096"),
            (["--bogus", "-np", "2", TESTNODE, "info"], "unknown option"),
            (["-np", "2"], "missing the program"),
            (["-np", "2", "/nonexistent/prog"], "No such file"),
            (["-np", "2", "no-such-program-ompdsm"], "not found in PATH"),

            (["-np", "2", noexec], "Permission denied"),
            (["-np", "2", d], "directory"),
            (["-np", "2", "--bind-to", "socket", TESTNODE, "info"],
             "expected core or none"),
            (["-np", "2", "--timeout", "soon", TESTNODE, "info"],
             "--timeout"),
        ]
        # A program in the current directory, named without ./ (and not
        # in PATH): not run, but the message points at it.
        cases.append((["-np", "2", os.path.basename(TESTNODE), "info"],
                      "did you mean ./%s?" % os.path.basename(TESTNODE)))
        for args, frag in cases:
            rc, out, err, t = run(args, timeout=10,
                                  cwd=os.path.dirname(TESTNODE))
            check(rc == 2, "%s: status %d" % (args, rc))
            check(out == "", "%s: something ran: %r" % (args, out))
            check(len(err) == 1 and err[0].startswith("ompdsmrun: ") and
                  frag in err[0], "%s: stderr %r lacks %r" % (args, err, frag))
    rc, out, err, _ = run(["--help"])
    check(rc == 0 and "usage: ompdsmrun -np N" in out, "--help: %d" % rc)
    rc, out, err, _ = run(["--version"])
    check(rc == 0 and out.startswith("ompdsmrun"), "--version: %d" % rc)


def test_hosts_local():
    """Hosts that are all this machine: nodes forked here, local ranks per
    host, the loopback bootstrap; bad host lists are one line, status 2."""
    rc, out, err, _ = run(["-H", "localhost:2,127.0.0.1", "-x", "XV=1 2",
                           TESTNODE, "info"])
    check(rc == 0, "status %d %r" % (rc, err))
    infos = sorted(info_lines(out), key=lambda d: int(d["rank"]))
    check([(d["rank"], d["local_rank"], d["local_size"]) for d in infos] ==
          [("0", "0", "2"), ("1", "1", "2"), ("2", "0", "1")],
          "local ranks: %r" % infos)
    check(all(d["boot"].startswith("127.0.0.1:") for d in infos),
          "boot: %r" % infos)
    rc, out, err, _ = run(["-H", "localhost:2", "--map-by", "node", "-np",
                           "3", "--oversubscribe", "sh", "-c",
                           "echo $OMPDSM_RANK:$OMPDSM_LOCAL_RANK"])
    check(rc == 0 and sorted(out.split()) == ["0:0", "1:1", "2:2"],
          "oversubscribed: %d %r %r" % (rc, out, err))
    rc, out, err, _ = run(["-H", "localhost", "-x", "XV=a b", "sh", "-c",
                           "echo \"$XV\""])
    check(rc == 0 and out == "a b\n", "-x: %d %r %r" % (rc, out, err))
    with tempfile.TemporaryDirectory() as d:
        hf = os.path.join(d, "hosts")
        with open(hf, "w") as f:
            f.write("localhost slots=2\nlocalhost\n")
        empty = os.path.join(d, "empty")
        open(empty, "w").close()
        cases = [
            (["--hostfile", hf, TESTNODE, "info"], "hosts:2: host "
             "'localhost' is listed twice"),
            (["--hostfile", empty, TESTNODE, "info"], "names no host"),
            (["--hostfile", os.path.join(d, "none"), TESTNODE, "info"],
             "cannot read hostfile"),
            (["-H", "localhost:2", "-np", "3", TESTNODE, "info"],
             "--oversubscribe"),
            (["-H", "localhost:x", TESTNODE, "info"], "bad slots"),
            (["-H", "no-such-host.invalid", TESTNODE, "info"],
             "cannot resolve"),
            (["-np", "1", "-x", "OMPDSM_UNSET_VAR_XYZ", TESTNODE, "info"],
             "is not set here"),
        ]
        for args, frag in cases:
            rc, out, err, t = run(args, timeout=10)
            check(rc == 2, "%s: status %d" % (args, rc))
            check(out == "", "%s: something ran: %r" % (args, out))
            check(len(err) == 1 and err[0].startswith("ompdsmrun: ") and
                  frag in err[0], "%s: stderr %r lacks %r" % (args, err, frag))


def test_exec_fail():
    """A program that passes the checks but cannot be executed: one line,
    status 127."""
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "badinterp")
        with open(prog, "w") as f:
            f.write("#!/nonexistent/interpreter\n")
        os.chmod(prog, 0o755)
        rc, out, err, t = run(["-np", "3", prog])
        check(rc == 127, "status %d" % rc)
        one_line(err, r"^ompdsmrun: node 0: cannot execute '.*badinterp': "
                 r"No such file or directory$")
        check(t < 5, "took %.1f s" % t)


def test_many():
    """More nodes than cores finish quickly (the launcher never spins)."""
    for n, limit in ((8, 3.0), (64, 10.0)):
        t0 = time.monotonic()
        rc, out, err, _ = run(["-np", str(n), TESTNODE, "info"])
        t = time.monotonic() - t0
        check(rc == 0, "N=%d status %d" % (n, rc))
        check(len(info_lines(out)) == n, "N=%d lines" % n)
        check(t < limit, "N=%d took %.2f s" % (n, t))
        print("  N=%d: %.2f s" % (n, t))
    # An idle launcher uses no CPU: its utime+stime stays near zero.
    m = marker()
    j = Job(["-np", "4", TESTNODE, "sleep", m])
    j.node_pids(4)
    time.sleep(1.0)
    with open("/proc/%d/stat" % j.p.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    j.p.send_signal(signal.SIGTERM)
    j.wait(10)
    check(ticks < 20, "idle launcher used %d clock ticks" % ticks)


def test_timeout():
    m = marker()
    j = Job(["-np", "2", "--timeout", "1", TESTNODE, "sleep", m])
    pids = j.node_pids(2)
    rc, t = j.wait(10)
    check(rc == 124, "status %d" % rc)
    check(0.9 < t < 4, "ended after %.2f s" % t)
    one_line(j.err, r"--timeout 1 s\); ending the job$")
    check_gone(m, pids[0][1])
    rc, _, err, _ = run(["-np", "2", "--timeout", "10", TESTNODE, "info"])
    check(rc == 0 and not err, "a job within its time limit: %d" % rc)


# ---- bootstrap protocol ----

def test_boot_gather():
    """Allgather rounds of random bytes, checked on every node; FINI then
    exit 0 (with the connection open or closed) is success."""
    for n in (1, 2, 4, 8):
        seed = str(int.from_bytes(os.urandom(4), "little"))
        rc, out, err, t = run(["-np", str(n), TESTNODE, "gather", "8", seed])
        check(rc == 0, "N=%d seed %s: status %d %r" % (n, seed, rc, err))
        check(out.count("gather ok") == n, "N=%d: %r" % (n, out))
        check(not launcher_lines(err), "N=%d: %r" % (n, err))


def test_boot_auth():
    """Connections to the bootstrap socket that do not pass the job key's
    challenge-response (random bytes, a HELLO without it, an answer made
    with another key, a replayed answer) are each refused with one line
    naming where they came from, and the job goes on and verifies; the
    nodes get the key in their environment, never on a command line."""
    for n in (1, 3):
        seed = str(int.from_bytes(os.urandom(4), "little"))
        rc, out, err, t = run(["-np", str(n), TESTNODE, "intrude", "4", seed])
        check(rc == 0, "N=%d: status %d %r" % (n, rc, err))
        check(out.count("gather ok") == n, "N=%d: %r" % (n, out))
        check(out.count("closed") == 4, "intruders not closed: %r" % out)
        lines = launcher_lines(err)
        check(len(lines) == 4 and all(re.match(
            r"ompdsmrun: bootstrap: refused a connection from "
            r"127\.0\.0\.1:\d+: .*; the job goes on$", l) for l in lines),
            "N=%d: expected 4 refusals, got %r" % (n, err))
        check(sum("wrong" in l for l in lines) == 4,
              "each refusal says the answer was wrong: %r" % lines)
    # The key reaches each node in its environment, 64 hex digits, and
    # differs from job to job.
    keys = []
    for _ in range(2):
        rc, out, err, _ = run(["-np", "2", "/bin/sh", "-c",
                               'echo "key=$OMPDSM_JOB_KEY"'])
        got = sorted(set(re.findall(r"key=(\S*)", out)))
        check(rc == 0 and len(got) == 1 and re.match(r"^[0-9a-f]{64}$",
                                                      got[0]),
              "the nodes' keys: %r" % out)
        keys.append(got[0])
    check(keys[0] != keys[1], "two jobs got the same key")


def test_boot_abort():
    m = marker()
    rc, _, err, t = run(["-np", "4", TESTNODE, "abort", "2", "7",
                         "disk on fire\nreally", m])
    check(rc == 7, "status %d" % rc)
    one_line(err, r"^ompdsmrun: node 2 aborted the job: disk on fire "
             r"really$")
    check(t < 5, "took %.1f s" % t)
    check_gone(m)
    rc, _, err, _ = run(["-np", "2", TESTNODE, "abort", "1", "0", "zero"])
    check(rc == 1, "ABORT with status 0 gave %d" % rc)
    one_line(err, r"node 1 aborted the job: zero$")
    # ABORT then exit 1 at once, as ompdsm_fatal does: the ABORT wins
    # however the exit and the message race.
    for i in range(10):
        rc, _, err, _ = run(["-np", "3", TESTNODE, "abortexit", "0", "9",
                             "fatal %d" % i])
        check(rc == 9, "ABORT then exit: status %d %r" % (rc, err))
        one_line(err, r"^ompdsmrun: node 0 aborted the job: fatal %d$" % i)


def test_boot_lost():
    """A node that closes its connection, or exits 0, without FINI fails
    the job."""
    m = marker()
    rc, _, err, t = run(["-np", "3", TESTNODE, "nofini", "1", m])
    check(rc != 0, "closing without FINI gave status 0")
    one_line(err, r"^ompdsmrun: node 1 \(pid \d+\) closed its bootstrap "
             r"connection without FINI; ending the job$")
    check(t < 5, "took %.1f s" % t)
    check_gone(m)
    rc, _, err, t = run(["-np", "3", TESTNODE, "exitnofini", "1", m])
    check(rc != 0, "exit 0 without FINI gave status 0")
    one_line(err, r"^ompdsmrun: node 1 \(pid \d+\) exited with status 0 "
             r"without sending FINI")
    check_gone(m)


def test_boot_proto():
    """Every protocol violation ends the job with a clear line."""
    cases = {
        "badmagic": r"bad magic 0x12345678",
        "badversion": r"protocol version 9",
        "badrank": r"claims rank 8, out of range 0\.\.2",
        "badsize": r"job has 4 nodes, but it has 3",
        "duprank": r"claims rank 0 .*already claimed",
        "early": r"connection from 127\.0\.0\.1:\d+: sent message type 2 "
                 r"before HELLO",
        "oversize": r"exceeds the limit",
        "badtype": r"type 3, which is not one a node may send",
        "mismatch": r"same length",
        "twice": r"node 1 \(pid \d+\): sent a second contribution",
        "finiskip": r"node 1 \(pid \d+\) sent FINI without joining "
                    r"allgather round 0",
    }
    for kind, pattern in cases.items():
        m = marker()
        rc, _, err, t = run(["-np", "3", TESTNODE, "proto", kind, m])
        check(rc == 1, "%s: status %d %r" % (kind, rc, err))
        one_line(err, r"^ompdsmrun: bootstrap: .*" + pattern)
        check(t < 5, "%s: took %.1f s" % (kind, t))
        check_gone(m)


TESTS = {name[5:]: fn for name, fn in globals().items()
         if name.startswith("test_") and callable(fn)}


def main():
    global OMPDSMRUN, TESTNODE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ompdsmrun")
    ap.add_argument("--testnode")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("tests", nargs="*")
    a = ap.parse_args()
    if a.list:
        print("\n".join(TESTS))
        return 0
    if not a.ompdsmrun or not a.testnode or not a.tests:
        ap.error("--ompdsmrun, --testnode and at least one TEST are needed")
    OMPDSMRUN, TESTNODE = os.path.abspath(a.ompdsmrun), \
        os.path.abspath(a.testnode)
    # Run from a script's "&" we may have inherited ignored signals, which
    # the launchers we start would keep ignoring (as they should).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    failed = 0
    for name in a.tests:
        if name not in TESTS:
            print("unknown test %r (see --list)" % name)
            return 2
        t0 = time.monotonic()
        try:
            TESTS[name]()
            print("PASS %s (%.2f s)" % (name, time.monotonic() - t0))
        except TestFailure as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
        except Exception as e:  # a deadline passed, a crash of the test
            failed += 1
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
        finally:
            kill_leftovers()
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
