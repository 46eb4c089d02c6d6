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
  othergomp libgomp preloaded (its omp_* take the place of libompdsm's, as
            after linking with -lgomp): node 0 says so at start, once;
            without it, nothing is said
  heap      a double free of a shared block (on node 0, and of node 0's
            block on node 1) aborts with 'free(): double free of shared
            block 0x... (allocated at rt_ends.c:LINE)'; with
            OMPDSM_HEAP_CHECK=1 a byte written past a block is reported at
            its free and, without a free, at the next barrier
  stats     OMPDSM_STATS=1: the table's header lines up with its columns
            and rt_regions is 1 on every node (one region); a node that
            segfaults, and the nodes of a job ended by --timeout, print
            their own counters marked partial
  valgrind  the program run under valgrind (alone, and as the program of
            a 2-node job) ends at once with status 1 and a message saying
            what to use instead
  mismatch  threads meet different numbers of barriers (node 0 then waits
            at its end, or ends while the others wait): the job ends with
            a non-zero status and a line saying so, instead of hanging

Exit 0 pass, 1 fail.
"""
import os
import re
import shutil
import subprocess
import sys
import time

LAUNCHER = PROG = None
TAG = "ends-test-%d" % os.getpid()


def run(np_, args, env=None, timeout=60, job_timeout=40):
    e = dict(os.environ)
    e.setdefault("OMPDSM_TRANSPORT", "shm")
    e.update(env or {})
    # The tag (ignored by the program) tells our nodes from those of the
    # other cases, which meson may run at the same time.
    cmd = [LAUNCHER, "--timeout", str(job_timeout), "-np", str(np_), PROG] + \
        args + [TAG]
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


def alloc_lines():
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rt_ends.c")
    with open(src) as f:
        return [str(i + 1) for i, l in enumerate(f) if "ALLOC_SITE */" in l]


def case_heap():
    bad = []
    lines = alloc_lines()
    checks = [
        ("doublefree", 1, {}, r"free\(\): double free of shared block 0x[0-9a-f]+ "
         r"\(allocated at (?:\S*/)?rt_ends\.c:%s\)" % lines[0]),
        ("doublefree_remote", 2, {}, r"free\(\): double free of shared block "
         r"0x[0-9a-f]+ \(allocated at (?:\S*/)?rt_ends\.c:%s\)" % lines[1]),
        ("overrun_free", 2, {"OMPDSM_HEAP_CHECK": "1"}, r"shared block 0x[0-9a-f]+ "
         r"of 10 bytes \(allocated at (?:\S*/)?rt_ends\.c:%s\) was written past its "
         r"end.*found at its free" % lines[2]),
        ("overrun_barrier", 2, {"OMPDSM_HEAP_CHECK": "1"}, r"shared block "
         r"0x[0-9a-f]+ of 10 bytes \(allocated at (?:\S*/)?rt_ends\.c:%s\) was "
         r"written past its end.*found at a barrier" % lines[2]),
    ]
    for mode, np_, env, want in checks:
        rc, out, err, _ = run(np_, [mode], env)
        if rc == 0 or not re.search(want, err):
            bad.append("%s on %d nodes %s: status %d, stderr %r" %
                       (mode, np_, env, rc, err))
        left = leftovers()
        if left:
            bad.append("%s: left %s running" % (mode, left))
    # without the check, a program that stays inside its blocks runs
    rc, out, err, _ = run(2, ["ok"], {"OMPDSM_HEAP_CHECK": "1"})
    if rc != 0 or err:
        bad.append("ok with OMPDSM_HEAP_CHECK=1: status %d, stderr %r" % (rc, err))
    return bad


def stats_tables(err):
    """{title: {counter: [values]}} of every table in err, and the lines
    of each table (title and the machine's costs under it excluded)."""
    tables, lines, cur = {}, {}, None
    for l in err.splitlines():
        if l.startswith("ompdsm statistics"):
            cur = l
            tables[cur], lines[cur] = {}, []
        elif cur and l.startswith("this machine at the start: "):
            continue    # the probe's costs under the title (dsm/probe.c)
        elif cur and re.match(r"^[a-z_]+ +[\d. ]+$|^counter ", l):
            lines[cur].append(l)
            parts = l.split()
            tables[cur][parts[0]] = parts[1:]
        else:
            cur = None
    return tables, lines


def case_stats():
    bad = []
    env = {"OMPDSM_STATS": "1"}
    rc, out, err, _ = run(2, ["ok"], env)
    tables, lines = stats_tables(err)
    if rc != 0 or len(tables) != 1:
        bad.append("ok: status %d, %d tables, stderr %r" % (rc, len(tables), err))
    for title, rows in tables.items():
        ls = lines[title]
        # right-aligned columns of one width: every line as long as the
        # header, each column ending at the same place
        if len({len(l) for l in ls}) != 1 or \
                rows.get("counter") != ["node0", "node1", "total"]:
            bad.append("misaligned table:\n" + "\n".join(ls[:4]))
        if rows.get("rt_regions") != ["1", "1", "2"]:
            bad.append("rt_regions %r, expected 1 on each node" %
                       rows.get("rt_regions"))
    rc, out, err, _ = run(2, ["segv"], env)
    tables, _ = stats_tables(err)
    part = [t for t in tables if "partial: node 1 was ended by SIGSEGV" in t]
    if rc == 0 or not part or tables[part[0]].get("rt_regions") != ["1"]:
        bad.append("segv: status %d, stderr %r" % (rc, err))
    rc, out, err, _ = run(2, ["hang"], env, job_timeout=3)
    tables, _ = stats_tables(err)
    part = [t for t in tables if "partial" in t and "--timeout" in t]
    if rc != 124 or not part or \
            any(tables[t].get("rt_regions") != ["1"] for t in part):
        bad.append("hang: status %d, stderr %r" % (rc, err))
    left = leftovers()
    if left:
        bad.append("left %s running" % left)
    return bad


def case_valgrind():
    global PROG
    bad = []
    vg = shutil.which("valgrind")
    if not vg:
        print("SKIP: valgrind is not installed")
        sys.exit(77)
    want = "cannot run under valgrind"
    e = {k: v for k, v in os.environ.items() if not k.startswith("OMPDSM_")}
    try:
        p = subprocess.run([vg, "-q", PROG, "ok", TAG], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           env=e, timeout=60)
        err = p.stderr.decode(errors="replace")
        if p.returncode != 1 or want not in err or "OMPDSM_HEAP_CHECK" not in err:
            bad.append("alone: status %d, stderr %r" % (p.returncode, err))
    except subprocess.TimeoutExpired:
        bad.append("alone: still running after 60 s")
    prog, PROG = PROG, vg
    try:
        rc, out, err, _ = run(2, ["-q", prog, "ok"])
    finally:
        PROG = prog
    if rc != 1 or want not in err:
        bad.append("2 nodes: status %d, stderr %r" % (rc, err))
    left = leftovers()
    if left:
        bad.append("left %s running" % left)
    return bad


def case_othergomp():
    bad = []
    gomp = subprocess.run(["gcc", "-print-file-name=libgomp.so.1"],
                          stdout=subprocess.PIPE).stdout.decode().strip()
    if not os.path.isabs(gomp) or not os.path.exists(gomp):
        print("SKIP: gcc's libgomp.so.1 not found")
        sys.exit(77)
    want = "omp_get_thread_num comes from"
    rc, out, err, _ = run(2, ["ok"], {"LD_PRELOAD": gomp})
    if err.count(want) != 1 or "libgomp" not in err or "-lgomp" not in err:
        bad.append("with libgomp preloaded: status %d, stderr %r" % (rc, err))
    rc, out, err, _ = run(2, ["ok"])
    if rc != 0 or want in err:
        bad.append("without libgomp: status %d, stderr %r" % (rc, err))
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
