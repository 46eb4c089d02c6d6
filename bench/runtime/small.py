#!/usr/bin/python3
"""bench/runtime/small.py - small OpenMP constructs executed very often
(bench/runtime/small.c): each benchmark built by ompcc and run with
ompdsmrun on N nodes, and built with gcc -fopenmp and run on N threads,
alternating, K repetitions each; prints the medians, minima and the ratio
of the medians (ompdsm / native) of this one run, with the load average
before and after.

usage: bench/runtime/small.py [BUILDDIR] [--nodes 2] [--transport shm]
                              [--reps K] [--names collapse,loops,...]
                              [--iters R] [--n N] [--env KEY=VALUE ...]

BUILDDIR defaults to ./build (BUILDDIR/ompdsmrun,
BUILDDIR/bench/runtime/{small,small.native})."""
import argparse
import os
import statistics
import subprocess
import sys

NAMES = ['collapse', 'loops', 'copyprivate', 'testlock', 'nested']
PROG = os.path.basename(sys.argv[0])  # small.py, or diagcost.py importing it


def load():
    with open('/proc/loadavg') as f:
        return float(f.read().split()[0])


def secs(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode:
        sys.exit('%s: %s failed (status %d):\n%s' %
                 (PROG, ' '.join(cmd), p.returncode, p.stdout))
    for line in p.stdout.splitlines():
        for w in line.split():
            if w.startswith('secs='):
                return float(w[5:])
    sys.exit('%s: no secs= in the output of %s' % (PROG, ' '.join(cmd)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('builddir', nargs='?', default='build')
    ap.add_argument('--nodes', type=int, default=2)
    ap.add_argument('--transport', default='shm')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--names', default=','.join(NAMES))
    ap.add_argument('--iters', type=int, default=1000)
    ap.add_argument('--n', type=int, default=32)
    ap.add_argument('--env', action='append', default=[],
                    help='KEY=VALUE for the ompdsm runs (repeatable)')
    a = ap.parse_args()
    b = a.builddir
    dsm = os.path.join(b, 'bench', 'runtime', 'small')
    nat = os.path.join(b, 'bench', 'runtime', 'small.native')
    run = os.path.join(b, 'ompdsmrun')
    for f in (dsm, nat, run):
        if not os.path.exists(f):
            sys.exit('small.py: %s is missing (ninja -C %s first)' % (f, b))
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(('OMP_', 'GOMP_', 'OMPDSM_'))}
    denv = dict(base, OMPDSM_TRANSPORT=a.transport)
    for kv in a.env:
        k, v = kv.split('=', 1)
        denv[k] = v
    nenv = dict(base, OMP_NUM_THREADS=str(a.nodes))
    l0 = load()
    print('load average before: %.2f' % l0)
    print('| benchmark | ompdsm median s | min | native median s | min | '
          'ratio (medians) |')
    print('|---|---|---|---|---|---|')
    for name in a.names.split(','):
        args = [name, str(a.iters), str(a.n)]
        d, n = [], []
        for _ in range(a.reps):
            d.append(secs([run, '-np', str(a.nodes), dsm] + args, denv))
            n.append(secs([nat] + args, nenv))
        md, mn = statistics.median(d), statistics.median(n)
        print('| %s | %.4f | %.4f | %.4f | %.4f | %.1f |' %
              (name, md, min(d), mn, min(n), md / mn if mn else float('inf')))
        sys.stdout.flush()
    print('load average after: %.2f' % load())
    print('command: %s' % ' '.join(sys.argv))


if __name__ == '__main__':
    main()
