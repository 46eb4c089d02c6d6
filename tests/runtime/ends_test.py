#!/usr/bin/env python3
"""tests/runtime/ends_test.py - how a job of runtime nodes ends, as the user
sees it: exit status and ompdsmrun's one line.

  ends_test.py OMPDSMRUN RT_ENDS CASE

  return3   main returns 3 on 4 nodes: status 3, and the line names node 0
            (whose return decided it), 5 runs
  exit0     exit(0) in a parallel region: status 0, every node gone;
            exit(2) there still gives status 2
  badenv    a bad OMPDSM_HEAP_SIZE or OMP_SCHEDULE on 2 and 4 nodes, 20 runs
            each: the node's explanation arrives every time
  mismatch  threads meet different numbers of barriers (node 0 then waits
            at its end, or ends while the others wait): the job ends with
            a non-zero status and a line saying so, instead of hanging

Exit 0 pass, 1 fail.
"""
import os
import re
import subprocess
import sys
import time

LAUNCHER = PROG = None
TAG = "ends-test-%d" % os.getpid()


def run(np_, args, env=None, timeout=60):
    e = dict(os.environ)
    e.setdefault("OMPDSM_TRANSPORT", "shm")
    e.update(env or {})
    # The tag (ignored by the program) tells our nodes from those of the
    # other cases, which meson may run at the same time.
    cmd = [LAUNCHER, "--timeout", "40", "-np", str(np_), PROG] + args + [TAG]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=e, timeout=timeout)
    return (p.returncode, p.stdout.decode(errors="replace"),
            p.stderr.decode(errors="replace"), time.monotonic() - t0)


def launcher_lines(err):
    return [l for l in err.splitlines() if l.startswith("ompdsmrun:")]


def leftovers():
    """Our nodes still running, after a moment."""
    for _ in range(20):
        left = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    argv = f.read().split(b"\0")
                with open("/proc/%s/stat" % d) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if TAG.encode() in argv and state != "Z":
                left.append(int(d))
        if not left:
            return []
        time.sleep(0.1)
    return left


def case_return3():
    bad = []
    for i in range(5):
        rc, out, err, _ = run(4, ["return3"])
        lines = launcher_lines(err)
        if rc != 3 or len(lines) != 1 or \
                not re.match(r"ompdsmrun: node 0 \(pid \d+\) exited with "
                             r"status 3", lines[0]) or \
                "ends: after the region" not in out:
            bad.append("run %d: status %d, stderr %r" % (i, rc, err))
    return bad


def case_exit0():
    bad = []
    for np_ in (2, 4):
        rc, out, err, _ = run(np_, ["exit0"])
        lines = launcher_lines(err)
        if rc != 0:
            bad.append("exit(0) on %d nodes: status %d, stderr %r" %
                       (np_, rc, err))
        if len(lines) != 1 or "called exit(0) inside a parallel region" \
                not in lines[0]:
            bad.append("exit(0) on %d nodes: stderr %r" % (np_, err))
        if "ends: after the region" in out:
            bad.append("exit(0) on %d nodes: node 0 went on: %r" % (np_, out))
        left = leftovers()
        if left:
            bad.append("exit(0) on %d nodes left %s running" % (np_, left))
    rc, out, err, _ = run(4, ["exit2"])
    if rc != 2 or "called exit(2) inside a parallel region" not in err:
        bad.append("exit(2): status %d, stderr %r" % (rc, err))
    return bad


def case_badenv():
    bad = []
    cases = [("OMPDSM_HEAP_SIZE", "bogus", "OMPDSM_HEAP_SIZE='bogus' is not "
              "valid"),
             ("OMP_SCHEDULE", "bogus", "OMP_SCHEDULE='bogus' is not valid")]
    for var, val, want in cases:
        for np_ in (2, 4):
            for i in range(20):
                rc, out, err, _ = run(np_, ["ok"], {var: val})
                if rc != 1 or want not in err:
                    bad.append("%s=%s on %d nodes, run %d: status %d, "
                               "stderr %r" % (var, val, np_, i, rc, err))
    return bad


def case_mismatch():
    bad = []
    for np_, mode in ((2, "mismatch"), (4, "mismatch"), (2, "mismatch2")):
        rc, out, err, t = run(np_, [mode])
        lines = launcher_lines(err)
        if rc == 0 or rc == 124:
            bad.append("%s on %d nodes: status %d (124: only the --timeout "
                       "ended it), stderr %r" % (mode, np_, rc, err))
        elif len(lines) != 1 or "conforming" not in lines[0] or \
                "different numbers of barriers" not in lines[0]:
            bad.append("%s on %d nodes: stderr %r" % (mode, np_, err))
        left = leftovers()
        if left:
            bad.append("%s on %d nodes: left %s running" % (mode, np_, left))
    return bad


def main():
    global LAUNCHER, PROG
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    LAUNCHER, PROG = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    case = sys.argv[3]
    fn = globals().get("case_" + case)
    if not fn:
        print("unknown case %r" % case)
        return 2
    bad = fn()
    for b in bad:
        print("FAIL: " + b)
    print("%s %s" % ("FAIL" if bad else "PASS", case))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
