#!/usr/bin/env python3
"""tests/runtime/tune_test.py - ompdsm-tune on a tiny program (not its
timing): it runs, finds the program's profiled loop from the statistics,
prints a table and the clause to write for rt_tune_prog.c:21, draws the
PNG when matplotlib is there; ompdsmrun's job options reach every run
(-np, -H localhost:3 and a hostfile of localhost slots=3 give the table's
node count; --np stays an alias); and on a program with no profiled loop
it fails with one line saying so.

    tune_test.py TUNE OMPDSMRUN TUNE_PROG OTHER_PROG
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    tune, run, prog, other = sys.argv[1:5]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, 'tune.png')
        try:
            import matplotlib  # noqa: F401
            want_png = True
        except ImportError:
            want_png = False
        cmd = [sys.executable, tune, '-np', '2', '--reps', '1', '--ompdsmrun', run,
               '--settings', '0,1,0;2,1,1'] + (['--png', png] if want_png else []) + [
               '--', prog]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=200)
        print(r.stdout)
        if r.returncode != 0:
            fails.append('ompdsm-tune exited %d' % r.returncode)
        if not re.search(r'^rt_tune_prog\.c:21: schedule\(profiled, (0, 1, 0|2, 1, 1)\)'
                         r'  \d+\.\d\dx over static$', r.stdout, re.M):
            fails.append('no clause line for rt_tune_prog.c:21')
        for row in ('static', 'profiled,0,1,0', 'profiled,2,1,1'):
            if not re.search(r'^  %s +\d+\.\d+ +\d+\.\d\dx$' % re.escape(row),
                             r.stdout, re.M):
                fails.append('no table row for %s' % row)
        if want_png and not (os.path.isfile(png) and os.path.getsize(png) > 1000):
            fails.append('no PNG written')
        if not re.search(r'^rt_tune_prog\.c:21 \(2 nodes,', r.stdout, re.M):
            fails.append('-np 2: the table is not of 2 nodes')
        # The job options reach ompdsmrun: hosts instead of -np.
        hostfile = os.path.join(tmp, 'hosts')
        with open(hostfile, 'w') as f:
            f.write('localhost slots=3\n')
        for hosts in (['-H', 'localhost:3'], ['--hostfile', hostfile]):
            r = subprocess.run([sys.executable, tune, '--reps', '1',
                                '--ompdsmrun', run, '--settings', '0,1,0'] +
                               hosts + ['--', prog], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=200)
            print(r.stdout)
            if r.returncode != 0 or not re.search(
                    r'^rt_tune_prog\.c:21 \(3 nodes,', r.stdout, re.M):
                fails.append('%s: exit %d, no table of 3 nodes' %
                             (' '.join(hosts), r.returncode))
        # A program without profiled loops: exit 1 and one clear line.
        r = subprocess.run([sys.executable, tune, '--np', '2', '--reps', '1',
                            '--ompdsmrun', run, '--', other],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=100)
        print(r.stdout)
        if r.returncode != 1 or 'no profiled loop ran' not in r.stdout:
            fails.append('a program without profiled loops: exit %d, output %r'
                         % (r.returncode, r.stdout[-200:]))
        # Bad settings: exit 1 before running anything.
        r = subprocess.run([sys.executable, tune, '--settings', '1,2', '--', other],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 1 or 'chunk,eval_size,eval_skip' not in r.stdout:
            fails.append('bad --settings not refused: %r' % r.stdout)
    for f in fails:
        print('FAIL: ' + f)
    print('tune_test: %s' % ('FAILED' if fails else 'ok'))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
