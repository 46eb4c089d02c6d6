#!/usr/bin/env python3
"""gdb on every node of a 2-node job, as docs/debugging.md says to run it.

Builds gdb_nodes.c with ompcc -g -O0 and runs it with `ompdsmrun -np 2
--tag-output gdb -batch -return-child-result -x CMDS` and
tools/ompdsm-gdb.py loaded.  CMDS sets breakpoints with gdb's own
`commands` lists and ends with `run`, so that a node that never reaches
a breakpoint (node 1 and a serial line) just runs to its end.  Checks:
  - on each node, at the line after the region's reads, `print a[5]`,
    `print p.x`, `print p.y`, `print h[3]` and `print *h` (a shared global
    array, struct members, a pointer into the shared heap) give what that
    node's program printed it had read, and the closed forms 32, 42, 2.5,
    4.75, 0.25;
  - `print b[131072]`, a page only node 0 wrote, is 99 on node 0; on node 1,
    which never read it, either 99 or its old copy with the helper's note
    that the node holds no valid copy;
  - the serial breakpoint stops node 0 only (`print a[63]` = 3976) and
    the job exits 0;
  - a second run whose program exits with status 3 makes the job exit 3
    (gdb's -return-child-result: the node's own status reaches the job).
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
    sys.exit(f'gdb_nodes_test: no {tag} in {src}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ompcc', required=True)
    ap.add_argument('--ompdsmrun', required=True)
    ap.add_argument('--ext', required=True)
    a = ap.parse_args()
    gdb = shutil.which('gdb')
    if not gdb:
        print('gdb_nodes_test: gdb not installed; skipped (apt-get install gdb)')
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, 'gdb_nodes.c')
    l_nodes = line_of(src, 'BREAK_NODES')
    l_serial = line_of(src, 'BREAK_SERIAL')
    with tempfile.TemporaryDirectory(prefix='ompdsm-gdb-nodes-') as work:
        exe = os.path.join(work, 'gdb_nodes')
        subprocess.run([os.path.abspath(a.ompcc), '-g', '-O0', src, '-o', exe],
                       check=True)
        cmds = os.path.join(work, 'cmds.gdb')
        with open(cmds, 'w') as f:
            f.write(f'''handle SIGSEGV nostop noprint pass
break gdb_nodes.c:{l_nodes}
commands
  print a[5]
  print p.x
  print p.y
  print h[3]
  print *h
  print b[16384]
  print b[131072]
  continue
end
break gdb_nodes.c:{l_serial}
commands
  print a[63]
  continue
end
run
''')
        base = [os.path.abspath(a.ompdsmrun), '-np', '2', '--tag-output',
                '--timeout', '150', gdb, '-nx', '-batch',
                '-return-child-result', '-iex',
                f'source {os.path.abspath(a.ext)}', '-x', cmds, '--args', exe]
        r = subprocess.run(base, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=170,
                           cwd=work)
        r3 = subprocess.run(base + ['3'], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=170,
                            cwd=work)
    out = r.stdout
    fails = []

    def want(cond, what):
        if not cond:
            fails.append(what)

    want(r.returncode == 0, f'job exit status 0 (got {r.returncode})')
    want(r3.returncode == 3,
         f'job exit status 3 when the program exits 3 (got {r3.returncode})')
    closed = ['32', '42', '2.5', '4.75', '0.25']
    for node in (0, 1):
        lines = [ln[len(f'[node {node}] '):] for ln in out.splitlines()
                 if ln.startswith(f'[node {node}] ')]
        # (the program's line can follow gdb's unfinished "[Thread ...
        # exited]" on the same line: both write to the node's stdout)
        read = next((m.group(1).split() for ln in lines
                     for m in [re.search(rf'node {node} read (.*)$', ln)] if m),
                    None)
        want(read == closed,
             f'node {node} printed that it read {closed} (got {read})')
        vals = [m.group(1) for ln in lines
                for m in [re.match(r'\$\d+ = (.*)$', ln)] if m]
        want(vals[:5] == closed,
             f'gdb on node {node}: a[5], p.x, p.y, h[3], *h = {closed} '
             f'(got {vals[:5]})')
        far = vals[5:7]
        notes = sum('holds no valid copy of the page' in ln for ln in lines)
        if node == 0:
            want(far == ['98', '99'] and not notes,
                 f'gdb on node 0: b[1 << 14], b[1 << 17] = 98, 99 without a '
                 f'note (got {far}, {notes} notes)')
            want(vals[7:] == ['3976'],
                 f'gdb on node 0 at the serial line: a[63] = 3976 '
                 f'(got {vals[7:]})')
        else:
            stale = sum(v != w for v, w in zip(far, ['98', '99']))
            want(len(far) == 2 and notes >= stale,
                 f'gdb on node 1: b[1 << 14], b[1 << 17] = 98, 99, or old '
                 f'copies each with the note (got {far}, {notes} notes)')
            print(f'gdb_nodes_test: node 1 saw b[1 << 14], b[1 << 17] = '
                  f'{far}, {notes} noted as old copies')
            want(len(vals) == 7,
                 f'node 1 never stops at the serial line (got {vals[7:]})')
    if fails:
        print(out)
        print(r3.stdout)
        for f in fails:
            print('gdb_nodes_test: FAILED:', f)
        return 1
    print('gdb_nodes_test: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
