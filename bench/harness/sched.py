#!/usr/bin/python3
"""bench/harness/sched.py - schedules on a heterogeneous pair (not a test).

    /usr/bin/python3 bench/harness/sched.py --build DIR [--reps N]
        [--kernels ep.W cg.S himeno.XS] [--schedules static dynamic guided
         profiled profiled@,8,1]
        [--transport shm] [--out DIR]

A schedule may end in ':VAR=VALUE' (several allowed), set for its runs
only: 'profiled:OMPDSM_PROFILED_RESERVE_MS=0' is profiled with the
checkpoints' reserve off (every thread waits for all records), side by side
with 'profiled'.

Runs each kernel's schedule(runtime) loops on 2 ompdsm nodes (bound to
CPUs 0 and 1 by ompdsmrun) under OMP_SCHEDULE=static, dynamic, guided and
profiled, homogeneous and with node 1 at half speed (slownode.py: a cgroup
v1 cpu.cfs_quota_us of 5000 per 10000 us, a CPU hog pinned beside it, or
with --slow-method duty a SCHED_FIFO duty cycle taking 200 of every 400 us,
the closest to a slower CPU),
as the Omni/SCASH paper's figures 5-7 do.  Repetitions are interleaved
(rep 1 of every cell, then rep 2) and every ratio is the median over
repetitions of the ratio of two runs of the same repetition, made one after
the other.  Every run's verification is checked.  From each run's
OMPDSM_STATS JSON it keeps the SDSM faults and barriers (the paper's
table 2) and the profiled loops (executions, measurements, vector).

Outputs in --out (default bench/results/sched): sched.json, sched.md (the
tables, with the command and the load average before and after), and
sched_times.png / sched_ratios.png.
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
import slownode        # noqa: E402

SCHEDULES = ['static', 'dynamic', 'guided', 'profiled', 'profiled@,8,1']


def profiled_loops(path):
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return []
    return j.get('profiled_loops', [])


def one(runner, k, c, sched, idx, slowed, rep, transport):
    """One run; the schedule through OMP_SCHEDULE (Runner copies
    os.environ).  'profiled@,8,1' is OMP_SCHEDULE=profiled with
    OMPDSM_PROFILED='*=,8,1' (eval_size 8, eval_skip 1); a '+POLICY' suffix
    ('profiled+faults') sets OMPDSM_MIGRATION=POLICY (default off)."""
    sched_env, *envs = sched.split(':')
    sched_only, _, mig = sched_env.partition('+')
    os.environ['OMPDSM_MIGRATION'] = mig or 'off'
    kind, _, over = sched_only.partition('@')
    os.environ['OMP_SCHEDULE'] = kind
    if over:
        os.environ['OMPDSM_PROFILED'] = '*=' + over
    else:
        os.environ.pop('OMPDSM_PROFILED', None)
    cfg = 'dsm-%s-2' % transport
    # run() names its log and statistics files by repetition, not by
    # schedule: a repetition number per schedule keeps them apart.
    saved = {}
    for e in envs:
        var, _, val = e.partition('=')
        saved[var] = os.environ.get(var)
        os.environ[var] = val
    try:
        rec = runner.run(k, c, cfg, slowed, rep * 100 + idx, tag='')
    finally:
        for var, val in saved.items():
            if val is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = val
    rec['rep'] = rep
    rec['schedule'] = sched
    if rec.get('stats_file'):
        rec['profiled'] = profiled_loops(os.path.join(runner.args.out, rec['stats_file']))
    return rec


def logger(path):
    """A log function that prints and appends to path."""
    logf = open(path, 'w')

    def log(msg):
        print(msg, flush=True)
        logf.write(msg + '\n')
        logf.flush()
    return log


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, kernels, schedules):
    """Per kernel: median time per (schedule, slowed); paired ratios
    against static of the same slowing and repetition; faults/barriers."""
    out = {}
    for kc in kernels:
        k, c = kc.split('.')
        rs = [r for r in runs if r['kernel'] == k and r['class'] == c]
        cell = {}
        for s in schedules:
            for slowed in (False, True):
                sel = [r for r in rs if r['schedule'] == s and r['slowed'] == slowed]
                ok = [r for r in sel if r['status'] == 'ok']
                key = '%s/%s' % (s, 'slow' if slowed else 'homo')
                ratios = []
                for r in ok:
                    base = [b for b in rs if b['schedule'] == 'static' and
                            b['slowed'] == slowed and b['rep'] == r['rep'] and
                            b['status'] == 'ok']
                    if base and r['time']:
                        ratios.append(base[0]['time'] / r['time'])
                st = [r.get('stats', {}).get('total', {}) for r in ok]
                prof = [r.get('profiled', []) for r in ok]
                cell[key] = {
                    'time': med([r['time'] for r in ok]),
                    'times': [r['time'] for r in ok],
                    'failed': [r['status'] for r in sel if r['status'] != 'ok'],
                    'vs_static': med(ratios),
                    'ratios': ratios,
                    'faults': med([x.get('read_faults', 0) + x.get('write_faults', 0) for x in st]),
                    'barriers': med([x.get('barriers') for x in st]),
                    'migrations': med([x.get('migrations', 0) for x in st]),
                    'moved': med([x.get('migrate_bytes', 0) for x in st]),
                    'measured': med([sum(l['measurements'] for l in p) for p in prof]) if any(prof) else None,
                    'executions': med([sum(l['executions'] for l in p) for p in prof]) if any(prof) else None,
                    'vectors': [[l['vector'] for l in p][:3] for p in prof][:1],
                    # node 0's checkpoints: count, blocking waits for the
                    # other node's record, and exchange time (per run)
                    'checkpoints': [sum(l.get('checkpoints', 0) for l in p) for p in prof],
                    'ck_waits0': [sum((l.get('checkpoint_waits') or [0])[0] for l in p) for p in prof],
                    'ck_wait_ms0': [sum((l.get('checkpoint_wait_ns') or [0])[0] for l in p) / 1e6 for p in prof],
                    'measure_ms': [[sum((l.get('measure_ns') or [0, 0])[t] for l in p) / 1e6
                                    for t in range(2)] for p in prof],
                }
        out[kc] = cell
    return out


def fmt(x, nd=3):
    return '-' if x is None else ('%.*f' % (nd, x))


def markdown(doc):
    L = []
    L.append('Command: `%s`' % doc['command'])
    L.append('')
    L.append('%s; slow node: %s; load average before %.2f, after %.2f; %d '
             'repetitions; ompdsm 2 nodes over %s.' % (
                 doc['date'], doc['slow'], doc['load_before'], doc['load_after'],
                 doc['reps'], doc['transport']))
    L.append('')
    L.append('| kernel | schedule | time homog. (s) | vs static | time node 1 slowed (s) | vs static | faults homog./slowed | barriers | migrations homog./slowed | MiB moved slowed | profiled: executions, measured |')
    L.append('|---|---|---|---|---|---|---|---|---|---|---|')
    for kc, cell in doc['summary'].items():
        for s in doc['schedules']:
            h, w = cell['%s/homo' % s], cell['%s/slow' % s]
            prof = '-'
            if s.startswith('profiled') and w['executions'] is not None:
                prof = '%d, %d' % (w['executions'], w['measured'])
            fails = h['failed'] + w['failed']
            L.append('| %s | %s | %s | %s | %s | %s | %s / %s | %s | %s / %s | %s | %s |%s' % (
                kc, s, fmt(h['time']), fmt(h['vs_static']), fmt(w['time']),
                fmt(w['vs_static']), fmt(h['faults'], 0), fmt(w['faults'], 0),
                fmt(w['barriers'], 0), fmt(h['migrations'], 0), fmt(w['migrations'], 0),
                fmt(None if w['moved'] is None else w['moved'] / 2**20, 1), prof,
                (' ' + '; '.join(fails)) if fails else ''))
    L.append('')
    L.append('"vs static": median over repetitions of (static time / this time) '
             'of two runs made one after the other; above 1 is faster than static.')
    rows = []
    for kc, cell in doc['summary'].items():
        for s in doc['schedules']:
            for sl in ('homo', 'slow'):
                w = cell['%s/%s' % (s, sl)]
                if not s.startswith('profiled') or not any(w.get('checkpoints') or []):
                    continue
                rows.append('| %s | %s | %s | %s | %s | %s | %s |' % (
                    kc, s, 'node 1 slowed' if sl == 'slow' else 'homogeneous',
                    ' '.join('%d' % x for x in w['checkpoints']),
                    ' '.join('%d' % x for x in w['ck_waits0']),
                    ' '.join('%.1f' % x for x in w['ck_wait_ms0']),
                    ' '.join('%.1f/%.1f' % tuple(x) for x in w['measure_ms'])))
    if rows:
        L.append('')
        L.append('Checkpoints per run (OMPDSM_STATS): node 0\'s blocking waits for '
                 'the other node\'s record and their time, and measure_ms of node 0 / node 1 '
                 '(the speed exchange and the checkpoints), one value per run:')
        L.append('')
        L.append('| kernel | schedule | nodes | checkpoints | node 0 blocked | node 0 blocked (ms) | measure_ms 0/1 |')
        L.append('|---|---|---|---|---|---|---|')
        L.extend(rows)
    return '\n'.join(L) + '\n'


def plots(doc, out):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    kcs = list(doc['summary'])
    scheds = doc['schedules']
    fig, axes = plt.subplots(1, len(kcs), figsize=(4.2 * len(kcs), 3.6), squeeze=False)
    for ax, kc in zip(axes[0], kcs):
        cell = doc['summary'][kc]
        x = range(len(scheds))
        for off, (lab, key) in enumerate([('homogeneous', 'homo'), ('node 1 at half speed', 'slow')]):
            ys = [cell['%s/%s' % (s, key)]['time'] or 0 for s in scheds]
            ax.bar([i + (off - 0.5) * 0.38 for i in x], ys, 0.38, label=lab)
        ax.set_xticks(list(x))
        ax.set_xticklabels(scheds)
        ax.set_ylabel('time (s)')
        ax.set_title('%s, 2 nodes' % kc)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    p1 = os.path.join(out, 'sched_times.png')
    fig.savefig(p1, dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(1.6 + 1.8 * len(kcs), 3.6))
    w = 0.8 / len(scheds)
    for j, s in enumerate(scheds):
        ys = [doc['summary'][kc]['%s/slow' % s]['vs_static'] or 0 for kc in kcs]
        ax.bar([i + (j - len(scheds) / 2 + 0.5) * w for i in range(len(kcs))], ys, w, label=s)
    ax.axhline(1.0, color='k', lw=0.8)
    ax.axhline(4 / 3, color='k', lw=0.8, ls=':', label='ideal 1.33x')
    ax.set_xticks(range(len(kcs)))
    ax.set_xticklabels(kcs)
    ax.set_ylabel('static time / time (node 1 slowed)')
    ax.legend(fontsize=8)
    fig.tight_layout()
    p2 = os.path.join(out, 'sched_ratios.png')
    fig.savefig(p2, dpi=110)
    plt.close(fig)
    return [p1, p2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', default=None)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--kernels', nargs='+', default=['ep.W', 'cg.S', 'himeno.XS'])
    ap.add_argument('--schedules', nargs='+', default=SCHEDULES)
    ap.add_argument('--transport', default='shm', choices=['shm', 'tcp'])
    ap.add_argument('--himeno-iters', type=int, default=100)
    ap.add_argument('--slow-method', choices=['auto', 'cgroup', 'hog', 'duty'], default='auto',
                    help='how node 1 is slowed (slownode.py): duty is closest to a slower CPU')
    ap.add_argument('--duty-period', type=int, default=400,
                    help='with --slow-method duty: the duty cycle\'s period in us (default 400)')
    ap.add_argument('--timeout', type=int, default=300)
    ap.add_argument('--wait-idle', type=float, default=0.0,
                    help='before each run, wait up to this many seconds for '
                         'the machine to be idle (other users\' load)')
    a = ap.parse_args(argv)
    a.out = os.path.abspath(a.out or os.path.join(harness.SRC, 'bench', 'results', 'sched'))
    os.makedirs(a.out, exist_ok=True)
    # What Runner reads of the harness's arguments.
    a.wait_budget, a.native_bind = 600.0, True
    command = '/usr/bin/python3 bench/harness/sched.py ' + ' '.join(
        shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:]))
    log = logger(os.path.join(a.out, 'sched.log'))

    for v in ('OMP_SCHEDULE', 'OMPDSM_PROFILED', 'OMPDSM_MIGRATION'):
        os.environ.pop(v, None)
    bins = harness.Binaries(a.build, a.out, log)
    slow = slownode.SlowNode(a.slow_method, 5000, 10000, 1, build=a.build,
                             duty_period_us=a.duty_period).setup()
    runner = harness.Runner(a, bins, slow, log)
    load0 = harness.loadavg()[0]
    runs = []
    try:
        for rep in range(1, a.reps + 1):
            for kc in a.kernels:
                k, c = kc.split('.')
                for slowed in (False, True):
                    for i, s in enumerate(a.schedules):
                        r = one(runner, k, c, s, i, slowed, rep, a.transport)
                        log('%-10s %-9s %-5s rep %d: %s %s' % (
                            kc, s, 'slow' if slowed else 'homo', rep,
                            fmt(r.get('time')), r['status']))
                        runs.append(r)
    finally:
        slow.teardown()
        os.environ.pop('OMP_SCHEDULE', None)
        os.environ.pop('OMPDSM_PROFILED', None)
        os.environ.pop('OMPDSM_MIGRATION', None)
    doc = {'command': command, 'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
           'load_before': load0, 'load_after': harness.loadavg()[0],
           'slow': slow.describe(), 'reps': a.reps, 'transport': a.transport,
           'schedules': a.schedules, 'kernels': a.kernels, 'runs': runs,
           'summary': summarize(runs, a.kernels, a.schedules)}
    with open(os.path.join(a.out, 'sched.json'), 'w') as f:
        json.dump(doc, f, indent=1, default=str)
    md = markdown(doc)
    with open(os.path.join(a.out, 'sched.md'), 'w') as f:
        f.write(md)
    print(md)
    try:
        for p in plots(doc, a.out):
            log('wrote ' + p)
    except ImportError as e:
        log('no plots (%s): install python3-matplotlib' % e)
    return 0


if __name__ == '__main__':
    sys.exit(main())
