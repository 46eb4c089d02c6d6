#!/usr/bin/python3
"""bench/harness/keep.py - pages kept writable, on against off (not a test).

    /usr/bin/python3 bench/harness/keep.py --build DIR [--reps N]
        [--kernels cg.A is.A mg.A himeno.S] [--transport shm] [--out DIR]

For each kernel, runs ompdsm on 1 node, then on 2 nodes with
OMPDSM_KEEP_WRITABLE=off and =on, one after the other, repetition by
repetition, so that each ratio compares runs made side by side (the
median over repetitions of the ratio of two runs of one repetition).
Every run's verification is checked; from its OMPDSM_STATS JSON it keeps
the SDSM faults, mprotect calls, pages kept writable and written ahead, and
the time in faults and barriers (summed over nodes).  Writes --out/keep.md
(the table, the command, the load average before and after) and keep.json.
"""
import argparse
import json
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from migrate import fmt, load, med, run_one  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', default='bench/results/keep')
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--kernels', nargs='+', default=['cg.A', 'is.A', 'mg.A', 'himeno.S'])
    ap.add_argument('--transport', default='shm', choices=['shm', 'tcp'])
    ap.add_argument('--himeno-iters', type=int, default=100)
    ap.add_argument('--timeout', type=int, default=600)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cells = [(1, 'on'), (2, 'off'), (2, 'on')]
    lb = load()
    runs = []
    for rep in range(args.reps):
        for kc in args.kernels:
            for nodes, keep in cells:
                r = run_one(args, kc, nodes, 'off', 'k%s_r%d' % (keep, rep),
                            {'OMPDSM_KEEP_WRITABLE': keep}, prefix='keep')
                r.update({'rep': rep, 'keep': keep})
                runs.append(r)
                print('%s n%d keep %s rep %d: %s %s' % (kc, nodes, keep, rep, r['status'],
                                                       fmt(r['time'])), flush=True)
    la = load()
    L = ['Command: `%s`' % ' '.join(shlex.quote(a) for a in sys.argv), '',
         '%s; load average before %.2f, after %.2f; %d repetitions; ompdsm over %s.' % (
             time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), lb, la, args.reps,
             args.transport), '',
         '| kernel | nodes | keep | time (s) | on / off | 1 node / this | SDSM faults '
         '| mprotects | kept | written ahead | fault s | barrier s |',
         '|---|---|---|---|---|---|---|---|---|---|---|---|']
    summary = {}

    def same(kc, nodes, keep, rep):
        m = [b for b in runs if b['kernel'] == kc and b['nodes'] == nodes and
             b['keep'] == keep and b['rep'] == rep and b['status'] == 'ok']
        return m[0] if m else None

    for kc in args.kernels:
        for nodes, keep in cells:
            sel = [r for r in runs if r['kernel'] == kc and r['nodes'] == nodes and
                   r['keep'] == keep]
            ok = [r for r in sel if r['status'] == 'ok']
            gain, sp = [], []
            for r in ok:
                off, one = same(kc, 2, 'off', r['rep']), same(kc, 1, 'on', r['rep'])
                if off and nodes == 2:
                    gain.append(off['time'] / r['time'])
                if one:
                    sp.append(one['time'] / r['time'])
            s = {k: med([r.get(k) for r in ok]) for k in
                 ('time', 'faults', 'protects', 'kept', 'written_ahead', 'fault_ns',
                  'barrier_ns')}
            s.update({'gain': med(gain), 'vs_one': med(sp),
                      'failed': [r['status'] for r in sel if r['status'] != 'ok']})
            summary['%s/n%d/%s' % (kc, nodes, keep)] = s
            ns = lambda x: None if x is None else x / 1e9  # noqa: E731
            L.append('| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s' % (
                kc, nodes, keep if nodes > 1 else '-', fmt(s['time']),
                fmt(s['gain'], 2) if nodes > 1 else '-', fmt(s['vs_one'], 2),
                fmt(s['faults'], 0), fmt(s['protects'], 0), fmt(s['kept'], 0),
                fmt(s['written_ahead'], 0), fmt(ns(s['fault_ns']), 2),
                fmt(ns(s['barrier_ns']), 2),
                (' ' + '; '.join(s['failed'])) if s['failed'] else ''))
    L += ['', '"on / off" and "1 node / this": medians over repetitions of the ratio of '
          'two runs of the same repetition (above 1: this run is faster).  Counters are '
          'whole-job totals over the nodes (set-up and verification included).']
    md = '\n'.join(L) + '\n'
    with open(os.path.join(args.out, 'keep.md'), 'w') as f:
        f.write(md)
    with open(os.path.join(args.out, 'keep.json'), 'w') as f:
        json.dump({'runs': runs, 'summary': summary, 'load_before': lb,
                   'load_after': la}, f, indent=1)
    print(md)
    return 0


if __name__ == '__main__':
    sys.exit(main())
