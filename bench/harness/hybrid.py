#!/usr/bin/python3
"""bench/harness/hybrid.py - hybrid nodes against native threads and against
one thread per node (not a test).

    /usr/bin/python3 bench/harness/hybrid.py --build DIR [--reps N]
        [--kernels cg.A himeno.S] [--transport shm] [--out DIR]

For each kernel and repetition, one after the other: the native build
(`cc -fopenmp`, bench/kernels' KERNEL.native) and the same source built
by `clang-19 -fopenmp` (ompcc's code generator), each with
OMP_NUM_THREADS=2, the
ompdsm build on 1 node x 2 threads (`ompdsmrun -np 1 --threads-per-node
2`), on 2 nodes x 1 thread (`-np 2`), and on 1 node x 1 thread.  Each ratio
is the median over repetitions of the ratio of two runs of one repetition
(made side by side).  Every run's verification is checked, and Himeno's
final GOSA of every run is compared to 6 significant digits.  Writes
--out/hybrid.md (the table, the command, the load average before and
after) and hybrid.json, and prints the table.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from migrate import fmt, med  # noqa: E402

TIME_RE = re.compile(r'^Time in seconds = *([-+0-9.eE]+)', re.M)
VERIF_RE = re.compile(r'^Verification = *(\w+)', re.M)
GOSA_RE = re.compile(r'^GOSA : *([-+0-9.eE]+)', re.M)

CELLS = [('native 2 threads', 'native', 1, 2), ('clang 2 threads', 'clang', 1, 2),
         ('ompdsm 1 x 2', 'ompdsm', 1, 2), ('ompdsm 2 x 1', 'ompdsm', 2, 1),
         ('ompdsm 1 x 1', 'ompdsm', 1, 1)]
DEFINE = {'himeno': 'SIZE'}


def clang_build(args, kc):
    """KERNEL built by clang-19 -fopenmp (ompcc's code generator, LLVM's
    libomp) into --out, as bench/harness/run.py does; None without it."""
    k, c = kc.split('.')
    out = os.path.join(args.out, kc + '.clang')
    if os.access(out, os.X_OK):
        return out
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'kernels',
                       k + '.c')
    cmd = ['clang-19', '-fopenmp', '-O2', '-g', '-D%s=%s' % (DEFINE.get(k, 'CLASS'), c),
           src, '-o', out, '-lm']
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError:
        return None
    return out if r.returncode == 0 else None


def run(args, kc, kind, nodes, tpn):
    exe = os.path.join(args.build, 'bench', 'kernels', kc)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('OMP_', 'OMPDSM_', 'GOMP_'))}
    if kind in ('native', 'clang'):
        cmd = [exe + '.native' if kind == 'native' else clang_build(args, kc)]
        if cmd[0] is None:
            return {'kernel': kc, 'kind': kind, 'nodes': nodes, 'tpn': tpn,
                    'time': None, 'status': 'no clang-19 -fopenmp'}
        env['OMP_NUM_THREADS'] = str(nodes * tpn)
    else:
        env['OMPDSM_TRANSPORT'] = args.transport
        cmd = [os.path.join(args.build, 'ompdsmrun'), '--timeout', str(args.timeout),
               '-np', str(nodes), '--threads-per-node', str(tpn), exe]
    if kc.startswith('himeno'):
        cmd.append(str(args.himeno_iters))
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=args.timeout + 30)
    rec = {'kernel': kc, 'kind': kind, 'nodes': nodes, 'tpn': tpn, 'time': None,
           'status': 'ok'}
    m, v, g = TIME_RE.search(p.stdout), VERIF_RE.search(p.stdout), GOSA_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        rec['status'] = 'exit %d' % p.returncode
        rec['tail'] = p.stdout[-400:]
        return rec
    if v and v.group(1) != 'SUCCESSFUL':
        rec['status'] = 'verification ' + v.group(1)
    rec['time'] = float(m.group(1))
    rec['gosa'] = '%.6g' % float(g.group(1)) if g else None
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', default='bench/results/hybrid')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--kernels', nargs='+', default=['cg.A', 'himeno.S'])
    ap.add_argument('--transport', default='shm', choices=['shm', 'tcp'])
    ap.add_argument('--himeno-iters', type=int, default=100)
    ap.add_argument('--timeout', type=int, default=600)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lb = os.getloadavg()
    runs = []
    for rep in range(args.reps):
        for kc in args.kernels:
            for label, kind, nodes, tpn in CELLS:
                r = run(args, kc, kind, nodes, tpn)
                r.update({'rep': rep, 'cell': label})
                runs.append(r)
                print('%s %s rep %d: %s %s' % (kc, label, rep, r['status'], fmt(r['time'])),
                      flush=True)
    la = os.getloadavg()

    def get(kc, label, rep):
        m = [r for r in runs if r['kernel'] == kc and r['cell'] == label and
             r['rep'] == rep and r['status'] == 'ok']
        return m[0]['time'] if m else None

    L = ['Command: `%s`' % ' '.join(shlex.quote(a) for a in sys.argv), '',
         '%s; load average (1, 5, 15 min) before %.2f %.2f %.2f, after %.2f %.2f %.2f; '
         '%d repetitions; ompdsm over %s; a shared 2-CPU machine.' % (
             time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), lb[0], lb[1], lb[2],
             la[0], la[1], la[2], args.reps, args.transport), '',
         '| kernel | run | time (s), median | this / cc 2 threads | '
         'this / clang 2 threads | this / ompdsm 1 x 2 | runs ok |',
         '|---|---|---|---|---|---|---|']
    summary = {}
    for kc in args.kernels:
        for label, _, _, _ in CELLS:
            sel = [r for r in runs if r['kernel'] == kc and r['cell'] == label]
            ok = [r for r in sel if r['status'] == 'ok']
            vs_nat, vs_cl, vs_hyb = [], [], []
            for r in ok:
                nat, hyb = get(kc, 'native 2 threads', r['rep']), get(kc, 'ompdsm 1 x 2',
                                                                      r['rep'])
                cl = get(kc, 'clang 2 threads', r['rep'])
                if nat:
                    vs_nat.append(r['time'] / nat)
                if cl:
                    vs_cl.append(r['time'] / cl)
                if hyb:
                    vs_hyb.append(r['time'] / hyb)
            gosas = sorted({r.get('gosa') for r in ok if r.get('gosa')})
            s = {'time': med([r['time'] for r in ok]), 'vs_native': med(vs_nat),
                 'vs_clang': med(vs_cl), 'vs_hybrid': med(vs_hyb), 'ok': len(ok),
                 'n': len(sel), 'gosa': gosas}
            summary['%s %s' % (kc, label)] = s
            L.append('| %s | %s | %s | %s | %s | %s | %d/%d |' % (
                kc, label, fmt(s['time']), fmt(s['vs_native'], 2), fmt(s['vs_clang'], 2),
                fmt(s['vs_hybrid'], 2), s['ok'], s['n']))
    bad = [r for r in runs if r['status'] != 'ok']
    for r in bad:
        L.append('')
        L.append('failed: %s %s rep %d: %s' % (r['kernel'], r['cell'], r['rep'], r['status']))
    for kc in args.kernels:
        g = sorted({r.get('gosa') for r in runs if r['kernel'] == kc and r.get('gosa')})
        if len(g) > 1:
            L.append('')
            L.append('%s: GOSA differs between runs: %s' % (kc, ', '.join(g)))
    text = '\n'.join(L) + '\n'
    with open(os.path.join(args.out, 'hybrid.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(args.out, 'hybrid.json'), 'w') as f:
        json.dump({'runs': runs, 'summary': summary}, f, indent=1)
    print(text)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
