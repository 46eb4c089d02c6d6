#!/usr/bin/env python3
"""ompcc's own global symbols carry the translator's prefix.

Every global symbol the ompcc executable defines, other than main and the
C runtime's (a leading underscore, weak symbols, copies of libc's data such
as stdout@GLIBC), must begin with tr_, so that a helper of the translator
(tr_sb_printf, tr_node) cannot be taken for one of comm/'s or the
runtime's (rt_, dsm_, comm_, sched_).

usage: symbols.py OMPCC.  Exit status 77 without nm.  Standard library only.
"""

import shutil
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not shutil.which("nm"):
        print("nm not found")
        return 77
    out = subprocess.run(["nm", "-g", "--defined-only", sys.argv[1]],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    bad, ours = [], 0
    for line in out.splitlines():
        f = line.split()
        if len(f) != 3:
            continue
        kind, name = f[1], f[2]
        if name == "main" or name.startswith("_") or "@" in name or \
                kind in "wWvV":
            continue
        if name.startswith("tr_"):
            ours += 1
        else:
            bad.append(name)
    for name in bad:
        print("global symbol without the tr_ prefix: %s" % name)
    print("%d tr_ symbols, %d without the prefix" % (ours, len(bad)))
    return 1 if bad or not ours else 0


if __name__ == "__main__":
    sys.exit(main())
