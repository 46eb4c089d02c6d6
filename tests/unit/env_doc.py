#!/usr/bin/env python3
"""tests/unit/env_doc.py - one list of environment variables: the table in
runtime/envtab.c, the tables of docs/env.md and the variables the sources
read must name the same OMP_* and OMPDSM_* variables.

usage: env_doc.py SOURCE_ROOT
Fails (exit 1) with one line per variable missing somewhere, saying where
it is missing and where it was found."""
import os
import re
import sys

SOURCE_DIRS = ("comm", "dsm", "sched", "runtime", "translator")
# A call that reads a variable by its literal name.
READ = re.compile(r'\b(?:getenv|ompdsm_env_\w+|env_int)\s*\(\s*"((?:OMP|OMPDSM)_[A-Z0-9_]+)"')
TABLE_ROW = re.compile(r'\{\s*"((?:OMP|OMPDSM)_[A-Z0-9_]+)"\s*,\s*RT_ENV_')


def table(root):
    text = open(os.path.join(root, "runtime", "envtab.c"), encoding="utf-8").read()
    return set(TABLE_ROW.findall(text))


def documented(root):
    """Variables named in the first cell of a table row of docs/env.md."""
    names = set()
    for line in open(os.path.join(root, "docs", "env.md"), encoding="utf-8"):
        if not line.startswith("|"):
            continue
        first = line.split("|")[1]
        names.update(re.findall(r"`((?:OMP|OMPDSM)_[A-Z0-9_]+)`", first))
    return names


def read_by_sources(root):
    """{variable: first file that reads it}."""
    found = {}
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                text = open(path, encoding="utf-8", errors="replace").read()
                for name in READ.findall(text):
                    found.setdefault(name, os.path.relpath(path, root))
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    tab, doc, src = table(root), documented(root), read_by_sources(root)
    bad = []
    if not tab:
        bad.append("no variables found in runtime/envtab.c's table")
    for n in sorted(tab - doc):
        bad.append("%s is in runtime/envtab.c's table but not in docs/env.md: "
                   "add a row for it" % n)
    for n in sorted(doc - tab):
        bad.append("%s is in docs/env.md but not in runtime/envtab.c's table: "
                   "add it to the table (or drop the row)" % n)
    for n in sorted(set(src) - tab):
        bad.append("%s is read by %s but not in runtime/envtab.c's table (nor, "
                   "then, documented)" % (n, src[n]))
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("ok: %d variables, in the table, in docs/env.md and read by the "
          "sources (%d of them)" % (len(tab), len(src)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
