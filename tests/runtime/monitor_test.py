#!/usr/bin/env python3
"""tests/runtime/monitor_test.py - ompdsmrun --monitor (docs/diagnostics.md)
on two nodes of rt_deadlock.c's `compute` case, where node 1 computes for
6 s inside a region while node 0 waits at the barrier (so the expected
shares follow from the program, not from a run):

  file   --monitor=FILE: JSON lines for both nodes; in the seconds of the
         computation node 0 mostly waits in the barrier and node 1 mostly
         computes; the plot tool (tools/ompdsm-monitor-plot.py) draws them
         as a PNG when matplotlib is there
  live   --monitor: frames on stderr with a bar per node, mostly B for
         node 0 and C for node 1; no escape sequence but cursor-up and
         erase-line; without --monitor, none at all
  short  --monitor=FILE on a job shorter than the monitor's second (node 1
         computes 0.2 s): the file still holds each node's final sample
         (it was empty before the nodes sent one as they finished)

Exit 0 pass, 1 fail.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAUNCHER, PROG, PLOT, CASE = sys.argv[1:5]
fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def run(extra, seconds="6"):
    e = dict(os.environ, OMPDSM_TRANSPORT="shm")
    p = subprocess.run([LAUNCHER, "--timeout", "60"] + extra +
                       ["-np", "2", PROG, "compute", seconds],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=e, timeout=90)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    if p.returncode != 0 or "finished" not in out:
        fail("status %d\n%s%s" % (p.returncode, out, err))
    return err


if CASE == "file":
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "mon.jsonl")
        run(["--monitor=" + path])
        samples = [json.loads(l) for l in open(path) if l.strip()]
        by = {0: [], 1: []}
        for s in samples:
            by.setdefault(s["node"], []).append(s)
            for k in ("compute", "barrier", "lock", "fault"):
                if not 0 <= s[k] <= 1:
                    fail("share %s=%r out of 0..1 in %r" % (k, s[k], s))
        # The computation's seconds: at least two samples of each node
        # with the shares the program forces.
        n0 = [s for s in by[0] if s["barrier"] > 0.5]
        n1 = [s for s in by[1] if s["compute"] > 0.5]
        if len(n0) < 2 or len(n1) < 2:
            fail("expected seconds of node 0 waiting in the barrier and node "
                 "1 computing; samples:\n" + "\n".join(map(str, samples)))
        png = os.path.join(d, "mon.png")
        py = "/usr/bin/python3"
        r = subprocess.run([py, PLOT, path, png], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        if r.returncode != 0 and b"matplotlib is missing" in r.stderr:
            print("note: matplotlib is missing; the plot was not drawn")
        elif r.returncode != 0:
            fail("the plot tool failed: %s" % r.stderr.decode())
        else:
            with open(png, "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    fail("the plot is not a PNG")
        print("file: %d samples; node 0 in the barrier %d s, node 1 computing "
              "%d s" % (len(samples), len(n0), len(n1)))
    finally:
        shutil.rmtree(d)
elif CASE == "live":
    err = run(["--monitor"])
    frames = err.count("ompdsmrun: monitor at")
    bars = {k: re.findall(r"node %d +\[([CBLF]+)\]" % k, err) for k in (0, 1)}
    if frames < 2:
        fail("live: %d frames:\n%r" % (frames, err))
    if not any(b.count("B") > len(b) / 2 for b in bars[0]):
        fail("live: node 0 never mostly in the barrier: %r" % bars[0])
    if not any(b.count("C") > len(b) / 2 for b in bars[1]):
        fail("live: node 1 never mostly computing: %r" % bars[1])
    other = re.findall(r"\x1b\[[0-9;]*[^0-9;AK]", err)
    if other:
        fail("live: escape sequences other than cursor-up and erase: %r"
             % other)
    err = run([])
    if "monitor at" in err or "\x1b[" in err:
        fail("without --monitor a frame was drawn: %r" % err)
    print("live: %d frames" % frames)
elif CASE == "short":
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "mon.jsonl")
        for _ in range(3):
            run(["--monitor=" + path], seconds="0.2")
            samples = [json.loads(l) for l in open(path) if l.strip()]
            nodes = sorted(s["node"] for s in samples)
            if nodes != [0, 1]:
                fail("short: expected one final sample per node, got:\n%s"
                     % "\n".join(map(str, samples)))
            for s in samples:
                for k in ("compute", "barrier", "lock", "fault"):
                    if not 0 <= s[k] <= 1:
                        fail("short: share %s=%r out of 0..1 in %r" % (k, s[k], s))
                if not 0 < s["t"] < 30:
                    fail("short: t=%r is not within the job" % s["t"])
        if not fails:
            print("short: a final sample per node in each of 3 jobs")
    finally:
        shutil.rmtree(d)
else:
    fail("unknown case " + CASE)
sys.exit(1 if fails else 0)
