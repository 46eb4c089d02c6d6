#!/usr/bin/python3
"""bench/runtime/diagcost.py - what the diagnostics cost, side by side in
one run (docs/performance.md, "Diagnostics"):

  line tables  bench/runtime/small.c built by ompcc as it is by default
               (no -g given: -gline-tables-only) and with -g0; their .text
               sections are compared byte for byte, and both are timed
  wait records the default build run with the deadlock detector on (the
               default OMPDSM_DEADLOCK_S) and with OMPDSM_DEADLOCK_S=0,
               and with a short period (OMPDSM_DEADLOCK_S=0.2: a report
               every 50 ms while a node waits)

Each benchmark of small.c (constructs that enter and leave a wait record
very often) runs K times per variant, the variants alternating; prints the
medians and their ratios to the default, with the load average before and
after.

usage: bench/runtime/diagcost.py [BUILDDIR] [--nodes 2] [--reps K]
                                 [--names loops,testlock] [--iters R]
BUILDDIR defaults to ./build (BUILDDIR/ompcc, BUILDDIR/ompdsmrun)."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from small import load, secs  # noqa: E402  (one runner for both benchmarks)


def text_section(exe, out):
    subprocess.run(['objcopy', '-O', 'binary', '--only-section=.text', exe,
                    out], check=True)
    with open(out, 'rb') as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('builddir', nargs='?', default='build')
    ap.add_argument('--nodes', type=int, default=2)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--names', default='loops,testlock')
    ap.add_argument('--iters', type=int, default=300)
    a = ap.parse_args()
    b = a.builddir
    ompcc = os.path.join(b, 'ompcc')
    run = os.path.join(b, 'ompdsmrun')
    for f in (ompcc, run):
        if not os.path.exists(f):
            sys.exit('diagcost.py: %s is missing (ninja -C %s first)' % (f, b))
    tmp = tempfile.mkdtemp(prefix='diagcost.')
    try:
        src = os.path.join(HERE, 'small.c')
        lines = os.path.join(tmp, 'small.lines')
        nog = os.path.join(tmp, 'small.g0')
        subprocess.run([ompcc, '-O2', src, '-o', lines], check=True)
        subprocess.run([ompcc, '-O2', '-g0', src, '-o', nog], check=True)
        same = (text_section(lines, os.path.join(tmp, 't1')) ==
                text_section(nog, os.path.join(tmp, 't2')))
        print('.text of the default build and of -g0: %s; file sizes %d '
              'and %d bytes' % ('identical' if same else 'DIFFERENT',
                                os.path.getsize(lines), os.path.getsize(nog)))
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(('OMP_', 'GOMP_', 'OMPDSM_'))}
        base['OMPDSM_TRANSPORT'] = 'shm'
        variants = [
            ('default', lines, {}),
            ('-g0 build', nog, {}),
            ('OMPDSM_DEADLOCK_S=0', lines, {'OMPDSM_DEADLOCK_S': '0'}),
            ('OMPDSM_DEADLOCK_S=0.2', lines, {'OMPDSM_DEADLOCK_S': '0.2'}),
        ]
        l0 = load()
        print('load average before: %.2f' % l0)
        print('| benchmark | ' + ' | '.join('%s median s' % v[0]
                                            for v in variants) +
              ' | ' + ' | '.join('%s / default' % v[0]
                                 for v in variants[1:]) + ' |')
        print('|---' * (2 * len(variants)) + '|')
        for name in a.names.split(','):
            t = {v[0]: [] for v in variants}
            for _ in range(a.reps):
                for label, exe, extra in variants:
                    t[label].append(secs([run, '-np', str(a.nodes), exe, name,
                                          str(a.iters)], dict(base, **extra)))
            med = {k: statistics.median(v) for k, v in t.items()}
            d = med['default']
            print('| %s | ' % name +
                  ' | '.join('%.4f' % med[v[0]] for v in variants) + ' | ' +
                  ' | '.join('%.2f' % (med[v[0]] / d if d else float('inf'))
                             for v in variants[1:]) + ' |')
            sys.stdout.flush()
        print('load average after: %.2f' % load())
        print('command: %s' % ' '.join(sys.argv))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
