#!/usr/bin/env python3
"""tests/unit/local_decls.py - every function or variable used across files
is declared in its layer's internal header, never by a prototype or an
`extern` at file scope of a .c file (which hides the interface from the
reader of the header).  -Wmissing-prototypes cannot see this: a local
prototype satisfies it.

usage: local_decls.py SOURCE_ROOT
Fails (exit 1) with one line per local declaration: file:line and what to
do.  `static` prototypes (forward declarations inside a file) are fine, and
so is `extern char **environ` (the C library's, declared by no header)."""
import os
import re
import sys

DIRS = ("comm", "dsm", "sched", "runtime", "translator")
# A declaration at column 0 that ends with ';' and has a parameter list:
# a prototype.  Not static, typedef, or a statement.
PROTO = re.compile(r"^(?!static\b|typedef\b|extern\b|return\b|else\b|case\b|#)"
                   r"[A-Za-z_][\w \*]*?\b([a-z_]\w*)\s*\(([^;{}()]|\([^()]*\))*\)"
                   r"\s*(__attribute__\s*\(\(.*\)\))?\s*;\s*$")
EXTERN = re.compile(r"^extern\b(?!\s*\"C\")(.*);")
ALLOWED_EXTERN = re.compile(r"\benviron\b")


def declarations(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    for i, line in enumerate(lines):
        text = line
        # a declaration continued over several lines
        if re.match(r"^[A-Za-z_]", line) and "(" in line and \
                not line.rstrip().endswith((";", "{", ")")):
            j = i
            while j + 1 < len(lines) and j - i < 6 and \
                    not lines[j].rstrip().endswith((";", "{", ")")):
                j += 1
            text = " ".join(x.strip() for x in lines[i:j + 1])
        m = PROTO.match(text)
        if m:
            yield i + 1, "a prototype of %s()" % m.group(1)
            continue
        m = EXTERN.match(line)
        if m and not ALLOWED_EXTERN.search(line):
            yield i + 1, "an extern declaration (%s)" % m.group(1).strip()


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    bad, files = [], 0
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for f in sorted(names):
                if not f.endswith(".c"):
                    continue
                files += 1
                path = os.path.join(dirpath, f)
                for line, what in declarations(path):
                    bad.append("%s:%d: %s at file scope: declare it in the "
                               "layer's header (comm/transport.h, dsm/dsm_int.h, "
                               "sched/sched.h, runtime/rt.h, translator/tu.h) or "
                               "make it static" % (os.path.relpath(path, root),
                                                   line, what))
    for b in bad:
        print("FAIL: " + b)
    if not files:
        print("FAIL: no .c files under %s" % root)
        return 1
    if bad:
        return 1
    print("ok: %d .c files, no file-scope prototypes or externs" % files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
