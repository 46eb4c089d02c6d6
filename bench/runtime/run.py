#!/usr/bin/python3
"""bench/runtime/run.py - runs the runtime benchmark (rt_bench) for N = 1, 2,
4, 8 nodes over shm and tcp, and the gcc -fopenmp reference (ep_omp) on 1
and 2 threads, and prints Markdown tables with the goals' status.

usage: bench/runtime/run.py [BUILDDIR] [--nodes 1,2,4,8] [--transports shm,tcp]
                            [--reps K] [--ep-batches NB] [--ep-steps S]
                            [--ep-chunk C]
                            [--regions R] [--barriers B] [--chunks N]
                            [--body-us U]
                            [--logs DIR]

BUILDDIR defaults to ./build: the launcher is BUILDDIR/ompdsmrun, the
programs BUILDDIR/bench/runtime/{rt_bench,ep_omp}.  Every run's full output
is kept in --logs (default BUILDDIR/bench-runtime-logs).  Each number is the
median of K repetitions inside one run; ratios are computed from the
medians of the same run.  The load average before each run is printed: the
machine is shared, so compare numbers of one invocation only."""
import argparse
import os
import subprocess
import sys


def parse(out):
    res, ratio = {}, {}
    for line in out.splitlines():
        if line.startswith('RESULT ') or line.startswith('RATIO '):
            kv = dict(x.split('=', 1) for x in line.split()[1:])
            key = (kv['transport'], int(kv['nodes']))
            if line.startswith('RESULT '):
                res[key + (kv['name'],)] = float(kv['median'])
            else:
                ratio.setdefault(key, {}).update(
                    {k: float(v) for k, v in kv.items()
                     if k not in ('transport', 'nodes')})
    return res, ratio


def run(cmd, env, log):
    with open('/proc/loadavg') as f:
        load = float(f.read().split()[0])
    sys.stderr.write('running (load %.2f): %s\n' % (load, ' '.join(cmd)))
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=900)
    with open(log, 'w') as f:
        f.write(p.stdout)
    if p.returncode:
        sys.exit('run.py: %s failed (status %d), see %s' %
                 (cmd[0], p.returncode, log))
    return p.stdout, load


def fmt(x, digits=2):
    return '-' if x is None else ('%.*f' % (digits, x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('builddir', nargs='?', default='build')
    ap.add_argument('--nodes', default='1,2,4,8')
    ap.add_argument('--transports', default='shm,tcp')
    ap.add_argument('--reps', type=int, default=7)
    ap.add_argument('--ep-batches', type=int, default=512)
    ap.add_argument('--ep-steps', type=int, default=200000)
    ap.add_argument('--ep-chunk', type=int, default=0,
                    help='chunk of the EP-like loop under dynamic and guided '
                         '(0: no chunk clause); ep_omp does not take it')
    ap.add_argument('--regions', type=int, default=400)
    ap.add_argument('--barriers', type=int, default=400)
    ap.add_argument('--chunks', type=int, default=2000)
    ap.add_argument('--body-us', type=int, default=20)
    ap.add_argument('--logs')
    a = ap.parse_args()
    launcher = os.path.join(a.builddir, 'ompdsmrun')
    bench = os.path.join(a.builddir, 'bench', 'runtime', 'rt_bench')
    epomp = os.path.join(a.builddir, 'bench', 'runtime', 'ep_omp')
    logs = a.logs or os.path.join(a.builddir, 'bench-runtime-logs')
    for f in (launcher, bench):
        if not os.access(f, os.X_OK):
            sys.exit('run.py: %s is missing (build first)' % f)
    os.makedirs(logs, exist_ok=True)
    common = ['--reps', str(a.reps), '--ep-batches', str(a.ep_batches),
              '--ep-steps', str(a.ep_steps)]

    res, ratio, loads = {}, {}, []
    nodes = [int(x) for x in a.nodes.split(',')]
    transports = a.transports.split(',')
    for tr in transports:
        for n in nodes:
            cmd = [launcher, '-np', str(n), bench] + common + [
                '--ep-chunk', str(a.ep_chunk),
                '--regions', str(a.regions), '--barriers', str(a.barriers),
                '--chunks', str(a.chunks), '--body-us', str(a.body_us)]
            env = dict(os.environ, OMPDSM_TRANSPORT=tr)
            out, load = run(cmd, env, os.path.join(
                logs, 'rt_bench-%s-%d.txt' % (tr, n)))
            loads.append(load)
            r, q = parse(out)
            res.update(r)
            ratio.update(q)
    omp_threads = []
    if os.access(epomp, os.X_OK):
        for t in (1, 2):
            env = dict(os.environ, OMP_NUM_THREADS=str(t))
            out, load = run([epomp] + common, env,
                            os.path.join(logs, 'ep_omp-%d.txt' % t))
            loads.append(load)
            r, q = parse(out)
            res.update(r)
            ratio.update(q)
            omp_threads.append(t)
    else:
        sys.stderr.write('run.py: %s missing (no OpenMP compiler?): no '
                         'reference rows\n' % epomp)

    def get(tr, n, name):
        return res.get((tr, n, name))

    print('Runtime benchmark: medians of %d repetitions; EP-like loop = %d '
          'batches x %d steps; load average before the runs %.2f to %.2f.\n'
          % (a.reps, a.ep_batches, a.ep_steps, min(loads), max(loads)))

    print('Fork-join of an empty region and a barrier (us):\n')
    print('| transport | N | empty region | barrier | region / barrier |')
    print('|---|---|---|---|---|')
    for tr in transports:
        for n in nodes:
            reg, bar = get(tr, n, 'region'), get(tr, n, 'barrier')
            q = reg / bar if reg and bar else None
            print('| %s | %d | %s | %s | %s |' % (tr, n, fmt(reg), fmt(bar),
                                                  fmt(q)))

    print('\nPer-chunk cost: loop of %d iterations, schedule(kind,1), each '
          'iteration busy for %d us; the threads\' total time in the loop '
          'outside the bodies / the number of chunks (us):\n'
          % (a.chunks, a.body_us))
    print('| transport | N | static,1 | dynamic,1 | guided,1 |')
    print('|---|---|---|---|---|')
    for tr in transports:
        for n in nodes:
            print('| %s | %d | %s | %s | %s |' % (
                tr, n, fmt(get(tr, n, 'chunk_static'), 3),
                fmt(get(tr, n, 'chunk_dynamic'), 3),
                fmt(get(tr, n, 'chunk_guided'), 3)))

    print('\nEP-like loop (ms; dynamic and guided %s):\n' % (
        'with chunk %d (ompdsm rows)' % a.ep_chunk if a.ep_chunk else
        'without chunk size, i.e. chunk 1 and guided\'s default'))
    print('| build | N | static | dynamic | guided | dynamic / static | '
          'guided / static |')
    print('|---|---|---|---|---|---|---|')
    rows = [(tr, n) for tr in transports for n in nodes]
    rows += [('gcc-openmp', t) for t in omp_threads]
    for tr, n in rows:
        st, dy, gu = (get(tr, n, 'ep_' + k) for k in
                      ('static', 'dynamic', 'guided'))
        label = 'ompdsm %s' % tr if tr != 'gcc-openmp' else 'gcc -fopenmp'
        unit = 'nodes' if tr != 'gcc-openmp' else 'threads'
        print('| %s | %d %s | %s | %s | %s | %s | %s |' % (
            label, n, unit, fmt(st, 1), fmt(dy, 1), fmt(gu, 1),
            fmt(dy / st if st and dy else None, 3),
            fmt(gu / st if st and gu else None, 3)))

    print('\nGoals (2 nodes):\n')
    for tr in transports:
        reg, bar = get(tr, 2, 'region'), get(tr, 2, 'barrier')
        if reg and bar:
            print('- %s: empty region <= 2 barriers: %.2f barriers: **%s**'
                  % (tr, reg / bar, 'met' if reg <= 2 * bar else 'not met'))
        st, dy, gu = (get(tr, 2, 'ep_' + k) for k in
                      ('static', 'dynamic', 'guided'))
        if st and dy and gu:
            ok = dy <= 1.05 * st and gu <= 1.05 * st
            print('- %s: EP-like dynamic and guided within 5%% of static: '
                  '%.3f and %.3f: **%s**' % (tr, dy / st, gu / st,
                                             'met' if ok else 'not met'))
    st1, st2 = get('gcc-openmp', 1, 'ep_static'), get('gcc-openmp', 2,
                                                      'ep_static')
    for tr in transports:
        o1, o2 = get(tr, 1, 'ep_static'), get(tr, 2, 'ep_static')
        if o1 and o2 and st1 and st2:
            print('- %s: EP-like static, ompdsm / gcc -fopenmp: 1 node %.3f, '
                  '2 nodes %.3f (speedup 1->2: ompdsm %.2f, gcc %.2f)'
                  % (tr, o1 / st1, o2 / st2, o1 / o2, st1 / st2))
    print('\nLogs: %s' % logs)


if __name__ == '__main__':
    main()
