#!/usr/bin/env python3
"""tests/runtime/thrash_test.py - the thrashing report by variable
(OMPDSM_STATS; docs/diagnostics.md) for rt_thrash.c on two nodes:

  false      `slots` is reported as false sharing, written by nodes 0,1,
             named with the line of its declaration (@DECL_SLOTS), in
             the table and in the JSON
  block      the same on a malloc'd block, named by the line of its call
             (the @MALLOC marker in rt_thrash.c)
  aligned    the same on blocks from posix_memalign, aligned_alloc,
             memalign and valloc, each named by the line of its call
  migratory  `counter` (written under a lock) is reported as migratory
  private    `big` (each node writes its own page) is never reported as
             written by two nodes

Expected names and lines come from the program's source, not from a run.
Exit 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LAUNCHER, PROG, SRC, CASE = sys.argv[1:5]
fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def run(stats):
    e = dict(os.environ, OMPDSM_STATS=stats, OMPDSM_TRANSPORT="shm")
    p = subprocess.run([LAUNCHER, "--timeout", "60", "-np", "2", PROG, CASE],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=e, timeout=90)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    if p.returncode != 0 or ": ok" not in out:
        fail("%s: status %d\n%s%s" % (CASE, p.returncode, out, err))
    return err


def verdicts(err):
    return [l.split(": ", 1)[1] for l in err.splitlines()
            if re.match(r"^  page 0x[0-9a-f]+: ", l)]


marks = {}
with open(SRC) as f:
    for no, text in enumerate(f, 1):
        m = re.search(r"/\* @([A-Z_]+) \*/", text)
        if m:
            marks[m.group(1)] = no
malloc_line = marks["MALLOC"]

err = run("1")
vs = verdicts(err)
want = {
    "false": r"false sharing: slots\[\d+\.\.\d+\] \(declared at "
             r"rt_thrash\.c:%d\) \(one page\) written by nodes 0,1 between "
             r"the same barriers: \d+ faults" % marks["DECL_SLOTS"],
    "block": r"false sharing: block of 8192 bytes allocated at "
             r"rt_thrash\.c:%d \(one page\) written by nodes 0,1 " % malloc_line,
    "migratory": r"migratory: counter written by nodes 0,1 in turn, under "
                 r"locks: \d+ faults",
}
if CASE == "aligned":
    for mark in ("POSIX_MEMALIGN", "ALIGNED_ALLOC", "MEMALIGN", "VALLOC"):
        w = (r"false sharing: block of 131072 bytes allocated at "
             r"rt_thrash\.c:%d \(one page\) written by nodes 0,1 " % marks[mark])
        if not any(re.match(w, v) for v in vs):
            fail("aligned: no verdict naming the %s block (%r) among:\n%s"
                 % (mark, w, err))
elif CASE in want:
    if not any(re.match(want[CASE], v) for v in vs):
        fail("%s: no verdict matching %r among:\n%s" % (CASE, want[CASE], err))
    if CASE == "false":
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            run(path)
            with open(path) as f:
                doc = json.load(f)
        finally:
            os.unlink(path)
        rows = [r for r in doc.get("thrashing", [])
                if r["variable"].startswith("slots[")]
        if not rows or rows[0]["verdict"] != "false sharing":
            fail("false: the JSON has no false-sharing entry for slots: %r"
                 % doc.get("thrashing"))
        elif rows[0].get("declared_at") != "rt_thrash.c:%d" % marks["DECL_SLOTS"]:
            fail("false: the JSON's declared_at of slots is not "
                 "rt_thrash.c:%d: %r" % (marks["DECL_SLOTS"], rows[0]))
        elif sorted(n["node"] for n in rows[0]["per_node"]
                    if n["write_faults"]) != [0, 1]:
            fail("false: the JSON's writers of slots are not nodes 0 and 1: %r"
                 % rows[0])
elif CASE == "private":
    if not vs:
        fail("private: no report at all:\n" + err)
    for v in vs:
        if v.startswith("big") or re.search(r"(false sharing|migratory): big", v):
            fail("private: `big` reported as written by two nodes: " + v)
else:
    fail("unknown case " + CASE)
for v in vs:
    print(v)
sys.exit(1 if fails else 0)
