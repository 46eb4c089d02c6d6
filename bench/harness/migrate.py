#!/usr/bin/python3
"""bench/harness/migrate.py - home migration on 1 vs 2 nodes (not a test).

    /usr/bin/python3 bench/harness/migrate.py --build DIR [--reps N]
        [--kernels is.W mg.W himeno.XS] [--policies off faults diffs]
        [--transport shm] [--out DIR]

For each kernel, runs ompdsm on 1 node, then on 2 nodes under each
OMPDSM_MIGRATION policy, one after the other, repetition by repetition
(rep 1 of every cell, then rep 2), so that each ratio compares runs made
side by side.  Every run's verification is checked; from its OMPDSM_STATS
JSON it keeps the SDSM faults (read + write), remote faults, barriers,
pages migrated and bytes moved.  Himeno's faults are also given per
iteration (--himeno-iters).

Writes --out/migrate.json and migrate.md (the table, the command, the load
average before and after) and prints the table.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

TIME_RE = re.compile(r'^Time in seconds = *([-+0-9.eE]+)', re.M)
VERIF_RE = re.compile(r'^Verification = *(\w+)', re.M)
GOSA_RE = re.compile(r'^GOSA : *([-+0-9.eE]+)', re.M)


def load():
    return os.getloadavg()[0]


def run_one(args, kc, nodes, policy, tag, extra_env=None, prefix='migrate'):
    """One run of kernel kc on `nodes` nodes under OMPDSM_MIGRATION=policy
    (and extra_env); its time, status and whole-job DSM counters."""
    k, c = kc.split('.')
    exe = os.path.join(args.build, 'bench', 'kernels', kc)
    stats = os.path.join(args.out, '%s_%s_n%d_%s_%s.json' % (prefix, kc, nodes, policy, tag))
    env = dict(os.environ)
    env.update({'OMPDSM_TRANSPORT': args.transport, 'OMPDSM_MIGRATION': policy,
                'OMPDSM_STATS': stats})
    env.update(extra_env or {})
    cmd = [os.path.join(args.build, 'ompdsmrun'), '--timeout', str(args.timeout),
           '-np', str(nodes), exe]
    if k == 'himeno':
        cmd += [str(args.himeno_iters)]
    t0 = time.time()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    rec = {'kernel': kc, 'nodes': nodes, 'policy': policy, 'wall': time.time() - t0,
           'status': 'ok', 'time': None}
    m = TIME_RE.search(p.stdout)
    v = VERIF_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        rec['status'] = 'exit %d' % p.returncode
        rec['tail'] = p.stdout[-400:]
        return rec
    if v and v.group(1) != 'SUCCESSFUL':
        rec['status'] = 'verification ' + v.group(1)
    rec['time'] = float(m.group(1))
    try:
        with open(stats) as f:
            nodes_st = json.load(f)['per_node']
    except (OSError, ValueError, KeyError):
        nodes_st = []
    tot = {}
    for n in nodes_st:
        for key, val in n.items():
            if isinstance(val, (int, float)):
                tot[key] = tot.get(key, 0) + val
    rec['faults'] = tot.get('dsm_read_faults', 0) + tot.get('dsm_write_faults', 0)
    for key in ('dsm_remote_faults', 'dsm_migrations', 'dsm_migrate_bytes',
                'dsm_migrate_barriers', 'dsm_diff_bytes', 'dsm_protects', 'dsm_kept',
                'dsm_written_ahead', 'dsm_fault_ns', 'dsm_barrier_ns'):
        rec[key[4:]] = tot.get(key, 0)
    rec['barriers'] = nodes_st[0].get('dsm_barriers', 0) if nodes_st else 0
    return rec


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=3):
    return '-' if x is None else '%.*f' % (nd, x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', default='bench/results/migrate')
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--kernels', nargs='+', default=['is.W', 'mg.W', 'himeno.XS'])
    ap.add_argument('--policies', nargs='+', default=['off', 'faults', 'diffs'])
    ap.add_argument('--transport', default='shm', choices=['shm', 'tcp'])
    ap.add_argument('--himeno-iters', type=int, default=100)
    ap.add_argument('--timeout', type=int, default=600)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lb = load()
    runs = []
    for rep in range(args.reps):
        for kc in args.kernels:
            cells = [(1, 'off')] + [(2, p) for p in args.policies]
            for nodes, pol in cells:
                r = run_one(args, kc, nodes, pol, 'r%d' % rep)
                r['rep'] = rep
                runs.append(r)
                print('%s n%d %s rep %d: %s %s' % (kc, nodes, pol, rep, r['status'],
                                                  fmt(r['time'])), flush=True)
    la = load()
    L = ['Command: `%s`' % ' '.join(shlex.quote(a) for a in sys.argv), '',
         '%s; load average before %.2f, after %.2f; %d repetitions; ompdsm over %s.' % (
             time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), lb, la, args.reps,
             args.transport), '',
         '| kernel | nodes | migration | time (s) | 1 node / this | vs off | SDSM faults '
         '| remote faults | barriers | pages migrated | MiB moved | faults/iter |',
         '|---|---|---|---|---|---|---|---|---|---|---|---|']
    summary = {}
    for kc in args.kernels:
        cells = [(1, 'off')] + [(2, p) for p in args.policies]
        for nodes, pol in cells:
            sel = [r for r in runs if r['kernel'] == kc and r['nodes'] == nodes and
                   r['policy'] == pol]
            ok = [r for r in sel if r['status'] == 'ok']
            sp, vo = [], []
            for r in ok:
                one = [b for b in runs if b['kernel'] == kc and b['nodes'] == 1 and
                       b['rep'] == r['rep'] and b['status'] == 'ok']
                off = [b for b in runs if b['kernel'] == kc and b['nodes'] == 2 and
                       b['policy'] == 'off' and b['rep'] == r['rep'] and b['status'] == 'ok']
                if one:
                    sp.append(one[0]['time'] / r['time'])
                if off and nodes == 2:
                    vo.append(off[0]['time'] / r['time'])
            s = {'time': med([r['time'] for r in ok]), 'vs_one': med(sp), 'vs_off': med(vo),
                 'faults': med([r['faults'] for r in ok]),
                 'remote': med([r['remote_faults'] for r in ok]),
                 'barriers': med([r['barriers'] for r in ok]),
                 'migrations': med([r['migrations'] for r in ok]),
                 'moved': med([r['migrate_bytes'] for r in ok]),
                 'failed': [r['status'] for r in sel if r['status'] != 'ok']}
            per_iter = None
            if kc.startswith('himeno') and s['faults'] is not None:
                per_iter = s['faults'] / args.himeno_iters
            summary['%s/n%d/%s' % (kc, nodes, pol)] = s
            L.append('| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s' % (
                kc, nodes, pol if nodes > 1 else '-', fmt(s['time']), fmt(s['vs_one'], 2),
                fmt(s['vs_off'], 2) if nodes > 1 else '-', fmt(s['faults'], 0),
                fmt(s['remote'], 0), fmt(s['barriers'], 0), fmt(s['migrations'], 0),
                fmt(None if s['moved'] is None else s['moved'] / 2**20, 1),
                fmt(per_iter, 1), (' ' + '; '.join(s['failed'])) if s['failed'] else ''))
    L += ['', '"1 node / this" and "vs off": medians over repetitions of the ratio of '
          'two runs of the same repetition (above 1: this run is faster).  Faults are '
          'whole-job totals (set-up and verification included).']
    md = '\n'.join(L) + '\n'
    with open(os.path.join(args.out, 'migrate.md'), 'w') as f:
        f.write(md)
    with open(os.path.join(args.out, 'migrate.json'), 'w') as f:
        json.dump({'runs': runs, 'summary': summary, 'load_before': lb,
                   'load_after': la}, f, indent=1)
    print(md)
    return 0


if __name__ == '__main__':
    sys.exit(main())
