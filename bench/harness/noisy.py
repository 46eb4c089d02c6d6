#!/usr/bin/python3
"""bench/harness/noisy.py - the kernels on shared, noisy nodes (not a test).

    /usr/bin/python3 bench/harness/noisy.py --build DIR [--reps N]
        [--kernels ep.W cg.S is.W mg.W himeno.XS] [--loads quiet nice19 nice0]
        [--configs gcc-2 dsm-1 dsm-shm-2 dsm-tcp-2] [--out DIR]
        [--dsm-env VAR=VALUE]...

Another user's process on a cluster node, as the Omni/SCASH papers'
multi-user setting has it, made here with CPU-bound competitors started
in their own session (setsid, so that autogroup scheduling treats them as
another login's):

  quiet    no competitor
  nice19   one competitor at nice 19 pinned on each CPU
  nice0    one competitor at nice 0 pinned on CPU 1 only (node 1's CPU)

For each kernel and repetition, every configuration runs under every load
one after the other (the competitors start before and stop after each
run), so each ratio compares runs made side by side: per configuration
the median over repetitions of (time under the load / quiet time), and
per load the median of (1 node / 2 nodes).  Every run's verification is
checked; ompdsm runs keep their SDSM faults and the time spent in them
(OMPDSM_STATS), so the cost of a fault under load is in the table.

Writes --out/noisy.json and noisy.md (tables, command, load average before
and after) and prints the tables.
"""
import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

TIME_RE = re.compile(r'^Time(?: in seconds)? *= *([-+0-9.eE]+)', re.M)
VERIF_RE = re.compile(r'^Verification *= *(\w+)', re.M)
HIMENO_ITERS = 100

CONFIGS = {
    # name: (nodes or native threads, transport or None for native)
    'gcc-2': (2, None),
    'dsm-1': (1, 'shm'),
    'dsm-shm-2': (2, 'shm'),
    'dsm-tcp-2': (2, 'tcp'),
}
LOADS = ('quiet', 'nice19', 'nice0')


def loadavg():
    return os.getloadavg()[0]


class Competitors:
    """CPU-bound loops, each in its own session, pinned to one CPU."""

    def __init__(self):
        self.procs = []

    def start(self, load):
        ncpu = len(os.sched_getaffinity(0))
        plan = {'quiet': [], 'nice19': [(c, 19) for c in range(ncpu)],
                'nice0': [(min(1, ncpu - 1), 0)]}[load]
        for cpu, nice in plan:
            self.procs.append(subprocess.Popen(
                ['taskset', '-c', str(cpu), 'nice', '-n', str(nice),
                 'sh', '-c', 'while :; do :; done'],
                start_new_session=True, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        if self.procs:
            time.sleep(0.2)  # running before the job starts

    def stop(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        self.procs = []


def stats_of(path):
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return {}
    tot = {}
    for n in j.get('per_node', []):
        for k in ('dsm_read_faults', 'dsm_write_faults', 'dsm_fault_ns',
                  'dsm_barrier_ns', 'dsm_barriers', 'comm_sleeps'):
            tot[k] = tot.get(k, 0) + n.get(k, 0)
    return tot


def run_one(args, kc, cfg, load, rep, comp):
    k, c = kc.split('.')
    width, transport = CONFIGS[cfg]
    kdir = os.path.join(args.build, 'bench', 'kernels')
    env = {v: x for v, x in os.environ.items()
           if not v.startswith(('OMP_', 'OMPDSM_', 'GOMP_'))}
    prog = [os.path.join(kdir, kc + ('.native' if transport is None else ''))]
    if k == 'himeno':
        prog.append(str(args.himeno_iters))
    stats = None
    if transport is None:
        env.update(OMP_NUM_THREADS=str(width), OMP_PROC_BIND='true',
                   OMP_PLACES='cores', OMP_WAIT_POLICY='passive')
        cmd = prog
    else:
        stats = os.path.join(args.out, 'stats', '%s_%s_%s_r%d.json' % (kc, cfg, load, rep))
        if os.path.exists(stats):
            os.unlink(stats)
        env.update(OMPDSM_TRANSPORT=transport, OMPDSM_STATS=stats)
        for kv in args.dsm_env:
            name, _, val = kv.partition('=')
            env[name] = val
        cmd = [os.path.join(args.build, 'ompdsmrun'), '--timeout',
               str(args.timeout), '-np', str(width)] + prog
    comp.start(load)
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout + 30)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b'').decode(errors='replace'), 'timeout'
    finally:
        comp.stop()
    t = TIME_RE.search(out)
    v = VERIF_RE.search(out)
    rec = {'kernel': kc, 'config': cfg, 'load': load, 'rep': rep,
           'cmd': ' '.join(shlex.quote(x) for x in cmd),
           'time': float(t.group(1)) if t else None,
           'ok': rc == 0 and t is not None and (v is None or v.group(1) == 'SUCCESSFUL')}
    if not rec['ok']:
        rec['output'] = out[-2000:]
    if stats:
        rec['stats'] = stats_of(stats)
    return rec


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=3):
    return '-' if x is None else ('%.*f' % (nd, x))


def tables(runs, kernels, configs, loads):
    def t(kc, cfg, load, rep):
        for r in runs:
            if (r['kernel'], r['config'], r['load'], r['rep']) == (kc, cfg, load, rep) and r['ok']:
                return r
        return None
    reps = sorted({r['rep'] for r in runs})
    lines = ['| kernel | config | load | time (s) | vs quiet | faults | ms per fault | barrier ms (all nodes) | failed |',
             '|---|---|---|---|---|---|---|---|---|']
    for kc in kernels:
        for cfg in configs:
            for load in loads:
                rs = [t(kc, cfg, load, rep) for rep in reps]
                times = [r['time'] for r in rs if r]
                ratios = []
                for rep in reps:
                    a, q = t(kc, cfg, load, rep), t(kc, cfg, 'quiet', rep)
                    if a and q and a['time'] and q['time']:
                        ratios.append(a['time'] / q['time'])
                st = [r.get('stats') for r in rs if r and r.get('stats')]
                faults = med([s.get('dsm_read_faults', 0) + s.get('dsm_write_faults', 0) for s in st])
                fms = med([s['dsm_fault_ns'] / 1e6 / max(1, s.get('dsm_read_faults', 0) + s.get('dsm_write_faults', 0))
                           for s in st if 'dsm_fault_ns' in s])
                bms = med([s['dsm_barrier_ns'] / 1e6 for s in st if 'dsm_barrier_ns' in s])
                failed = sum(1 for r in runs if (r['kernel'], r['config'], r['load']) == (kc, cfg, load) and not r['ok'])
                lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %d |' % (
                    kc, cfg, load, fmt(med(times)), fmt(med(ratios), 2) if load != 'quiet' else '-',
                    fmt(faults, 0) if faults is not None else '-',
                    fmt(fms, 4) if fms is not None else '-',
                    fmt(bms, 0) if bms is not None else '-', failed))
    lines += ['', '| kernel | load | 1 node / 2 nodes shm | 1 node / 2 nodes tcp | gcc 2 threads / 2 nodes shm |',
              '|---|---|---|---|---|']
    for kc in kernels:
        for load in loads:
            def pair(a_cfg, b_cfg):
                xs = []
                for rep in reps:
                    a, b = t(kc, a_cfg, load, rep), t(kc, b_cfg, load, rep)
                    if a and b and a['time'] and b['time']:
                        xs.append(a['time'] / b['time'])
                return fmt(med(xs), 2)
            lines.append('| %s | %s | %s | %s | %s |' % (
                kc, load, pair('dsm-1', 'dsm-shm-2'), pair('dsm-1', 'dsm-tcp-2'),
                pair('gcc-2', 'dsm-shm-2')))
    return '\n'.join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--kernels', nargs='+', default=['ep.W', 'cg.S', 'is.W', 'mg.W', 'himeno.XS'])
    ap.add_argument('--loads', nargs='+', default=list(LOADS), choices=LOADS)
    ap.add_argument('--configs', nargs='+', default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument('--himeno-iters', type=int, default=HIMENO_ITERS)
    ap.add_argument('--timeout', type=int, default=300)
    ap.add_argument('--out', default='/tmp/ompdsm-noisy')
    ap.add_argument('--dsm-env', action='append', default=[],
                    metavar='VAR=VALUE',
                    help='set VAR for the ompdsm runs (e.g. '
                         'OMP_WAIT_POLICY=active); repeatable')
    args = ap.parse_args(argv)
    if 'quiet' not in args.loads:
        args.loads.insert(0, 'quiet')
    os.makedirs(os.path.join(args.out, 'stats'), exist_ok=True)
    for kc in args.kernels:
        for suffix in ('', '.native'):
            exe = os.path.join(args.build, 'bench', 'kernels', kc + suffix)
            if not os.access(exe, os.X_OK):
                sys.exit('noisy.py: %s is not built (ninja -C %s)' % (exe, args.build))
    command = ' '.join(shlex.quote(x) for x in [sys.executable] + sys.argv)
    load0 = os.getloadavg()
    t0 = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    comp = Competitors()
    runs = []
    try:
        for rep in range(args.reps):
            for kc in args.kernels:
                for cfg in args.configs:
                    for load in args.loads:
                        r = run_one(args, kc, cfg, load, rep, comp)
                        runs.append(r)
                        print('%s %s %s rep %d: %s%s' % (kc, cfg, load, rep, fmt(r['time']),
                                                        '' if r['ok'] else ' FAILED'),
                              file=sys.stderr, flush=True)
    finally:
        comp.stop()
    load1 = os.getloadavg()
    md = ('Command: `%s`\n\n%s; load average before %.2f %.2f %.2f, after %.2f %.2f %.2f; '
          '%d repetitions.\n\n%s\n\n"vs quiet": median over repetitions of (time under the '
          'load / quiet time of the same repetition). "ms per fault": the DSM\'s fault time '
          'over its read and write faults, whole job. Ratios of configurations: medians of '
          'per-repetition ratios under the same load.\n' % (
              command, t0, *load0, *load1, args.reps,
              tables(runs, args.kernels, args.configs, args.loads)))
    with open(os.path.join(args.out, 'noisy.json'), 'w') as f:
        json.dump({'command': command, 'runs': runs}, f, indent=1)
    with open(os.path.join(args.out, 'noisy.md'), 'w') as f:
        f.write(md)
    print(md)
    return 0 if all(r['ok'] for r in runs) else 1


if __name__ == '__main__':
    sys.exit(main())
