#!/usr/bin/env python3
"""Bad-input tests of ompcc.

Every errors/NAME.c holds the diagnostics it must produce, one per line:
    /* expect: NAME.c:LINE:COL: error: MESSAGE */
`ompcc -c -k NAME.c -o TMP/NAME.o` must exit with status 1, print every
expected line (exactly, and no other error), and leave neither the object
nor the translated file behind.  Internal errors ("ompcc: internal
error") always fail the test.

A file that also holds `/* gcc: rejects */` is invalid OpenMP, not only
something ompcc cannot translate: `gcc -fopenmp -c` must reject it too,
with an error on every line ompcc reports (the two agree on the rule).

usage: errors.py --ompcc BUILD/ompcc [NAME ...]
Standard library only.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ERRORS = os.path.join(HERE, "errors")
EXPECT = re.compile(r"/\* expect: (.*) \*/")
GCC_REJECTS = "/* gcc: rejects */"
LINE = re.compile(r"^[^:]*:(\d+):(?:\d+:)? error:")


def gcc_agrees(src, expected, tmp):
    """gcc -fopenmp rejects src with an error on each expected line."""
    r = subprocess.run(["gcc", "-fopenmp", "-c", src, "-o",
                        os.path.join(tmp, "gcc.o")], cwd=ERRORS,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = r.stderr.decode(errors="replace")
    lines = {m.group(1) for m in map(LINE.match, err.splitlines()) if m}
    ok = r.returncode != 0
    if not ok:
        print("  gcc -fopenmp accepts %s" % src)
    for e in expected:
        m = LINE.match(e)
        if m and m.group(1) not in lines:
            print("  gcc -fopenmp reports no error on line %s" % m.group(1))
            ok = False
    if not ok:
        print("  gcc's stderr was:\n    " + err.replace("\n", "\n    "))
    return ok


def check(ompcc, name, tmp):
    src = name + ".c"
    with open(os.path.join(ERRORS, src)) as f:
        content = f.read()
    expected = EXPECT.findall(content)
    if not expected:
        print("  no 'expect:' lines in %s" % src)
        return False
    ok = True
    if GCC_REJECTS in content and not gcc_agrees(src, expected, tmp):
        ok = False
    obj = os.path.join(tmp, name + ".o")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPDSM_")}
    r = subprocess.run([ompcc, "-c", "-k", src, "-o", obj], cwd=ERRORS, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = r.stderr.decode(errors="replace")
    got = [line for line in err.splitlines() if ": error:" in line]
    if r.returncode != 1:
        print("  exit status %d, expected 1" % r.returncode)
        ok = False
    if "internal error" in err:
        print("  internal error")
        ok = False
    for e in expected:
        if e not in got:
            print("  missing: %s" % e)
            ok = False
    for g in got:
        if g not in expected:
            print("  unexpected: %s" % g)
            ok = False
    for left in (obj, os.path.join(tmp, name + ".ompdsm.c")):
        if os.path.exists(left):
            print("  left behind: %s" % os.path.basename(left))
            os.unlink(left)
            ok = False
    if not ok:
        print("  stderr was:\n    " + err.replace("\n", "\n    "))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ompcc", required=True)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    ompcc = os.path.abspath(args.ompcc)
    names = args.names or sorted(f[:-2] for f in os.listdir(ERRORS)
                                 if f.endswith(".c"))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="ompcc-errors-") as tmp:
        for name in names:
            ok = check(ompcc, name, tmp)
            print("%s %s" % ("PASS" if ok else "FAIL", name))
            failed += not ok
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
