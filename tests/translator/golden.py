#!/usr/bin/env python3
"""Golden tests of ompcc's translation.

For every golden/NAME.c:
  * `ompcc -c -k -Wall NAME.c` must succeed; the translated file
    (NAME.ompdsm.c) from the first line marker that returns to NAME.c on
    (the ABI header and clang's built-in lines before it are dropped), with
    trailing blanks removed, must equal golden/NAME.out;
  * the warnings and errors ompcc and the backend print (lines with
    ": warning:" or ": error:") must equal golden/NAME.warn (none when the
    file does not exist);
  * `ompcc --dump-pragmas NAME.c` must print golden/NAME.pragmas.

usage: golden.py --ompcc BUILD/ompcc [--update] [NAME ...]
--update rewrites the expected files from the current output (review the
diff before committing it).  Standard library only.
"""

import argparse
import difflib
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")


def normalise(text, name):
    lines = text.splitlines()
    marker = '# 1 "%s" 2' % name
    for i, line in enumerate(lines):
        if line.startswith(marker):
            lines = lines[i + 1:]
            break
    else:
        raise ValueError("no line marker %r in the translated file" % marker)
    return "".join(line.rstrip() + "\n" for line in lines)


def diagnostics(stderr):
    return "".join(line + "\n" for line in stderr.splitlines()
                   if ": warning:" in line or ": error:" in line)


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("OMPDSM_")}
    return e


def compare(what, expected_path, got, update):
    if update:
        if got:
            with open(expected_path, "w") as f:
                f.write(got)
        elif os.path.exists(expected_path):
            os.unlink(expected_path)
        return True
    expected = ""
    if os.path.exists(expected_path):
        with open(expected_path) as f:
            expected = f.read()
    if expected == got:
        return True
    print("  %s differs from %s:" % (what, os.path.relpath(expected_path, HERE)))
    for line in difflib.unified_diff(expected.splitlines(), got.splitlines(),
                                     "expected", "got", lineterm="", n=2):
        print("    " + line)
    return False


def check(ompcc, name, tmp, update):
    src = name + ".c"
    obj = os.path.join(tmp, name + ".o")
    r = subprocess.run([ompcc, "-c", "-k", "-Wall", src, "-o", obj], cwd=GOLDEN,
                       env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = r.stderr.decode(errors="replace")
    if r.returncode != 0:
        print("  ompcc -c failed (%d):\n%s" % (r.returncode, err))
        return False
    ok = True
    with open(os.path.join(tmp, name + ".ompdsm.c")) as f:
        out = normalise(f.read(), src)
    ok &= compare("translation", os.path.join(GOLDEN, name + ".out"), out, update)
    ok &= compare("diagnostics", os.path.join(GOLDEN, name + ".warn"),
                  diagnostics(err), update)
    r = subprocess.run([ompcc, "--dump-pragmas", src], cwd=GOLDEN, env=env(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        print("  --dump-pragmas failed:\n" + r.stderr.decode(errors="replace"))
        return False
    ok &= compare("pragma dump", os.path.join(GOLDEN, name + ".pragmas"),
                  r.stdout.decode(), update)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ompcc", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    ompcc = os.path.abspath(args.ompcc)
    names = args.names or sorted(f[:-2] for f in os.listdir(GOLDEN)
                                 if f.endswith(".c"))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="ompcc-golden-") as tmp:
        for name in names:
            ok = check(ompcc, name, tmp, args.update)
            print("%s %s" % ("PASS" if ok else "FAIL", name))
            failed += not ok
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
