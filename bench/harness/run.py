#!/usr/bin/python3
"""bench/harness/run.py - the kernels' benchmark matrix (not a test).

    /usr/bin/python3 bench/harness/run.py --build DIR [--quick] [--reps N]
        [--one-node-reps N] [--out DIR] [--kernels K ...] [--update-docs]

For every kernel of bench/kernels (EP, CG, IS, MG, Himeno) it runs
  cc -fopenmp         1 and 2 threads        (the reference the goals name)
  clang -fopenmp      1 and 2 threads        (same backend compiler as ompcc)
  ompdsm              1 node; 2 nodes over shm; 2 nodes over tcp
each homogeneous and, for the two-wide configurations, with node 1 (native:
thread 1) slowed to half a CPU (slownode.py).  Repetitions are interleaved
(rep 1 of everything, then rep 2, ...) so that the machine's load drifts
over all configurations alike; medians per configuration, and every ratio
is the median over repetitions of the ratio of the two runs of one
repetition (adjacent in time: the machine's speed drifts between
repetitions by more than the goals' margins).  The 1-node goals (5%) come
from --one-node-reps extra runs of gcc, clang and ompdsm on 1 thread/node,
back to back.  Every run's verification is
checked (Himeno: GOSA against cc -fopenmp with 1 thread, 6 significant
digits); a failed run is reported in the table, never averaged in.
ompdsm runs write their DSM statistics (OMPDSM_STATS=<file>.json).

Outputs in --out (default bench/results; not to be committed): results.csv
(one row per run), results.json (everything), results.md (tables), PNG
plots, logs/ (each run's output) and stats/ (each run's statistics).
--update-docs rewrites the kernels section of docs/performance.md.
See docs/performance.md ("Kernels") and docs/model.md.

This file holds the command line and the order of the runs; the parts
are in matrix/ (the kernels and configurations, the machine, one run,
the summary and goals, the report); sched.py, slowcg.py, model.py and
tests/unit/test_harness.py take them through this module.
"""
import argparse
import datetime
import json
import os
import shlex
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import model      # noqa: E402
import slownode   # noqa: E402
from matrix.config import (CONF, DEFAULT_CONFIGS, DEFAULT_KERNELS,  # noqa: E402
                           HIMENO_ITERS, KERNELS, QUICK_KERNELS, SRC)
from matrix.machine import git_describe, loadavg, machine_info  # noqa: E402
from matrix.report import fmt, markdown, update_docs, write_csv  # noqa: E402
from matrix.runs import Binaries, Runner, comm_costs  # noqa: E402
from matrix.summary import (check_gosa, evaluate_goals, noise_summary,  # noqa: E402
                            summarize)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', required=True, help='meson build directory (has ompcc, ompdsmrun)')
    ap.add_argument('--quick', action='store_true',
                    help='smoke run: S classes (Himeno XS), 1 repetition')
    ap.add_argument('--reps', type=int, default=None, help='repetitions per cell (default 3, quick 1)')
    ap.add_argument('--out', default=None, help='output directory (default bench/results)')
    ap.add_argument('--kernels', nargs='+', default=None,
                    help='kernels as name.class (ep.W himeno.S) or name (its default class); '
                         'default %s' % ' '.join(DEFAULT_KERNELS))
    ap.add_argument('--configs', nargs='+', default=None,
                    help='configurations (default %s; also: dsm-hybrid-1x2)' % ' '.join(DEFAULT_CONFIGS))
    ap.add_argument('--no-slow', action='store_true', help='homogeneous runs only')
    ap.add_argument('--slow-method', choices=['auto', 'cgroup', 'hog', 'duty'], default='auto',
                    help='how node 1 is slowed (slownode.py): duty is closest to a slower CPU')
    ap.add_argument('--duty-period', type=int, default=400,
                    help='with --slow-method duty: the duty cycle\'s period in us (default 400)')
    # Half a CPU, as DESIGN.md's 50000 of 100000, but with a 10 ms period:
    # with 100 ms a kernel's 50 ms of set-up can use up a period's quota
    # unthrottled, timed sections shorter than 50 ms are not slowed at all,
    # and node 1 stops for 50 ms at a time (a stall, not a slower node).
    ap.add_argument('--slow-quota', type=int, default=5000, help='cpu.cfs_quota_us (default 5000)')
    ap.add_argument('--slow-period', type=int, default=10000, help='cpu.cfs_period_us (default 10000)')
    ap.add_argument('--himeno-iters', type=int, default=None,
                    help='Himeno iterations (default %d, quick 100)' % HIMENO_ITERS)
    ap.add_argument('--no-native-bind', dest='native_bind', action='store_false',
                    help='do not bind native threads (OMP_PROC_BIND); the slowed native '
                         'runs then need --slow-method hog')
    ap.add_argument('--one-node-reps', type=int, default=None,
                    help='extra runs per kernel of gcc 1 thread, clang 1 thread and ompdsm 1 '
                         'node, alternating, for the 1-node goals (default 5, quick 0)')
    ap.add_argument('--no-model', action='store_true', help='skip the calibration runs and the model')
    ap.add_argument('--wait-idle', type=float, default=None,
                    help='before each run wait up to this many seconds for the CPUs to be '
                         'at least 90%% idle (other jobs); the busy share is recorded per run '
                         '(default 20, quick 0)')
    ap.add_argument('--wait-budget', type=float, default=900.0,
                    help='total seconds the whole run may spend waiting for idle CPUs '
                         '(default 900); after that runs start regardless, and say so')
    ap.add_argument('--timeout', type=int, default=300, help='per-run limit in seconds')
    ap.add_argument('--render-only', action='store_true',
                    help='run nothing: redo results.md, the plots and (with --update-docs) '
                         'the docs section from --out\'s results.json')
    ap.add_argument('--update-docs', action='store_true',
                    help='rewrite the kernels section of docs/performance.md')
    a = ap.parse_args(argv)
    if a.reps is None:
        a.reps = 1 if a.quick else 3
    if a.one_node_reps is None:
        a.one_node_reps = 0 if a.quick else 5
    if a.one_node_reps < 0:
        ap.error('--one-node-reps must be at least 0')
    if a.wait_idle is None:
        a.wait_idle = 0.0 if a.quick else 20.0
    if a.himeno_iters is None:
        a.himeno_iters = 100 if a.quick else HIMENO_ITERS
    if a.out is None:
        a.out = os.path.join(SRC, 'bench', 'results')
    a.out = os.path.abspath(a.out)
    ks = a.kernels or (QUICK_KERNELS if a.quick else DEFAULT_KERNELS)
    full = []
    for k in ks:
        if '.' not in k:
            d = [x for x in (QUICK_KERNELS if a.quick else DEFAULT_KERNELS) if x.startswith(k + '.')]
            k = d[0] if d else k + '.S'
        name, cls = k.split('.', 1)
        if name not in KERNELS or cls not in KERNELS[name]['classes']:
            ap.error('unknown kernel %s (known: %s)' % (k, ', '.join(
                '%s.{%s}' % (n, ','.join(v['classes'])) for n, v in KERNELS.items())))
        full.append(k)
    a.kernels = full
    a.configs = a.configs or DEFAULT_CONFIGS
    for c in a.configs:
        if c not in CONF:
            ap.error('unknown configuration %s (known: %s)' % (c, ', '.join(CONF)))
    if a.reps < 1:
        ap.error('--reps must be at least 1')
    return a


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.render_only:
        with open(os.path.join(args.out, 'results.json')) as f:
            doc = json.load(f)
        doc['machine']['virtualization'] = machine_info()['virtualization']
        print(render(doc, args, lambda m: print(m, flush=True)))
        return 0
    os.makedirs(args.out, exist_ok=True)
    logpath = os.path.join(args.out, 'harness.log')
    logfile = open(logpath, 'w')

    def log(msg):
        print(msg, flush=True)
        logfile.write(msg + '\n')
        logfile.flush()

    t_start = time.time()
    command = '/usr/bin/python3 bench/harness/run.py ' + ' '.join(
        shlex.quote(os.path.relpath(x, SRC)) if x == args.build and os.path.isabs(x)
        and x.startswith(SRC) else shlex.quote(x) for x in argv)
    load0 = loadavg()
    source = git_describe()  # now: the tree may move while the matrix runs
    log('ompdsm kernel benchmarks: %s' % command)
    log('load average before: %s' % ' '.join('%.2f' % x for x in load0))
    bins = Binaries(args.build, args.out, log)
    slow = slownode.SlowNode(args.slow_method, args.slow_quota, args.slow_period,
                             build=args.build, duty_period_us=args.duty_period)
    # A SIGTERM (or Ctrl-C) still removes the cgroup and stops a hog.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    try:
        return run_all(args, log, t_start, command, load0, source, bins, slow)
    finally:
        slow.teardown()


def render(doc, args, log):
    """results.md, results.json, the plots and the docs section from doc."""
    md_text = markdown(doc)
    with open(os.path.join(args.out, 'results.md'), 'w') as f:
        f.write('# ompdsm kernel benchmarks\n\n`%s` (%s, %s)\n\n' % (doc['command'], doc['date'],
                                                                      doc['source']))
        f.write(md_text)
    with open(os.path.join(args.out, 'results.json'), 'w') as f:
        json.dump(doc, f, indent=1, default=str)
    try:
        import plots
        made = plots.make_all(doc, args.out)
        log('plots: ' + ', '.join(made))
    except ImportError as e:
        log('plots skipped (%s): run with /usr/bin/python3 (Debian\'s, with python3-matplotlib)' % e)
    if args.update_docs:
        p = update_docs(doc, md_text)
        log('updated ' + os.path.relpath(p, SRC))
    return md_text


def run_all(args, log, t_start, command, load0, source, bins, slow):
    """Everything after the arguments: executables, the runs, the outputs.
    Returns the exit status (1 if any run failed)."""
    if not args.no_slow:
        setup_slow(args, slow, log)
    runner = Runner(args, bins, slow, log)
    variants = prepare_binaries(args, bins, log)
    costs = {}
    if not args.no_model:
        log('per-operation costs (bench/comm, bench/dsm):')
        costs = comm_costs(bins, log)
    runs = run_matrix(args, runner, log)
    runs += run_one_node(args, runner, log)
    calib = run_calibration(args, runner, variants, log)
    runs += list(calib.values())
    check_gosa(runs)
    load1 = loadavg()
    log('load average after: %s' % ' '.join('%.2f' % x for x in load1))
    if not args.no_slow:
        slow.teardown()
    doc = build_doc(args, runs, calib, costs, bins, slow, log,
                    command=command, t_start=t_start, source=source, load0=load0, load1=load1)
    write_outputs(doc, args, log, t_start)
    nfail = sum(1 for r in runs if r['status'] != 'ok' and not r['status'].startswith('SKIPPED'))
    return 1 if nfail else 0


def setup_slow(args, slow, log):
    slow.setup()
    log('slow node: ' + slow.describe())
    if slow.method == 'cgroup' and not args.native_bind:
        log('  (native slowed runs need bound threads: --no-native-bind leaves them unslowed)')


def prepare_binaries(args, bins, log):
    """Builds (or finds) every executable before the first run, so that
    compiles do not land between runs.  Returns the model's calibration
    variants, kernel.class -> (executable, extra iterations)."""
    log('executables:')
    for kc in args.kernels:
        k, c = kc.split('.')
        for cfg in args.configs:
            conf = CONF[cfg]
            if conf.kind == 'ompdsm':
                p = bins.ompdsm(k, c)
            else:
                p = bins.native(k, c, conf.what)
            if p is None and conf.kind == 'native' and conf.what == 'clang':
                continue
            if p is None:
                log('  %s: no executable for %s' % (kc, cfg))
    variants = {}
    if not args.no_model and ('dsm-shm-2' in args.configs or 'dsm-tcp-2' in args.configs):
        for kc in args.kernels:
            k, c = kc.split('.')
            variants[kc] = bins.variant(k, c)
    for n in bins.notes:
        log('note: ' + n)
    return variants


def run_matrix(args, runner, log):
    """The matrix, repetitions interleaved; the two-wide configurations
    also with node 1 slowed."""
    cells = []
    for kc in args.kernels:
        for cfg in args.configs:
            cells.append((kc, cfg, False))
        if not args.no_slow:
            for cfg in args.configs:
                if CONF[cfg].width == 2:
                    cells.append((kc, cfg, True))
    runs = []
    total = len(cells) * args.reps
    i = 0
    for rep in range(1, args.reps + 1):
        for kc, cfg, slowed in cells:
            i += 1
            k, c = kc.split('.')
            r = runner.run(k, c, cfg, slowed, rep)
            runs.append(r)
            log('[%3d/%d] %-10s %-15s %-5s rep %d: %s  %s  (others %2.0f%% busy, load %.2f)' % (
                i, total, kc, cfg, 'slow' if slowed else 'homo', rep,
                fmt(r.get('time'), 4) + ' s' if r.get('time') is not None else '-',
                r['status'], 100 * r.get('busy_before', 0), r.get('load_before', 0)))
    return runs


def run_one_node(args, runner, log):
    """The 1-node goals ask for 5%, less than the drift of this VM's speed
    between a matrix repetition's runs of gcc-1 and dsm-1 (several runs
    apart): the three 1-node configurations alternate back to back."""
    runs = []
    one_cfgs = [c for c in ('gcc-1', 'clang-1', 'dsm-1') if c in args.configs]
    if not (args.one_node_reps and 'dsm-1' in one_cfgs and len(one_cfgs) > 1):
        return runs
    log('one node, alternating (%d each):' % args.one_node_reps)
    for kc in args.kernels:
        k, c = kc.split('.')
        for i in range(1, args.one_node_reps + 1):
            line = []
            for cfg in one_cfgs:
                r = runner.run(k, c, cfg, False, i, tag='_one')
                r['tag'] = 'one-node'
                runs.append(r)
                line.append('%s %s%s' % (cfg, fmt(r.get('time'), 4),
                                         '' if r['status'] == 'ok' else ' ' + r['status']))
            log('  %s %d: %s' % (kc, i, ', '.join(line)))
    return runs


def run_calibration(args, runner, variants, log):
    """Each 2-node configuration once more with twice the timed iterations;
    the difference from the normal runs is the statistics of the
    iterations alone (the model's inputs, and the per-iteration
    explanation of the shm and tcp times).  Returns
    (kernel.class, config) -> run, in the order run."""
    calib = {}
    calib_cfgs = [c for c in ('dsm-shm-2', 'dsm-tcp-2') if c in args.configs]
    if args.no_model or not calib_cfgs:
        return calib
    log('calibration (2 nodes, twice the iterations):')
    for kc in args.kernels:
        k, c = kc.split('.')
        for cfg in calib_cfgs:
            if k == 'himeno':
                extra = args.himeno_iters
                args.himeno_iters = 2 * extra
                r = runner.run(k, c, cfg, False, 1, tag='_calib')
                args.himeno_iters = extra
            else:
                exe, extra = variants.get(kc, (None, None))
                if not exe:
                    continue
                r = runner.run(k, c, cfg, False, 1, exe=exe, tag='_calib')
            r['tag'] = 'calibration'
            r['extra_iters'] = extra
            calib[(kc, cfg)] = r
            log('  %s %s: +%d iterations: %s %s' % (kc, cfg, extra, fmt(r.get('time'), 4),
                                                   r['status']))
    return calib


def build_doc(args, runs, calib, costs, bins, slow, log, *, command, t_start, source,
              load0, load1):
    """results.json's document: the runs, their summary, goals, noise and
    the model."""
    summ = summarize(runs, args.kernels, args.configs)
    goals = evaluate_goals(summ)
    doc = {
        'command': command,
        'date': datetime.datetime.now().strftime('%Y-%m-%d %H:%M'),
        'duration_s': round(time.time() - t_start, 1),
        'source': source,
        'machine': machine_info(),
        'compilers': {'cc': machine_info()['cc'], 'clang': bins.versions['clang']},
        'load_before': load0,
        'load_after': load1,
        'reps': args.reps,
        'kernels': args.kernels,
        'configs': args.configs,
        'config_labels': {c: CONF[c].label for c in args.configs},
        'himeno_iters': args.himeno_iters,
        'wait_idle': args.wait_idle,
        'native_bind': args.native_bind,
        'slow_method': slow.describe() if not args.no_slow else 'none (--no-slow)',
        'slow_method_short': slow.method if not args.no_slow else 'none',
        'page_size': os.environ.get('OMPDSM_PAGE_SIZE', '64K (default)'),
        'protocol': os.environ.get('OMPDSM_PROTOCOL', 'invalidate (default)'),
        'notes': bins.notes,
        'out_rel': os.path.relpath(args.out, SRC) if args.out.startswith(SRC) else args.out,
        'costs': costs,
        'runs': runs,
        'summary': summ,
        'goals': goals,
    }
    doc['noise'] = noise_summary(runs, summ)
    if not args.no_model:
        try:
            doc['model'] = model.build(doc, calib, KERNELS, args)
            doc['per_iteration'] = model.per_iteration_table(doc, calib, KERNELS)
        except Exception as e:  # the model must not cost the measurements
            log('model failed: %r' % e)
            doc['model_error'] = repr(e)
    return doc


def write_outputs(doc, args, log, t_start):
    """results.csv, then results.md/.json, the plots and the docs section."""
    write_csv(os.path.join(args.out, 'results.csv'), doc['runs'])
    md_text = render(doc, args, log)
    log('')
    log(md_text)
    log('results in %s (%.0f s)' % (args.out, time.time() - t_start))


if __name__ == '__main__':
    sys.exit(main())
