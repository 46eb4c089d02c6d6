#!/usr/bin/python3
"""bench/harness/slowcg.py - CG under three kinds of slowness (not a test).

    /usr/bin/python3 bench/harness/slowcg.py --build DIR [--reps 3]
        [--kernels cgband.A cgrand.A cg.A] [--slow none duty hog cgroup]
        [--variants static profiled profiled+diffs] [--env VAR=VALUE ...]
        [--out DIR]

On 2 ompdsm nodes (shm, bound to CPUs 0 and 1 by ompdsmrun), for each kind
of slowness of node 1 (slownode.py; each kind skipped with its reason when
it cannot be made here):
  none    homogeneous
  duty    a slower CPU: a SCHED_FIFO duty cycle taking 200 of every 400 us
  hog     another user's job: a CPU-bound process pinned on CPU 1 at the
          nodes' own niceness (nice 0 when the harness runs at 0), so that
          CFS gives each about half in slices of milliseconds
  cgroup  a CPU quota: cgroup v1 cpu.cfs_quota_us 5000 of 10000 on node 1
runs each kernel as
  static          the loops at static's split (cgband/cgrand: their
                  schedule(profiled) loops through OMPDSM_PROFILED='*=static';
                  cg.A: OMP_SCHEDULE=static)
  profiled        schedule(profiled) (cg.A: OMP_SCHEDULE=profiled)
  profiled+diffs  the same with OMPDSM_MIGRATION=diffs
interleaved (rep 1 of every variant, then rep 2, ...), and prints per run
the time, from its OMPDSM_STATS the profiled loops' split moves (re-
partitions, checkpoint splits, moves undone) and the pages migrated, and
the load average before and after.  The table has per kind and kernel the
median times and the ratios of medians profiled/static and +diffs/static
(below 1: faster than static).  --env sets a variable for the profiled
runs only (e.g. OMPDSM_PROFILED_STALLS=off, the default before issue 39).  Every run's verification is
checked.  Writes --out/slowcg.json and slowcg.md (default
BUILD/bench-results-slowcg).
"""
import argparse
import json
import os
import shlex
import statistics
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run as harness  # noqa: E402
import sched          # noqa: E402
import slownode        # noqa: E402

KINDS = ['none', 'duty', 'hog', 'cgroup']
VARIANTS = ['static', 'profiled', 'profiled+diffs']


def variant_sched(variant, extra):
    """The variant as a sched.py schedule string (sched.one sets
    OMP_SCHEDULE, OMPDSM_MIGRATION and the ':VAR=VALUE' variables)."""
    sched_, _, mig = variant.partition('+')
    if sched_ == 'static':
        return 'static:OMPDSM_PROFILED=*=static'
    return variant + ''.join(':%s=%s' % kv for kv in sorted(extra.items()))


def one(runner, kc, variant, kind, rep, extra):
    k, c = kc.split('.')
    # one number per kind and variant names the run's files
    rec = sched.one(runner, k, c, variant_sched(variant, extra),
                    KINDS.index(kind) * 10 + VARIANTS.index(variant),
                    kind != 'none', rep, 'shm')
    rec.update({'kc': kc, 'variant': variant, 'kind': kind, 'rep': rep})
    tot = rec.get('stats', {}).get('total', {})
    rec['migrations'] = tot.get('migrations')
    loops = rec.get('profiled') or []
    rec['moves'] = sum(lp.get('repartitions', 0) + lp.get('checkpoint_splits', 0)
                       for lp in loops) if rec.get('stats_file') else None
    rec['undone'] = sum(lp.get('reverts', 0) for lp in loops) if rec.get('stats_file') else None
    return rec


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, f='%.3f'):
    return '-' if x is None else f % x


def markdown(doc):
    L = ['# CG under three kinds of slowness (bench/harness/slowcg.py)', '',
         'Command: `%s`  ' % doc['command'],
         'Date: %s; load average (1 min) before %.2f, after %.2f; %d repetition(s), '
         'interleaved; times are the kernels\' own `Time in seconds`, medians. '
         'Ratios are median time / median static time (below 1: faster than static).'
         % (doc['date'], doc['load_before'], doc['load_after'], doc['reps']), '']
    for kind, why in doc['skipped'].items():
        L.append('- **%s skipped**: %s' % (kind, why))
    for kind, d in doc['kinds'].items():
        L.append('- %s: %s' % (kind, d))
    L += ['', '| slowness | kernel | static (s) | profiled (s) | +diffs (s) | '
          'profiled/static | +diffs/static | +diffs/profiled | moves prof./+diffs | '
          'undone prof./+diffs | migrations +diffs | load before-after | failed |',
          '|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for row in doc['summary']:
        t = row['time']
        L.append('| %s | %s | %s | %s | %s | **%s** | **%s** | %s | %s/%s | %s/%s | %s | %s-%s | %s |' % (
            row['kind'], row['kc'], fmt(t.get('static')), fmt(t.get('profiled')),
            fmt(t.get('profiled+diffs')), fmt(row['prof_vs_static']),
            fmt(row['diffs_vs_static']), fmt(row['diffs_vs_prof']),
            fmt(row['moves'].get('profiled'), '%g'), fmt(row['moves'].get('profiled+diffs'), '%g'),
            fmt(row['undone'].get('profiled'), '%g'), fmt(row['undone'].get('profiled+diffs'), '%g'),
            fmt(row['migrations'], '%g'), fmt(row['load'][0], '%.1f'),
            fmt(row['load'][1], '%.1f'), row['failed'] or ''))
    return '\n'.join(L) + '\n'


def summarize(runs, kinds, kernels, variants):
    out = []
    for kind in kinds:
        for kc in kernels:
            rs = [r for r in runs if r['kind'] == kind and r['kc'] == kc]
            if not rs:
                continue
            ok = [r for r in rs if r['status'] == 'ok']
            t = {v: med([r['time'] for r in ok if r['variant'] == v]) for v in variants}

            def ratio(a, b):
                return t[a] / t[b] if t.get(a) and t.get(b) else None
            out.append({
                'kind': kind, 'kc': kc, 'time': t,
                'prof_vs_static': ratio('profiled', 'static'),
                'diffs_vs_static': ratio('profiled+diffs', 'static'),
                'diffs_vs_prof': ratio('profiled+diffs', 'profiled'),
                'moves': {v: med([r['moves'] for r in ok if r['variant'] == v]) for v in variants},
                'undone': {v: med([r['undone'] for r in ok if r['variant'] == v]) for v in variants},
                'migrations': med([r['migrations'] for r in ok if r['variant'] == 'profiled+diffs']),
                'load': (min(r['load_before'] for r in rs), max(r['load_after'] for r in rs)),
                'failed': len(rs) - len(ok)})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', default=None)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--kernels', nargs='+', default=['cgband.A', 'cgrand.A', 'cg.A'])
    ap.add_argument('--slow', nargs='+', choices=KINDS, default=KINDS)
    ap.add_argument('--variants', nargs='+', choices=VARIANTS, default=VARIANTS)
    ap.add_argument('--env', nargs='*', default=[], metavar='VAR=VALUE',
                    help='set for the profiled variants only')
    ap.add_argument('--timeout', type=int, default=300)
    a = ap.parse_args(argv)
    a.build = os.path.abspath(a.build)
    a.out = os.path.abspath(a.out or os.path.join(a.build, 'bench-results-slowcg'))
    os.makedirs(a.out, exist_ok=True)
    # What Runner reads of the harness's arguments.
    a.wait_idle, a.wait_budget, a.native_bind, a.himeno_iters = 0.0, 0.0, True, 100
    extra = dict(e.split('=', 1) for e in a.env)
    command = '/usr/bin/python3 bench/harness/slowcg.py ' + ' '.join(
        shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:]))
    log = sched.logger(os.path.join(a.out, 'slowcg.log'))

    bins = harness.Binaries(a.build, a.out, log)
    slows, skipped, kinds = {}, {}, {}
    for kind in a.slow:
        if kind == 'none':
            kinds[kind] = 'homogeneous: nothing slows node 1'
            continue
        try:
            slows[kind] = slownode.SlowNode(kind, 5000, 10000, 1, build=a.build).setup()
            kinds[kind] = slows[kind].describe()
        except (RuntimeError, OSError) as e:
            skipped[kind] = str(e)
            log('SKIPPED %s: %s' % (kind, e))
    load0 = harness.loadavg()[0]
    runs = []
    runner = harness.Runner(a, bins, None, log)
    log('%-6s %-9s %-15s rep  time(s)  moves undone migr  load    status' % (
        'slow', 'kernel', 'variant'))
    try:
        for rep in range(1, a.reps + 1):
            for kind in [k for k in a.slow if k in kinds]:
                runner.slow = slows.get(kind)
                for kc in a.kernels:
                    for v in a.variants:
                        r = one(runner, kc, v, kind, rep, extra)
                        runs.append(r)
                        log('%-6s %-9s %-15s %3d  %7s  %5s %6s %4s  %.1f-%.1f %s' % (
                            kind, kc, v, rep, fmt(r.get('time')), fmt(r['moves'], '%d'),
                            fmt(r['undone'], '%d'), fmt(r['migrations'], '%d'),
                            r.get('load_before', 0), r.get('load_after', 0), r['status']))
    finally:
        for s in slows.values():
            s.teardown()
    doc = {'command': command, 'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
           'load_before': load0, 'load_after': harness.loadavg()[0], 'reps': a.reps,
           'kinds': kinds, 'skipped': skipped, 'runs': runs,
           'summary': summarize(runs, list(kinds), a.kernels, a.variants)}
    with open(os.path.join(a.out, 'slowcg.json'), 'w') as f:
        json.dump(doc, f, indent=1, default=str)
    md = markdown(doc)
    with open(os.path.join(a.out, 'slowcg.md'), 'w') as f:
        f.write(md)
    print(md)
    return 0 if all(r['status'] == 'ok' for r in runs) else 1


if __name__ == '__main__':
    sys.exit(main())
