#!/usr/bin/env python3
"""gdb on a program built by `ompcc -g`: the user's names and lines.

Builds gdb_prog.c with ompcc -g -O0 and runs it (one node) under
`gdb -batch` with tools/ompdsm-gdb.py loaded; checks against the source
and closed formulas, not against a previous run:
  - a breakpoint on a user line has one location (no generated line of a
    construct borrows a later line number) and stops at that line;
  - `print s` (a shared local), `print g` (a shared global) and
    `print calls` (a function static) give sum(0..9) = 45, 5 and 1;
  - `next` goes to the user's next line, which `info line` confirms;
  - inside the outlined region `print s` still reads the shared s (45);
  - with `set ompdsm-names off`, `print s` fails as plain gdb does.
Exit 77 when gdb is absent."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def line_of(src, tag):
    with open(src) as f:
        for n, text in enumerate(f, 1):
            if tag in text:
                return n
    sys.exit(f'gdb_test: no {tag} in {src}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ompcc', required=True)
    ap.add_argument('--ext', required=True)
    a = ap.parse_args()
    a.ompcc, a.ext = os.path.abspath(a.ompcc), os.path.abspath(a.ext)
    gdb = shutil.which('gdb')
    if not gdb:
        print('gdb_test: gdb not installed; skipped (apt-get install gdb)')
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, 'gdb_prog.c')
    l_main = line_of(src, 'BREAK_MAIN')
    l_region = line_of(src, 'BREAK_REGION')
    l_after = line_of(src, 'AFTER_REGION')
    with tempfile.TemporaryDirectory(prefix='ompdsm-gdb-') as work:
        exe = os.path.join(work, 'gdb_prog')
        subprocess.run([a.ompcc, '-g', '-O0', src, '-o', exe], check=True)
        cmds = [
            f'source {a.ext}',
            'handle SIGSEGV nostop noprint pass',
            f'break gdb_prog.c:{l_main}',
            f'break gdb_prog.c:{l_region}',
            'run',
            'print s', 'print g', 'print calls', 'print/x s + 1',
            'next', 'info line',
            'continue',
            'print s',
            'set ompdsm-names off', 'print s', 'set ompdsm-names on',
            'continue',
        ]
        args = [gdb, '-nx', '-batch']
        for c in cmds:
            args += ['-ex', c]
        env = dict(os.environ)
        r = subprocess.run(args + [exe], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120,
                           env=env, cwd=work)
    out = r.stdout
    fails = []

    def want(cond, what):
        if not cond:
            fails.append(what)

    for ln in (l_main, l_region):
        want(re.search(rf'Breakpoint \d+ at 0x[0-9a-f]+: file [^,]*gdb_prog\.c, '
                       rf'line {ln}\.', out),
             f'breakpoint at line {ln} with exactly one location')
    vals = re.findall(r'^\$\d+ = (.*)$', out, re.M)
    want(vals[:4] == ['45', '5', '1', '0x2e'],
         f'print s, g, calls, /x s+1 = 45, 5, 1, 0x2e (got {vals[:4]})')
    stops = re.findall(r'^(\d+)\t', out, re.M)
    want(stops[:2] == [str(l_main), str(l_main + 1)],
         f'stop at {l_main}, then next at {l_main + 1} (got {stops[:2]})')
    want(re.search(rf'^Line {l_main + 1} of "[^"]*gdb_prog\.c"', out, re.M),
         f'info line says line {l_main + 1}')
    want(re.search(rf'in __ompdsm_region_count_\d+ .*gdb_prog\.c:{l_region}',
                   out) or re.search(rf'__ompdsm_region_count_\d+ \([^)]*\) at '
                                     rf'[^:]*gdb_prog\.c:{l_region}', out),
         f'breakpoint in the region at line {l_region}')
    want(len(vals) >= 5 and vals[4] == '45',
         f'print s in the region = 45 (got {vals[4:5]})')
    want('No symbol "s" in current context.' in out,
         'plain print s fails with ompdsm-names off')
    # count(10) returns 45 + 1 (calls); g = 5 + 45
    want(re.search(r'^46 50$', out, re.M), 'program prints 46 50')
    if fails:
        print(out)
        for f in fails:
            print('gdb_test: FAILED:', f)
        return 1
    print('gdb_test: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
