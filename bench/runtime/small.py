#!/usr/bin/python3
"""bench/runtime/small.py - small OpenMP constructs executed very often
(bench/runtime/small.c): each benchmark built by ompcc and run with
ompdsmrun on N nodes (T threads each), and built with gcc -fopenmp and run
on N x T threads, alternating, K repetitions each; prints the medians,
minima and the ratio of the medians (ompdsm / native) of this one run,
with the load average before and after.

usage: bench/runtime/small.py [BUILDDIR] [--nodes 2] [--threads 1]
                              [--transport shm] [--reps K]
                              [--names collapse,loops,...] [--suite]
                              [--iters R] [--n N] [--env KEY=VALUE ...]
                              [--before KEY=VALUE ...] [--with-tasks]

--before KEY=VALUE (repeatable) adds runs of ompdsm with that environment
as well (LD_LIBRARY_PATH=OLDBUILD/runtime: the library before a change),
interleaved with the others, and their columns.

--suite runs the shapes of the public test suites' slow tests (issue 36:
ordered, cpcrit, guided, static, tasks, atomic, testpoll) instead, each
with the suite's own counts unless --iters or --n say otherwise.

Every shape but tasks runs from small.notasks, the same program without
the tasks shape: a program with a task construct anywhere sends every
barrier through the task arrival phase, and each public suite test is a
program of its own.  --with-tasks runs them all from small (the cost of
that phase).

BUILDDIR defaults to ./build (BUILDDIR/ompdsmrun,
BUILDDIR/bench/runtime/{small,small.notasks,small.native})."""
import argparse
import os
import statistics
import subprocess
import sys

NAMES = ['collapse', 'loops', 'copyprivate', 'testlock', 'nested']
# The suites' shapes and their counts (repetitions, size): 10 repetitions
# of a 99 x 99 nest, of 1,000 iterations or of 1,000 terms per task.
SUITE = {'ordered': (10, 99), 'cpcrit': (10, 1000), 'guided': (10, 1000),
         'static': (10, 1000), 'tasks': (10, 1000), 'atomic': (10, 1000),
         'testpoll': (10, 1000)}
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
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--transport', default='shm')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--names')
    ap.add_argument('--suite', action='store_true')
    ap.add_argument('--iters', type=int)
    ap.add_argument('--n', type=int)
    ap.add_argument('--env', action='append', default=[],
                    help='KEY=VALUE for the ompdsm runs (repeatable)')
    ap.add_argument('--before', action='append', default=[],
                    help='KEY=VALUE for extra "before" ompdsm runs')
    ap.add_argument('--with-tasks', action='store_true',
                    help='every shape from small, the program with tasks')
    a = ap.parse_args()
    b = a.builddir
    dsm = os.path.join(b, 'bench', 'runtime', 'small')
    dsm_nt = os.path.join(b, 'bench', 'runtime', 'small.notasks')
    nat = os.path.join(b, 'bench', 'runtime', 'small.native')
    run = os.path.join(b, 'ompdsmrun')
    for f in (dsm, dsm_nt, nat, run):
        if not os.path.exists(f):
            sys.exit('small.py: %s is missing (ninja -C %s first)' % (f, b))
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(('OMP_', 'GOMP_', 'OMPDSM_'))}
    denv = dict(base, OMPDSM_TRANSPORT=a.transport)
    for kv in a.env:
        k, v = kv.split('=', 1)
        denv[k] = v
    benv = dict(denv)
    for kv in a.before:
        k, v = kv.split('=', 1)
        benv[k] = v
    nenv = dict(base, OMP_NUM_THREADS=str(a.nodes * a.threads))
    names = a.names or ','.join(SUITE if a.suite else NAMES)
    l0 = load()
    print('load average before: %.2f' % l0)
    bcols = '| before median s | min | ratio ' if a.before else ''
    print('| benchmark %s| ompdsm median s | min | native median s | min | '
          'ratio (medians) |' % bcols)
    print('|---|---|---|---|---|---|%s' % ('---|---|---|' if a.before else ''))
    launch = [run, '-np', str(a.nodes)]
    if a.threads > 1:
        launch += ['--threads-per-node', str(a.threads)]
    for name in names.split(','):
        iters, size = SUITE.get(name, (1000, 32))
        args = [name, str(a.iters or iters), str(a.n or size)]
        prog = dsm if a.with_tasks or name == 'tasks' else dsm_nt
        d, n, o = [], [], []
        for _ in range(a.reps):
            if a.before:
                o.append(secs(launch + [prog] + args, benv))
            d.append(secs(launch + [prog] + args, denv))
            n.append(secs([nat] + args, nenv))
        md, mn = statistics.median(d), statistics.median(n)
        bc = ''
        if o:
            mo = statistics.median(o)
            bc = '%.4f | %.4f | %.1f | ' % (mo, min(o), mo / mn if mn else
                                             float('inf'))
        print('| %s | %s%.4f | %.4f | %.4f | %.4f | %.1f |' %
              (name, bc, md, min(d), mn, min(n),
               md / mn if mn else float('inf')))
        sys.stdout.flush()
    print('load average after: %.2f' % load())
    print('command: %s' % ' '.join(sys.argv))


if __name__ == '__main__':
    main()
