#!/usr/bin/python3
"""bench/comm/run.py - runs the comm benchmark (comm_bench) for N = 2, 4, 8
over tcp and shm and prints Markdown tables of the results.

usage: bench/comm/run.py [BUILDDIR] [--nodes 2,4,8] [--transports tcp,shm]
                         [--iters N] [--barrier-iters N] [--no-bind]
                         [--launcher PATH] [--bench PATH] [--logs DIR]

BUILDDIR defaults to ./build; the launcher is BUILDDIR/ompdsmrun and the
benchmark BUILDDIR/bench/comm/comm_bench.  Each run's full output (with the
histograms) is kept in --logs (default BUILDDIR/bench-comm-logs).  By
default node r is bound to CPU r mod CPUs (comm_bench --bind), so nodes 0
and 1, which the latency measures use, are on different cores."""
import argparse
import os
import re
import subprocess
import sys

MEASURES = [
    ('rtt8', '8 B round trip (notify ping-pong)'),
    ('get4k', '4 KiB get'),
    ('get4kcold', '4 KiB get, 64 MiB cycled'),
    ('get64k', '64 KiB get (a DSM page)'),
    ('fadd', 'fetch-add'),
    ('barrier', 'barrier (all N)'),
    ('raw8', 'raw TCP 8 B ping-pong, blocking'),
    ('raw4k', 'raw TCP 4 KiB ping-pong, blocking'),
    ('raw8poll', 'raw TCP 8 B ping-pong, busy-poll'),
    ('raw4kpoll', 'raw TCP 4 KiB ping-pong, busy-poll'),
    ('memcpy4k', '4 KiB memcpy'),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('builddir', nargs='?', default='build')
    ap.add_argument('--nodes', default='2,4,8')
    ap.add_argument('--transports', default='tcp,shm')
    ap.add_argument('--iters', type=int, default=20000)
    ap.add_argument('--barrier-iters', type=int, default=10000)
    ap.add_argument('--no-bind', action='store_true')
    ap.add_argument('--launcher')
    ap.add_argument('--bench')
    ap.add_argument('--logs')
    a = ap.parse_args()
    launcher = a.launcher or os.path.join(a.builddir, 'ompdsmrun')
    bench = a.bench or os.path.join(a.builddir, 'bench', 'comm', 'comm_bench')
    logs = a.logs or os.path.join(a.builddir, 'bench-comm-logs')
    for f in (launcher, bench):
        if not os.access(f, os.X_OK):
            sys.exit('run.py: %s is missing (build first, or see --help)' % f)
    os.makedirs(logs, exist_ok=True)

    results = {}  # (transport, n, name) -> dict
    machine = ''
    load = []
    for tr in a.transports.split(','):
        for n in [int(x) for x in a.nodes.split(',')]:
            cmd = [launcher, '-np', str(n), bench, '--iters', str(a.iters),
                   '--barrier-iters', str(a.barrier_iters)]
            if not a.no_bind:
                cmd.append('--bind')
            env = dict(os.environ, OMPDSM_TRANSPORT=tr)
            with open('/proc/loadavg') as f:
                load.append(float(f.read().split()[0]))
            sys.stderr.write('running: OMPDSM_TRANSPORT=%s %s\n' % (tr, ' '.join(cmd)))
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            log = os.path.join(logs, 'comm_bench-%s-%d.txt' % (tr, n))
            with open(log, 'w') as f:
                f.write(p.stdout)
            if p.returncode:
                sys.exit('run.py: the run failed (status %d), see %s' % (p.returncode, log))
            for line in p.stdout.splitlines():
                if line.startswith('machine:'):
                    machine = line.split(';')[0][len('machine: '):]
                if not line.startswith('RESULT '):
                    continue
                kv = dict(x.split('=', 1) for x in line.split()[1:])
                results[(kv['transport'], int(kv['nodes']), kv['name'])] = kv

    print('Machine: %s; load average before the runs: %s.' %
          (machine, ', '.join('%.2f' % x for x in load)))
    print('Placement: %s.  Microseconds; %d iterations (%d for barriers).\n' %
          ('node r bound to CPU r mod CPUs' if not a.no_bind else 'unbound',
           a.iters, a.barrier_iters))

    keys = sorted({(t, n) for (t, n, _) in results})
    print('| transport | N | ' + ' | '.join(m for m, _ in MEASURES[:5]) +
          ' | raw4k | raw4kpoll | get4k / raw4k |')
    print('|---|---|' + '---|' * 8)
    for t, n in keys:
        def med(m):
            r = results.get((t, n, m))
            return float(r['med']) if r else None
        cells = ['%.2f' % med(m) if med(m) is not None else '-' for m, _ in MEASURES[:5]]
        ratio = (med('get4k') / med('raw4k')
                 if t == 'tcp' and med('get4k') and med('raw4k') else None)
        print('| %s | %d | %s | %.2f | %.2f | %s |' %
              (t, n, ' | '.join(cells), med('raw4k') or 0, med('raw4kpoll') or 0,
               '%.2f' % ratio if ratio else '-'))
    print('\n(medians; the row\'s raw TCP floors were measured in the same run)\n')

    print('| transport | N | measure | min | median | p99 | max |')
    print('|---|---|---|---|---|---|---|')
    for t, n in keys:
        for m, what in MEASURES:
            r = results.get((t, n, m))
            if r:
                print('| %s | %d | %s | %s | %s | %s | %s |' %
                      (t, n, what, r['min'], r['med'], r['p99'], r['max']))

    print('\nGoals:')
    for t, n in keys:
        def med(m):
            r = results.get((t, n, m))
            return float(r['med']) if r else None
        if t == 'tcp' and med('get4k') and med('raw4k'):
            x = med('get4k') / med('raw4k')
            print('- tcp, %d nodes: 4 KiB get %.2f us = %.2fx the raw blocking '
                  'TCP 4 KiB round trip (%.2f us): %s (goal <= 1.3x)' %
                  (n, med('get4k'), x, med('raw4k'), 'met' if x <= 1.3 else 'MISSED'))
        if t == 'shm' and n == 2:
            print('- shm, 2 nodes: 4 KiB get median %.3f us (cycled: %.3f): %s '
                  '(goal < 2 us)' % (med('get4k'), med('get4kcold'),
                                     'met' if med('get4k') < 2 else 'MISSED'))
            print('- shm, 2 nodes: barrier median %.3f us: %s (goal < 2 us)' %
                  (med('barrier'), 'met' if med('barrier') < 2 else 'MISSED'))
    print('\nFull outputs with histograms: %s' % logs)


if __name__ == '__main__':
    main()
