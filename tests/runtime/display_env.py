#!/usr/bin/env python3
"""tests/runtime/display_env.py - OMP_DISPLAY_ENV: with true, node 0 (and
only node 0) prints one block in libgomp's form with _OPENMP and the OMP_*
ICVs in force; with verbose, also every OMPDSM_* setting a node reads
(names taken from runtime/envtab.c's table, values checked where this test
set them); unset, nothing; a bad value stops the job with a message naming
the variable.

usage: display_env.py OMPDSMRUN PROGRAM ENVTAB_C"""
import os
import re
import subprocess
import sys

NP = 2


def run(launcher, prog, extra_env):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("OMP_") or k.startswith("OMPDSM_"):
            del env[k]
    env.update({"OMPDSM_TRANSPORT": "shm"})
    env.update(extra_env)
    p = subprocess.run([launcher, "--timeout", "40", "-np", str(NP), prog],
                       env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def block(err):
    """The lines between BEGIN and END, and how many blocks there were."""
    n = err.count("OPENMP DISPLAY ENVIRONMENT BEGIN")
    m = re.search(r"OPENMP DISPLAY ENVIRONMENT BEGIN\n(.*?)OPENMP DISPLAY "
                  r"ENVIRONMENT END\n", err, re.S)
    lines = {}
    if m:
        for line in m.group(1).splitlines():
            mm = re.fullmatch(r"  (\w+) = '(.*)'", line)
            if not mm:
                return n, None
            lines[mm.group(1)] = mm.group(2)
    return n, lines


def main():
    launcher, prog, envtab = sys.argv[1:4]
    node_vars = re.findall(r'\{\s*"(OMPDSM_[A-Z0-9_]+)"\s*,\s*RT_ENV_NODE',
                           open(envtab, encoding="utf-8").read())
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    rc, err = run(launcher, prog, {"OMP_DISPLAY_ENV": "true",
                                   "OMP_SCHEDULE": "dynamic,3",
                                   "OMP_DYNAMIC": "true"})
    n, d = block(err)
    check(rc == 0, "true: the program failed (status %d)" % rc)
    check(n == 1, "true: %d blocks printed, expected one (node 0 only)" % n)
    if d is None:
        fails.append("true: a line of the block is not `  NAME = 'value'`")
        d = {}
    check(d.get("_OPENMP") == "200805", "true: _OPENMP = %r" % d.get("_OPENMP"))
    check(d.get("OMP_NUM_THREADS") == str(NP),
          "true: OMP_NUM_THREADS = %r, expected %d" % (d.get("OMP_NUM_THREADS"), NP))
    check(d.get("OMP_SCHEDULE") == "DYNAMIC,3",
          "true: OMP_SCHEDULE = %r, expected 'DYNAMIC,3'" % d.get("OMP_SCHEDULE"))
    check(d.get("OMP_DYNAMIC") == "TRUE", "true: OMP_DYNAMIC = %r" % d.get("OMP_DYNAMIC"))
    check(d.get("OMP_NESTED") == "FALSE", "true: OMP_NESTED = %r" % d.get("OMP_NESTED"))
    check(d.get("OMP_MAX_ACTIVE_LEVELS") == "1",
          "true: OMP_MAX_ACTIVE_LEVELS = %r" % d.get("OMP_MAX_ACTIVE_LEVELS"))
    check(not any(k.startswith("OMPDSM_") for k in d),
          "true: OMPDSM_* settings printed (only verbose prints them)")

    rc, err = run(launcher, prog, {"OMP_DISPLAY_ENV": "VERBOSE",
                                   "OMPDSM_PROTOCOL": "update",
                                   "OMPDSM_READAHEAD": "5"})
    n, d = block(err)
    d = d or {}
    check(rc == 0 and n == 1, "verbose: status %d, %d blocks" % (rc, n))
    for v in node_vars:
        check(v in d, "verbose: %s (in runtime/envtab.c's table) not printed" % v)
    check(d.get("OMPDSM_PROTOCOL") == "update",
          "verbose: OMPDSM_PROTOCOL = %r, expected 'update'" % d.get("OMPDSM_PROTOCOL"))
    check(d.get("OMPDSM_READAHEAD") == "5",
          "verbose: OMPDSM_READAHEAD = %r, expected '5'" % d.get("OMPDSM_READAHEAD"))
    check(d.get("OMPDSM_TRANSPORT") == "shm",
          "verbose: OMPDSM_TRANSPORT = %r, expected 'shm'" % d.get("OMPDSM_TRANSPORT"))
    check(d.get("OMPDSM_HOME_POLICY") == "block",
          "verbose: OMPDSM_HOME_POLICY = %r, expected the default 'block'"
          % d.get("OMPDSM_HOME_POLICY"))

    rc, err = run(launcher, prog, {})
    check(rc == 0 and "DISPLAY ENVIRONMENT" not in err,
          "unset: status %d, block printed: %s" % (rc, "DISPLAY ENVIRONMENT" in err))

    rc, err = run(launcher, prog, {"OMP_DISPLAY_ENV": "loud"})
    check(rc != 0 and "OMP_DISPLAY_ENV" in err,
          "bad value: status %d, message %r" % (rc, err.strip()[-200:]))

    for f in fails:
        print("FAIL: " + f)
    if fails:
        return 1
    print("ok: OMP_DISPLAY_ENV true, verbose (%d OMPDSM_* settings), unset, bad value"
          % len(node_vars))
    return 0


if __name__ == "__main__":
    sys.exit(main())
