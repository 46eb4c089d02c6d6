#!/usr/bin/env python3
"""tests/runtime/deadlock_test.py - deadlock detection and status
(docs/diagnostics.md), on two nodes of rt_deadlock.c.

  deadlock_test.py OMPDSMRUN RT_DEADLOCK RT_DEADLOCK_C CASE

  locks, held, flush  the deadlock is reported (shm and tcp): status 125,
                      one line per thread naming what it waits on and the
                      line marked in rt_deadlock.c, the holder of a lock,
                      within OMPDSM_DEADLOCK_S + 20 s
  compute, sleep      a node computing or sleeping 4 x OMPDSM_DEADLOCK_S
                      while the other waits: no report, status 0
  stop                a node stopped (SIGSTOP) for 4 x OMPDSM_DEADLOCK_S in
                      the middle of a run of barriers: no report, status 0
  tstp                the whole job stopped with Ctrl-Z (SIGTSTP to
                      ompdsmrun) for as long: no report, status 0
  status              a deadlocked job with detection off: ompdsmrun
                      --status and SIGUSR1 name every node and what it
                      waits on
  off                 OMPDSM_DEADLOCK_S=0: no report (--timeout ends it)
  fault               (tcp) node 0 stopped with SIGSTOP, then node 1 reads
                      pages it wrote: --status shows node 1 waiting in the
                      page fault at its line; no report, status 0 once
                      node 0 continues
  translated          (RT_DEADLOCK is ompcc, RT_DEADLOCK_C
                      rt_deadlock_omp.c) an OpenMP program built by ompcc
                      without -g: crossed locks named by the argument
                      written at each call (omp_set_lock(&locks[3])), and
                      a named critical section, each with its line;
                      the crossed locks again after a nested region (an
                      idle pool thread must not hide the deadlock: when
                      the nested team's idle pool thread looked running
                      it failed, status 124 from --timeout); the
                      crossed locks on one node of two threads, where
                      omp locks keep no held lists

Expected lines come from the @NAME markers in rt_deadlock.c, not from a
run.  Exit 0 pass, 1 fail.
"""
import os
import re
import signal
import subprocess
import sys
import time

LAUNCHER, PROG, SRC, CASE = sys.argv[1:5]
D = 1.0  # OMPDSM_DEADLOCK_S in these tests
fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def marker_lines():
    lines = {}
    with open(SRC) as f:
        for no, text in enumerate(f, 1):
            m = re.search(r"/\* @(\w+) \*/", text)
            if m:
                lines[m.group(1)] = no
    return lines


LINE = marker_lines()


def env(deadlock=D, transport="shm"):
    e = dict(os.environ)
    e["OMPDSM_DEADLOCK_S"] = str(deadlock)
    e["OMPDSM_TRANSPORT"] = transport
    return e


def start(args, deadlock=D, transport="shm", timeout=40, layout=("-np", "2")):
    cmd = [LAUNCHER, "--timeout", str(timeout)] + list(layout) + [PROG] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=env(deadlock, transport))


def finish(p, limit=60):
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        fail("the job did not end within %d s" % limit)
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def node_pid(launcher_pid, rank):
    """The pid of node rank of the job of launcher_pid (its environment)."""
    want = ("-%d" % launcher_pid).encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env_ = f.read().split(b"\0")
        except OSError:
            continue
        if (b"OMPDSM_RANK=%d" % rank) in env_ and any(
                v.startswith(b"OMPDSM_JOBID=") and v.endswith(want)
                for v in env_):
            return int(d)
    return None


def expect_report(case, want, transport, layout=("-np", "2")):
    t0 = time.monotonic()
    st, out, err = finish(start([case], transport=transport, timeout=20,
                                layout=layout))
    took = time.monotonic() - t0
    tag = "%s (%s, %s)" % (case, transport, " ".join(layout))
    if st != 125:
        fail("%s: status %d, expected 125 (deadlock)\n%s" % (tag, st, err))
        return
    if took > D + 20:
        fail("%s: reported after %.1f s (bound %.1f s)" % (tag, took, D + 20))
    lines = [l for l in err.splitlines() if l.startswith("ompdsmrun: ")]
    if not lines or not lines[0].startswith("ompdsmrun: deadlock: "):
        fail("%s: the first line is not the deadlock line:\n%s" % (tag, err))
    for w in want:
        if not any(re.fullmatch(w, l) for l in lines):
            fail("%s: no line matching %r in:\n%s" % (tag, w, err))
    # The report is the last word: no node complains of a peer that the
    # job's end took away ("did node 0 die?").
    stray = [l for l in err.splitlines() if l and not l.startswith("ompdsmrun: ")]
    if stray:
        fail("%s: lines beside the report: %r" % (tag, stray))
    if "finished" in out:
        fail("%s: the program finished, yet a deadlock was reported" % tag)
    print("%s: reported in %.1f s, status 125" % (tag, took))


def expect_clean(st, out, err, tag):
    if st != 0 or "deadlock" in err or "finished" not in out:
        fail("%s: status %d (expected 0, no report):\n%s%s" % (tag, st, out,
                                                                err))
    else:
        print("%s: no report, status 0" % tag)


def lock_line(node, marker, holder):
    return (r"ompdsmrun: node %d thread 0: omp_set_lock\(lock \d+\) at "
            r"rt_deadlock\.c:%d, held by node %d" % (node, LINE[marker], holder))


def barrier_line(node, marker):
    return r"ompdsmrun: node %d thread 0: barrier at rt_deadlock\.c:%d" % (
        node, LINE[marker])


if CASE in ("locks", "held", "flush"):
    want = {
        "locks": [lock_line(0, "LOCKS0", 1), lock_line(1, "LOCKS1", 0)],
        "held": [barrier_line(0, "HELD0"), lock_line(1, "HELD1", 0)],
        "flush": [barrier_line(0, "FLUSH0"),
                  r"ompdsmrun: node 1 thread 0: flush \(spinning, no change "
                  r"seen\) at rt_deadlock\.c:%d" % LINE["FLUSH1"]],
    }[CASE]
    for tr in ("shm", "tcp"):
        expect_report(CASE, want, tr)
elif CASE in ("compute", "sleep"):
    for tr in ("shm", "tcp"):
        st, out, err = finish(start([CASE, str(4 * D)], transport=tr))
        expect_clean(st, out, err, "%s (%s)" % (CASE, tr))
elif CASE in ("stop", "tstp"):
    p = start(["barriers", str(2 + 4 * D + 2)])
    time.sleep(1.5)
    if CASE == "stop":
        pid = node_pid(p.pid, 1)
        if pid is None:
            fail("stop: node 1 of the job not found")
        else:
            os.kill(pid, signal.SIGSTOP)
            time.sleep(4 * D)
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass  # the job was ended meanwhile: its output says why
    else:
        os.kill(p.pid, signal.SIGTSTP)
        time.sleep(4 * D)
        try:
            os.kill(p.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    st, out, err = finish(p)
    expect_clean(st, out, err, CASE)
elif CASE == "fault":
    import tempfile
    fd, path = tempfile.mkstemp(prefix="rt_deadlock_fault.")
    os.close(fd)
    os.unlink(path)
    p = start(["fault", path], transport="tcp", timeout=60)
    want = (r"node 1 thread 0: page fault \(waiting for the page\) at "
            r"rt_deadlock\.c:%d" % LINE["FAULT1"])

    def status():
        r = subprocess.run([LAUNCHER, "--status", str(p.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=20)
        return r.stdout.decode(errors="replace")

    deadline = time.monotonic() + 25
    text, pid0 = "", None
    while time.monotonic() < deadline and pid0 is None:
        time.sleep(0.3)
        text = status()
        if re.search(r"node 0 thread 0: .*\(waiting", text):
            pid0 = node_pid(p.pid, 0)
    if pid0 is None:
        fail("fault: node 0 never seen waiting; last status:\n" + text)
    else:
        os.kill(pid0, signal.SIGSTOP)
        open(path, "w").close()
        while time.monotonic() < deadline:
            time.sleep(0.3)
            text = status()
            if re.search(want, text):
                break
        else:
            fail("fault: --status never showed %r; last answer:\n%s"
                 % (want, text))
        os.kill(pid0, signal.SIGCONT)
    st, out, err = finish(p)
    os.unlink(path) if os.path.exists(path) else None
    expect_clean(st, out, err, "fault")
elif CASE == "translated":
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="rt_deadlock_omp.")
    try:
        exe = os.path.join(tmp, "rt_deadlock_omp")
        r = subprocess.run([PROG, "-O1", "-o", exe, SRC],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
        if r.returncode != 0:
            fail("translated: ompcc failed:\n" + r.stdout.decode(errors="replace"))
        else:
            PROG = exe
            f = r"rt_deadlock_omp\.c:%d"
            expect_report("locks", [
                r"ompdsmrun: node 0 thread 0: omp_set_nest_lock\(&nest\) at "
                + f % LINE["OMP_LOCK0"] + ", held by node 1",
                r"ompdsmrun: node 1 thread 0: omp_set_lock\(&locks\[3\]\) at "
                + f % LINE["OMP_LOCK1"] + ", held by node 0"], "shm")
            # the same after a nested region: its idle pool thread counts
            # as waiting
            expect_report("nested", [
                r"ompdsmrun: node 0 thread 0: omp_set_nest_lock\(&nest\) at "
                + f % LINE["OMP_LOCK0"] + ", held by node 1",
                r"ompdsmrun: node 1 thread 0: omp_set_lock\(&locks\[3\]\) at "
                + f % LINE["OMP_LOCK1"] + ", held by node 0"], "shm")
            expect_report("critical", [
                r"ompdsmrun: node 1 thread 0: critical\(update\) at "
                + f % LINE["CRIT1"] + ", held by node 0"], "shm")
            # one node of two threads: omp locks are words in the lock
            # objects there, with no held lists (runtime/lock.c); the
            # holder is still named.  (A report's thread number is the
            # thread's diagnostics slot, taken in the order the threads
            # first recorded anything: either thread may be thread 0.)
            expect_report("locks", [
                r"ompdsmrun: node 0 thread [01]: omp_set_nest_lock\(&nest\) at "
                + f % LINE["OMP_LOCK0"] + r", held by node 0 \(itself\)",
                r"ompdsmrun: node 0 thread [01]: omp_set_lock\(&locks\[3\]\) at "
                + f % LINE["OMP_LOCK1"] + r", held by node 0 \(itself\)"],
                "shm", ("-np", "1", "--threads-per-node", "2"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
elif CASE == "status":
    p = start(["held"], deadlock=0)
    want = [r"node 0 thread 0: barrier at rt_deadlock\.c:%d \(waiting [\d.]+ s\)"
            % LINE["HELD0"],
            r"node 1 thread 0: omp_set_lock\(lock \d+\) at rt_deadlock\.c:%d, "
            r"held by node 0 \(waiting [\d.]+ s\)" % LINE["HELD1"]]
    deadline = time.monotonic() + 25
    text = ""
    while time.monotonic() < deadline:
        time.sleep(0.5)
        r = subprocess.run([LAUNCHER, "--status", str(p.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=20)
        text = r.stdout.decode(errors="replace")
        if r.returncode == 0 and all(re.search(w, text) for w in want):
            break
    else:
        fail("status: ompdsmrun --status %d never showed both waits; last "
             "answer:\n%s" % (p.pid, text))
    if not text.startswith("ompdsmrun: job "):
        fail("status: the answer does not start with the job line:\n" + text)
    os.kill(p.pid, signal.SIGUSR1)
    time.sleep(1.0)
    os.kill(p.pid, signal.SIGTERM)
    st, out, err = finish(p)
    for w in want:
        if not re.search(w, err):
            fail("status: after SIGUSR1 no line matching %r on stderr:\n%s"
                 % (w, err))
    if "deadlock:" in err:
        fail("status: a deadlock was reported with OMPDSM_DEADLOCK_S=0")
    if st != 128 + signal.SIGTERM:
        fail("status: status %d after SIGTERM" % st)
    r = subprocess.run([LAUNCHER, "--status", str(p.pid)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=20)
    if r.returncode == 0:
        fail("status: --status of an ended job succeeded")
    print("status: --status and SIGUSR1 name both nodes")
elif CASE == "off":
    t0 = time.monotonic()
    st, out, err = finish(start(["held"], deadlock=0, timeout=4 * D + 1))
    if st != 124 or "deadlock" in err:
        fail("off: status %d (expected 124 from --timeout, no report):\n%s"
             % (st, err))
    else:
        print("off: no report, --timeout ended it after %.1f s"
              % (time.monotonic() - t0))
else:
    fail("unknown case " + CASE)

sys.exit(1 if fails else 0)
