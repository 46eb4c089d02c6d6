#!/usr/bin/python3
"""bench/harness/onenode.py - one node against native OpenMP (issue 37:
"one node costs nothing"), not a test.

    /usr/bin/python3 bench/harness/onenode.py --build DIR [--reps 3]
        [--kernels cg.A mg.A is.A ep.W himeno.S]
        [--npb OMPCC_BIN --npb-clang CLANG_BIN [--npb-programs cg.A,lu.W]]
        [--npb-gcc GCC_BIN --npb-ogcc OMPCC_GCC_BIN] [--profile] [--out DIR]

Each program runs, one after the other within a repetition: clang-19
-fopenmp with 1 thread, ompdsm on 1 node, clang with 2 threads, ompdsm on
1 node x 2 threads (`--threads-per-node 2`), and where gcc builds are
given, gcc -fopenmp with 1 thread and ompcc's gcc backend (OMPDSM_CC=gcc)
on 1 node.  Ratios are medians over the repetitions of the ratio of the
two runs of one repetition (made side by side, so that the machine's
drift cancels): 1 node / clang 1 thread, 1 x 2 / clang 2 threads, gcc
backend 1 node / gcc 1 thread.  The goal is 1.05 at most in each.

The project's kernels (bench/kernels) come from --build: the ompdsm
build DIR/bench/kernels/K.C and the same source built by clang-19
-fopenmp -O2 (as bench/harness/hybrid.py builds it); gcc's is K.C.native.
NPB 3.3 (third-party, never in this repository) comes from the user's
bin/ directories, one per compiler: --npb built by ompcc, --npb-clang by
clang-19 -O3 -fopenmp, --npb-gcc by gcc -O3 -fopenmp and --npb-ogcc by
ompcc with OMPDSM_CC=gcc, all from one source tree and one class.  Every
run's verification is checked (NPB's "Verification = SUCCESSFUL", the
kernels' own line).  The machine's fault and protection-change costs
(the DSM's start-up probe of a 2-node job of ep.S) head the table.

--profile: the program with the worst 1-node ratio runs once more under
`perf record -e cpu-clock` in each of its two builds; the table gets the
12 functions with the most samples of each.

Writes --out/onenode.md and onenode.json and prints the table.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hybrid import clang_build  # noqa: E402
from migrate import fmt, med  # noqa: E402

TIME_RE = re.compile(r'^\s*Time in seconds\s*=\s*([-+0-9.eE]+)', re.M)
VERIF_RE = re.compile(r'^\s*Verification\s*=\s*(\w+)', re.M)
PROBE_RE = re.compile(r'a fault ([0-9.]+) us, a protection change ([0-9.]+) us, '
                      r'a page copy ([0-9.]+) us')

# (column, build, nodes, threads)
CELLS = [('clang 1t', 'clang', 1, 1), ('ompdsm 1', 'ompdsm', 1, 1),
         ('clang 2t', 'clang', 1, 2), ('ompdsm 1x2', 'ompdsm', 1, 2),
         ('gcc 1t', 'gcc', 1, 1), ('ompdsm-gcc 1', 'ogcc', 1, 1)]
RATIOS = [('1 node / clang 1t', 'ompdsm 1', 'clang 1t'),
          ('1x2 / clang 2t', 'ompdsm 1x2', 'clang 2t'),
          ('gcc backend 1 node / gcc 1t', 'ompdsm-gcc 1', 'gcc 1t')]


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(('OMP_', 'OMPDSM_', 'GOMP_', 'KMP_'))}


def programs(args):
    """name -> {build: executable}."""
    out = {}
    for kc in args.kernels:
        exe = os.path.join(args.build, 'bench', 'kernels', kc)
        if not os.access(exe, os.X_OK):
            sys.exit('onenode: no %s (build the kernels first)' % exe)
        b = {'ompdsm': exe, 'clang': clang_build(args, kc)}
        if os.access(exe + '.native', os.X_OK):
            b['gcc'] = exe + '.native'
        out[kc] = b
    if args.npb:
        names = args.npb_programs.split(',') if args.npb_programs else sorted(
            f[:-2] for f in os.listdir(args.npb) if f.endswith('.x'))
        for n in names:
            b = {}
            for build, d in (('ompdsm', args.npb), ('clang', args.npb_clang),
                             ('gcc', args.npb_gcc), ('ogcc', args.npb_ogcc)):
                p = os.path.join(d, n + '.x') if d else None
                if p and os.access(p, os.X_OK):
                    b[build] = p
            if 'ompdsm' in b and 'clang' in b:
                out['npb ' + n] = b
    return out


def run(args, exe, build, nodes, tpn, prefix=()):
    env = clean_env()
    if build in ('clang', 'gcc'):
        cmd = [exe]
        env['OMP_NUM_THREADS'] = str(tpn)
    else:
        cmd = [os.path.join(args.build, 'ompdsmrun'), '--timeout', str(args.timeout),
               '-np', str(nodes), '--threads-per-node', str(tpn), exe]
    if os.path.basename(exe).startswith('himeno'):
        cmd.append(str(args.himeno_iters))
    p = subprocess.run(list(prefix) + cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=args.timeout + 60,
                       cwd=tempfile.gettempdir())
    m, v = TIME_RE.search(p.stdout), VERIF_RE.search(p.stdout)
    if p.returncode != 0 or not m:
        return None, 'exit %d: %s' % (p.returncode, p.stdout[-300:])
    if not v or v.group(1) != 'SUCCESSFUL':
        return None, 'verification %s' % (v.group(1) if v else 'missing')
    return float(m.group(1)), 'ok'


def probe(args):
    exe = os.path.join(args.build, 'bench', 'kernels', 'ep.S')
    env = clean_env()
    env['OMPDSM_STATS'] = '1'
    p = subprocess.run([os.path.join(args.build, 'ompdsmrun'), '-np', '2', exe],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    m = PROBE_RE.search(p.stdout)
    return [float(x) for x in m.groups()] if m else None


def profile(args, exe, build, nodes):
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, 'perf.data')
        run(args, exe, build, nodes, 1, prefix=('perf', 'record', '-q', '-e', 'cpu-clock',
                                                '-o', data, '--'))
        r = subprocess.run(['perf', 'report', '-i', data, '--stdio', '--sort', 'sym', '-n'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    rows = [l.strip() for l in r.stdout.splitlines() if l.strip() and not l.startswith('#')]
    return rows[:12]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', default='bench/results/onenode')
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--kernels', nargs='*', default=['cg.A', 'mg.A', 'is.A', 'ep.W',
                                                      'himeno.S'])
    ap.add_argument('--npb')
    ap.add_argument('--npb-clang')
    ap.add_argument('--npb-gcc')
    ap.add_argument('--npb-ogcc')
    ap.add_argument('--npb-programs')
    ap.add_argument('--himeno-iters', type=int, default=100)
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('--profile', action='store_true')
    args = ap.parse_args()
    for a in ('build', 'out', 'npb', 'npb_clang', 'npb_gcc', 'npb_ogcc'):
        if getattr(args, a):
            setattr(args, a, os.path.abspath(getattr(args, a)))
    if args.npb and not args.npb_clang:
        sys.exit('onenode: --npb needs --npb-clang (the same programs by clang-19 -fopenmp)')
    os.makedirs(args.out, exist_ok=True)
    progs = programs(args)
    costs = probe(args)
    lb = os.getloadavg()
    runs = []
    for rep in range(args.reps):
        for name, builds in progs.items():
            for label, build, nodes, tpn in CELLS:
                if not builds.get(build):
                    continue
                t, st = run(args, builds[build], build, nodes, tpn)
                runs.append({'program': name, 'cell': label, 'rep': rep, 'time': t,
                             'status': st})
                print('%s %s rep %d: %s %s' % (name, label, rep, st[:60], fmt(t)),
                      flush=True)
    la = os.getloadavg()

    def t_of(name, cell, rep):
        m = [r['time'] for r in runs if r['program'] == name and r['cell'] == cell and
             r['rep'] == rep and r['time'] is not None]
        return m[0] if m else None

    L = ['Command: `%s`' % ' '.join(shlex.quote(a) for a in sys.argv), '',
         '%s; load average (1, 5, 15 min) before %.2f %.2f %.2f, after %.2f %.2f %.2f; '
         '%d repetitions; this machine\'s probe: %s.' % (
             time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), lb[0], lb[1], lb[2],
             la[0], la[1], la[2], args.reps,
             'a fault %.1f us, a protection change %.1f us, a page copy %.1f us' %
             tuple(costs) if costs else 'not read'), '',
         '| program | ' + ' | '.join(c[0] for c in CELLS) + ' | ' +
         ' | '.join(r[0] for r in RATIOS) + ' |',
         '|---' * (1 + len(CELLS) + len(RATIOS)) + '|']
    summary, worst = {}, (None, 0)
    for name in progs:
        s = {c[0]: med([r['time'] for r in runs if r['program'] == name and
                        r['cell'] == c[0]]) for c in CELLS}
        for label, num, den in RATIOS:
            xs = []
            for rep in range(args.reps):
                a, b = t_of(name, num, rep), t_of(name, den, rep)
                if a and b:
                    xs.append(a / b)
            s[label] = med(xs)
        summary[name] = s
        if s['1 node / clang 1t'] and s['1 node / clang 1t'] > worst[1]:
            worst = (name, s['1 node / clang 1t'])
        L.append('| %s | ' % name + ' | '.join(fmt(s[c[0]], 2) for c in CELLS) + ' | ' +
                 ' | '.join(fmt(s[r[0]], 2) for r in RATIOS) + ' |')
    L += ['', 'Times are medians (s); ratios are medians of per-repetition ratios; '
          'goal: each ratio 1.05 at most.']
    over = ['%s %s %.2f' % (n, r[0], s[r[0]]) for n, s in summary.items()
            for r in RATIOS if s[r[0]] and s[r[0]] > 1.05]
    L.append('Over 1.05: %s.' % (', '.join(over) if over else 'none'))
    bad = [r for r in runs if r['status'] != 'ok']
    for r in bad:
        L.append('failed: %s %s rep %d: %s' % (r['program'], r['cell'], r['rep'], r['status']))
    prof = {}
    if args.profile and worst[0]:
        name = worst[0]
        for build in ('clang', 'ompdsm'):
            prof[build] = profile(args, progs[name][build], build, 1)
        L += ['', 'Profile of the worst 1-node ratio, %s (%.2f): `perf record -e '
              'cpu-clock`, 1 thread / 1 node, functions by samples:' % (name, worst[1]), '']
        for build in ('clang', 'ompdsm'):
            L += ['%s:' % build, '', '    ' + '\n    '.join(prof[build]), '']
    text = '\n'.join(L) + '\n'
    with open(os.path.join(args.out, 'onenode.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(args.out, 'onenode.json'), 'w') as f:
        json.dump({'runs': runs, 'summary': summary, 'costs': costs, 'profile': prof},
                  f, indent=1)
    print(text)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
